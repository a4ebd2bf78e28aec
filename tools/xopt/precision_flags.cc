#include "tools/xopt/precision_flags.h"

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "passes/precision/precision_analysis.h"

namespace xopt::tool {

void add_precision_flags(CLI::App& app, PrecisionFlags& f) {
  app.add_option("--precision", f.precision,
                 "Store and compute in fp16, bf16, or per node (mixed, chosen by a calibration "
                 "run within --max-error); default fp32 changes nothing. Runs convert-precision "
                 "before plan-memory unless --passes names the precision group")
      ->check(CLI::IsMember({"fp32", "fp16", "bf16", "mixed"}));
  app.add_flag("--keep-io-types,!--no-keep-io-types", f.keep_io_types,
               "Graph inputs and outputs keep their types, with one Cast at each boundary "
               "(default on)");
  app.add_option("--keep-fp32", f.keep_fp32,
                 "Keep these nodes in fp32: an op type (Softmax), a node name, or /regex/ on "
                 "node names (repeatable); wins over every rule")
      ->type_size(1)
      ->allow_extra_args(false);
  app.add_option("--force-lowp", f.force_lowp,
                 "Convert these nodes (same syntax as --keep-fp32) even where the integer or mask "
                 "rules would keep them fp32; never where the op's schema has no such type")
      ->type_size(1)
      ->allow_extra_args(false);
  app.add_flag("--no-auto", f.no_auto,
               "Convert every node the schema allows: no integer-chain, mask or range rule (the "
               "naive converter, to see what it breaks)");
  app.add_option("--max-error", f.max_error,
                 "--precision mixed: the largest relative RMS error ||y - y_fp32|| / ||y_fp32|| "
                 "allowed on each output, as estimated from per-node errors (default 1e-2, 1%: "
                 "cosine >= 0.99995 against fp32)");
  app.add_option("--calibration", f.calibration,
                 "--precision mixed: folder of test_data_set_* inputs for the calibration run "
                 "(default: seeded random inputs)");
}

Status apply_precision_flags(const PrecisionFlags& f, passes::PassOptions& options) {
  passes::PrecisionOptions& p = options.precision;
  if (f.precision == "fp32") {
    p.mode = passes::PrecisionMode::kFp32;
  } else if (f.precision == "fp16") {
    p.mode = passes::PrecisionMode::kFp16;
  } else if (f.precision == "bf16") {
    p.mode = passes::PrecisionMode::kBf16;
  } else if (f.precision == "mixed") {
    p.mode = passes::PrecisionMode::kMixed;
  } else {
    return invalid_argument("--precision '" + f.precision + "': use fp32, fp16, bf16 or mixed");
  }
  if (!(f.max_error > 0) || !std::isfinite(f.max_error))
    return invalid_argument("--max-error must be a positive number");
  // Bad /regex/ entries are reported now, not after loading the model.
  XOPT_RETURN_IF_ERROR(passes::NodeMatcher::make(f.keep_fp32, "--keep-fp32").status());
  XOPT_RETURN_IF_ERROR(passes::NodeMatcher::make(f.force_lowp, "--force-lowp").status());
  p.keep_io_types = f.keep_io_types;
  p.keep_fp32 = f.keep_fp32;
  p.force_lowp = f.force_lowp;
  p.auto_rules = !f.no_auto;
  p.max_error = f.max_error;
  p.calibration_dir = f.calibration;
  return Status::ok();
}

}  // namespace xopt::tool
