// The default command: flags -> pipeline options -> pipeline::optimize -> print (and --validate).
// The pipeline itself (load -> verify -> bind -> passes -> plan -> offload -> save -> report) is
// the library in pipeline/; this file only parses, prints and picks the exit code.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

#include "passes/pass_registry.h"
#include "pipeline/pipeline.h"
#include "pipeline/precision.h"
#include "pipeline/request.h"
#include "pipeline/shared_arena.h"
#include "planner/report.h"
#include "planner/shape_range.h"
#include "tools/xopt/command.h"
#include "tools/xopt/device.h"
#include "tools/xopt/precision_flags.h"
#include "tools/xopt/shared_arena.h"
#include "tools/xopt/validate.h"

namespace xopt::tool {
namespace {

struct OptimizeFlags {
  pipeline::Request request;  // everything the pipeline takes (its device comes from validation)
  bool list_passes = false;
  bool list_ops = false;
  bool quiet = false;
  bool validate = false;
  ValidateFlags validation;
  // --shared-arena: more models planned with this one (or alone) to share one arena.
  std::vector<std::string> shared_arena;
  std::vector<std::string> member_names;  // --name: one per --shared-arena member, in order
  PrecisionFlags precision;               // --precision and its companions (convert-precision)
};

int list_passes() {
  const auto& reg = passes::PassRegistry::global();
  size_t width = 0;
  for (const auto* g : reg.groups()) width = std::max(width, g->name.size());
  for (const auto* p : reg.passes()) width = std::max(width, p->name.size());
  for (const auto* g : reg.groups()) {
    std::string members;
    for (const auto& m : reg.members(g->name)) members += (members.empty() ? "" : ", ") + m;
    std::printf("%-*s  group%s [%s]: %s\n", static_cast<int>(width), g->name.c_str(),
                g->fixpoint ? ", to a fixpoint" : "", members.empty() ? "empty" : members.c_str(),
                g->description.c_str());
  }
  for (const auto* p : reg.passes())
    std::printf("%-*s  %s\n", static_cast<int>(width), p->name.c_str(), p->description.c_str());
  return kExitOk;
}

// The batch found by --max-batch (stdout) and the memory breakdown (stderr, with the statistics),
// with the offload schedule (may be null) moving weights to the host. `precision`: "" for fp32,
// else what convert-precision made ("fp16: 52 nodes, 3 kept fp32").
void print_plan(const passes::PlanOutcome& p, const planner::OffloadPlan* offload, bool quiet,
                const std::string& precision) {
  using planner::human_bytes;
  const std::string in = precision.empty() ? "" : " in " + precision.substr(0, precision.find(':'));
  if (p.batch_searched) {
    std::printf("max batch: %lld fits in %s (%s used%s)\n", static_cast<long long>(p.fit.batch),
                human_bytes(p.budget_bytes).c_str(), human_bytes(p.fit.total_bytes).c_str(),
                in.c_str());
    if (p.has_next)
      std::printf(
          "batch %lld needs %s: over the budget by %s\n", static_cast<long long>(p.next_plan.batch),
          human_bytes(p.next_total_bytes).c_str(),
          human_bytes(p.next_total_bytes - std::min(p.next_total_bytes, p.budget_bytes)).c_str());
  }
  if (quiet) return;
  std::string batch = p.plan.batch > 0 ? "batch " + std::to_string(p.plan.batch)
                                       : std::string("input shapes as given");
  if (!p.plan.input_ranges.empty()) {
    batch = "shape range";
    for (const planner::InputRange& r : p.plan.input_ranges) batch += " " + planner::range_text(r);
  }
  if (!precision.empty()) batch += ", " + precision;
  std::fprintf(stderr, "memory plan (%s, planned in %.2f ms)\n", batch.c_str(), p.seconds * 1e3);
  std::fputs(planner::report_text(p.plan, offload).c_str(), stderr);
  if (p.batch_searched && p.has_next) {
    std::fprintf(stderr, "memory plan at batch %lld (does not fit)\n",
                 static_cast<long long>(p.next_plan.batch));
    std::fputs(planner::report_text(p.next_plan).c_str(), stderr);
  }
}

// One status line on stderr for the long steps (loading, each pass, planning, writing, rendering,
// validating), rewritten in place, only when stderr is a terminal and -q is not given.
class Progress {
 public:
  explicit Progress(bool quiet) : on_(!quiet && isatty(STDERR_FILENO) != 0) {}
  ~Progress() { done(); }
  void step(const std::string& what) {
    if (!on_) return;
    std::fprintf(stderr, "\r\033[K[xopt] %s", what.c_str());
    std::fflush(stderr);
    shown_ = true;
  }
  void done() {
    if (!on_ || !shown_) return;
    std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
    shown_ = false;
  }
  // The pipeline's observer: its steps and pass starts on this line, --print-after dumps (without
  // --print-dir) on stderr.
  pipeline::Observer observer() {
    pipeline::Observer o;
    o.step = [this](const std::string& what) { step(what); };
    o.pass_start = [this](const std::string& pass, size_t nodes) {
      step(pass + " (" + std::to_string(nodes) + " nodes)");
    };
    o.dump = [](const passes::GraphDump& d) {
      const std::string title = "after " + d.after + " (run " + std::to_string(d.run) +
                                (d.changed ? ", changed)" : ", no change)");
      std::fprintf(stderr, "// ---- %s ----\n%s\n", title.c_str(), d.text.c_str());
    };
    return o;
  }

