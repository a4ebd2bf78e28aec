// PassManager: pipelines from names, groups and their order, fixpoint cap, --disable-pass, stats,
// verification after each pass, dumps, and shape re-inference after changes.
#include <gtest/gtest.h>

#include <regex>

#include "ir/text.h"
#include "passes/pass_manager.h"
#include "passes/pass_registry.h"
#include "tests/util/pass_golden.h"

namespace xopt {
namespace {

using passes::GroupInfo;
using passes::Pass;
using passes::PassContext;
using passes::PassInfo;
using passes::PassManager;
using passes::PassManagerOptions;
using passes::PassRegistry;
using passes::PipelineStats;

constexpr const char* kModel = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float[2,3] x) => (float[2,3] y) {
    a = Identity(x)
    b = Relu(a)
    dead = Neg(b)
    y = Identity(b)
  })";

// Reports a change for its first `changes` runs (and changes nothing); counts its runs.
class CountingPass : public Pass {
 public:
  CountingPass(std::string name, int changes, int* runs)
      : name_(std::move(name)), changes_(changes), runs_(runs) {}
  std::string_view name() const override { return name_; }
  Result<bool> run(ir::Model&, PassContext& ctx) override {
    ++*runs_;
    ctx.count("ticks");
    return changes_-- > 0;
  }

 private:
  std::string name_;
  int changes_;
  int* runs_;
};

PassInfo counting(const std::string& name, int changes, int* runs,
                  std::vector<passes::GroupMembership> groups) {
  return PassInfo{name, "test pass",
                  [=] { return std::unique_ptr<Pass>(new CountingPass(name, changes, runs)); },
                  std::move(groups)};
}

TEST(PassRegistry, BuiltinPassesAreWellFormed) {
  const auto& reg = PassRegistry::global();
  EXPECT_TRUE(reg.errors().empty()) << reg.errors().front();
  std::regex kebab("[a-z][a-z0-9]*(-[a-z0-9]+)*");
  for (const auto* p : reg.passes()) {
    EXPECT_TRUE(std::regex_match(p->name, kebab)) << p->name;
    EXPECT_FALSE(p->description.empty()) << p->name;
    EXPECT_EQ(p->description.find('\n'), std::string::npos) << p->name;
    EXPECT_EQ(p->create()->name(), p->name);
  }
  for (const char* g : {"cleanup", "fold", "fuse", "plan"})
    EXPECT_NE(reg.find_group(g), nullptr) << g;
  EXPECT_EQ(reg.members("cleanup"),
            (std::vector<std::string>{"eliminate-noops", "fold-shapes", "eliminate-dead-code"}));
}

TEST(PassManager, GroupsExpandInDeclaredOrder) {
  PassManager pm;
  ASSERT_TRUE(pm.add_pipeline("cleanup, eliminate-dead-code").is_ok());
  EXPECT_EQ(pm.describe(),
            "cleanup*(eliminate-noops, fold-shapes, eliminate-dead-code), eliminate-dead-code");
  EXPECT_EQ(pm.pass_names(),
            (std::vector<std::string>{"eliminate-noops", "fold-shapes", "eliminate-dead-code",
                                      "eliminate-dead-code"}));
}

