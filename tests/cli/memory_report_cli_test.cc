// The memory report as a user reads it (issue 30): under --mem-budget the printed breakdown,
// report.json and plan-info count the resident parameters and the staging on the device and the
// offloaded weights on the host, with the offload schedule's device total (within the budget);
// --shared-arena names its members as given (or by --name) from any working folder, with a group
// id that does not change with that folder; `xopt bench --device cpu --json` has a memory section.
#include <filesystem>
#include <nlohmann/json.hpp>

#include "ir/onnx_io.h"
#include "planner/annotate.h"
#include "planner/planner.h"
#include "planner/shared_arena.h"
#include "tests/cli/cli_util.h"

namespace xopt {
namespace {

namespace fs = std::filesystem;

// x[1, 256] -> MatMul(w_i) ... with float weights of widths[i] columns (w0 256 rows): 1, 16, 8
// and 2 MiB for {1024, 4096, 512, 1024}. The weights are initializers with raw data.
onnx::ModelProto matmul_chain(const std::vector<int64_t>& widths) {
  std::string sig = "<ir_version: 8, opset_import: [\"\" : 17]>\ng (float[1,256] x";
  std::string body;
  int64_t k = 256;
  for (size_t i = 0; i < widths.size(); ++i) {
    const std::string n = std::to_string(i);
    sig += ", float[" + std::to_string(k) + "," + std::to_string(widths[i]) + "] w" + n;
    body += "  y" + n + " = MatMul(" + (i == 0 ? std::string("x") : "y" + std::to_string(i - 1)) +
            ", w" + n + ")\n";
    k = widths[i];
  }
  const std::string last = "y" + std::to_string(widths.size() - 1);
  onnx::ModelProto m =
      test::parse_text_proto(sig + ") => (float[1," + std::to_string(widths.back()) + "] " + last +
                             ") {\n" + body + "}\n");
  // The weights become initializers (and stop being inputs).
  auto* g = m.mutable_graph();
  k = 256;
  for (size_t i = 0; i < widths.size(); ++i) {
    onnx::TensorProto* t = g->add_initializer();
    t->set_name("w" + std::to_string(i));
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_dims(k);
    t->add_dims(widths[i]);
    std::string raw(static_cast<size_t>(k * widths[i]) * 4, '\0');
    for (size_t b = 0; b < raw.size(); b += 4) raw[b + 3] = 0x3c;  // 2^-7 and its neighbours
    t->set_raw_data(raw);
    k = widths[i];
  }
  g->mutable_input()->DeleteSubrange(1, static_cast<int>(widths.size()));
  return m;
}

// The bytes printed on the line "  LABEL   123456 ..." of a table (npos: no such line).
size_t row_bytes(const std::string& text, const std::string& label) {
  size_t at = text.find("\n  " + label + "  ");
  if (at == std::string::npos) return std::string::npos;
  at += 3 + label.size();
  while (at < text.size() && text[at] == ' ') ++at;
  return std::stoull(text.substr(at));
}

TEST(CliMemoryReport, MemBudgetBreakdownIsTheOffloadSchedulesDeviceTotal) {
  test::TempDir dir;
  const std::string model = dir / "chain.onnx", out = dir / "chain.opt.onnx";
  test::write_proto(model, matmul_chain({1024, 4096, 512, 1024}));
  const size_t budget = size_t{20} << 20;  // the chain needs 27 MiB of parameters
  auto r = test::run_xopt({"--passes=fold,fuse,plan", model, "-o", out, "--mem-budget", "20MiB",
                           "--report", dir / "rep"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(test::read_file(dir / "rep/report.json"));
  ASSERT_TRUE(j.contains("offload")) << j.dump(2);
  const auto& off = j["offload"];
  const auto& dev = j["breakdown"]["device"];
  const size_t device_total = off["device_total"].get<size_t>();
  const size_t resident = off["resident_parameters"].get<size_t>();
  ASSERT_GT(off["offloaded_bytes"].get<size_t>(), 0u);
  EXPECT_EQ(off["budget"].get<size_t>(), budget);
  EXPECT_EQ(dev["total"]["bytes"].get<size_t>(), device_total);
  EXPECT_LE(dev["total"]["bytes"].get<size_t>(), budget);
  EXPECT_EQ(dev["parameters"]["bytes"].get<size_t>(), resident);
  EXPECT_EQ(dev["staging"]["bytes"], off["staging_bytes"]);
  EXPECT_EQ(j["breakdown"]["host"]["offloaded_parameters"]["bytes"], off["offloaded_bytes"]);
  EXPECT_EQ(j["breakdown"]["parameters"].get<size_t>(), size_t{27} << 20);
  EXPECT_TRUE(j["breakdown"]["budget"]["within"].get<bool>());
  EXPECT_EQ(dev["total_with_context"]["bytes"].get<size_t>(),
            device_total + dev["cuda_context"]["bytes"].get<size_t>());

  // The table the user reads first says the same.
  EXPECT_EQ(row_bytes(r.err, "device total"), device_total) << r.err;
  EXPECT_EQ(row_bytes(r.err, "parameters (resident)"), resident) << r.err;
  EXPECT_EQ(row_bytes(r.err, "offloaded parameters"), off["offloaded_bytes"].get<size_t>())
      << r.err;
  EXPECT_EQ(row_bytes(r.err, "parameters"), std::string::npos)
      << "every parameter counted on the device:\n"
      << r.err;
  EXPECT_NE(r.err.find("within the --mem-budget of 20.00 MiB"), std::string::npos) << r.err;

  // plan-info reads the same breakdown back from the model.
  auto info = test::run_xopt({"plan-info", out});
  ASSERT_EQ(info.code, 0) << info.err;
  EXPECT_EQ(row_bytes(info.out, "device total"), device_total) << info.out;
  EXPECT_EQ(row_bytes(info.out, "parameters (resident)"), resident) << info.out;

  // Without a budget every parameter is on the device and nothing on the host.
  auto plain = test::run_xopt(
      {"--passes=fold,fuse,plan", model, "-o", dir / "plain.onnx", "--report", dir / "rep2"});
  ASSERT_EQ(plain.code, 0) << plain.err;
  EXPECT_EQ(row_bytes(plain.err, "parameters"), size_t{27} << 20) << plain.err;
  EXPECT_EQ(plain.err.find("host (pinned memory)"), std::string::npos) << plain.err;
  auto pj = nlohmann::json::parse(test::read_file(dir / "rep2/report.json"));
  EXPECT_FALSE(pj.contains("offload"));
  EXPECT_GT(pj["breakdown"]["device"]["total"]["bytes"].get<size_t>(), budget);
}

// a/model.onnx, b/model.onnx, c/model.onnx: three files of one name in three folders.
struct ThreeModels {
  test::TempDir dir;
  ThreeModels() {
    const std::vector<std::vector<int64_t>> widths = {{64}, {128, 64}, {256}};
    for (size_t i = 0; i < 3; ++i) {
      const fs::path folder = dir.path() / std::string(1, static_cast<char>('a' + i));
      fs::create_directories(folder);
      test::write_proto((folder / "model.onnx").string(), matmul_chain(widths[i]));
    }
  }
  std::string out(char member) const {
    return (dir.path() / std::string(1, member) / "model.opt.onnx").string();
  }
};

// The group record stored in an output: its id and member names.
planner::SharedArena record(const std::string& path) {
  auto m = ir::load_model(path);
  EXPECT_TRUE(m.is_ok()) << m.status().message();
  if (!m.is_ok()) return {};
  auto g = planner::read_shared_arena(*m);
  EXPECT_TRUE(g.is_ok() && g->has_value());
  return g.is_ok() && g->has_value() ? **g : planner::SharedArena{};
}

TEST(CliMemoryReport, SharedArenaNamesMembersAsGivenAndItsIdIgnoresTheFolder) {
  ThreeModels t;
  const std::vector<std::string> given = {"a/model.onnx", "b/model.onnx", "c/model.onnx"};
  auto r = test::run_xopt_in(t.dir.path().string(),
                             {"--passes=fold,fuse,plan", "-q", given[0], "--shared-arena", given[1],
                              given[2], "--report", "rep"});
  ASSERT_EQ(r.code, 0) << r.err;
  const planner::SharedArena first = record(t.out('a'));
  EXPECT_EQ(first.members, given);
  EXPECT_EQ(first.id.rfind("shared-", 0), 0u) << first.id;
  for (char m : {'b', 'c'}) {
    EXPECT_EQ(record(t.out(m)).id, first.id);
    EXPECT_EQ(record(t.out(m)).members, given);
  }
  auto j = nlohmann::json::parse(test::read_file(t.dir / "rep/shared_arena.json"));
  ASSERT_EQ(j["members"].size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(j["members"][i]["name"], given[i]);
    EXPECT_NE(r.out.find("\n  " + given[i] + " "), std::string::npos) << r.out;
  }
  EXPECT_EQ(j["group"]["id"], first.id);
  EXPECT_NE(r.out.find("shared arena " + first.id + ": 3 models"), std::string::npos) << r.out;
  // Every member's breakdown has the shape of one model's report; the group's total adds up.
  size_t own = 0, arena = 0, context = 0;
  for (const auto& m : j["members"]) {
    const auto& d = m["breakdown"]["device"];
    own += d["parameters"]["bytes"].get<size_t>() + d["io"]["bytes"].get<size_t>() +
           d["staging"]["bytes"].get<size_t>();
    arena = std::max(arena, d["activations"]["bytes"].get<size_t>());
    context = std::max(context, d["cuda_context"]["bytes"].get<size_t>());
  }
  const auto& shared = j["shared"]["breakdown"]["device"];
  EXPECT_EQ(shared["activations"]["bytes"].get<size_t>(), arena);
  EXPECT_EQ(j["shared_total"].get<size_t>(),
            own + arena + shared["workspace"]["bytes"].get<size_t>() + context);
  EXPECT_EQ(shared["total_with_context"]["bytes"], j["shared_total"]);

  // From inside a/, the same models by other relative paths: names as given, the same group.
  const std::vector<std::string> from_a = {"model.onnx", "../b/model.onnx", "../c/model.onnx"};
  auto again = test::run_xopt_in(
      (t.dir.path() / "a").string(),
      {"--passes=fold,fuse,plan", "-q", from_a[0], "--shared-arena", from_a[1], from_a[2]});
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_EQ(record(t.out('b')).members, from_a);
  EXPECT_EQ(record(t.out('b')).id, first.id);
}

TEST(CliMemoryReport, SharedArenaNamesGivenByName) {
  ThreeModels t;
  auto r =
      test::run_xopt({"--passes=fold,fuse,plan", "-q", t.dir / "a/model.onnx", "--shared-arena",
                      t.dir / "b/model.onnx", t.dir / "c/model.onnx", "--name", "small", "--name",
                      "two-layer", "--name", "wide", "--report", t.dir / "rep"});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::vector<std::string> names = {"small", "two-layer", "wide"};
  for (char m : {'a', 'b', 'c'}) EXPECT_EQ(record(t.out(m)).members, names);
  auto j = nlohmann::json::parse(test::read_file(t.dir / "rep/shared_arena.json"));
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(j["members"][i]["name"], names[i]);
    EXPECT_EQ(j["members"][i]["output"], t.out(static_cast<char>('a' + i)));
    EXPECT_NE(r.out.find("\n  " + names[i] + " "), std::string::npos) << r.out;
  }
  EXPECT_NE(test::read_file(t.dir / "rep/shared_arena.html").find(">two-layer<"),
            std::string::npos);
  // One name per member, and only with --shared-arena.
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"--passes=fold,fuse,plan", t.dir / "a/model.onnx", "--shared-arena",
            t.dir / "b/model.onnx", "--name", "x"},
           {"--passes=fold,fuse,plan", t.dir / "a/model.onnx", "--name", "x"}}) {
    auto bad = test::run_xopt(args);
    EXPECT_EQ(bad.code, 1) << bad.err;
    EXPECT_NE(bad.err.find("--name"), std::string::npos) << bad.err;
  }
}

