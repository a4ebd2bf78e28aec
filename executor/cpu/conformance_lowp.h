// fp16 and bf16 twins of the ONNX node tests: every float32 case becomes a float16 and a bfloat16
// case, run by the CPU executor and compared with the fp32 kernels' result rounded at each op,
// which is what the ONNX reference computes for a model stored in the low type (compute in fp32,
// round to the output type at every op).
//
// The twin of a case: every float32 tensor type of the model (graph inputs, outputs, value_info,
// subgraphs included) becomes the low type, float32 initializers and tensor attributes (Constant's
// value, ConstantOfShape's value) are rounded to it, and the type attributes that name float32
// (Cast's `to`, `dtype`, `output_dtype`, `output_datatype`) name it instead. Its inputs are the
// case's inputs rounded to the low type.
//
// The reference: the original fp32 model, fed the same rounded inputs (widened back to float32),
// with every float32 output of every top-level node rounded to the low type (a Cast to it and back
// inserted after the node). Its outputs are exactly representable in the low type.
//
// Tolerance, per output, relative to the reference's scale S = max |reference| (finite elements):
//   |twin - reference| <= eps_T * S * N  +  eps_f32 * S * K  +  tiny_T
// - eps_T (2^-10 for float16, 2^-7 for bfloat16) * S is one unit in the last place at the output's
//   scale: the twin and the reference both round a float32 value to T, and where their float32
//   values differ in the last bits (another summation order) the two roundings may fall on either
//   side of a rounding boundary. N, the number of top-level nodes, allows one such flip per op a
//   value passes through.
// - eps_f32 * S * K bounds the float32 accumulation-order difference itself, K being the
//   accumulation length, taken as the largest input's element count (no op of the suite
//   accumulates more terms than its largest input has elements).
// - tiny_T is the smallest subnormal of T (an all-zero output).
// A kernel that accumulates or stores an intermediate in the low type typically differs by many
// units in the last place and fails; one that computes in float32 and rounds once at its output
// passes. Non-float outputs (indices, bool, shapes) must be equal; NaN matches NaN, infinities
// must be equal.
//
// A case takes part when one of its inputs, outputs or initializers is float32 and none is float16
// or bfloat16 (those are low-precision tests already). The ONNX schema of each node at its opset
// (executor/cpu/onnx_schema_types.inc) decides what converts: a float32 graph input, initializer
// or graph output whose parameter allows float32 but not T stays float32, as in a converted model
// (Resize's scales). The case is skipped when a node's schema allows T nowhere the case has a
// float32 (ops with no fp16/bf16 at that opset), when a float32-only value lies between two nodes,
// when its outputs are random, or when it has sequence or optional values; BitCast cases too (a
// twin would reinterpret other bits). A multi-node model (a function expansion) whose twin is
// ill-typed, because the expansion fixes float32 inside, is skipped and says so (ill_typed). The
// twin keeps FlexAttention's score_mod/prob_mod subgraphs float32 (softmax_precision), and names
// T in the window ops' output_datatype where the attribute is absent (its default is float32).
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "common/status.h"
#include "ir/graph.h"
#include "ir/tensor.h"

namespace xopt::exec::conformance {

enum class LowpOutcome {
  kPassed,
  kFailed,       // a value outside the tolerance, or an error
  kUnsupported,  // the twin hit something the CPU executor does not implement (an op's kernel
                 // refuses the low type)
  kSkipped,      // not a float32 case, no T in the schema, random outputs, non-tensor values
};
const char* lowp_outcome_name(LowpOutcome o);

struct LowpCaseResult {
  std::string name;  // "test_abs"
  std::string op;    // as CaseResult::op
  int64_t opset = 0;
  ir::DType dtype = ir::DType::kFloat16;
  LowpOutcome outcome = LowpOutcome::kFailed;
  bool schema_lacks_type = false;  // kSkipped because the schema has no T there
  // kSkipped: a multi-node model (a function expansion) whose twin the executor refuses as
  // ill-typed, because the expansion fixes float32 inside (Cast to float, ConstantOfShape's
  // default)
  bool ill_typed = false;
  std::string detail;  // why it failed, is unsupported or is skipped
  // The largest |twin - reference| / tolerance over the outputs (passed: <= 1).
  double worst_ratio = 0.0;
};

// The twin of `model` in `to` (float16 or bfloat16), as described above; the top-level values
// named in `keep_f32` (graph inputs, outputs, initializers) stay float32.
Result<ir::Model> lowp_twin(const ir::Model& model, ir::DType to,
                            const std::set<std::string>& keep_f32 = {});

// A float32 tensor rounded to `to` (float16 or bfloat16), or a float16/bfloat16 tensor widened to
// float32; any other tensor is returned as it is.
ir::Tensor convert_float(const ir::Tensor& t, ir::DType to);

// Loads the case at `path` (a node-test folder), builds its twin in `to` and its reference, runs
// both and compares. Never fails: problems become the outcome.
LowpCaseResult run_lowp_case(const std::string& path, ir::DType to);
// The same for both types, loading and probing the case once: {float16, bfloat16}.
std::vector<LowpCaseResult> run_lowp_case(const std::string& path,
                                          const std::vector<ir::DType>& types);

}  // namespace xopt::exec::conformance
