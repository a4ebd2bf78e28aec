// `xopt bench MODEL`: latency and memory of one model, in the spirit of trtexec. On the GPU: the
// whole inference (input copy, every launch, output copy) timed with CUDA events around each
// replay, host wall time beside it, and the measured memory next to the plan's. On the CPU: the
// reference executor inside the plan.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "common/atomic_file.h"
#include "executor/cpu/model_inputs.h"
#include "executor/cpu/session.h"
#include "ir/onnx_io.h"
#include "ir/shape_inference.h"
#include "planner/annotate.h"
#include "planner/memory_breakdown.h"
#include "planner/planner.h"
#include "planner/report.h"
#include "tools/xopt/command.h"
#include "tools/xopt/device.h"

namespace xopt::tool {
namespace {

struct BenchCommand {
  std::string model;
  DeviceFlags device;
  int64_t batch = 0;
  int warmup = 10;
  int iterations = 100;
  std::string json;
  bool profile = false;
  int profile_iterations = 20;
};

struct Stats {
  double min = 0, median = 0, p90 = 0, p99 = 0, mean = 0;
};

Stats summarize(std::vector<double> v) {
  Stats s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  auto at = [&](double q) {
    return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))];
  };
  s.min = v.front();
  s.median = at(0.5);
  s.p90 = at(0.9);
  s.p99 = at(0.99);
  for (double x : v) s.mean += x;
  s.mean /= static_cast<double>(v.size());
  return s;
}

nlohmann::json to_json(const Stats& s) {
  return {{"min", s.min}, {"median", s.median}, {"p90", s.p90}, {"p99", s.p99}, {"mean", s.mean}};
}

void print_stats(const char* what, const Stats& s) {
  std::printf("%-10s min %9.4f  median %9.4f  p90 %9.4f  p99 %9.4f  mean %9.4f ms\n", what, s.min,
              s.median, s.p90, s.p99, s.mean);
}

// Per-node times aggregated by op type, the slowest first, and the slowest nodes: where the time
// goes (issue 11 asks for it wherever we are slower than PyTorch).
nlohmann::json print_profile(const std::vector<NodeProfile>& nodes, double replay_ms,
                             const char* how) {
  double sum = 0;
  std::map<std::string, std::pair<int, double>> by_op;
  for (const NodeProfile& n : nodes) {
    sum += n.ms;
    auto& [count, ms] = by_op[n.op];
    ++count;
    ms += n.ms;
  }
  std::vector<std::pair<std::string, std::pair<int, double>>> ops(by_op.begin(), by_op.end());
  std::sort(ops.begin(), ops.end(),
            [](const auto& a, const auto& b) { return a.second.second > b.second.second; });
  std::printf("profile    %zu nodes, %s: sum of node times %.4f ms (median replay %.4f ms)\n",
              nodes.size(), how, sum, replay_ms);
  std::printf("  %-34s %6s %11s %7s\n", "op", "nodes", "ms", "share");
  nlohmann::json j;
  j["sum_ms"] = sum;
  j["replay_median_ms"] = replay_ms;
  j["how"] = how;
  for (const auto& [op, v] : ops) {
    const double share = sum > 0 ? 100.0 * v.second / sum : 0;
    std::printf("  %-34s %6d %11.4f %6.1f%%\n", op.c_str(), v.first, v.second, share);
    j["by_op"].push_back({{"op", op}, {"nodes", v.first}, {"ms", v.second}});
  }
  std::vector<const NodeProfile*> slow;
  slow.reserve(nodes.size());
  for (const NodeProfile& n : nodes) slow.push_back(&n);
  std::sort(slow.begin(), slow.end(), [](auto* a, auto* b) { return a->ms > b->ms; });
  const size_t shown = std::min<size_t>(slow.size(), 15);
  std::printf("  slowest nodes\n");
  for (size_t i = 0; i < shown; ++i)
    std::printf("  %11.4f ms  %s\n", slow[i]->ms, slow[i]->node.c_str());
  for (const NodeProfile& n : nodes)
    j["nodes"].push_back({{"node", n.node}, {"op", n.op}, {"ms", n.ms}});
  return j;
}

// What the timed runs gave, for the summary.
struct Timings {
  std::vector<double> gpu, host;
  std::vector<NodeProfile> profile;
  const char* profile_how = "";
};

