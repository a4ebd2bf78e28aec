// The pipeline's phases, each its own function: check the options, build the pass manager, load
// and bind the model, run the passes, measure on the GPU, schedule the offload, write the outputs.
#include "pipeline/pipeline.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <utility>

#include "common/atomic_file.h"
#include "ir/verifier.h"
#include "passes/pass_registry.h"
#include "passes/precision/precision_pipeline.h"
#include "pipeline/algorithm_choices.h"
#include "pipeline/files.h"
#include "pipeline/precision.h"
#include "planner/annotate.h"
#include "planner/lifetimes.h"
#include "planner/planner.h"
#include "planner/report.h"
#include "viz/visuals.h"

namespace xopt::pipeline {
namespace {

namespace fs = std::filesystem;

// `st`'s message under another category: whose fault it is depends on the step that failed.
Status as(ErrorCode code, const Status& st, const std::string& file = "") {
  if (st.is_ok()) return st;
  return in_file(Status(code, st.message()), file);
}

void notify(const Observer* observer, const std::string& step) {
  if (observer != nullptr && observer->step) observer->step(step);
}

// Where --print-after dumps go: numbered files in print_dir, else the observer.
struct Dumps {
  const Options* options = nullptr;
  const Observer* observer = nullptr;
  int count = 0;
  std::string error;  // the first file that could not be written