TEST(PassManager, UnknownNamesAreUsageErrors) {
  PassManager pm;
  Status s = pm.add_pipeline("cleanup,no-such-pass");
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find("unknown pass 'no-such-pass'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("eliminate-dead-code"), std::string::npos) << "lists known names";
  EXPECT_TRUE(pm.empty());
  EXPECT_EQ(pm.add_pipeline("cleanup,,eliminate-noops").code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(pm.add_pipeline("cleanup", {"nope"}).code(), ErrorCode::kInvalidArgument);
}

TEST(PassManager, EmptyGroupIsAnError) {
  PassRegistry reg;
  reg.add_group(GroupInfo{"empty", "nothing", true, 25, {}});
  PassManager pm;
  Status s = pm.add_pipeline("empty", {}, reg);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find("'empty' has no passes"), std::string::npos) << s.message();
}

TEST(PassManager, RegistryErrorsAreReported) {
  PassRegistry reg;
  int runs = 0;
  reg.add_pass(counting("a", 0, &runs, {{"missing-group", 1}}));
  reg.add_pass(counting("a", 0, &runs, {}));
  auto errors = reg.errors();
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_NE(errors[0].find("registered twice"), std::string::npos);
  EXPECT_NE(errors[1].find("unknown group 'missing-group'"), std::string::npos);
  PassManager pm;
  EXPECT_EQ(pm.add_pipeline("a", {}, reg).code(), ErrorCode::kInternal);
}

TEST(PassManager, GroupsNestAndMembersRunInOrder) {
  PassRegistry reg;
  int runs = 0;
  reg.add_group(GroupInfo{"outer", "", false, 25, {}});
  reg.add_group(GroupInfo{"inner", "", true, 25, {{"outer", 20}}});
  reg.add_pass(counting("late", 0, &runs, {{"outer", 30}}));
  reg.add_pass(counting("early", 0, &runs, {{"outer", 10}}));
  reg.add_pass(counting("in", 0, &runs, {{"inner", 1}}));
  EXPECT_TRUE(reg.errors().empty());
  PassManager pm;
  ASSERT_TRUE(pm.add_pipeline("outer", {}, reg).is_ok());
  EXPECT_EQ(pm.describe(), "outer(early, inner*(in), late)");

  reg.add_group(GroupInfo{"loop", "", false, 25, {{"loop2", 1}}});
  reg.add_group(GroupInfo{"loop2", "", false, 25, {{"loop", 1}}});
  auto errors = reg.errors();
  ASSERT_FALSE(errors.empty());
  EXPECT_NE(errors.front().find("contains itself"), std::string::npos);
}

TEST(PassManager, FixpointRunsUntilNothingChanges) {
  PassRegistry reg;
  int a_runs = 0, b_runs = 0;
  reg.add_group(GroupInfo{"fix", "", true, 25, {}});
  reg.add_pass(counting("a", 2, &a_runs, {{"fix", 1}}));
  reg.add_pass(counting("b", 0, &b_runs, {{"fix", 2}}));
  PassManager pm;
  ASSERT_TRUE(pm.add_pipeline("fix", {}, reg).is_ok());
  ir::Model model = test::parse_text(kModel);
  PassContext ctx;
  PipelineStats stats;
  ASSERT_TRUE(pm.run(model, ctx, &stats).is_ok());
  // Two changing rounds, then one that confirms the fixpoint.
  EXPECT_EQ(a_runs, 3);
  EXPECT_EQ(b_runs, 3);
  ASSERT_EQ(stats.groups.size(), 1u);
  EXPECT_EQ(stats.groups[0].iterations, 3);
  EXPECT_TRUE(stats.groups[0].converged);
  EXPECT_EQ(stats.find("a")->runs, 3);
  EXPECT_EQ(stats.find("a")->changed, 2);
  EXPECT_EQ(stats.find("a")->counters.at("ticks"), 3);
  EXPECT_EQ(stats.find("b")->changed, 0);
}

TEST(PassManager, FixpointStopsAtTheCap) {
  PassRegistry reg;
  int runs = 0;
  reg.add_group(GroupInfo{"fix", "", true, 4, {}});
  reg.add_pass(counting("forever", 1000, &runs, {{"fix", 1}}));
  PassManager pm;
  ASSERT_TRUE(pm.add_pipeline("fix", {}, reg).is_ok());
  ir::Model model = test::parse_text(kModel);
  PassContext ctx;
  PipelineStats stats;
  ASSERT_TRUE(pm.run(model, ctx, &stats).is_ok());
  EXPECT_EQ(runs, 4);
  EXPECT_EQ(stats.groups[0].iterations, 4);
  EXPECT_FALSE(stats.groups[0].converged);
  EXPECT_NE(passes::stats_table(stats).find("stopped at the cap of 4"), std::string::npos);
  EXPECT_EQ(passes::stats_to_json(stats)["groups"][0]["converged"], false);
}

TEST(PassManager, NonFixpointGroupRunsOnce) {
  PassRegistry reg;
  int runs = 0;
  reg.add_group(GroupInfo{"once", "", false, 25, {}});
  reg.add_pass(counting("p", 1000, &runs, {{"once", 1}}));
  PassManager pm;
  ASSERT_TRUE(pm.add_pipeline("once", {}, reg).is_ok());
  ir::Model model = test::parse_text(kModel);
  PassContext ctx;
  ASSERT_TRUE(pm.run(model, ctx).is_ok());
  EXPECT_EQ(runs, 1);
}

TEST(PassManager, DisablePassLeavesItOut) {
  PassManager pm(PassManagerOptions{true, {}, {}, 16, {}});
  ASSERT_TRUE(pm.add_pipeline("cleanup", {"eliminate-dead-code"}).is_ok());
  EXPECT_EQ(pm.describe(), "cleanup*(eliminate-noops, fold-shapes)");
  ir::Model model = test::parse_text(kModel);
  PassContext ctx;
  PipelineStats stats;
  ASSERT_TRUE(pm.run(model, ctx, &stats).is_ok());
  EXPECT_EQ(stats.find("eliminate-dead-code"), nullptr);
  EXPECT_NE(model.graph->find_node_output("dead"), nullptr) << "dead code stays";
  EXPECT_EQ(model.graph->num_nodes(), 2u);  // Relu, Neg

  PassManager none;
  ASSERT_TRUE(none.add_pipeline("cleanup,eliminate-noops", {"cleanup"}).is_ok());
  EXPECT_EQ(none.describe(), "eliminate-noops");
}

TEST(PassManager, CleanupStatsOnAModel) {
  auto r = test::run_pipeline("cleanup", kModel);
  ASSERT_TRUE(r.status.is_ok()) << r.status.message();
  EXPECT_EQ(r.text, test::canonical(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,3] x) => (float[2,3] y) {
      y = Relu(x)
    })"));
  EXPECT_EQ(r.stats.nodes_before, 4);
  EXPECT_EQ(r.stats.nodes_after, 1);
  const auto* noops = r.stats.find("eliminate-noops");
  const auto* dce = r.stats.find("eliminate-dead-code");
  ASSERT_NE(noops, nullptr);
  ASSERT_NE(dce, nullptr);
  EXPECT_EQ(noops->nodes_removed, 2);
  EXPECT_EQ(noops->counters.at("Identity"), 2);
  EXPECT_EQ(dce->nodes_removed, 1);
  EXPECT_EQ(noops->runs, 2);  // one changing round, one confirming round
  EXPECT_EQ(r.stats.groups[0].iterations, 2);

  auto j = passes::stats_to_json(r.stats);
  EXPECT_EQ(j["nodes_before"], 4);
  EXPECT_EQ(j["nodes_after"], 1);
  ASSERT_EQ(j["passes"].size(), 3u);
  EXPECT_EQ(j["passes"][0]["name"], "eliminate-noops");
  EXPECT_EQ(j["passes"][0]["counters"]["Identity"], 2);
  EXPECT_EQ(j["passes"][2]["nodes_removed"], 1);
  std::string table = passes::stats_table(r.stats);
  EXPECT_NE(table.find("eliminate-noops"), std::string::npos);
  EXPECT_NE(table.find("Identity: 2"), std::string::npos);
  EXPECT_NE(table.find("nodes 4 -> 1"), std::string::npos);
}