 private:
  bool on_;
  bool shown_ = false;
};

// What the pipeline did, as xopt has always printed it: the statistics and the breakdown on
// stderr, the output on stdout.
void print_outcome(const pipeline::Outcome& out, bool quiet) {
  if (out.algorithm_choices_written)
    std::fprintf(stderr, "algorithm choices: %zu nodes (%zu taken from the model), stored as %s\n",
                 out.measured->algorithms.nodes.size(), out.measured->choices_reused,
                 pipeline::kAlgorithmChoicesKey);
  if (!quiet) std::fputs(passes::stats_table(out.stats).c_str(), stderr);
  if (out.plan) {
    print_plan(*out.plan, out.offload ? &*out.offload : nullptr, quiet,
               pipeline::precision_summary(out.model));
    if (out.offload && !quiet) std::fputs(planner::offload_text(*out.offload).c_str(), stderr);
  }
  std::printf("wrote %s (%lld nodes, was %lld)\n", out.output.c_str(),
              static_cast<long long>(out.stats.nodes_after),
              static_cast<long long>(out.stats.nodes_before));
}

// --validate with a range: both models at the min, the opt (when given) and the max of every
// range.
int validate_range(const ir::Model& original, const pipeline::Outcome& out,
                   const OptimizeFlags& o) {
  const std::vector<planner::InputRange>& ranges = out.ranges;
  int rc = kExitOk;
  for (const char* e : {"min", "opt", "max"}) {
    const std::string end = e;
    if (end == "opt" &&
        std::all_of(ranges.begin(), ranges.end(), [](const auto& r) { return r.opt.empty(); }))
      continue;
    ir::ShapeBindings at = out.shapes;
    std::string where;
    for (const planner::InputRange& r : ranges) {
      const auto& dims = end == "min"    ? r.min
                         : end == "max"  ? r.max
                         : r.opt.empty() ? r.min
                                         : r.opt;
      at.input_shapes[r.name] = dims;
      where += (where.empty() ? "" : ", ") + r.name + "=" + planner::dims_text(dims);
    }
    std::printf("validating at the %s of the range (%s)\n", end.c_str(), where.c_str());
    std::fflush(stdout);
    const int one = validate_models(original, &out.model, o.validation, at,
                                    o.request.model + " (original)", out.output + " (optimized)");
    if (one != kExitOk && rc == kExitOk) rc = one;
  }
  return rc;
}

// --validate: the output stays written even on a mismatch (so it can be inspected); the exit
// status says.
int validate_outcome(const pipeline::Outcome& out, const OptimizeFlags& o) {
  std::fflush(stdout);
  const std::string& model = o.request.model;
  auto original = ir::load_model(model);
  if (!original.is_ok()) return report(original.status(), model);
  Status st = ir::bind_input_shapes(*original->graph, out.shapes);
  if (!st.is_ok()) return report_error(kExitUsage, st.message(), model);
  if (out.ranges.empty())
    return validate_models(*original, &out.model, o.validation, out.shapes, model + " (original)",
                           out.output + " (optimized)");
  return validate_range(*original, out, o);
}

// One model through the pipeline, printed.
int optimize_one(const OptimizeFlags& o) {
  auto options = pipeline::options_from_request(o.request);
  if (!options.is_ok()) return report(options.status());
  if (Status ps = apply_precision_flags(o.precision, options->pass_options); !ps.is_ok())
    return report_error(kExitUsage, ps.message());
  options->calibration_seed = o.validation.seed;
  if (o.validate && options->pass_options.max_batch_bytes > 0)
    return report_error(kExitUsage,
                        "--max-batch changes the batch, so --validate cannot compare with the "
                        "original: validate with --batch N instead");
  Progress progress(o.quiet);
  const pipeline::Observer observer = progress.observer();
  auto out = pipeline::optimize(*options, &observer);
  progress.done();
  if (!out.is_ok()) return report(out.status());
  print_outcome(*out, o.quiet);
  return o.validate ? validate_outcome(*out, o) : kExitOk;
}

// Each model optimized and planned on its own, then the group recorded in every output.
int run_shared_arena(const OptimizeFlags& o) {
  std::vector<std::string> models;
  if (!o.request.model.empty()) models.push_back(o.request.model);
  models.insert(models.end(), o.shared_arena.begin(), o.shared_arena.end());
  auto outputs = pipeline::shared_arena_outputs(o.request, models, o.member_names);
  if (!outputs.is_ok()) return report(outputs.status());
  for (const std::string& m : models) {
    OptimizeFlags one = o;
    one.request.model = m;
    one.request.report_dir.clear();
    one.shared_arena.clear();
    one.member_names.clear();
    const int rc = optimize_one(one);
    if (rc != kExitOk) return rc;
  }
  auto group = pipeline::share_arena_files(models, o.member_names, *outputs, o.request.report_dir);
  if (!group.is_ok()) return report(group.status());
  print_shared_arena(*group, o.quiet);
  return kExitOk;
}

int run_optimize(OptimizeFlags o) {
  if (o.list_passes) return list_passes();
  if (o.list_ops) return list_ops(o.validation.device);
  o.request.device = o.validation.device;
  if (!o.shared_arena.empty()) return run_shared_arena(o);
  if (!o.member_names.empty())
    return report_error(kExitUsage, "--name names the members of --shared-arena");
  return optimize_one(o);
}

// The flags, in the order --help lists them.
void add_model_flags(CLI::App& app, pipeline::Request& r) {
  app.add_option("model", r.model, "Input .onnx model");
  app.add_option("-o,--output", r.output,
                 "Output model (default: <stem>.opt.onnx beside the input)");
  app.add_option("--passes", r.passes,
                 "Comma-separated passes and groups to run, in order (default: cleanup; see "
                 "--list-passes)");
  app.add_option("--disable-pass", r.disable, "Leave this pass or group out (repeatable)")
      ->type_size(1)
      ->allow_extra_args(false);
  app.add_option("--print-after", r.print_after,
                 "Dump the graph in ONNX text after every run of this pass or group (repeatable)")
      ->type_size(1)
      ->allow_extra_args(false);
  app.add_option("--print-dir", r.print_dir,
                 "Write --print-after dumps as numbered files in this folder instead of stderr");
  app.add_option("--input-shape", r.input_shapes,
                 "Bind an input's shape, e.g. input=1x3x224x224, or a range of shapes to plan for, "
                 "MIN:MAX or MIN:OPT:MAX, e.g. x=1x3x48x32:1x3x48x2048 (the plan is made at the "
                 "max and runs any shape in the range; repeatable)")
      ->type_size(1)
      ->allow_extra_args(false);
  app.add_option("--batch", r.batch, "Bind the leading dim of every input whose batch is symbolic");
}

void add_run_flags(CLI::App& app, OptimizeFlags& o) {
  pipeline::Request& r = o.request;
  app.add_flag("--list-passes", o.list_passes, "List passes and groups, one per line, and exit");
  app.add_flag("--verify-each", r.verify_each, "Verify the graph after every pass");
  app.add_option("--stats-json", r.stats_json, "Write per-pass statistics as JSON to this file");
  app.add_option("--external-data", r.external_data,
                 "Save every initializer of at least this size (e.g. 1KiB) to <output>.data; "
                 "'never' keeps all inline; default: external only when the input was or when "
                 "weights pass 2 GiB");
  app.add_option("--fold-max-bytes", r.fold_max_bytes,
                 "Constant folding leaves a result computed when it is larger than this (e.g. "
                 "4MiB) and larger than its inputs (default 1MiB)");
  app.add_flag("-q,--quiet", o.quiet, "Do not print the statistics table");
  app.add_flag("--list-ops", o.list_ops,
               "List the ops the CPU executor has kernels for (op, domain, opsets) and exit");
  app.add_flag(
      "--validate", o.validate,
      "After writing the output, run it and the original on the same inputs (stored "
      "test_data_set_*, else random) and compare every output; exit 1 on a mismatch "
      "(the output is still written). --data, --input, --input-range, --seed, --rtol, --atol, "
      "--random-inputs and --no-plan as for `xopt validate`");
}

void add_plan_flags(CLI::App& app, OptimizeFlags& o) {
  pipeline::Request& r = o.request;
  app.add_option("--align", r.align, "Alignment of every planned tensor in bytes (default 256)");
  app.add_option(
      "--max-batch", r.max_batch,
      "Memory budget (e.g. 24GiB): plan-memory finds the largest batch whose "
      "parameters + activations + workspace + inputs/outputs + CUDA context fit, and plans at "
      "that batch");
  app.add_option("--report", r.report_dir,
                 "Write the memory breakdown of the plan as DIR/report.json, and DIR/report.html");
  app.add_option("--dot", r.dot_dir,
                 "Write the graph before and after as DIR/{before,after}.{dot,svg}");
  app.add_flag("--io-in-arena", r.io_in_arena,
               "Plan graph inputs and outputs inside the activation arena too");
  app.add_option("--shared-arena", o.shared_arena,
                 "Plan these models (and the positional one) to run one at a time on one GPU in "
                 "one shared activation arena and workspace: each output records the group, and "
                 "the shared total (every member's parameters, staging and I/O + largest arena + "
                 "largest workspace + one context) is printed next to the separate ones (--report "
                 "DIR: DIR/shared_arena.json and DIR/shared_arena.html, separate vs shared bars)")
      ->expected(1, -1);
  app.add_option("--name", o.member_names,
                 "With --shared-arena: the members' names in the table, shared_arena.json and "
                 "the group's record, one per model in order (default: each path as given)")
      ->type_size(1)
      ->allow_extra_args(false);
  app.add_flag("--workspace-in-arena", r.workspace_in_arena,
               "Plan each node's workspace as a value of the arena, live at that node's step "
               "only, instead of one region for the largest need (on with --device cuda)");
  app.add_option("--mem-budget", r.mem_budget,
                 "Device memory the model may use (e.g. 2GiB; or P%: the activations, workspace "
                 "and I/O plus P% of the parameters; the CUDA context is not counted): when it "
                 "does not fit, weights stay in pinned host memory and each is prefetched into a "
                 "planned staging region before its first reader; the schedule is stored as "
                 "metadata 'xopt.offload' (needs the plan-memory pass)");
  app.add_option("--h2d-bandwidth", r.h2d_gbps,
                 "Host-to-device copy bandwidth in GB/s for --mem-budget's schedule (default: "
                 "measured with --device cuda, else 25)");
}

}  // namespace

std::function<int()> setup_optimize(CLI::App& app) {
  auto o = std::make_shared<OptimizeFlags>();
  add_model_flags(app, o->request);
  add_run_flags(app, *o);
  add_plan_flags(app, *o);
  add_validate_flags(app, o->validation);
  add_precision_flags(app, o->precision);
  return [o] { return run_optimize(*o); };
}

}  // namespace xopt::tool