TEST(CliMemoryReport, CpuBenchJsonHasTheMemoryItUsed) {
  test::TempDir dir;
  const std::string model = dir / "chain.onnx", out = dir / "chain.opt.onnx";
  test::write_proto(model, matmul_chain({64, 128}));
  ASSERT_EQ(test::run_xopt({"--passes=fold,fuse,plan", "-q", model, "-o", out}).code, 0);
  auto r = test::run_xopt({"bench", out, "--device", "cpu", "--warmup", "0", "--iterations", "2",
                           "--json", dir / "b.json"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto m = ir::load_model(out);
  ASSERT_TRUE(m.is_ok());
  auto plan = planner::read_plan(*m);
  ASSERT_TRUE(plan.is_ok());
  auto j = nlohmann::json::parse(test::read_file(dir / "b.json"));
  ASSERT_TRUE(j.contains("memory")) << j.dump(2);
  const auto& mem = j["memory"];
  EXPECT_EQ(mem["device"], "cpu");
  EXPECT_TRUE(mem["planned"].get<bool>());
  EXPECT_EQ(mem["arena"].get<size_t>(), plan->arena_bytes);
  EXPECT_EQ(mem["plan_arena"].get<size_t>(), plan->arena_bytes);
  EXPECT_EQ(mem["parameters"].get<size_t>(), planner::parameter_bytes(*m->graph));
  EXPECT_EQ(mem["parameters"].get<size_t>(), (256u * 64 + 64u * 128) * 4);
  EXPECT_EQ(mem["breakdown"]["device"]["activations"]["bytes"].get<size_t>(), plan->arena_bytes);
  EXPECT_NE(r.out.find("memory     parameters"), std::string::npos) << r.out;

  // A model without a plan: the activations' peak instead of an arena.
  auto plain = test::run_xopt({"bench", model, "--device", "cpu", "--warmup", "0", "--iterations",
                               "1", "--json", dir / "p.json"});
  ASSERT_EQ(plain.code, 0) << plain.err;
  auto pj = nlohmann::json::parse(test::read_file(dir / "p.json"));
  ASSERT_TRUE(pj.contains("memory"));
  EXPECT_FALSE(pj["memory"]["planned"].get<bool>());
  EXPECT_EQ(pj["memory"]["arena"].get<size_t>(), 0u);
  EXPECT_GT(pj["memory"]["peak_activations"].get<size_t>(), 0u);
  EXPECT_FALSE(pj["memory"].contains("breakdown"));
}

}  // namespace
}  // namespace xopt
