// Validation shared by `xopt validate A [B]` and `xopt --passes=... --validate model.onnx`, and the
// op listing of `xopt --list-ops`.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/shape_inference.h"
#include "tools/xopt/device.h"

namespace xopt::tool {

struct ValidateFlags {
  std::string data;                 // a test_data_set folder, or a folder of them
  std::vector<std::string> inputs;  // NAME=FILE.pb
  std::vector<std::string> ranges;  // NAME=LO:HI
  uint64_t seed = 0;
  double rtol = 1e-4;
  double atol = 1e-5;
  bool random = false;   // ignore stored data sets
  bool no_plan = false;  // run planned models in simple mode
  std::string json;      // --json FILE: the accuracy report (precision/accuracy.h)
  DeviceFlags device;    // --device cuda: the GPU's outputs against the CPU's and the stored ones
};

// Adds --data, --input, --input-range, --seed, --rtol, --atol, --random-inputs, --no-plan, --json
// and the device flags (device.h).
void add_validate_flags(CLI::App& app, ValidateFlags& flags);

// Runs A (and B) on the same inputs and prints, per data set, the comparison table on stdout: B
// against A when B is given, else A against the expected outputs stored with the inputs. Inputs:
// --data, else the test_data_set_* folders beside A (unless --input or --random-inputs), else
// seeded random inputs (A's declared shapes with `shapes` for symbolic dims); --input files replace
// the inputs they name. Returns 0 when every output is within tolerance, 1 on a mismatch (or a
// usage error), other codes (command.h) when a model cannot be run; errors go to stderr naming the
// model and the input or node.
int validate_models(const ir::Model& a, const ir::Model* b, const ValidateFlags& flags,
                    const ir::ShapeBindings& shapes, const std::string& label_a,
                    const std::string& label_b);

// Every comparison table validate_models prints, as data (the Python package's xopt.validate):
// while a ValidationCapture is installed on this thread, each table is also appended to it.
struct ValidationTable {
  std::string title;
  std::vector<exec::TensorDiff> diffs;
};
struct ValidationCapture {
  std::vector<ValidationTable> tables;
};
// Installs `capture` (nullptr: none) for this thread; returns the previous one.
ValidationCapture* set_validation_capture(ValidationCapture* capture);

// One line per op the CPU executor (or with `device` cuda, the CUDA executor) has a kernel for: op,
// domain, opset range. Returns the exit code.
int list_ops(const DeviceFlags& device = {});

}  // namespace xopt::tool
