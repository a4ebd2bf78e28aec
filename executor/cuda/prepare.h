// A model made ready for the CUDA executor: the plan it carries (metadata "xopt.memory_plan"), or,
// for a model without one, a copy whose input shapes are bound to the inputs given, with shapes
// inferred and a plan made here. Validation and benchmarks use it; a planned model is always run in
// exactly its own plan.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "common/status.h"
#include "executor/cuda/session.h"
#include "ir/graph.h"
#include "ir/tensor.h"
#include "planner/memory_plan.h"

namespace xopt::cuda {

struct PreparedSession {
  std::unique_ptr<Session> session;
  planner::MemoryPlan plan;
  bool plan_from_model = false;  // the model's own plan (else one made here)
};

// `shapes`: the inputs that will be fed (only their dims and dtypes are read).
Result<PreparedSession> prepare_session(const ir::Model& model,
                                        const std::map<std::string, ir::Tensor>& shapes,
                                        const SessionOptions& options = {});

// Runs `model` once on `inputs` on the GPU (prepare_session + run), for conformance cases. With
// `specialize_shape_inputs`, every graph input of at most 64 elements that nodes read only as a
// second or later input (shapes, axes, pads, bounds, scales) is made a constant holding the value
// fed: the CUDA executor compiles for static shapes and constant parameters, and ONNX's test cases
// feed those as graph inputs.
Result<std::vector<ir::Tensor>> run_once(const ir::Model& model,
                                         const std::map<std::string, ir::Tensor>& inputs,
                                         const SessionOptions& options = {},
                                         bool specialize_shape_inputs = true);

}  // namespace xopt::cuda