// Counts node replacements even when a new node reuses a removed node's memory.
class ReplaceRelu : public Pass {
 public:
  std::string_view name() const override { return "replace-relu"; }
  Result<bool> run(ir::Model& model, PassContext&) override {
    ir::Graph& g = *model.graph;
    for (ir::Node* n : g.node_list()) {
      if (!n->is("Relu")) continue;
      ir::Node* s = g.add_node("Sigmoid", {n->input(0)}, {"s"}, "", n);
      g.replace_all_uses(n->output(0), s->output(0));
      g.remove_node(n);
      return true;
    }
    return false;
  }
};

TEST(PassManager, CountsAddedAndRemovedNodes) {
  PassManager pm(PassManagerOptions{true, {}, {}, 16, {}});
  pm.add_pass(std::make_unique<ReplaceRelu>());
  ir::Model model = test::parse_text(kModel);
  PassContext ctx;
  PipelineStats stats;
  ASSERT_TRUE(pm.run(model, ctx, &stats).is_ok());
  EXPECT_EQ(stats.find("replace-relu")->nodes_added, 1);
  EXPECT_EQ(stats.find("replace-relu")->nodes_removed, 1);
}

class BreakIr : public Pass {
 public:
  std::string_view name() const override { return "break-ir"; }
  Result<bool> run(ir::Model& model, PassContext&) override {
    ir::Graph& g = *model.graph;
    g.add_node("Relu", {g.get_or_create_value("nowhere")}, {"r"});
    return true;
  }
};

