#include "executor/cpu/validate.h"

#include <algorithm>

#include "planner/annotate.h"

namespace xopt::exec {

Result<ModelOutputs> run_for_validation(const ir::Model& model,
                                        const std::map<std::string, ir::Tensor>& inputs,
                                        const ValidateOptions& options) {
  const ir::Graph& g = *model.graph;
  const std::string where = model.path.empty() ? std::string("model") : model.path;
  std::map<std::string, ir::Tensor> feeds;
  for (const auto& [name, t] : inputs) {
    const ir::Value* v = g.find_value(name);
    if (v != nullptr && v->is_graph_input()) feeds[name] = t;
  }
  ModelOutputs out;
  for (const ir::Value* v : g.outputs()) out.names.push_back(v->name());
  RunOptions ro;
  RunStats stats;
  ro.stats = &stats;
  planner::MemoryPlan plan;
  if (options.use_plan && model.metadata(planner::kPlanMetadataKey)) {
    auto p = planner::read_plan(model);
    if (!p.is_ok()) return p.status().with_context(where + ": ");
    plan = std::move(*p);
    ro.plan = &plan;
  }
  auto res = run_model(model, feeds, ro);
  if (!res.is_ok())
    return res.status().with_context(where + (ro.plan ? " (in its memory plan): " : ": "));
  out.tensors = std::move(*res);
  out.mode = ro.plan == nullptr
                 ? "simple"
                 : "arena (its memory plan, " + std::to_string(stats.arena_bytes) + " bytes)";
  return out;
}

std::vector<TensorDiff> compare_outputs(const ModelOutputs& actual, const ModelOutputs& reference,
                                        const CompareTolerance& tolerance) {
  auto index_of = [&](const std::string& name) -> int {
    auto it = std::find(actual.names.begin(), actual.names.end(), name);
    return it == actual.names.end() ? -1 : static_cast<int>(it - actual.names.begin());
  };
  bool by_name = true;
  for (const std::string& n : reference.names) by_name = by_name && index_of(n) >= 0;
  const bool by_position = !by_name && actual.tensors.size() == reference.tensors.size();
  std::vector<TensorDiff> diffs;
  for (size_t i = 0; i < reference.tensors.size(); ++i) {
    const std::string& name = reference.names[i];
    int j = by_position ? static_cast<int>(i) : index_of(name);
    if (j < 0 || static_cast<size_t>(j) >= actual.tensors.size()) {
      TensorDiff d;
      d.name = name;
      d.dtype = reference.tensors[i].dtype();
      d.dims = reference.tensors[i].dims();
      d.problem = "no output of that name (or position) to compare with";
      diffs.push_back(std::move(d));
      continue;
    }
    std::string label = name;
    if (actual.names[static_cast<size_t>(j)] != name)
      label += " ~ " + actual.names[static_cast<size_t>(j)];
    diffs.push_back(compare_tensors(label, actual.tensors[static_cast<size_t>(j)],
                                    reference.tensors[i], tolerance));
  }
  return diffs;
}

ModelOutputs expected_outputs(const ir::Graph& graph, const std::vector<ir::Tensor>& tensors) {
  ModelOutputs out;
  out.mode = "expected";
  out.tensors = tensors;
  for (size_t i = 0; i < tensors.size(); ++i)
    out.names.push_back(i < graph.outputs().size() ? graph.outputs()[i]->name()
                                                   : "output_" + std::to_string(i));
  return out;
}

}  // namespace xopt::exec
