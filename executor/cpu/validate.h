// Validation: run a model (and optionally a second one, e.g. its optimized form) on the same inputs
// with the CPU reference executor and compare the outputs (compare.h states the rule).
//
//   one model:  its outputs against the expected outputs stored with the inputs (output_*.pb)
//   two models: B's outputs against A's (A is the reference); stored expected outputs are not used
//
// A model that carries a memory plan (metadata xopt.memory_plan) runs inside it (arena mode), so a
// planned model is validated in exactly the memory it planned, unless use_plan is false.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "executor/cpu/compare.h"
#include "executor/cpu/session.h"
#include "ir/graph.h"
#include "ir/tensor.h"

namespace xopt::exec {

struct ValidateOptions {
  CompareTolerance tolerance;
  bool use_plan = true;
};

// Outputs of one run, named after the graph outputs, and how the model was run.
struct ModelOutputs {
  std::vector<std::string> names;
  std::vector<ir::Tensor> tensors;
  std::string mode;  // "simple" or "arena (plan, N bytes)"
};

// Runs `model` on the inputs it declares among `inputs` (others are left out, so A's inputs can
// feed a B whose cleanup removed an unused input; a missing one is run_model's error naming it).
// Errors carry the model's path.
Result<ModelOutputs> run_for_validation(const ir::Model& model,
                                        const std::map<std::string, ir::Tensor>& inputs,
                                        const ValidateOptions& options = {});

// Pairs every reference output with the output of `actual` of the same name or, when some name is
// missing and both have the same count, of the same position; a reference output left without a
// partner becomes a row whose problem says so.
std::vector<TensorDiff> compare_outputs(const ModelOutputs& actual, const ModelOutputs& reference,
                                        const CompareTolerance& tolerance);

// Expected outputs of a data set, named after `graph`'s outputs by position.
ModelOutputs expected_outputs(const ir::Graph& graph, const std::vector<ir::Tensor>& tensors);

}  // namespace xopt::exec