class FailingPass : public Pass {
 public:
  std::string_view name() const override { return "failing"; }
  Result<bool> run(ir::Model&, PassContext&) override {
    return invalid_model("node 'n' (Foo): cannot do it");
  }
};

TEST(PassManager, VerifyEachNamesThePassThatBrokeTheGraph) {
  PassManager pm(PassManagerOptions{true, {}, {}, 16, {}});
  pm.add_pass(std::make_unique<BreakIr>());
  ir::Model model = test::parse_text(kModel);
  PassContext ctx;
  Status s = pm.run(model, ctx);
  EXPECT_EQ(s.code(), ErrorCode::kPassFailed);
  EXPECT_NE(s.message().find("pass 'break-ir' left an invalid graph"), std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("nowhere"), std::string::npos) << s.message();

  PassManager unchecked;
  unchecked.add_pass(std::make_unique<BreakIr>());
  ir::Model model2 = test::parse_text(kModel);
  EXPECT_TRUE(unchecked.run(model2, ctx).is_ok()) << "no verification without verify_each";
}

TEST(PassManager, PassErrorsNameThePassAndStopThePipeline) {
  PassManager pm;
  pm.add_pass(std::make_unique<FailingPass>());
  int runs = 0;
  pm.add_pass(std::make_unique<CountingPass>("after", 0, &runs));
  ir::Model model = test::parse_text(kModel);
  PassContext ctx;
  PipelineStats stats;
  Status s = pm.run(model, ctx, &stats);
  EXPECT_EQ(s.code(), ErrorCode::kPassFailed);
  EXPECT_EQ(s.message(), "pass 'failing' failed: node 'n' (Foo): cannot do it");
  EXPECT_EQ(runs, 0);
  EXPECT_EQ(stats.find("failing")->runs, 1);
}

TEST(PassManager, PrintAfterDumpsTheGraph) {
  std::vector<passes::GraphDump> dumps;
  PassManagerOptions options;
  options.print_after = {"eliminate-noops", "cleanup"};
  options.dump = [&](const passes::GraphDump& d) { dumps.push_back(d); };
  PassManager pm(options);
  ASSERT_TRUE(pm.add_pipeline("cleanup").is_ok());
  ir::Model model = test::parse_text(kModel);
  PassContext ctx;
  ASSERT_TRUE(pm.run(model, ctx).is_ok());
  ASSERT_EQ(dumps.size(), 3u);  // noops in rounds 1 and 2, then the group
  EXPECT_EQ(dumps[0].after, "eliminate-noops");
  EXPECT_EQ(dumps[0].run, 1);
  EXPECT_TRUE(dumps[0].changed);
  EXPECT_EQ(dumps[0].text.find("Identity"), std::string::npos);
  EXPECT_NE(dumps[0].text.find("Neg"), std::string::npos) << "dead code not yet removed";
  EXPECT_EQ(dumps[1].run, 2);
  EXPECT_FALSE(dumps[1].changed);
  EXPECT_EQ(dumps[2].after, "cleanup");
  EXPECT_EQ(dumps[2].text, ir::print_graph_text(model));
}

TEST(PassManager, PrintAfterMustNameAStepOfThePipeline) {
  PassManagerOptions options;
  options.print_after = {"fold-shapes"};
  PassManager pm(options);
  ASSERT_TRUE(pm.add_pipeline("eliminate-noops").is_ok());
  Status s = pm.validate();
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find("'fold-shapes' is not in the pipeline"), std::string::npos);
}

