// The optimization pipeline as a library call: options in, outcome out, a progress observer for
// the long steps. load -> verify -> bind shapes -> infer shapes -> passes -> verify -> (GPU
// measurement) -> (offload schedule) -> save -> statistics, report and diagrams. `xopt`, the
// Python package and the tests all call it; it never prints and never exits: every failure is a
// Status whose category says whose fault it is (common/status.h: invalid argument for the flags,
// invalid model / io for the model or a file, pass failed for a pass or a broken result) and
// whose message names the file (and the node, by its original name, where one is at fault).
//
//   pipeline::Options o;
//   o.model = "resnet50.onnx";
//   o.output = "resnet50.opt.onnx";
//   o.passes = "fold,fuse,plan";
//   o.shapes.batch = 1;
//   Result<pipeline::Outcome> r = pipeline::optimize(o);
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "ir/graph.h"
#include "ir/onnx_io.h"
#include "ir/provenance.h"
#include "ir/shape_inference.h"
#include "passes/pass.h"
#include "passes/pass_manager.h"
#include "pipeline/device.h"
#include "planner/offload.h"
#include "planner/shape_range.h"

namespace xopt::pipeline {

// A parameter-offload budget: `bytes` of device memory, or (percent >= 0) the activations,
// workspace and I/O region plus that share of the parameters.
struct MemoryBudget {
  size_t bytes = 0;
  double percent = -1;
};

struct Options {
  std::string model;   // the input .onnx (external data beside it is read from there)
  std::string output;  // where the optimized model is written; empty: not written
  // Passes and groups, comma-separated, in order (passes::PassRegistry), and those left out.
  std::string passes = "cleanup";
  std::vector<std::string> disable;
  bool verify_each = false;
  // Dumps of the graph in ONNX text after these passes or groups: numbered files in `print_dir`
  // when given, else to Observer::dump.
  std::vector<std::string> print_after;
  std::string print_dir;
  // Symbolic dims bound before shape inference (input shapes and the batch), and ranges of input
  // shapes planned at their max (planner/shape_range.h). A range excludes a batch.
  ir::ShapeBindings shapes;
  std::vector<planner::InputRange> ranges;
  // What the passes are asked to do: fold_max_bytes, the plan's alignment, I/O and workspace in
  // the arena, the --max-batch budget, precision (passes::PrecisionOptions). The pipeline fills in
  // the rest (shape bindings and ranges, the plan's batch, the model's naive bytes).
  passes::PassOptions pass_options;
  // Parameter offload when the planned model does not fit (needs plan-memory), and the
  // host-to-device bandwidth of its cost model in GB/s (0: measured on the GPU with device cuda,
  // else planner's default).
  std::optional<MemoryBudget> mem_budget;
  double h2d_gbps = 0;
  // cpu, or cuda: the plan's workspace and CUDA context are then measured on the GPU.
  DeviceFlags device;
  // How the output is written (external data policy).
  ir::SaveOptions save;
  // Files besides the model: per-pass statistics as JSON; DIR/report.json and DIR/report.html
  // (needs plan-memory); DIR/{before,after}.{dot,svg}.
  std::string stats_json;
  std::string report_dir;
  std::string dot_dir;
  // The output records which original nodes each node stands for (metadata "xopt.provenance",
  // ir/provenance.h), so a diff between the two files is exact.
  bool save_provenance = true;
  // The seed of the random inputs `--precision mixed` calibrates on when
  // pass_options.precision.calibration_dir names no data.
  uint64_t calibration_seed = 0;
};

// Called while the pipeline runs, on the calling thread. Every member may be empty.
struct Observer {
  // A long step begins: "loading m.onnx", "measuring on the GPU", "writing out.onnx", ...
  std::function<void(const std::string& step)> step;
  // A pass begins on a graph of `nodes` nodes (every run of every pass).
  std::function<void(const std::string& pass, size_t nodes)> pass_start;
  // A --print-after dump when no print_dir is given.
  std::function<void(const passes::GraphDump&)> dump;
};

struct Outcome {
  ir::Model model;     // the optimized model, as written
  std::string output;  // where it was written (empty when Options::output was)
  passes::PipelineStats stats;
  // The plan plan-memory made (after a --max-batch search, the batch found), with the GPU's
  // measurements where device cuda.
  std::optional<passes::PlanOutcome> plan;
  std::optional<planner::OffloadPlan> offload;
  std::optional<DeviceMeasurement> measured;  // device cuda with a plan
  bool algorithm_choices_written = false;     // the GPU's choices stored in the model
  ir::ProvenanceMap provenance;               // node of the output -> the originals it replaced
  // The shapes the model was bound at (for comparing it with the original).
  ir::ShapeBindings shapes;
  std::vector<planner::InputRange> ranges;
};

// The default output path for a model: <stem>.opt.onnx beside it.
std::string default_output(const std::string& model);

// Options that cannot work, found before the model is read (the same checks optimize makes).
Status check_options(const Options& options);

// Runs the pipeline. `observer` (may be null) sees every long step and every pass start.
Result<Outcome> optimize(const Options& options, const Observer* observer = nullptr);

}  // namespace xopt::pipeline
