// Every ONNX backend node test (../shared/onnx-conformance/node) of the tensor-manipulation, shape,
// reduction and softmax ops, run through the conformance runner (executor/cpu/conformance.h).
// Single-node tests of these ops must all pass. Multi-node tests that use them (the "_expanded"
// function bodies and the like) must pass once every op they use has a kernel; until then they are
// reported as unsupported, never counted as passed.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <set>

#include "executor/cpu/conformance.h"
#include "tests/util/test_util.h"

namespace xopt::test {
namespace {

namespace conf = exec::conformance;

const std::set<std::string>& tensor_ops() {
  static const std::set<std::string> ops = {"Reshape",
                                            "Flatten",
                                            "Squeeze",
                                            "Unsqueeze",
                                            "Transpose",
                                            "Concat",
                                            "Split",
                                            "Slice",
                                            "Gather",
                                            "GatherElements",
                                            "ScatterND",
                                            "Expand",
                                            "Tile",
                                            "Pad",
                                            "Shape",
                                            "Size",
                                            "ConstantOfShape",
                                            "Range",
                                            "CumSum",
                                            "DepthToSpace",
                                            "SpaceToDepth",
                                            "Trilu",
                                            "TopK",
                                            "ReduceSum",
                                            "ReduceMean",
                                            "ReduceMax",
                                            "ReduceMin",
                                            "ReduceProd",
                                            "ReduceL1",
                                            "ReduceL2",
                                            "ReduceLogSum",
                                            "ReduceLogSumExp",
                                            "ReduceSumSquare",
                                            "ArgMax",
                                            "ArgMin",
                                            "Softmax",
                                            "LogSoftmax"};
  return ops;
}

TEST(TensorNodeTests, EveryNodeTestOfTheTensorOpsPasses) {
  XOPT_REQUIRE_SHARED(shared);
  const std::string root = shared + "/onnx-conformance/node";
  std::vector<std::string> single, multi;
  for (const auto& e : std::filesystem::directory_iterator(root)) {
    const std::string model = (e.path() / "model.onnx").string();
    if (!std::filesystem::exists(model)) continue;
    onnx::ModelProto m = read_proto_file(model);
    bool uses = false;
    for (const auto& n : m.graph().node())
      uses = uses || (n.domain().empty() && tensor_ops().count(n.op_type()) > 0);
    if (!uses) continue;
    (m.graph().node_size() == 1 ? single : multi).push_back(e.path().string());
  }
  std::sort(single.begin(), single.end());
  std::sort(multi.begin(), multi.end());
  ASSERT_GE(single.size(), 250u);

  // Arena mode too: outputs must be identical when every value lives at its planned offset (view
  // ops then find their input's bytes already in their slot).
  conf::Options options;
  options.also_arena = true;
  std::vector<conf::CaseResult> results;
  for (const auto& c : single) {
    results.push_back(conf::run_case(c, options));
    const conf::CaseResult& r = results.back();
    if (r.outcome != conf::Outcome::kPassed)
      ADD_FAILURE() << r.name << " (" << r.op << " opset " << r.opset
                    << "): " << conf::outcome_name(r.outcome) << ": " << r.detail;
  }
  const conf::Tally ts = conf::totals(results);
  int data_sets = 0;
  for (const auto& r : results) data_sets += r.data_sets;
  EXPECT_GE(data_sets, ts.total());
  std::printf("%s", conf::format_report(results, false).c_str());
  std::printf(
      "single-node tests of the tensor ops: %d passed, %d failed, %d unsupported of %d (%d data "
      "sets)\n",
      ts.passed, ts.failed, ts.unsupported, ts.total(), data_sets);
  EXPECT_EQ(ts.passed, ts.total());

  std::vector<conf::CaseResult> multi_results;
  for (const auto& c : multi) {
    multi_results.push_back(conf::run_case(c, options));
    const conf::CaseResult& r = multi_results.back();
    if (r.outcome == conf::Outcome::kFailed)
      ADD_FAILURE() << r.name << ": failed: " << r.detail;
    else if (r.outcome == conf::Outcome::kUnsupported)
      std::printf("  unsupported (not counted): %s: %s\n", r.name.c_str(), r.detail.c_str());
  }
  const conf::Tally tm = conf::totals(multi_results);
  std::printf("multi-node tests using the tensor ops: %d passed, %d failed, %d unsupported of %d\n",
              tm.passed, tm.failed, tm.unsupported, tm.total());
  EXPECT_EQ(tm.failed, 0);
}

}  // namespace
}  // namespace xopt::test
