#include "pipeline/request.h"

#include <cstdlib>
#include <utility>

#include "pipeline/parse.h"

namespace xopt::pipeline {
namespace {

// --input-shape NAME=DIMS binds a shape; NAME=MIN:MAX or NAME=MIN:OPT:MAX is a range.
Status parse_shapes(const std::vector<std::string>& given, Options& o) {
  for (const auto& s : given) {
    const size_t eq = s.rfind('=');
    if (eq != std::string::npos && s.find(':', eq) != std::string::npos) {
      auto range = passes::parse_input_shape_range(s);
      if (!range.is_ok()) return invalid_argument("--input-shape: " + range.status().message());
      o.ranges.push_back(std::move(*range));
      continue;
    }
    auto parsed = passes::parse_input_shape(s);
    if (!parsed.is_ok()) return invalid_argument("--input-shape: " + parsed.status().message());
    o.shapes.input_shapes[parsed->first] = parsed->second;
  }
  return Status::ok();
}

// A size flag: `flag` names it in the error.
Result<size_t> size_of(const std::string& flag, const std::string& text) {
  auto size = parse_size(text);
  if (!size.is_ok()) return invalid_argument(flag + ": " + size.status().message());
  return *size;
}

Status parse_external_data(const std::string& text, ir::SaveOptions& save) {
  if (text == "never") {
    save.external = ir::SaveOptions::External::kNever;
  } else if (!text.empty() && text != "auto") {
    XOPT_ASSIGN_OR_RETURN(save.external_threshold, size_of("--external-data", text));
    save.external = ir::SaveOptions::External::kAlways;
  }
  return Status::ok();
}

// "--mem-budget 200MiB", or "50%".
Result<MemoryBudget> parse_budget(const std::string& text) {
  MemoryBudget b;
  if (!text.empty() && text.back() == '%') {
    char* end = nullptr;
    b.percent = std::strtod(text.c_str(), &end);
    if (end != text.c_str() + text.size() - 1 || !(b.percent >= 0 && b.percent <= 100))
      return invalid_argument("--mem-budget '" + text + "': a percentage must be 0% to 100%");
    return b;
  }
  XOPT_ASSIGN_OR_RETURN(b.bytes, size_of("--mem-budget", text));
  return b;
}

// The plan group's flags.
Status parse_planning(const Request& r, Options& o) {
  passes::PassOptions& p = o.pass_options;
  p.plan_alignment = r.align;
  p.plan_io_in_arena = r.io_in_arena;
  // Planning for the GPU puts each node's (measured) workspace in the arena: it takes the bytes
  // the activations leave free at that node's step.
  p.plan_workspace_in_arena = r.workspace_in_arena || r.device.cuda();
  if (!r.max_batch.empty()) {
    XOPT_ASSIGN_OR_RETURN(p.max_batch_bytes, size_of("--max-batch", r.max_batch));
    if (p.max_batch_bytes == 0) return invalid_argument("--max-batch must be positive");
  }
  if (!r.mem_budget.empty()) {
    XOPT_ASSIGN_OR_RETURN(o.mem_budget, parse_budget(r.mem_budget));
  }
  o.h2d_gbps = r.h2d_gbps;
  return Status::ok();
}

}  // namespace

Result<Options> options_from_request(const Request& r) {
  if (r.model.empty()) return invalid_argument("no model given (see xopt --help)");
  XOPT_RETURN_IF_ERROR(check_device_flags(r.device));
  Options o;
  o.model = r.model;
  o.output = r.output.empty() ? default_output(r.model) : r.output;
  o.passes = r.passes;
  o.disable = split_list(r.disable);
  o.print_after = split_list(r.print_after);
  o.print_dir = r.print_dir;
  o.verify_each = r.verify_each;
  o.stats_json = r.stats_json;
  o.report_dir = r.report_dir;
  o.dot_dir = r.dot_dir;
  o.device = r.device;
  o.pass_options.precision = r.precision;
  XOPT_RETURN_IF_ERROR(parse_shapes(r.input_shapes, o));
  if (r.batch != 0) o.shapes.batch = r.batch;
  XOPT_RETURN_IF_ERROR(parse_external_data(r.external_data, o.save));
  if (!r.fold_max_bytes.empty()) {
    XOPT_ASSIGN_OR_RETURN(o.pass_options.fold_max_bytes,
                          size_of("--fold-max-bytes", r.fold_max_bytes));
  }
  XOPT_RETURN_IF_ERROR(parse_planning(r, o));
  XOPT_RETURN_IF_ERROR(check_options(o));
  return o;
}

}  // namespace xopt::pipeline
