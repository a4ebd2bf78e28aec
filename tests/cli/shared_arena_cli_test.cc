// xopt --shared-arena: every model optimized and planned beside itself, each output records the
// group, the figures follow the formula, and groups the flags cannot make are usage errors.
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "ir/onnx_io.h"
#include "planner/annotate.h"
#include "planner/shared_arena.h"
#include "tests/cli/cli_util.h"

namespace xopt {
namespace {

std::string chain(int width) {
  const std::string w = std::to_string(width);
  return R"(<ir_version: 8, opset_import: ["" : 17]>
  g (float[4,)" +
         w + R"(] x) => (float[4,)" + w + R"(] y) <float[)" + w + R"(] b = {)" +
         [&] {
           std::string v;
           for (int i = 0; i < width; ++i) v += (i ? ", " : "") + std::to_string(i % 7);
           return v;
         }() +
         R"(}> {
    a = Add(x, b)
    e = Exp(a)
    s = Add(a, e)
    y = Neg(s)
  })";
}

TEST(CliSharedArena, ThreeModelsShareOneArena) {
  test::TempDir dir;
  const std::vector<int> widths = {64, 1024, 256};
  std::vector<std::string> models;
  for (size_t i = 0; i < widths.size(); ++i) {
    models.push_back(dir / ("m" + std::to_string(i) + ".onnx"));
    test::write_proto(models.back(), test::parse_text_proto(chain(widths[i])));
  }
  auto r = test::run_xopt({"--passes=fold,fuse,plan", "-q", "--shared-arena", models[0], models[1],
                           models[2], "--report", dir / "rep"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(test::read_file(dir / "rep/shared_arena.json"));
  const std::string id = j["group"]["id"].get<std::string>();
  EXPECT_NE(r.out.find("shared arena " + id + ": 3 models"), std::string::npos) << r.out;
  size_t params = 0, io = 0, arena = 0, ws = 0, separate = 0, context = 0;
  for (size_t i = 0; i < widths.size(); ++i) {
    auto m = ir::load_model(dir / ("m" + std::to_string(i) + ".opt.onnx"));
    ASSERT_TRUE(m.is_ok()) << m.status().message();
    auto plan = planner::read_plan(*m);
    ASSERT_TRUE(plan.is_ok());
    auto group = planner::read_shared_arena(*m);
    ASSERT_TRUE(group.is_ok() && group->has_value());
    EXPECT_EQ((*group)->id, id);
    EXPECT_EQ((*group)->members, models);  // named by the paths as given
    params += plan->breakdown.parameters;
    io += plan->breakdown.io;
    arena = std::max(arena, plan->arena_bytes);
    ws = std::max(ws, plan->workspace_bytes);
    context = std::max(context, plan->breakdown.cuda_context);
    separate += plan->breakdown.total();
    EXPECT_LE(plan->arena_bytes, (*group)->arena_bytes);
  }
  EXPECT_EQ(arena, 4u * 1024 * 4 * 2);  // m1: a and e live together
  EXPECT_EQ(j["group"]["arena_bytes"], arena);
  EXPECT_EQ(j["shared_total"], params + io + arena + ws + context);
  EXPECT_EQ(j["separate_total"], separate);
  EXPECT_LT(j["shared_total"].get<size_t>(), separate);
}

// --name names the members everywhere: the table, shared_arena.json, each output's own record
// (which says which member it is) and xviz's bars drawn from the outputs.
TEST(CliSharedArena, MembersCarryTheNamesGiven) {
  test::TempDir dir;
  const std::vector<std::string> names = {"encoder", "decoder"};
  const std::string a = dir / "a.onnx", b = dir / "b.onnx";
  test::write_proto(a, test::parse_text_proto(chain(8)));
  test::write_proto(b, test::parse_text_proto(chain(64)));
  auto r = test::run_xopt({"--passes=fold,plan", "-q", "--shared-arena", a, b, "--name", names[0],
                           "--name", names[1], "--report", dir / "rep"});
  ASSERT_EQ(r.code, 0) << r.err;
  for (const std::string& n : names)
    EXPECT_NE(r.out.find("  " + n + " "), std::string::npos) << r.out;
  auto j = nlohmann::json::parse(test::read_file(dir / "rep/shared_arena.json"));
  ASSERT_EQ(j["members"].size(), 2u);
  const std::vector<std::string> outputs = {dir / "a.opt.onnx", dir / "b.opt.onnx"};
  for (size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(j["members"][i]["name"], names[i]);
    auto m = ir::load_model(outputs[i]);
    ASSERT_TRUE(m.is_ok()) << m.status().message();
    auto group = planner::read_shared_arena(*m);
    ASSERT_TRUE(group.is_ok() && group->has_value());
    EXPECT_EQ((*group)->members, names);
    EXPECT_EQ((*group)->member, names[i]);
    EXPECT_EQ((*group)->id, j["group"]["id"]);
  }
  const std::string svg = dir / "bars.svg";
  ASSERT_EQ(std::system((std::string(XVIZ_BIN) + " -q breakdown " + outputs[0] + " " + outputs[1] +
                         " -o " + svg + " > /dev/null 2>&1")
                            .c_str()),
            0);
  const std::string drawn = test::read_file(svg);
  for (const std::string& n : names) EXPECT_NE(drawn.find(">" + n), std::string::npos) << n;
  EXPECT_EQ(drawn.find("a.opt.onnx"), std::string::npos) << "bars by file name";
}

TEST(CliSharedArena, UsageErrors) {
  test::TempDir dir;
  const std::string a = dir / "a.onnx", b = dir / "b.onnx";
  test::write_proto(a, test::parse_text_proto(chain(8)));
  test::write_proto(b, test::parse_text_proto(chain(16)));
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"--passes=fold,plan", "--shared-arena", a},                           // one model
           {"--passes=fold,plan", "--shared-arena", a, b, "-o", dir / "x.onnx"},  // one output
           {"--passes=fold,fuse", "--shared-arena", a, b},                        // nothing planned
       }) {
    auto r = test::run_xopt(args);
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_EQ(r.err.rfind("xopt: error: ", 0), 0u) << r.err;
  }
  EXPECT_EQ(dir.files(), (std::vector<std::string>{"a.onnx", "b.onnx"}));
}

}  // namespace
}  // namespace xopt
