#include <charconv>

#include "passes/pass.h"
#include "planner/shape_range.h"

namespace xopt::passes {

Result<std::vector<int64_t>> parse_dims(std::string_view text) {
  std::vector<int64_t> dims;
  if (text.empty()) return invalid_argument("empty shape (expected dims like 1x3x224x224)");
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find_first_of("x,", pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view part = text.substr(pos, end - pos);
    int64_t d = 0;
    auto [p, ec] = std::from_chars(part.data(), part.data() + part.size(), d);
    if (part.empty() || ec != std::errc() || p != part.data() + part.size() || d < 0)
      return invalid_argument("bad dimension '" + std::string(part) + "' in shape '" +
                              std::string(text) + "' (expected dims like 1x3x224x224)");
    dims.push_back(d);
    pos = end + 1;
  }
  return dims;
}

Result<std::pair<std::string, std::vector<int64_t>>> parse_input_shape(std::string_view text) {
  size_t eq = text.rfind('=');
  if (eq == std::string_view::npos || eq == 0)
    return invalid_argument("bad input shape '" + std::string(text) +
                            "' (expected NAME=DIMS, e.g. input=1x3x224x224)");
  XOPT_ASSIGN_OR_RETURN(auto dims, parse_dims(text.substr(eq + 1)));
  return std::make_pair(std::string(text.substr(0, eq)), std::move(dims));
}

Result<planner::InputRange> parse_input_shape_range(std::string_view text) {
  size_t eq = text.rfind('=');
  if (eq == std::string_view::npos || eq == 0)
    return invalid_argument("bad input shape '" + std::string(text) +
                            "' (expected NAME=DIMS or NAME=MIN:MAX, e.g. x=1x3x48x32:1x3x48x2048)");
  planner::InputRange r;
  r.name = std::string(text.substr(0, eq));
  std::vector<std::vector<int64_t>> parts;
  std::string_view rest = text.substr(eq + 1);
  size_t pos = 0;
  while (pos <= rest.size()) {
    size_t colon = rest.find(':', pos);
    if (colon == std::string_view::npos) colon = rest.size();
    auto dims = parse_dims(rest.substr(pos, colon - pos));
    if (!dims.is_ok()) return dims.status().with_context("input '" + r.name + "': ");
    parts.push_back(std::move(*dims));
    pos = colon + 1;
  }
  if (parts.size() > 3)
    return invalid_argument("bad shape range '" + std::string(text) +
                            "' (expected NAME=MIN:MAX or NAME=MIN:OPT:MAX)");
  r.min = parts.front();
  r.max = parts.back();
  if (parts.size() == 3) r.opt = parts[1];
  XOPT_RETURN_IF_ERROR(planner::check_ranges({r}));
  return r;
}

}  // namespace xopt::passes