// The offloaded run against the resident one (same call, every weight resident).
void print_offload(const CudaBench& r, nlohmann::json& j) {
  const auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
  };
  const double resident = median(r.resident_gpu_ms), ours = median(r.gpu_ms);
  std::printf("  %-22s %14zu  %12s   (weights copied in before their readers)\n", "offload staging",
              r.staging, planner::human_bytes(r.staging).c_str());
  std::printf("  %-22s %14zu  %12s   (%zu weights in pinned host memory)\n", "offloaded (host)",
              r.offloaded_bytes, planner::human_bytes(r.offloaded_bytes).c_str(),
              r.offloaded_weights);
  std::printf("  %-22s %14zu  %12s   budget %14zu  %s\n", "device total (ours)", r.device_total,
              planner::human_bytes(r.device_total).c_str(), r.budget,
              r.device_total <= r.budget ? "(within)" : "(OVER THE BUDGET)");
  std::printf(
      "offload: median %.4f ms vs %.4f ms with every weight resident: %.3fx measured, "
      "%.3fx predicted\n",
      ours, resident, resident > 0 ? ours / resident : 0.0, r.predicted_slowdown);
  std::printf("offload: outputs %s the resident run's\n",
              r.offload_outputs_equal ? "equal (bitwise)" : "DIFFER from");
  j["offload"] = {{"budget", r.budget},
                  {"device_total", r.device_total},
                  {"staging", r.staging},
                  {"offloaded_bytes", r.offloaded_bytes},
                  {"offloaded_weights", r.offloaded_weights},
                  {"median_ms", ours},
                  {"resident_median_ms", resident},
                  {"measured_slowdown", resident > 0 ? ours / resident : 0.0},
                  {"predicted_slowdown", r.predicted_slowdown},
                  {"resident_gpu_ms", r.resident_gpu_ms},
                  {"outputs_equal_resident", r.offload_outputs_equal}};
}

// The memory measured on the device next to the plan's.
void print_gpu_memory(const CudaBench& r, nlohmann::json& j) {
  const DeviceMeasurement& m = r.memory;
  std::printf("device     %s\n", m.device.c_str());
  std::printf("plan       %s\n", r.plan_from_model ? "the model's own" : "made for these inputs");
  auto row = [](const char* name, size_t measured, size_t planned_bytes) {
    std::printf("  %-22s %14zu  %12s   plan %14zu  %s\n", name, measured,
                planner::human_bytes(measured).c_str(), planned_bytes,
                measured == planned_bytes ? "(equal)" : "(DIFFERS)");
  };
  std::printf("memory (measured on the device vs the plan)\n");
  std::printf("  %-22s %14zu  %12s   plan %14zu  %s\n", "CUDA context", m.context_bytes,
              planner::human_bytes(m.context_bytes).c_str(), r.plan.breakdown.cuda_context,
              r.plan.breakdown.cuda_context_estimated ? "(plan's is an estimate)" : "");
  row(r.offloaded ? "parameters (resident)" : "parameters", m.parameters,
      r.plan_parameters - r.offloaded_bytes);
  row("activations (arena)", m.arena, r.plan.arena_bytes);
  row("workspace", m.workspace, r.plan.workspace_bytes);
  std::printf("  %-22s %14zu  %12s   (graph inputs/outputs outside the arena)\n", "I/O", m.io,
              planner::human_bytes(m.io).c_str());
  if (r.offloaded) print_offload(r, j);
  std::printf("  device allocations during the timed runs: %zu\n", r.allocations_during_runs);
  if (!m.algorithms.nodes.empty())
    std::printf("  algorithm choices: %zu nodes, %zu taken from the model without searching\n",
                m.algorithms.nodes.size(), m.choices_reused);
  j["memory"] = {{"context", m.context_bytes},
                 {"context_measured", m.context_measured},
                 {"parameters", m.parameters},
                 {"arena", m.arena},
                 {"workspace", m.workspace},
                 {"io", m.io},
                 {"plan_parameters", r.plan_parameters},
                 {"staging", r.staging},
                 {"plan_arena", r.plan.arena_bytes},
                 {"plan_workspace", r.plan.workspace_bytes},
                 {"allocations_during_runs", r.allocations_during_runs},
                 {"algorithm_choices", m.algorithms.nodes.size()},
                 {"algorithm_choices_reused", m.choices_reused},
                 {"device", m.device}};
}

