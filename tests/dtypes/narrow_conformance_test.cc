// The ONNX node tests of the narrow types (Cast/CastLike to and from float8, float8e8m0,
// float4e2m1, int4/uint4, int2/uint2, with and without saturation, and Quantize/DequantizeLinear
// with them) all pass, in simple mode and inside a planned arena. Before these types were
// represented, the 164 cases were reported unsupported.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "executor/cpu/conformance.h"
#include "tests/util/test_util.h"

namespace xopt {
namespace {

namespace fs = std::filesystem;
namespace conf = exec::conformance;

bool is_narrow_case(std::string name) {
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const bool op =
      name.rfind("test_cast", 0) == 0 || name.find("quantizelinear") != std::string::npos;
  if (!op) return false;
  for (const char* t : {"float8", "float4", "int4", "int2", "e8m0", "e4m3", "e5m2", "e2m1"})
    if (name.find(t) != std::string::npos) return true;
  return false;
}

TEST(NarrowConformance, NodeTestsPass) {
  XOPT_REQUIRE_SHARED(shared);
  conf::Options opts;
  opts.also_arena = true;
  int passed = 0, total = 0;
  for (const std::string& path : conf::list_cases(shared + "/onnx-conformance/node")) {
    const std::string name = fs::path(path).filename().string();
    if (!is_narrow_case(name)) continue;
    ++total;
    const conf::CaseResult r = conf::run_case(path, opts);
    if (r.outcome == conf::Outcome::kPassed)
      ++passed;
    else
      ADD_FAILURE() << name << ": " << conf::outcome_name(r.outcome) << ": " << r.detail;
  }
  EXPECT_GE(total, 164);
  EXPECT_EQ(passed, total);
}

}  // namespace
}  // namespace xopt
