// The CUDA executor's session options and footprint as the pipeline and the tools share them
// (only in a build with the CUDA executor).
#pragma once

#ifdef XOPT_WITH_CUDA
#include "executor/cuda/session.h"
#include "pipeline/device.h"

namespace xopt::pipeline {

// tf32, tune and the CUDA graph as `flags` asks.
cuda::SessionOptions cuda_session_options(const DeviceFlags& flags);
// The same, with the algorithm choices `model` stores (unless `tune` asks to search again).
Result<cuda::SessionOptions> cuda_session_options(const DeviceFlags& flags, const ir::Model& model);
// What a loaded session's footprint says: device, context, per-node workspace, regions, choices.
DeviceMeasurement measurement_of(const cuda::Footprint& fp);

}  // namespace xopt::pipeline
#endif