int bench_gpu(const BenchCommand& c, const ir::Model& model,
              const std::map<std::string, ir::Tensor>& inputs, Timings& t, nlohmann::json& j) {
  auto r = bench_on_cuda(model, inputs, c.device, c.warmup, c.iterations,
                         c.profile ? c.profile_iterations : 0);
  if (!r.is_ok()) return report(r.status(), c.model);
  t.gpu = r->gpu_ms;
  t.host = r->host_ms;
  t.profile = r->profile;
  t.profile_how = "CUDA events between launches, launch list replayed without the graph";
  print_gpu_memory(*r, j);
  return kExitOk;
}

// A node's time on the CPU: from the previous node's outputs to its own (kernel and executor
// work), averaged over the profiled runs.
Status profile_cpu(const BenchCommand& c, const ir::Model& model,
                   const std::map<std::string, ir::Tensor>& inputs, const exec::RunOptions& run,
                   std::vector<NodeProfile>& profile) {
  std::map<const ir::Node*, size_t> index;
  exec::RunOptions timed = run;
  using Clock = std::chrono::steady_clock;
  Clock::time_point mark;
  const ir::Node* last = nullptr;
  timed.on_output = [&](const ir::Node& n, const ir::Value&, const ir::Tensor&) {
    if (&n == last) return;
    const auto now = Clock::now();
    auto [it, added] = index.emplace(&n, profile.size());
    if (added) {
      std::string op = n.domain().empty() || n.domain() == "ai.onnx"
                           ? n.op_type()
                           : n.domain() + "." + n.op_type();
      profile.push_back({n.describe(), std::move(op), 0.0});
    }
    profile[it->second].ms +=
        std::chrono::duration<double, std::milli>(now - mark).count() / c.profile_iterations;
    mark = now;
    last = &n;
  };
  for (int i = 0; i < c.profile_iterations; ++i) {
    last = nullptr;
    mark = Clock::now();
    XOPT_RETURN_IF_ERROR(exec::run_model(model, inputs, timed).status());
  }
  return Status::ok();
}

// What the CPU executor used (RunStats of the last run) beside the plan it ran in: the arena (or,
// with no plan, the most activation bytes live at once) and the parameters.
nlohmann::json cpu_memory_json(const ir::Graph& g, const planner::MemoryPlan* plan,
                               const exec::RunStats& used) {
  const size_t params = planner::parameter_bytes(g, plan ? plan->alignment : 256);
  nlohmann::json m = {{"device", "cpu"},
                      {"planned", plan != nullptr},
                      {"parameters", params},
                      {"arena", used.arena_bytes},
                      {"peak_activations", used.peak_activation_bytes},
                      {"outputs_copied_into_arena", used.outputs_copied_into_arena}};
  if (plan != nullptr) {
    m["plan_arena"] = plan->arena_bytes;
    m["plan_parameters"] = plan->breakdown.parameters;
    // The CPU keeps every parameter in host memory: the plan's breakdown without its offload.
    m["breakdown"] =
        nlohmann::json::parse(planner::breakdown_json(planner::memory_breakdown(*plan)));
  }
  return m;
}

// The line bench prints for cpu_memory_json's figures.
std::string cpu_memory_text(const nlohmann::json& m) {
  std::string text = "parameters " + planner::human_bytes(m["parameters"].get<size_t>());
  if (m["planned"].get<bool>())
    return text + ", arena " + planner::human_bytes(m["arena"].get<size_t>()) + " (plan " +
           planner::human_bytes(m["plan_arena"].get<size_t>()) + ")";
  return text + ", activations at most " +
         planner::human_bytes(m["peak_activations"].get<size_t>()) + " live (no plan)";
}

int bench_cpu(const BenchCommand& c, const ir::Model& model,
              const std::map<std::string, ir::Tensor>& inputs, Timings& t, nlohmann::json& j) {
  const bool planned = model.metadata(planner::kPlanMetadataKey).has_value();
  planner::MemoryPlan plan;
  exec::RunOptions run;
  if (planned) {
    auto p = planner::read_plan(model);
    if (!p.is_ok()) return report(p.status(), c.model);
    plan = std::move(p).value();
    run.plan = &plan;
  }
  exec::RunStats used;  // the last run's
  run.stats = &used;
  for (int i = 0; i < c.warmup + c.iterations; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    auto out = exec::run_model(model, inputs, run);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (!out.is_ok()) return report(out.status(), c.model);
    if (i >= c.warmup) t.host.push_back(ms);
  }
  if (c.profile) {
    if (Status st = profile_cpu(c, model, inputs, run, t.profile); !st.is_ok())
      return report(st, c.model);
    t.profile_how = "wall time between nodes' outputs in the CPU executor";
  }
  std::printf("device     cpu (reference executor%s)\n", planned ? ", inside the plan" : "");
  j["memory"] = cpu_memory_json(*model.graph, planned ? &plan : nullptr, used);
  std::printf("memory     %s\n", cpu_memory_text(j["memory"]).c_str());
  return kExitOk;
}

