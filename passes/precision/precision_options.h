// What the precision pass (convert-precision, group `precision`) is asked to do. Tools fill it from
// --precision, --keep-io-types, --keep-fp32, --force-lowp, --no-auto, --max-error and
// --calibration; tests set it directly. The default (fp32) changes nothing.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "ir/dtype.h"

namespace xopt::ir {
struct Model;
}

namespace xopt::passes {

enum class PrecisionMode { kFp32, kFp16, kBf16, kMixed };

// The per-node choice of `mixed`, keyed by node name: ir::DType::kFloat16, kBFloat16 or kFloat.
// A node the map does not name stays fp32.
using PrecisionChoice = std::map<std::string, ir::DType, std::less<>>;

struct PrecisionOptions;

// Makes the `mixed` choice for a model as the pass sees it (after fusion, before planning): runs
// calibration and returns the per-node types. Installed by the tool (it needs the CPU executor and
// calibration data, which the pass does not own); the pass calls it once per run in mixed mode.
using PrecisionChooser =
    std::function<Result<PrecisionChoice>(const ir::Model& model, const PrecisionOptions& options)>;

struct PrecisionOptions {
  PrecisionMode mode = PrecisionMode::kFp32;
  // Graph inputs and outputs keep their types: one Cast at each boundary, shared by every consumer.
  bool keep_io_types = true;
  // false (--no-auto): every node whose schema takes the target type is converted; no range, mask
  // or integer-chain rule keeps anything in fp32 (the naive converter, to show what it breaks).
  bool auto_rules = true;
  // The user's own choices; each entry is an op type ("Softmax"), a node name, or /regex/ matched
  // against node names. keep_fp32 wins over every rule; force_lowp over every rule but the schema.
  std::vector<std::string> keep_fp32;
  std::vector<std::string> force_lowp;
  // mixed: the largest estimated relative RMS error ||y_mixed - y|| / ||y|| allowed on each of the
  // model's outputs; 1e-2 means cosine >= 0.99995 against fp32 (precision/choose.h).
  double max_error = 1e-2;
  // mixed: test_data_set_* folders for the calibration run; empty: seeded random inputs.
  std::string calibration_dir;
  PrecisionChooser choose;  // mixed: see PrecisionChooser
};

}  // namespace xopt::passes
