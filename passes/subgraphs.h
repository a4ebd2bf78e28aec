// Graph-rewriting passes (cleanup, fold, fuse) also run inside subgraphs: If branches and Loop and
// Scan bodies, nested ones included. Each subgraph is rewritten as a model of its own (see
// ir/subgraph.h: the outer-scope values it reads are inputs there, so no pass folds or removes
// them) and written back into its attribute.
#pragma once

#include <string_view>

#include "common/status.h"
#include "passes/pass.h"

namespace xopt::passes {

// True for passes that rewrite graphs locally; false for the plan group's passes, which plan the
// top-level graph as a whole (a subgraph runs as one step of it, see planner/README.md).
bool runs_in_subgraphs(std::string_view pass_name);

// Runs `pass` inside every subgraph of `model`, recursively. True when a subgraph changed. The
// subgraphs' counters add to ctx's.
Result<bool> run_in_subgraphs(Pass& pass, ir::Model& model, PassContext& ctx);

}  // namespace xopt::passes