// Reads shapes (and counts inference runs) / changes the graph without preserving shapes.
class NeedsShapes : public Pass {
 public:
  std::string_view name() const override { return "needs-shapes"; }
  Result<bool> run(ir::Model& model, PassContext& ctx) override {
    XOPT_RETURN_IF_ERROR(ctx.require_shapes(model));
    return false;
  }
};

class ChangesShapes : public Pass {
 public:
  explicit ChangesShapes(bool preserves) : preserves_(preserves) {}
  std::string_view name() const override { return "changes"; }
  bool preserves_shapes() const override { return preserves_; }
  Result<bool> run(ir::Model&, PassContext&) override { return true; }

 private:
  bool preserves_;
};

TEST(PassManager, ShapesAreReinferredOnlyAfterChanges) {
  for (bool preserves : {false, true}) {
    PassManager pm;
    pm.add_pass(std::make_unique<NeedsShapes>());
    pm.add_pass(std::make_unique<NeedsShapes>());
    pm.add_pass(std::make_unique<ChangesShapes>(preserves));
    pm.add_pass(std::make_unique<NeedsShapes>());
    ir::Model model = test::parse_text(kModel);
    PassContext ctx;
    PipelineStats stats;
    ASSERT_TRUE(pm.run(model, ctx, &stats).is_ok());
    EXPECT_EQ(stats.shape_inference_runs, preserves ? 1 : 2) << preserves;
    EXPECT_TRUE(ctx.shapes_valid());
  }
}

TEST(PassManager, ShapesAreCurrentAfterTheRunWhenPassesUsedThem) {
  PassManager pm;
  pm.add_pass(std::make_unique<NeedsShapes>());
  pm.add_pass(std::make_unique<ChangesShapes>(false));
  ir::Model model = test::parse_text(kModel);
  PassContext ctx;
  PipelineStats stats;
  ASSERT_TRUE(pm.run(model, ctx, &stats).is_ok());
  EXPECT_EQ(stats.shape_inference_runs, 2);
  EXPECT_TRUE(ctx.shapes_valid());
}

TEST(PassOptions, ParsesInputShapes) {
  auto r = passes::parse_input_shape("input=1x3x224x224");
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(r->first, "input");
  EXPECT_EQ(r->second, (std::vector<int64_t>{1, 3, 224, 224}));
  auto eq = passes::parse_input_shape("a=b=2,3");
  ASSERT_TRUE(eq.is_ok());
  EXPECT_EQ(eq->first, "a=b");
  EXPECT_EQ(eq->second, (std::vector<int64_t>{2, 3}));
  for (const char* bad : {"input", "=1x3", "x=", "x=1xx3", "x=1x-3", "x=1.5", "x=1x3x"})
    EXPECT_FALSE(passes::parse_input_shape(bad).is_ok()) << bad;
}

TEST(PassContext, CountsOutsideAManager) {
  PassContext ctx;
  ctx.count("a");
  ctx.count("a", 4);
  EXPECT_EQ(ctx.counters().at("a"), 5);
}

// A context copied or assigned counts into its own counters, not into the one it came from (the
// subgraph runner assigns a fresh context to retry a branch; ASan found the assigned one reading
// the destroyed temporary's map).
TEST(PassContext, CopiesAndAssignmentsCountForThemselves) {
  passes::PassContext a;
  a.count("a");
  passes::PassContext b = a;
  b.count("b");
  EXPECT_EQ(a.counters().count("b"), 0u);
  EXPECT_EQ(b.counters().at("a"), 1);
  passes::PassContext c;
  c = passes::PassContext(passes::PassOptions{});
  c.count("c", 2);
  EXPECT_EQ(c.counters().size(), 1u);
  EXPECT_EQ(c.counters().at("c"), 2);
  std::map<std::string, int64_t, std::less<>> sink;
  c.set_counter_sink(&sink);
  c.count("d");
  EXPECT_EQ(sink.at("d"), 1);
  EXPECT_EQ(c.counters().count("c"), 0u) << "the sink while it is set";
  c.set_counter_sink(nullptr);
  EXPECT_EQ(c.counters().at("c"), 2);
}

}  // namespace
}  // namespace xopt