  void operator()(const passes::GraphDump& d) {
    if (options->print_dir.empty()) {
      if (observer != nullptr && observer->dump) observer->dump(d);
      return;
    }
    const std::string title = "after " + d.after + " (run " + std::to_string(d.run) +
                              (d.changed ? ", changed)" : ", no change)");
    char prefix[16];
    std::snprintf(prefix, sizeof prefix, "%03d-", ++count);
    const std::string path = (fs::path(options->print_dir) /
                              (prefix + d.after + "-" + std::to_string(d.run) + ".onnx.txt"))
                                 .string();
    Status s = write_file_atomically(path, "// " + title + "\n" + d.text + "\n");
    if (!s.is_ok() && error.empty()) error = s.message();
  }
};

Result<passes::PassManager> build_pass_manager(const Options& o, const Observer* observer,
                                               Dumps& dumps) {
  passes::PassManagerOptions pm_options;
  pm_options.verify_each = o.verify_each;
  pm_options.print_after = o.print_after;
  pm_options.dump = [&dumps](const passes::GraphDump& d) { dumps(d); };
  if (observer != nullptr && observer->pass_start) pm_options.on_pass_start = observer->pass_start;
  passes::PassManager pm(std::move(pm_options));
  XOPT_RETURN_IF_ERROR(pm.add_pipeline(o.passes, o.disable));
  // --precision without the precision group: convert-precision right before plan-memory.
  XOPT_RETURN_IF_ERROR(passes::add_precision_pass(pm, o.pass_options.precision));
  XOPT_RETURN_IF_ERROR(pm.validate());
  const std::vector<std::string> names = pm.pass_names();
  const bool plans = std::find(names.begin(), names.end(), "plan-memory") != names.end();
  const bool max_batch = o.pass_options.max_batch_bytes > 0;
  if (!plans && (max_batch || !o.report_dir.empty() || o.mem_budget))
    return invalid_argument(std::string(max_batch      ? "--max-batch"
                                        : o.mem_budget ? "--mem-budget"
                                                       : "--report") +
                            " needs the plan-memory pass (e.g. --passes=fold,fuse,plan)");
  return pm;
}

// Load and check the model (anything wrong is a bad model), then bind its shapes (a binding that
// does not fit the model is a mistake in the options) and infer the rest.
Result<ir::Model> load_bound(const Options& o, const Observer* observer) {
  notify(observer, "loading " + o.model);
  auto loaded = ir::load_model(o.model);
  if (!loaded.is_ok()) return in_file(loaded.status(), o.model);
  ir::Model model = std::move(loaded).value();
  std::string cycle;
  if (!model.graph->topo_sort(&cycle)) return in_file(invalid_model(cycle), o.model);
  XOPT_RETURN_IF_ERROR(as(ErrorCode::kInvalidModel, ir::verify(*model.graph), o.model));
  // A range binds the dims it fixes and leaves the ones it varies symbolic: the passes then keep
  // the graph valid for every shape of the range, and plan-memory plans it at the largest.
  Status st = planner::bind_range(*model.graph, o.ranges);
  if (st.is_ok()) st = ir::bind_input_shapes(*model.graph, o.shapes);
  XOPT_RETURN_IF_ERROR(as(ErrorCode::kInvalidArgument, st, o.model));
  XOPT_RETURN_IF_ERROR(as(ErrorCode::kInvalidModel, ir::infer_shapes(*model.graph), o.model));
  return model;
}

// The passes, then the result verified (a broken result is the passes' fault).
Status run_passes(passes::PassManager& pm, const Options& o, const Dumps& dumps, Outcome& out,
                  bool plans) {
  passes::PassOptions p = o.pass_options;
  p.shape_bindings = o.shapes;
  p.shape_ranges = o.ranges;
  p.plan_batch = o.shapes.batch.value_or(0);
  if (plans && p.max_batch_bytes == 0) {
    // The baseline a user without a planner pays, at the shapes planned (a --max-batch search
    // plans at another batch); unknown when some size is not static yet.
    auto naive = planner::naive_bytes(*out.model.graph, {p.plan_alignment, p.plan_io_in_arena});
    if (naive.is_ok()) p.input_naive_bytes = *naive;
  }
  // mixed: the calibration run and choice (precision/chooser.h), its report kept in the model.
  const auto mixed_choice = install_mixed_chooser(p, o.shapes, o.calibration_seed);
  passes::PassContext ctx(std::move(p));
  ctx.mark_shapes_valid();
  XOPT_RETURN_IF_ERROR(as(ErrorCode::kPassFailed, pm.run(out.model, ctx, &out.stats), o.model));
  record_mixed_choice(out.model, mixed_choice);
  if (!dumps.error.empty()) return invalid_argument("--print-dir: " + dumps.error);
  Status st = ir::verify(*out.model.graph);
  if (!st.is_ok())
    return in_file(
        Status(ErrorCode::kPassFailed, "the optimized graph is invalid: " + st.message()), o.model);
  out.plan = std::move(ctx.plan_outcome());
  return Status::ok();
}

// The GPU replaces the planner's estimates: each node's workspace is what its chosen algorithm
// needs, and the CUDA context is measured.
Status measure_device(const Options& o, const Observer* observer, Outcome& out) {
  planner::MemoryPlan& plan = out.plan->plan;
  notify(observer, "measuring on the GPU");
  auto m = measure_on_cuda(out.model, plan, o.device);
  if (!m.is_ok()) return in_file(m.status(), o.model);
  if (plan.workspace_in_arena) {
    // The measured sizes move the workspace values: plan the arena again with them.
    auto again = planner::replan_with_workspace(*out.model.graph, plan, m->node_workspace);
    if (!again.is_ok()) return in_file(again.status(), o.model);
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
  planner::write_plan(out.model, plan);
  // --tune: what the search chose goes with the model, so the next load does not search again
  // (a model that already carried choices gets this load's: the stored ones still valid, the
  // rest chosen again).
  if (o.device.tune || out.model.metadata(kAlgorithmChoicesKey)) {
    write_algorithm_choices(out.model, m->algorithms);
    out.algorithm_choices_written = true;
  }
  out.measured = std::move(m).value();
  return Status::ok();
}

// The device bytes a budget allows for this plan.
size_t budget_bytes(const MemoryBudget& b, const ir::Graph& g, const planner::MemoryPlan& plan) {
  if (b.percent < 0) return b.bytes;
  const size_t all = planner::device_bytes_without_offload(g, plan);
  const size_t params = planner::parameter_bytes(g, plan.alignment);
  return all - params + static_cast<size_t>(static_cast<double>(params) * b.percent / 100.0);
}

Status schedule_offload(const Options& o, const Observer* observer, Outcome& out) {
  const planner::MemoryPlan& plan = out.plan->plan;
  planner::OffloadOptions oo;
  oo.budget = budget_bytes(*o.mem_budget, *out.model.graph, plan);
  if (o.h2d_gbps > 0) {
    oo.device.h2d_bytes_per_ms = o.h2d_gbps * 1e6;
    oo.device.h2d_source = "given (--h2d-bandwidth)";
  } else if (o.device.cuda()) {
    notify(observer, "measuring host-to-device bandwidth");
    XOPT_ASSIGN_OR_RETURN(const Bandwidth bw, measure_h2d_on_cuda());
    oo.device.h2d_bytes_per_ms = bw.bytes_per_ms;
    oo.device.h2d_source = "measured on " + bw.device;
  }
  auto order = planner::resolve_node_order(*out.model.graph, plan);
  if (!order.is_ok()) return in_file(order.status(), o.model);
  auto sched = planner::offload_plan(*out.model.graph, *order, plan, oo);
  if (!sched.is_ok()) return in_file(sched.status(), o.model);
  out.offload = std::move(sched).value();
  planner::write_offload(out.model, *out.offload);
  return Status::ok();
}

// Whether any initializer of `model` lives in external data.
bool has_external_data(const ir::Model& model) {
  for (const ir::Value* v : model.graph->initializers())
    if (v->initializer_shell().data_location() == onnx::TensorProto::EXTERNAL) return true;
  return false;
}

// The output's save options. The default policy is "external when the model came with external
// data", judged by the model as loaded: passes replace initializers (convert-precision writes
// every weight anew, in memory), and a converted model must not come out inline.
ir::SaveOptions save_options(const Options& o, bool loaded_with_external_data) {
  ir::SaveOptions s = o.save;
  if (s.external == ir::SaveOptions::External::kAuto && loaded_with_external_data)
    s.external = ir::SaveOptions::External::kAlways;
  return s;
}

// Every output is written whole or not at all (common/atomic_file.h): the model first, then the
// statistics, so a model that cannot be written leaves the previous statistics as they were.
Status save_outputs(const Options& o, const ir::SaveOptions& save, const Observer* observer,
                    Outcome& out) {
  out.provenance = ir::provenance_of(*out.model.graph);
  if (o.save_provenance) ir::write_provenance(out.model);
  if (!o.output.empty()) {
    notify(observer, "writing " + o.output);
    XOPT_RETURN_IF_ERROR(in_file(ir::save_model(out.model, o.output, save), o.output));
    out.output = o.output;
  }
  if (!o.stats_json.empty())
    XOPT_RETURN_IF_ERROR(
        write_file_atomically(o.stats_json, passes::stats_to_json(out.stats).dump(2) + "\n"));
  return Status::ok();
}

// DIR/report.json (the breakdown with the offload schedule's device and host buckets, and the
// schedule beside it), DIR/report.html and the before/after diagrams.
Status write_reports(const Options& o, const Observer* observer, const Outcome& out) {
  const planner::MemoryPlan* plan = out.plan ? &out.plan->plan : nullptr;
  if (plan != nullptr && !o.report_dir.empty()) {
    const planner::OffloadPlan* offload = out.offload ? &*out.offload : nullptr;
    const std::string json = with_precision_report(planner::report_json(*plan, offload), out.model);
    XOPT_RETURN_IF_ERROR(
        write_file_atomically((fs::path(o.report_dir) / "report.json").string(), json + "\n"));
  }
  if (o.report_dir.empty() && o.dot_dir.empty()) return Status::ok();
  notify(observer, "rendering the report and diagrams");
  return viz::write_visuals({o.model, &out.model, plan, passes::stats_to_json(out.stats).dump(),
                             o.shapes, o.report_dir, o.dot_dir});
}

}  // namespace

std::string default_output(const std::string& model) {
  fs::path p(model);
  return (p.parent_path() / (p.stem().string() + ".opt.onnx")).string();
}

Status check_options(const Options& o) {
  if (o.model.empty()) return invalid_argument("no model given (see xopt --help)");
  XOPT_RETURN_IF_ERROR(check_device_flags(o.device));
  if (!o.output.empty() && same_file(o.output, o.model))
    return invalid_argument(o.output + ": refusing to overwrite the input model");
  if (Status rs = planner::check_ranges(o.ranges); !rs.is_ok())
    return invalid_argument("--input-shape: " + rs.message());
  for (const planner::InputRange& r : o.ranges)
    if (o.shapes.input_shapes.count(r.name) != 0)
      return invalid_argument("--input-shape: input '" + r.name + "' is given a shape and a range");
  const bool max_batch = o.pass_options.max_batch_bytes > 0;
  if (!o.ranges.empty() && (o.shapes.batch || max_batch))
    return invalid_argument(std::string(o.shapes.batch ? "--batch" : "--max-batch") +
                            " and a shape range exclude each other (give the batch in the range)");
  if (o.shapes.batch && *o.shapes.batch <= 0) return invalid_argument("--batch must be positive");
  const size_t align = o.pass_options.plan_alignment;
  if (align == 0 || (align & (align - 1)) != 0)
    return invalid_argument("--align must be a power of two, not " + std::to_string(align));
  if (max_batch && o.shapes.batch)
    return invalid_argument("--max-batch and --batch exclude each other");
  return Status::ok();
}

Result<Outcome> optimize(const Options& o, const Observer* observer) {
  XOPT_RETURN_IF_ERROR(check_options(o));
  XOPT_RETURN_IF_ERROR(create_folder(o.report_dir));
  XOPT_RETURN_IF_ERROR(create_folder(o.print_dir));
  Dumps dumps;
  dumps.options = &o;
  dumps.observer = observer;
  XOPT_ASSIGN_OR_RETURN(passes::PassManager pm, build_pass_manager(o, observer, dumps));
  const std::vector<std::string> names = pm.pass_names();
  const bool plans = std::find(names.begin(), names.end(), "plan-memory") != names.end();
  Outcome out;
  XOPT_ASSIGN_OR_RETURN(out.model, load_bound(o, observer));
  const ir::SaveOptions save = save_options(o, has_external_data(out.model));
  out.shapes = o.shapes;
  out.ranges = o.ranges;
  XOPT_RETURN_IF_ERROR(run_passes(pm, o, dumps, out, plans));
  if (o.device.cuda() && out.plan) XOPT_RETURN_IF_ERROR(measure_device(o, observer, out));
  if (o.mem_budget) XOPT_RETURN_IF_ERROR(schedule_offload(o, observer, out));
  XOPT_RETURN_IF_ERROR(save_outputs(o, save, observer, out));
  XOPT_RETURN_IF_ERROR(write_reports(o, observer, out));
  return out;
}

}  // namespace xopt::pipeline
