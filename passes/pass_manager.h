// Runs a pipeline of passes and pass groups over a model, with verification after each pass, graph
// dumps after chosen passes and per-pass statistics. The library never prints: statistics come back
// as data (a table and JSON are made from them) and dumps go to a callback the tool supplies.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "ir/graph.h"
#include "passes/pass.h"
#include "passes/pass_registry.h"

namespace xopt::passes {

struct PassStats {
  std::string name;
  int64_t runs = 0;
  int64_t changed = 0;  // runs that changed the model
  int64_t nodes_removed = 0;
  int64_t nodes_added = 0;
  double seconds = 0;
  std::map<std::string, int64_t, std::less<>> counters;  // PassContext::count
};

struct GroupStats {
  std::string name;
  bool fixpoint = false;
  int64_t runs = 0;        // how often the group was entered
  int64_t iterations = 0;  // rounds over its members, over all runs
  int max_iterations = 0;
  bool converged = true;  // false when a fixpoint run stopped at max_iterations still changing
};

struct PipelineStats {
  std::string pipeline;           // PassManager::describe()
  std::vector<PassStats> passes;  // one per pass name, in the order they first ran
  std::vector<GroupStats> groups;
  int64_t nodes_before = 0;
  int64_t nodes_after = 0;
  int64_t initializers_before = 0;
  int64_t initializers_after = 0;
  int64_t shape_inference_runs = 0;
  double shape_inference_seconds = 0;
  double seconds = 0;
  bool changed = false;

  const PassStats* find(std::string_view pass) const;
};

nlohmann::json stats_to_json(const PipelineStats& stats);
// A fixed-width table, one row per pass, then groups and totals; ends with a newline.
std::string stats_table(const PipelineStats& stats);

// The graph after a pass (or group) named in print_after, in ONNX text syntax.
struct GraphDump {
  std::string after;  // pass or group name
  int64_t run = 0;    // 1 for its first run, 2 for the second, ...
  bool changed = false;
  std::string text;
};

struct PassManagerOptions {
  // ir::verify after every pass run; a failure is an error naming the pass (tests always set this).
  bool verify_each = false;
  // Pass or group names after whose every run `dump` receives the graph.
  std::vector<std::string> print_after;
  std::function<void(const GraphDump&)> dump;
  int64_t dump_max_elements = 16;  // larger initializers print as their signature only
  // Called before every pass run with its name and the graph's node count (tools show progress).
  std::function<void(const std::string& pass, size_t nodes)> on_pass_start;
};

class PassManager {
 public:
  explicit PassManager(PassManagerOptions options = {});
  ~PassManager();
  PassManager(PassManager&&) noexcept;
  PassManager& operator=(PassManager&&) noexcept;

  // Appends the passes and groups of a comma-separated pipeline ("cleanup,fuse-conv-bn"), leaving
  // out the passes or groups named in `disabled` wherever they occur. Errors name an unknown pass
  // or an empty group.
  Status add_pipeline(std::string_view spec, const std::vector<std::string>& disabled = {},
                      const PassRegistry& registry = PassRegistry::global());
  // Appends a pass, or a group of passes, built by the caller (tests, tools with fixed pipelines).
  void add_pass(std::unique_ptr<Pass> pass);
  // Inserts the registered pass `name` just before the first pass named `anchor` (inside groups
  // too), or at the end when no pass is so named; for passes a flag adds (--precision adds
  // convert-precision before plan-memory). Errors name an unknown pass.
  Status insert_pass_before(std::string_view anchor, std::string_view name,
                            const PassRegistry& registry = PassRegistry::global());
  void add_group(std::string name, bool fixpoint, std::vector<std::unique_ptr<Pass>> passes,
                 int max_iterations = kDefaultFixpointCap);

  // Checks that every print_after name is in the pipeline (run() checks it too).
  Status validate() const;
  // "cleanup*(eliminate-noops, fold-shapes, eliminate-dead-code)"; * marks a fixpoint group.
  std::string describe() const;
  // The pass names in the order a single round would run them.
  std::vector<std::string> pass_names() const;
  bool empty() const;

  // Runs the pipeline. `stats` (optional) is filled as far as the run got, also on error. A pass
  // error, or a pass that leaves the IR broken under verify_each, is a kPassFailed error naming it.
  Status run(ir::Model& model, PassContext& ctx, PipelineStats* stats = nullptr);

 private:
  struct Step;
  struct RunState;
  Result<bool> run_step(Step& step, RunState& state);
  Result<bool> run_pass(Step& step, RunState& state);

  PassManagerOptions options_;
  std::vector<std::unique_ptr<Step>> steps_;
};

}  // namespace xopt::passes
