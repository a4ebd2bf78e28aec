// The pipeline's options as the front ends take them, in text: xopt's flags bind to a Request,
// the Python package fills one from its keywords, and options_from_request turns it into
// pipeline::Options with the messages both show ("--align must be a power of two, not 3").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "passes/precision/precision_options.h"
#include "pipeline/device.h"
#include "pipeline/pipeline.h"

namespace xopt::pipeline {

struct Request {
  std::string model;
  std::string output;  // empty: <stem>.opt.onnx beside the model
  std::string passes = "cleanup";
  std::vector<std::string> disable;      // "a,b" or repeated
  std::vector<std::string> print_after;  // "a,b" or repeated
  std::string print_dir;
  std::vector<std::string> input_shapes;  // NAME=DIMS, or a range NAME=MIN:MAX / NAME=MIN:OPT:MAX
  int64_t batch = 0;
  bool verify_each = false;
  std::string stats_json;
  std::string external_data;   // "never", "auto", or a size: initializers at least that large
  std::string fold_max_bytes;  // a size; empty: the default
  size_t align = 256;
  std::string max_batch;  // a size: plan at the largest batch that fits
  std::string report_dir;
  std::string dot_dir;
  bool io_in_arena = false;
  bool workspace_in_arena = false;  // on with device cuda
  std::string mem_budget;           // a size, or "P%"
  double h2d_gbps = 0;
  DeviceFlags device;
  passes::PrecisionOptions precision;
};

// The options a request asks for, or the first thing wrong with it (an invalid argument naming
// the flag). Checks everything check_options checks.
Result<Options> options_from_request(const Request& request);

}  // namespace xopt::pipeline
