// xopt --list-ops: one line per op the CPU executor claims, with its domain and opset range, and
// nothing it does not claim.
#include <map>
#include <set>
#include <sstream>

#include "executor/cpu/kernel.h"
#include "executor/cpu/kernel_precision.h"
#include "tests/cli/cli_util.h"

namespace xopt {
namespace {

TEST(CliListOps, OneLinePerClaimedOpWithDomainAndOpsets) {
  auto r = test::run_xopt({"--list-ops"});
  ASSERT_EQ(r.code, 0) << r.err;
  // (domain, op) -> opsets covered, from the registry the binary links.
  std::map<std::pair<std::string, std::string>, std::set<int>> want;
  for (const auto& k : exec::KernelRegistry::global().all())
    for (int v = k.since_version; v <= k.until_version; ++v)
      want[{k.domain.empty() ? "ai.onnx" : k.domain, k.op_type}].insert(v);
  ASSERT_GT(want.size(), 50u) << "the executor claims many ops";
  EXPECT_EQ(test::count_lines(r.out), static_cast<int>(want.size())) << r.out;

  std::istringstream in(r.out);
  std::string line;
  std::set<std::pair<std::string, std::string>> seen;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string op, domain, opset_word, ranges;
    words >> op >> domain >> opset_word;
    std::getline(words, ranges);
    ASSERT_EQ(opset_word, "opset") << line;
    auto it = want.find({domain, op});
    ASSERT_NE(it, want.end()) << "listed but not claimed: " << line;
    seen.insert(it->first);
    // Then "types f64 f32 f16 bf16; accumulates f64", from the executor's table.
    const size_t types_at = ranges.find("  types ");
    ASSERT_NE(types_at, std::string::npos) << line;
    EXPECT_EQ(ranges.substr(types_at + 8),
              exec::describe(exec::kernel_precision(domain == "ai.onnx" ? "" : domain, op,
                                                    *it->second.rbegin())))
        << line;
    ranges.resize(types_at);
    // "6-12, 13-21" style ranges, covering exactly the claimed opsets.
    std::set<int> got;
    std::istringstream rs(ranges);
    std::string part;
    while (std::getline(rs, part, ',')) {
      int lo = 0, hi = 0;
      ASSERT_EQ(std::sscanf(part.c_str(), " %d-%d", &lo, &hi), 2) << line;
      for (int v = lo; v <= hi; ++v) got.insert(v);
    }
    EXPECT_EQ(got, it->second) << line;
  }
  EXPECT_EQ(seen.size(), want.size());
  EXPECT_NE(r.out.find("\nRelu "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("com.microsoft"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace xopt
