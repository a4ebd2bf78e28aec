// The shape most fusion passes share: walk a snapshot of the nodes in graph order, skip the ones an
// earlier rewrite of this run removed, and try one rewrite rooted at each remaining node. A pass
// implements only `rewrite`; the walk, shape inference and the per-pass counter live here.
#pragma once

#include <unordered_set>

#include "passes/pass.h"

namespace xopt::passes::fuse {

class NodeRewritePass : public Pass {
 public:
  bool preserves_shapes() const override { return true; }

  Result<bool> run(ir::Model& model, PassContext& ctx) final {
    XOPT_RETURN_IF_ERROR(ctx.require_shapes(model));
    model_ = &model;
    ir::Graph& g = *model.graph;
    std::unordered_set<const ir::Node*> removed;
    bool changed = false;
    for (ir::Node* n : g.node_list()) {
      if (removed.count(n) != 0 || !rewrite(g, n, removed, ctx)) continue;
      ctx.count(name());
      changed = true;
    }
    return changed;
  }

 protected:
  // Rewrites the pattern rooted at `root` and returns true, or returns false having changed
  // nothing. Nodes it removes go into `removed` (fuse::replace_chain does that). Counters beyond
  // the pass's own name (one per rewrite, counted by run) are the rewrite's to add.
  virtual bool rewrite(ir::Graph& g, ir::Node* root, std::unordered_set<const ir::Node*>& removed,
                       PassContext& ctx) = 0;

  // The model being rewritten, for rewrites that change model-level facts (the opset import).
  ir::Model* model_ = nullptr;
};

}  // namespace xopt::passes::fuse
