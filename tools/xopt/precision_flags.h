// The precision flags of `xopt` (--precision, --keep-io-types, --keep-fp32, --force-lowp,
// --no-auto, --max-error, --calibration) and their translation into PassOptions::precision.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "common/status.h"
#include "ir/graph.h"
#include "passes/pass.h"

namespace xopt::tool {

struct PrecisionFlags {
  std::string precision = "fp32";
  bool keep_io_types = true;
  std::vector<std::string> keep_fp32;
  std::vector<std::string> force_lowp;
  bool no_auto = false;
  double max_error = 1e-2;
  std::string calibration;
};

void add_precision_flags(CLI::App& app, PrecisionFlags& flags);

// Fills options.precision (the chooser of `mixed` is installed by whoever owns calibration).
// Errors name the flag and what is wrong with it.
Status apply_precision_flags(const PrecisionFlags& flags, passes::PassOptions& options);

}  // namespace xopt::tool
