#include "executor/cpu/subgraph_run.h"

#include <optional>

#include "executor/cpu/parallel.h"
#include "executor/cpu/session.h"

namespace xopt::exec {

ir::SubgraphOptions subgraph_exec_options() {
  ir::SubgraphOptions o;
  o.type_outer_reads = false;
  o.drop_input_shapes = true;
  return o;
}

Status add_outer_values(const KernelContext& ctx, const ir::Subgraph& sg,
                        std::map<std::string, ExecValue>& ins) {
  const auto& implicit = ctx.node().implicit_inputs();
  for (const std::string& name : sg.outer_names) {
    std::optional<ExecValue> v;
    for (size_t i = 0; i < implicit.size(); ++i)
      if (implicit[i] != nullptr && implicit[i]->name() == name) v = ctx.any_implicit_input(i);
    if (!v)
      return ctx.error("the subgraph reads outer-scope value '" + name +
                       "', which is not available here");
    ins[name] = std::move(*v);
  }
  return Status::ok();
}

Result<std::vector<ExecValue>> run_body_values(const KernelContext& ctx, const ir::Subgraph& sg,
                                               const std::map<std::string, ExecValue>& ins) {
  RunOptions ro;
  ro.threads = intra_op_threads();
  auto outs = run_model_values(sg.model, ins, ro);
  if (!outs.is_ok())
    return outs.status().with_context(ctx.node().describe() + ": in subgraph '" +
                                      sg.model.graph->shell().name() + "': ");
  return outs;
}

}  // namespace xopt::exec
