// The ONNX backend conformance runner: loads test folders of the ONNX project's own suite, runs
// them with the CPU executor and compares with the expected outputs.
//
// Layouts understood:
//   DIR/model.onnx + DIR/test_data_set_*/input_*.pb, output_*.pb      (node/, simple/, pytorch-*/)
//   light/light_NAME.onnx + light/light_NAME_output_0.pb               (light/: no stored inputs;
//   every
//     float input is fed arange(n).reshape(shape) / n as float32, unknown dims taken as 1)
// Inputs and outputs are matched to the graph's runtime inputs and outputs by position.
//
// Comparison follows the ONNX backend defaults: same dtype and shape; float types pass when
// |actual - expected| <= atol + rtol * |expected| (NaN equals NaN); integers, bool and strings must
// be equal. One widening, reported per case: an element also passes when it differs by less than
// the reference's own resolution, one ulp of the output's largest magnitude (eps(dtype) *
// max|expected|). The stored outputs were computed in their own precision (numpy >= 2 runs a
// complex64 FFT in float32), so an element whose exact value is 0 carries the reference's rounding
// noise of the whole transform: test_dft_inverse stores 1.9e-7 where the exact inverse is 0, and
// atol 1e-7 alone would fail any implementation more precise than the reference.
//
// Test data of sequence and optional inputs and outputs (SequenceProto, OptionalProto files) is
// read as the graph declares them and run with run_model_values; sequences compare element by
// element, optionals by presence and then content.
//
// Outcomes: passed; failed (a wrong value, shape or dtype, or any error); unsupported (something we
// do not implement: a node whose op has no kernel at that opset, an element type the IR or a kernel
// does not support, a map or a sequence of non-tensors, or a result that depends on numpy's random
// stream). Unsupported is never counted as passed.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "ir/graph.h"
#include "ir/tensor.h"

namespace xopt::exec::conformance {

enum class Outcome { kPassed, kFailed, kUnsupported };
const char* outcome_name(Outcome o);

struct Options {
  double rtol = 1e-3;
  double atol = 1e-7;
  // Also run every data set in an arena laid out by sequential_plan (graph inputs and outputs
  // inside the arena) and require outputs identical to simple mode. Models whose graph inputs or
  // outputs are sequences or optionals run in simple mode only.
  bool also_arena = false;
  // Runs a case's model on one data set's inputs (graph outputs in order); unset: the CPU executor.
  // `xopt conformance --device cuda` sets the CUDA executor here. An unsupported error (no kernel
  // for the op on that device) makes the case unsupported, any other error makes it fail.
  std::function<Result<std::vector<ir::Tensor>>(const ir::Model&,
                                                const std::map<std::string, ir::Tensor>&)>
      runner;
};

struct CaseResult {
  std::string suite;  // the folder the case was found in ("node", "light", ...)
  std::string name;   // "test_abs", "light_resnet50"
  std::string path;   // the test folder, or the light model file
  // The op under test: the domain-qualified op type of a single-node model ("Abs",
  // "com.microsoft.Gelu"); for a multi-node model the model itself ("simple/test_sequence_model1").
  std::string op;
  int64_t opset = 0;  // of the op's domain (single-node models)
  bool single_node = false;
  Outcome outcome = Outcome::kFailed;
  std::string detail;  // why it failed or is unsupported
  int data_sets = 0;   // data sets run
  // The model draws random values (RandomUniform, Bernoulli, ...): the expected outputs come from
  // numpy's random stream, which no other generator reproduces, so each output is checked for its
  // type, shape, finiteness and range (every value within the expected values' [min, max], and
  // integral where they all are) instead of value by value.
  bool random_values = false;
  // Passed, with this many output elements apart from the reference by more than atol + rtol *
  // |expected| but less than its resolution (see the comparison rule above).
  int64_t below_resolution = 0;
};

// Test cases under `dir`, sorted: every folder holding model.onnx (searched two levels deep), and
// every light_*.onnx file that has a light_*_output_0.pb beside it. `dir` may itself be a case.
std::vector<std::string> list_cases(const std::string& dir);

// Loads, runs and compares one case. Never fails: problems become the outcome.
CaseResult run_case(const std::string& path, const Options& options = {});

// A case's model and its tensor data sets, read as run_case reads them, for callers that run them
// some other way (conformance_lowp.h runs their fp16 and bf16 twins). Light models and cases with
// sequence or optional values are unsupported here.
struct LoadedCase {
  ir::Model model;
  std::string name;  // as CaseResult::name
  std::string op;    // as CaseResult::op
  int64_t opset = 0;
  bool single_node = false;
  struct Data {
    std::string name;  // "test_data_set_0"
    std::map<std::string, ir::Tensor> inputs;
    std::vector<ir::Tensor> outputs;
  };
  std::vector<Data> data_sets;
  // Why the outputs cannot be reproduced (random values, numpy's random stream), or "".
  std::string random;
};
Result<LoadedCase> load_case(const std::string& path);

// Compares one output; `why` gets the first difference. With `below_resolution`, elements within
// the reference's resolution pass too and are counted there (the conformance rule); without it the
// comparison is atol + rtol * |expected| alone (atol = rtol = 0: equal values).
bool outputs_match(const ir::Tensor& actual, const ir::Tensor& expected, double rtol, double atol,
                   std::string* why, int64_t* below_resolution = nullptr);

// Reads a serialized TensorProto file.
Result<ir::Tensor> read_tensor_file(const std::string& path);

struct Tally {
  int passed = 0, failed = 0, unsupported = 0;
  int random = 0;  // of the passed: checked by type, shape and range (CaseResult::random_values)
  int resolution = 0;  // of the passed: some elements within the reference's resolution only
  int total() const { return passed + failed + unsupported; }
  void add(const CaseResult& c);
};
// Per op (CaseResult::op), sorted by name; single-node ops first, then multi-node models.
std::vector<std::pair<std::string, Tally>> tally_by_op(const std::vector<CaseResult>& results);
Tally totals(const std::vector<CaseResult>& results);

// The per-op table and totals as text; with `details`, one line per failed or unsupported case too.
std::string format_report(const std::vector<CaseResult>& results, bool details);

}  // namespace xopt::exec::conformance
