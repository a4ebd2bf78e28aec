// xopt_bench_executor MODEL.onnx [--iters N] [--warmup N] [--seed N] [--data DIR] [--threads N]
// [--profile]:
// milliseconds per inference of the CPU reference executor (run_model, simple mode). Inputs come
// from --data DIR or test_data_set_0 beside the model when it exists, else seeded random inputs
// (ids kept inside what they index). Prints one JSON line: {"model", "iters", "ms_min",
// "ms_median", "ms_mean", "inputs"}; --profile adds per-op-type milliseconds per run on stderr.
// Threads: --threads N intra-op threads (RunOptions::threads; OpenBLAS itself runs on one), default
// XOPT_NUM_THREADS or every hardware thread. bench/executor_bench.py runs this next to onnxruntime.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "executor/cpu/model_inputs.h"
#include "executor/cpu/session.h"
#include "ir/onnx_io.h"

namespace fs = std::filesystem;
using namespace xopt;

int main(int argc, char** argv) {
  std::string path;
  int iters = 20, warmup = 2, threads = 0;
  bool profile = false;
  std::string data_dir;
  uint64_t seed = 0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if ((a == "--iters" || a == "--warmup" || a == "--seed" || a == "--threads") && i + 1 < argc) {
      const long v = std::strtol(argv[++i], nullptr, 10);
      if (a == "--iters")
        iters = static_cast<int>(v);
      else if (a == "--warmup")
        warmup = static_cast<int>(v);
      else if (a == "--threads")
        threads = static_cast<int>(v);
      else
        seed = static_cast<uint64_t>(v);
    } else if (a == "--data" && i + 1 < argc) {
      data_dir = argv[++i];
    } else if (a == "--profile") {
      profile = true;
    } else if (path.empty() && a.rfind("--", 0) != 0) {
      path = a;
    } else {
      std::fprintf(
          stderr,
          "usage: %s MODEL.onnx [--iters N] [--warmup N] [--seed N] [--data DIR] [--threads N] "
          "[--profile]\n",
          argv[0]);
      return 1;
    }
  }
  if (path.empty() || iters < 1 || warmup < 0 || threads < 0) {
    std::fprintf(
        stderr,
        "usage: %s MODEL.onnx [--iters N] [--warmup N] [--seed N] [--data DIR] [--threads N] "
        "[--profile]\n",
        argv[0]);
    return 1;
  }
  auto model = ir::load_model(path);
  if (!model.is_ok()) {
    std::fprintf(stderr, "%s\n", model.status().message().c_str());
    return 2;
  }
  std::map<std::string, ir::Tensor> inputs;
  std::string source;
  const fs::path data =
      data_dir.empty() ? fs::path(path).parent_path() / "test_data_set_0" : fs::path(data_dir);
  if (fs::exists(data / "input_0.pb")) {
    auto ds = exec::read_data_set(*model->graph, data.string());
    if (!ds.is_ok()) {
      std::fprintf(stderr, "%s\n", ds.status().message().c_str());
      return 2;
    }
    inputs = std::move(ds->inputs);
    source = "test_data_set_0";
  } else {
    exec::RandomInputOptions ro;
    ro.seed = seed;
    auto r = exec::random_inputs(*model->graph, ro);
    if (!r.is_ok()) {
      std::fprintf(stderr, "%s\n", r.status().message().c_str());
      return 2;
    }
    inputs = std::move(*r);
    source = "random";
  }
  // --profile: time between consecutive node completions, summed per op type (the last output
  // of a node ends its step; the first step also carries the run's setup).
  std::map<std::string, double> op_ms;
  std::map<std::string, int> op_count;
  std::chrono::steady_clock::time_point last;
  const ir::Node* last_node = nullptr;
  exec::RunOptions ro;
  ro.threads = threads;
  if (profile)
    ro.on_output = [&](const ir::Node& n, const ir::Value&, const ir::Tensor&) {
      if (&n == last_node) return;
      const auto now = std::chrono::steady_clock::now();
      const std::string op = n.domain().empty() ? n.op_type() : n.domain() + "." + n.op_type();
      op_ms[op] += std::chrono::duration<double, std::milli>(now - last).count();
      ++op_count[op];
      last = now;
      last_node = &n;
    };
  std::vector<double> ms;
  for (int i = 0; i < warmup + iters; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    last = t0;
    last_node = nullptr;
    auto out = exec::run_model(*model, inputs, ro);
    const auto t1 = std::chrono::steady_clock::now();
    if (!out.is_ok()) {
      std::fprintf(stderr, "%s\n", out.status().message().c_str());
      return 2;
    }
    if (i >= warmup) ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  double mean = 0;
  for (double v : ms) mean += v / static_cast<double>(ms.size());
  const size_t n = sorted.size();
  const double median = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  if (profile) {
    std::vector<std::pair<double, std::string>> rows;
    for (const auto& [op, t] : op_ms) rows.emplace_back(t, op);
    std::sort(rows.rbegin(), rows.rend());
    const double runs = warmup + iters;
    for (const auto& [t, op] : rows)
      std::fprintf(stderr, "%-36s %9.3f ms/run  %5d nodes\n", op.c_str(), t / runs,
                   static_cast<int>(op_count[op] / runs));
  }
  std::printf(
      "{\"model\": \"%s\", \"iters\": %d, \"threads\": %d, \"ms_min\": %.3f, \"ms_median\": %.3f, "
      "\"ms_mean\": "
      "%.3f, \"inputs\": \"%s\"}\n",
      path.c_str(), iters, threads, sorted.front(), median, mean, source.c_str());
  return 0;
}
