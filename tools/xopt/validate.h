// Validation shared by `xopt validate A [B]` and `xopt --passes=... --validate model.onnx`, and the
// op listing of `xopt --list-ops`.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/shape_inference.h"
#include "pipeline/validate.h"
#include "tools/xopt/device.h"

namespace xopt::tool {

using ValidateFlags = pipeline::ValidateRequest;

// Adds --data, --input, --input-range, --seed, --rtol, --atol, --random-inputs, --no-plan, --json
// and the device flags (device.h).
void add_validate_flags(CLI::App& app, ValidateFlags& flags);

// pipeline::validate_models, printed: the notes and, per data set, each comparison table on stdout,
// then the verdict. Returns 0 when every output is within tolerance, 1 on a mismatch (or a
// usage error), other codes (command.h) when a model cannot be run; errors go to stderr naming the
// model and the input or node.
int validate_models(const ir::Model& a, const ir::Model* b, const ValidateFlags& flags,
                    const ir::ShapeBindings& shapes, const std::string& label_a,
                    const std::string& label_b);

// One line per op the CPU executor (or with `device` cuda, the CUDA executor) has a kernel for: op,
// domain, opset range. Returns the exit code.
int list_ops(const DeviceFlags& device = {});

}  // namespace xopt::tool