// The latency figures, the profile and the throughput (and --json).
int print_summary(const BenchCommand& c, const ir::Model& model,
                  const std::map<std::string, ir::Tensor>& inputs, const Timings& t,
                  nlohmann::json& j) {
  const Stats h = summarize(t.host);
  if (!t.gpu.empty()) {
    const Stats g = summarize(t.gpu);
    print_stats("gpu", g);
    j["gpu_ms"] = to_json(g);
  }
  print_stats("host", h);
  j["host_ms"] = to_json(h);
  if (c.profile)
    j["profile"] =
        print_profile(t.profile, t.gpu.empty() ? h.median : summarize(t.gpu).median, t.profile_how);
  const double per_s = h.median > 0 ? 1000.0 / h.median : 0;
  int64_t batch = 1;
  for (const ir::Value* v : model.graph->runtime_inputs()) {
    auto it = inputs.find(v->name());
    if (it != inputs.end() && it->second.rank() > 0) {
      batch = it->second.dims()[0];
      break;
    }
  }
  std::printf("throughput %.1f inferences/s (%.1f samples/s at batch %lld, host median)\n", per_s,
              per_s * static_cast<double>(batch), static_cast<long long>(batch));
  j["batch"] = batch;
  j["throughput_per_s"] = per_s;
  if (!c.json.empty()) {
    if (!write_file_atomically(c.json, j.dump(2) + "\n").is_ok())
      return report_error(kExitBadModel, c.json + ": cannot write");
  }
  return kExitOk;
}

int run_bench(const BenchCommand& c) {
  if (Status st = check_device_flags(c.device); !st.is_ok()) return report(st);
  if (c.warmup < 0 || c.iterations <= 0)
    return report_error(kExitUsage, "--warmup must be >= 0 and --iterations > 0");
  if (c.profile_iterations <= 0)
    return report_error(kExitUsage, "--profile-iterations must be positive");
  if (c.batch < 0) return report_error(kExitUsage, "--batch must be positive");
  auto loaded = ir::load_model(c.model);
  if (!loaded.is_ok()) return report(loaded.status(), c.model);
  ir::Model& model = *loaded;
  exec::RandomInputOptions ro;
  if (c.batch > 0) ro.shapes.batch = c.batch;
  std::vector<std::string> notes;
  auto inputs = exec::random_inputs(*model.graph, ro, &notes);
  if (!inputs.is_ok()) return report(inputs.status(), c.model);

  nlohmann::json j;
  j["model"] = c.model;
  j["device"] = c.device.device;
  j["warmup"] = c.warmup;
  j["iterations"] = c.iterations;
  Timings t;
  const int rc =
      c.device.cuda() ? bench_gpu(c, model, *inputs, t, j) : bench_cpu(c, model, *inputs, t, j);
  if (rc != kExitOk) return rc;
  return print_summary(c, model, *inputs, t, j);
}

std::function<int()> setup_bench(CLI::App& sub) {
  auto c = std::make_shared<BenchCommand>();
  sub.add_option("model", c->model, "Model (optimized and planned, or plain with static shapes)")
      ->required();
  add_device_flags(sub, c->device);
  sub.add_option("--batch", c->batch, "Leading symbolic dim of the random inputs");
  sub.add_option("--warmup", c->warmup, "Untimed runs first (default 10)");
  sub.add_option("--iterations", c->iterations, "Timed runs (default 100)");
  sub.add_option("--json", c->json, "Also write the figures as JSON");
  sub.add_flag("--profile", c->profile,
               "Also time every node (GPU: CUDA events between launches, replayed without the "
               "graph; CPU: between nodes) and print the time per op type and the slowest nodes");
  sub.add_option("--profile-iterations", c->profile_iterations,
                 "Replays averaged by --profile (default 20)");
  return [c] { return run_bench(*c); };
}

}  // namespace

XOPT_SUBCOMMAND("bench",
                "Latency (min/median/p90/p99), throughput and measured memory of one model on the "
                "GPU (--device cuda) or the CPU",
                setup_bench);

}  // namespace xopt::tool
