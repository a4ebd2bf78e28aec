// Validation as a library call: one model against the outputs stored beside it, or two models on
// the same inputs, every output compared. `xopt validate`, `xopt --validate` and the Python
// package's xopt.validate call it; none of it prints.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "executor/cpu/validate.h"
#include "ir/graph.h"
#include "ir/shape_inference.h"
#include "pipeline/device.h"
#include "precision/accuracy.h"

namespace xopt::pipeline {

// What to run on and how to compare (the command line's flags of `xopt validate`).
struct ValidateRequest {
  std::string data;                 // a test_data_set folder, or a folder of them
  std::vector<std::string> inputs;  // NAME=FILE.pb, applied to every data set
  std::vector<std::string> ranges;  // NAME=LO:HI for random inputs
  uint64_t seed = 0;
  double rtol = 1e-4;
  double atol = 1e-5;
  bool random = false;   // ignore stored data sets
  bool no_plan = false;  // run planned models in simple mode
  std::string json;      // write the accuracy report (precision/accuracy.h) to this file
  DeviceFlags device;    // cuda: the GPU's outputs against the CPU's and the stored ones
};

// One comparison: its title (which run against which) and a row per output.
using ValidationTable = precision::AccuracyTable;

struct ValidationOutcome {
  std::vector<std::string> notes;  // where the inputs came from, one line each
  std::vector<ValidationTable> tables;
  size_t data_sets = 0;
  int outputs = 0;  // rows over every table
  int bad = 0;      // rows outside tolerance
  exec::CompareTolerance tolerance;
  bool passed() const { return bad == 0; }
};

// Runs A (and B) on the same inputs, per data set: on the CPU, B against A when B is given, else A
// against the expected outputs stored with the inputs; with device cuda, B (else A) on the GPU
// against A on the CPU, then against the stored outputs when there are some. Inputs: `data`, else
// the test_data_set_* folders beside A (unless `inputs` or `random`), else seeded random inputs
// (A's declared shapes with `shapes` for symbolic dims, B's static dims where A leaves them open);
// `inputs` files replace the inputs they name. `out` is filled as the runs go, so on an error it
// holds the tables made before it. A mismatch is not an error: see `out->passed()`.
Status validate_models(const ir::Model& a, const ir::Model* b, const ValidateRequest& request,
                       const ir::ShapeBindings& shapes, const std::string& label_a,
                       const std::string& label_b, ValidationOutcome* out);

// `xopt validate`'s --input-shape NAME=DIMS (repeatable) and --batch N as shape bindings; a
// malformed shape or a negative batch is an invalid-argument error naming the flag.
Result<ir::ShapeBindings> validation_shapes(const std::vector<std::string>& input_shapes,
                                            int64_t batch);

// The notes and every table with its accuracy figures, as `xopt validate` prints them.
std::string validation_text(const ValidationOutcome& outcome);
// "validation passed: N outputs in M data sets within tolerance", or the failure message
// "validation failed: K of N outputs outside tolerance".
std::string validation_verdict(const ValidationOutcome& outcome);

}  // namespace xopt::pipeline
