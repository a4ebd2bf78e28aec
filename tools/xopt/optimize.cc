// The default command: load -> verify -> bind shapes -> infer shapes -> passes -> verify -> save.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include <unistd.h>

#include "common/atomic_file.h"
#include "ir/onnx_io.h"
#include "ir/shape_inference.h"
#include "ir/verifier.h"
#include "passes/pass_manager.h"
#include "passes/pass_registry.h"
#include "planner/annotate.h"
#include "planner/lifetimes.h"
#include "planner/memory_plan.h"
#include "planner/offload.h"
#include "planner/planner.h"
#include "planner/report.h"
#include "planner/shape_range.h"
#include "tools/xopt/command.h"
#include "tools/xopt/device.h"
#include "tools/xopt/shared_arena.h"
#include "tools/xopt/validate.h"
#include "viz/visuals.h"

namespace xopt::tool {
namespace {

namespace fs = std::filesystem;

struct OptimizeOptions {
  std::string model;
  std::string output;
  std::string passes = "cleanup";
  std::vector<std::string> disable;
  std::vector<std::string> print_after;
  std::string print_dir;
  std::vector<std::string> input_shapes;
  int64_t batch = 0;
  bool list_passes = false;
  bool verify_each = false;
  bool quiet = false;
  std::string stats_json;
  std::string external_data;
  std::string fold_max_bytes;
  bool list_ops = false;
  bool validate = false;
  ValidateFlags validation;
  // Memory planning (the plan group).
  size_t align = 256;
  std::string max_batch;
  std::string report_dir;
  std::string dot_dir;
  bool io_in_arena = false;
  bool workspace_in_arena = false;
  // --shared-arena: more models planned with this one (or alone) to share one arena.
  std::vector<std::string> shared_arena;
  std::vector<std::string> member_names;  // --name, one per member (default: the path as given)
  // --mem-budget: parameter offload (planner/offload.h) when the model does not fit.
  std::string mem_budget;
  double h2d_gbps = 0;  // --h2d-bandwidth; 0: measured with --device cuda, else the default
};

// "--mem-budget 200MiB", or "50%": the activations, workspace and I/O region plus that share of
// the parameters.
Result<size_t> offload_budget(const std::string& text, const ir::Graph& g,
                              const planner::MemoryPlan& plan) {
  if (!text.empty() && text.back() == '%') {
    char* end = nullptr;
    const double pct = std::strtod(text.c_str(), &end);
    if (end != text.c_str() + text.size() - 1 || !(pct >= 0 && pct <= 100))
      return invalid_argument("--mem-budget '" + text + "': a percentage must be 0% to 100%");
    const size_t all = planner::device_bytes_without_offload(g, plan);
    const size_t params = planner::parameter_bytes(g, plan.alignment);
    return all - params + static_cast<size_t>(static_cast<double>(params) * pct / 100.0);
  }
  auto size = parse_size(text);
  if (!size.is_ok()) return invalid_argument("--mem-budget: " + size.status().message());
  return *size;
}

// "a,b" given once or repeated -> {"a", "b"}.
std::vector<std::string> split_list(const std::vector<std::string>& items) {
  std::vector<std::string> out;
  for (const auto& item : items) {
    size_t pos = 0;
    while (pos <= item.size()) {
      size_t comma = item.find(',', pos);
      if (comma == std::string::npos) comma = item.size();
      if (comma > pos) out.push_back(item.substr(pos, comma - pos));
      pos = comma + 1;
    }
  }
  return out;
}

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

Status write_text_file(const std::string& path, const std::string& text) {
  return write_file_atomically(path, text);
}

std::string default_output(const std::string& model) {
  fs::path p(model);
  return (p.parent_path() / (p.stem().string() + ".opt.onnx")).string();
}

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  if (fs::equivalent(a, b, ec)) return true;
  return fs::weakly_canonical(a, ec) == fs::weakly_canonical(b, ec);
}

// The batch found by --max-batch (stdout) and the memory breakdown (stderr, with the statistics).
void print_plan(const passes::PlanOutcome& p, const planner::OffloadPlan* offload, bool quiet) {
  using planner::human_bytes;
  if (p.batch_searched) {
    std::printf("max batch: %lld fits in %s (%s used)\n", static_cast<long long>(p.fit.batch),
                human_bytes(p.budget_bytes).c_str(), human_bytes(p.fit.total_bytes).c_str());
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

 private:
  bool on_;
  bool shown_ = false;
};

int run_optimize(const OptimizeOptions& o);

// Each model optimized and planned on its own, then the group recorded in every output.
int run_shared_arena(const OptimizeOptions& o) {
  std::vector<std::string> models;
  if (!o.model.empty()) models.push_back(o.model);
  models.insert(models.end(), o.shared_arena.begin(), o.shared_arena.end());
  if (models.size() < 2)
    return report_error(kExitUsage, "--shared-arena needs at least two models");
  if (!o.output.empty())
    return report_error(kExitUsage,
                        "-o/--output names one output; with --shared-arena each model's output "
                        "goes beside it (<stem>.opt.onnx)");
  if (!o.max_batch.empty())
    return report_error(kExitUsage, "--max-batch and --shared-arena exclude each other");
  if (!o.member_names.empty() && o.member_names.size() != models.size())
    return report_error(kExitUsage, "--name: " + std::to_string(o.member_names.size()) +
                                        " names for " + std::to_string(models.size()) +
                                        " models (give one per model, in order, or none)");
  bool plans = false;
  for (const std::string& p : split_list({o.passes}))
    plans = plans || p == "plan" || p == "plan-memory";
  if (!plans) return report_error(kExitUsage, "--shared-arena needs the plan group in --passes");
  std::vector<std::string> outputs;
  for (const std::string& m : models) {
    for (const std::string& out : outputs)
      if (same_file(out, default_output(m)))
        return report_error(kExitUsage, m + ": its output " + out + " is another model's");
    outputs.push_back(default_output(m));
  }
  for (const std::string& m : models) {
    OptimizeOptions one = o;
    one.model = m;
    one.shared_arena.clear();
    one.member_names.clear();
    one.report_dir.clear();
    const int rc = run_optimize(one);
    if (rc != kExitOk) return rc;
  }
  if (!o.report_dir.empty()) {
    std::error_code ec;
    fs::create_directories(o.report_dir, ec);
    if (ec) return report_error(kExitUsage, o.report_dir + ": cannot create: " + ec.message());
  }
  return finish_shared_arena(models, o.member_names, outputs, o.report_dir, o.quiet);
}

int run_optimize(const OptimizeOptions& o) {
  if (o.list_passes) return list_passes();
  if (o.list_ops) return list_ops(o.validation.device);
  if (!o.shared_arena.empty()) return run_shared_arena(o);
  if (!o.member_names.empty())
    return report_error(kExitUsage, "--name names the members of --shared-arena");
  if (o.model.empty()) return report_error(kExitUsage, "no model given (see xopt --help)");
  if (Status st = check_device_flags(o.validation.device); !st.is_ok()) return report(st);
  const std::string out = o.output.empty() ? default_output(o.model) : o.output;
  if (same_file(out, o.model))
    return report_error(kExitUsage, out + ": refusing to overwrite the input model");

  // Everything the flags can get wrong is checked before the model is read.
  ir::ShapeBindings bindings;
  std::vector<planner::InputRange> ranges;  // --input-shape NAME=MIN:MAX or NAME=MIN:OPT:MAX
  for (const auto& s : o.input_shapes) {
    const size_t eq = s.rfind('=');
    if (eq != std::string::npos && s.find(':', eq) != std::string::npos) {
      auto range = passes::parse_input_shape_range(s);
      if (!range.is_ok())
        return report_error(kExitUsage, "--input-shape: " + range.status().message());
      ranges.push_back(std::move(*range));
      continue;
    }
    auto parsed = passes::parse_input_shape(s);
    if (!parsed.is_ok())
      return report_error(kExitUsage, "--input-shape: " + parsed.status().message());
    bindings.input_shapes[parsed->first] = parsed->second;
  }
  if (Status rs = planner::check_ranges(ranges); !rs.is_ok())
    return report_error(kExitUsage, "--input-shape: " + rs.message());
  for (const planner::InputRange& r : ranges)
    if (bindings.input_shapes.count(r.name) != 0)
      return report_error(kExitUsage,
                          "--input-shape: input '" + r.name + "' is given a shape and a range");
  if (!ranges.empty() && (o.batch != 0 || !o.max_batch.empty()))
    return report_error(kExitUsage,
                        std::string(o.batch != 0 ? "--batch" : "--max-batch") +
                            " and a shape range exclude each other (give the batch in the range)");
  if (o.batch < 0) return report_error(kExitUsage, "--batch must be positive");
  if (o.batch > 0) bindings.batch = o.batch;
  ir::SaveOptions save;
  if (o.external_data == "never") {
    save.external = ir::SaveOptions::External::kNever;
  } else if (!o.external_data.empty() && o.external_data != "auto") {
    auto size = parse_size(o.external_data);
    if (!size.is_ok())
      return report_error(kExitUsage, "--external-data: " + size.status().message());
    save.external = ir::SaveOptions::External::kAlways;
    save.external_threshold = *size;
  }
  passes::PassOptions pass_options;
  if (!o.fold_max_bytes.empty()) {
    auto size = parse_size(o.fold_max_bytes);
    if (!size.is_ok())
      return report_error(kExitUsage, "--fold-max-bytes: " + size.status().message());
    pass_options.fold_max_bytes = *size;
  }
  if (o.align == 0 || (o.align & (o.align - 1)) != 0)
    return report_error(kExitUsage,
                        "--align must be a power of two, not " + std::to_string(o.align));
  pass_options.plan_alignment = o.align;
  pass_options.plan_io_in_arena = o.io_in_arena;
  // Planning for the GPU puts each node's (measured) workspace in the arena: it takes the bytes
  // the activations leave free at that node's step.
  pass_options.plan_workspace_in_arena = o.workspace_in_arena || o.validation.device.cuda();
  pass_options.plan_batch = o.batch;
  if (!o.max_batch.empty()) {
    auto size = parse_size(o.max_batch);
    if (!size.is_ok()) return report_error(kExitUsage, "--max-batch: " + size.status().message());
    if (*size == 0) return report_error(kExitUsage, "--max-batch must be positive");
    if (o.batch > 0) return report_error(kExitUsage, "--max-batch and --batch exclude each other");
    if (o.validate)
      return report_error(kExitUsage,
                          "--max-batch changes the batch, so --validate cannot compare with the "
                          "original: validate with --batch N instead");
    pass_options.max_batch_bytes = *size;
  }
  if (!o.report_dir.empty()) {
    std::error_code ec;
    fs::create_directories(o.report_dir, ec);
    if (ec) return report_error(kExitUsage, o.report_dir + ": cannot create: " + ec.message());
  }
  if (!o.print_dir.empty()) {
    std::error_code ec;
    fs::create_directories(o.print_dir, ec);
    if (ec) return report_error(kExitUsage, o.print_dir + ": cannot create: " + ec.message());
  }

  passes::PassManagerOptions pm_options;
  pm_options.verify_each = o.verify_each;
  pm_options.print_after = split_list(o.print_after);
  int dump_count = 0;
  std::string dump_error;
  pm_options.dump = [&](const passes::GraphDump& d) {
    std::string title = "after " + d.after + " (run " + std::to_string(d.run) +
                        (d.changed ? ", changed)" : ", no change)");
    if (o.print_dir.empty()) {
      std::fprintf(stderr, "// ---- %s ----\n%s\n", title.c_str(), d.text.c_str());
      return;
    }
    char prefix[16];
    std::snprintf(prefix, sizeof prefix, "%03d-", ++dump_count);
    std::string path =
        (fs::path(o.print_dir) / (prefix + d.after + "-" + std::to_string(d.run) + ".onnx.txt"))
            .string();
    Status s = write_text_file(path, "// " + title + "\n" + d.text + "\n");
    if (!s.is_ok() && dump_error.empty()) dump_error = s.message();
  };
  Progress progress(o.quiet);
  pm_options.on_pass_start = [&progress](const std::string& pass, size_t nodes) {
    progress.step(pass + " (" + std::to_string(nodes) + " nodes)");
  };
  passes::PassManager pm(std::move(pm_options));
  Status st = pm.add_pipeline(o.passes, split_list(o.disable));
  if (st.is_ok()) st = pm.validate();
  if (!st.is_ok()) return report(st);
  const std::vector<std::string> names = pm.pass_names();
  const bool plans = std::find(names.begin(), names.end(), "plan-memory") != names.end();
  if (!plans && (!o.max_batch.empty() || !o.report_dir.empty() || !o.mem_budget.empty()))
    return report_error(kExitUsage,
                        std::string(!o.max_batch.empty()    ? "--max-batch"
                                    : !o.mem_budget.empty() ? "--mem-budget"
                                                            : "--report") +
                            " needs the plan-memory pass (e.g. --passes=fold,fuse,plan)");

  // Load and check the model: anything wrong here is a bad model (exit 2).
  progress.step("loading " + o.model);
  auto loaded = ir::load_model(o.model);
  if (!loaded.is_ok()) return report(loaded.status(), o.model);
  ir::Model& model = *loaded;
  std::string cycle;
  if (!model.graph->topo_sort(&cycle)) return report_error(kExitBadModel, cycle, o.model);
  st = ir::verify(*model.graph);
  if (!st.is_ok()) return report_error(kExitBadModel, st.message(), o.model);
  // A binding that does not fit the model is a mistake in the flags, not in the model.
  // A range binds the dims it fixes and leaves the ones it varies symbolic: the passes then keep
  // the graph valid for every shape of the range, and plan-memory plans it at the largest.
  st = planner::bind_range(*model.graph, ranges);
  if (st.is_ok()) st = ir::bind_input_shapes(*model.graph, bindings);
  if (!st.is_ok()) return report_error(kExitUsage, st.message(), o.model);
  st = ir::infer_shapes(*model.graph);
  if (!st.is_ok()) return report_error(kExitBadModel, st.message(), o.model);

  pass_options.shape_bindings = bindings;
  pass_options.shape_ranges = ranges;
  if (plans && o.max_batch.empty()) {
    // The baseline a user without a planner pays, at the shapes planned (a --max-batch search
    // plans at another batch); unknown when some size is not static yet.
    auto naive = planner::naive_bytes(*model.graph, {o.align, o.io_in_arena});
    if (naive.is_ok()) pass_options.input_naive_bytes = *naive;
  }
  passes::PassContext ctx(std::move(pass_options));
  ctx.mark_shapes_valid();
  passes::PipelineStats stats;
  st = pm.run(model, ctx, &stats);
  if (!st.is_ok()) return report_error(kExitPassFailed, st.message(), o.model);
  if (!dump_error.empty()) return report_error(kExitUsage, "--print-dir: " + dump_error);
  st = ir::verify(*model.graph);
  if (!st.is_ok())
    return report_error(kExitPassFailed, "the optimized graph is invalid: " + st.message(),
                        o.model);

  if (o.validation.device.cuda() && ctx.plan_outcome()) {
    // The GPU replaces the planner's estimates: each node's workspace is what its chosen algorithm
    // needs, and the CUDA context is measured.
    planner::MemoryPlan& plan = ctx.plan_outcome()->plan;
    progress.step("measuring on the GPU");
    auto m = measure_on_cuda(model, plan, o.validation.device);
    if (!m.is_ok()) return report(m.status(), o.model);
    if (plan.workspace_in_arena) {
      // The measured sizes move the workspace values: plan the arena again with them.
      auto again = planner::replan_with_workspace(*model.graph, plan, m->node_workspace);
      if (!again.is_ok()) return report(again.status(), o.model);
      plan = std::move(again).value();
    } else {
      plan.node_workspace = m->node_workspace;
      plan.workspace_bytes = m->workspace;
      plan.breakdown.workspace = m->workspace;
    }
    plan.breakdown.workspace_estimated = false;
    if (m->context_measured) {  // else the estimate stays, marked as one
      plan.breakdown.cuda_context = m->context_bytes;
      plan.breakdown.cuda_context_estimated = false;
    }
    plan.breakdown.device = m->device;
    planner::write_plan(model, plan);
    // --tune: what the search chose goes with the model, so the next load does not search again
    // (a model that already carried choices gets this load's: the stored ones still valid, the
    // rest chosen again).
    if (o.validation.device.tune || model.metadata(kAlgorithmChoicesKey)) {
      write_algorithm_choices(model, m->algorithms);
      std::fprintf(stderr,
                   "algorithm choices: %zu nodes (%zu taken from the model), stored as %s\n",
                   m->algorithms.nodes.size(), m->choices_reused, kAlgorithmChoicesKey);
    }
  }

  std::optional<planner::OffloadPlan> offload;
  if (!o.mem_budget.empty()) {
    const planner::MemoryPlan& plan = ctx.plan_outcome()->plan;
    auto budget = offload_budget(o.mem_budget, *model.graph, plan);
    if (!budget.is_ok()) return report(budget.status());
    planner::OffloadOptions oo;
    oo.budget = *budget;
    if (o.h2d_gbps > 0) {
      oo.device.h2d_bytes_per_ms = o.h2d_gbps * 1e6;
      oo.device.h2d_source = "given (--h2d-bandwidth)";
    } else if (o.validation.device.cuda()) {
      progress.step("measuring host-to-device bandwidth");
      auto bw = measure_h2d_on_cuda();
      if (!bw.is_ok()) return report(bw.status());
      oo.device.h2d_bytes_per_ms = bw->bytes_per_ms;
      oo.device.h2d_source = "measured on " + bw->device;
    }
    auto order = planner::resolve_node_order(*model.graph, plan);
    if (!order.is_ok()) return report(order.status(), o.model);
    auto sched = planner::offload_plan(*model.graph, *order, plan, oo);
    if (!sched.is_ok()) return report(sched.status(), o.model);
    offload = std::move(sched).value();
    planner::write_offload(model, *offload);
  }

  // Every output is written whole or not at all (common/atomic_file.h): the model first, then the
  // statistics, so a model that cannot be written leaves the previous statistics as they were.
  progress.step("writing " + out);
  st = ir::save_model(model, out, save);
  if (!st.is_ok()) return report(st, out);
  if (!o.stats_json.empty()) {
    st = write_text_file(o.stats_json, passes::stats_to_json(stats).dump(2) + "\n");
    if (!st.is_ok()) return report(st);
  }
  progress.done();
  if (!o.quiet) std::fputs(passes::stats_table(stats).c_str(), stderr);
  if (const auto& plan = ctx.plan_outcome()) {
    const planner::OffloadPlan* sched = offload ? &*offload : nullptr;
    print_plan(*plan, sched, o.quiet);
    if (offload && !o.quiet) std::fputs(planner::offload_text(*offload).c_str(), stderr);
    if (!o.report_dir.empty()) {
      const std::string json = planner::report_json(plan->plan, sched);
      st = write_text_file((fs::path(o.report_dir) / "report.json").string(), json + "\n");
      if (!st.is_ok()) return report(st);
    }
  }
  if (!o.report_dir.empty() || !o.dot_dir.empty()) {  // report.html, before/after .dot and .svg
    const auto& plan = ctx.plan_outcome();
    progress.step("rendering the report and diagrams");
    st = viz::write_visuals({o.model, &model, plan ? &plan->plan : nullptr,
                             passes::stats_to_json(stats).dump(), bindings, o.report_dir,
                             o.dot_dir});
    progress.done();
    if (!st.is_ok()) return report(st);
  }
  std::printf("wrote %s (%lld nodes, was %lld)\n", out.c_str(),
              static_cast<long long>(stats.nodes_after),
              static_cast<long long>(stats.nodes_before));
  if (o.validate) {
    // The output stays written even on a mismatch (so it can be inspected); the exit status says.
    std::fflush(stdout);
    auto original = ir::load_model(o.model);
    if (!original.is_ok()) return report(original.status(), o.model);
    st = ir::bind_input_shapes(*original->graph, bindings);
    if (!st.is_ok()) return report_error(kExitUsage, st.message(), o.model);
    if (ranges.empty())
      return validate_models(*original, &model, o.validation, bindings, o.model + " (original)",
                             out + " (optimized)");
    // A range: both models at the min, the opt (when given) and the max of every range.
    int rc = kExitOk;
    for (const char* end : {"min", "opt", "max"}) {
      ir::ShapeBindings at = bindings;
      std::string where;
      for (const planner::InputRange& r : ranges) {
        const std::string e = end;
        const auto& dims = e == "min" ? r.min : e == "max" ? r.max : r.opt.empty() ? r.min : r.opt;
        at.input_shapes[r.name] = dims;
        where += (where.empty() ? "" : ", ") + r.name + "=" + planner::dims_text(dims);
      }
      if (std::string(end) == "opt" &&
          std::all_of(ranges.begin(), ranges.end(), [](const auto& r) { return r.opt.empty(); }))
        continue;
      std::printf("validating at the %s of the range (%s)\n", end, where.c_str());
      std::fflush(stdout);
      const int one = validate_models(*original, &model, o.validation, at, o.model + " (original)",
                                      out + " (optimized)");
      if (one != kExitOk && rc == kExitOk) rc = one;
    }
    return rc;
  }
  return kExitOk;
}

}  // namespace

std::function<int()> setup_optimize(CLI::App& app) {
  auto o = std::make_shared<OptimizeOptions>();
  app.add_option("model", o->model, "Input .onnx model");
  app.add_option("-o,--output", o->output,
                 "Output model (default: <stem>.opt.onnx beside the input)");
  app.add_option("--passes", o->passes,
                 "Comma-separated passes and groups to run, in order (default: cleanup; see "
                 "--list-passes)");
  app.add_option("--disable-pass", o->disable, "Leave this pass or group out (repeatable)")
      ->type_size(1)
      ->allow_extra_args(false);
  app.add_option("--print-after", o->print_after,
                 "Dump the graph in ONNX text after every run of this pass or group (repeatable)")
      ->type_size(1)
      ->allow_extra_args(false);
  app.add_option("--print-dir", o->print_dir,
                 "Write --print-after dumps as numbered files in this folder instead of stderr");
  app.add_option("--input-shape", o->input_shapes,
                 "Bind an input's shape, e.g. input=1x3x224x224, or a range of shapes to plan for, "
                 "MIN:MAX or MIN:OPT:MAX, e.g. x=1x3x48x32:1x3x48x2048 (the plan is made at the "
                 "max and runs any shape in the range; repeatable)")
      ->type_size(1)
      ->allow_extra_args(false);
  app.add_option("--batch", o->batch,
                 "Bind the leading dim of every input whose batch is symbolic");
  app.add_flag("--list-passes", o->list_passes, "List passes and groups, one per line, and exit");
  app.add_flag("--verify-each", o->verify_each, "Verify the graph after every pass");
  app.add_option("--stats-json", o->stats_json, "Write per-pass statistics as JSON to this file");
  app.add_option("--external-data", o->external_data,
                 "Save every initializer of at least this size (e.g. 1KiB) to <output>.data; "
                 "'never' keeps all inline; default: external only when the input was or when "
                 "weights pass 2 GiB");
  app.add_option("--fold-max-bytes", o->fold_max_bytes,
                 "Constant folding leaves a result computed when it is larger than this (e.g. "
                 "4MiB) and larger than its inputs (default 1MiB)");
  app.add_flag("-q,--quiet", o->quiet, "Do not print the statistics table");
  app.add_flag("--list-ops", o->list_ops,
               "List the ops the CPU executor has kernels for (op, domain, opsets) and exit");
  app.add_flag(
      "--validate", o->validate,
      "After writing the output, run it and the original on the same inputs (stored "
      "test_data_set_*, else random) and compare every output; exit 1 on a mismatch "
      "(the output is still written). --data, --input, --input-range, --seed, --rtol, --atol, "
      "--random-inputs and --no-plan as for `xopt validate`");
  app.add_option("--align", o->align, "Alignment of every planned tensor in bytes (default 256)");
  app.add_option(
      "--max-batch", o->max_batch,
      "Memory budget (e.g. 24GiB): plan-memory finds the largest batch whose "
      "parameters + activations + workspace + inputs/outputs + CUDA context fit, and plans at "
      "that batch");
  app.add_option("--report", o->report_dir,
                 "Write the memory breakdown of the plan as DIR/report.json, and DIR/report.html");
  app.add_option("--dot", o->dot_dir,
                 "Write the graph before and after as DIR/{before,after}.{dot,svg}");
  app.add_flag("--io-in-arena", o->io_in_arena,
               "Plan graph inputs and outputs inside the activation arena too");
  app.add_option("--shared-arena", o->shared_arena,
                 "Plan these models (and the positional one) to run one at a time on one GPU in "
                 "one shared activation arena and workspace: each output records the group, and "
                 "the shared total (parameters + largest arena + largest workspace + one context) "
                 "is printed next to the separate ones (--report DIR: DIR/shared_arena.json and "
                 "DIR/shared_arena.html, separate vs shared bars)")
      ->expected(1, -1);
  app.add_option("--name", o->member_names,
                 "With --shared-arena: the members' names in the table, shared_arena.json and "
                 "the group's record, one per model in order (default: each path as given)")
      ->type_size(1)
      ->allow_extra_args(false);
  app.add_flag("--workspace-in-arena", o->workspace_in_arena,
               "Plan each node's workspace as a value of the arena, live at that node's step "
               "only, instead of one region for the largest need (on with --device cuda)");
  app.add_option("--mem-budget", o->mem_budget,
                 "Device memory the model may use (e.g. 2GiB; or P%: the activations, workspace "
                 "and I/O plus P% of the parameters; the CUDA context is not counted): when it "
                 "does not fit, weights stay in pinned host memory and each is prefetched into a "
                 "planned staging region before its first reader; the schedule is stored as "
                 "metadata 'xopt.offload' (needs the plan-memory pass)");
  app.add_option("--h2d-bandwidth", o->h2d_gbps,
                 "Host-to-device copy bandwidth in GB/s for --mem-budget's schedule (default: "
                 "measured with --device cuda, else 25)");
  add_validate_flags(app, o->validation);
  return [o] { return run_optimize(*o); };
}

}  // namespace xopt::tool
