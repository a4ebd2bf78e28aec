// xopt_bench_executor MODEL.onnx [--iters N] [--warmup N] [--seed N]: milliseconds per inference of
// the CPU reference executor (run_model, simple mode). Inputs come from test_data_set_0 beside the
// model when it exists, else seeded random inputs (ids kept inside what they index). Prints one
// JSON line: {"model", "iters", "ms_min", "ms_median", "ms_mean", "inputs"}. Threads: OpenBLAS's
// own (set OPENBLAS_NUM_THREADS). bench/executor_bench.py runs this next to onnxruntime.
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
  int iters = 20, warmup = 2;
  uint64_t seed = 0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if ((a == "--iters" || a == "--warmup" || a == "--seed") && i + 1 < argc) {
      const long v = std::strtol(argv[++i], nullptr, 10);
      if (a == "--iters")
        iters = static_cast<int>(v);
      else if (a == "--warmup")
        warmup = static_cast<int>(v);
      else
        seed = static_cast<uint64_t>(v);
    } else if (path.empty() && a.rfind("--", 0) != 0) {
      path = a;
    } else {
      std::fprintf(stderr, "usage: %s MODEL.onnx [--iters N] [--warmup N] [--seed N]\n", argv[0]);
      return 1;
    }
  }
  if (path.empty() || iters < 1 || warmup < 0) {
    std::fprintf(stderr, "usage: %s MODEL.onnx [--iters N] [--warmup N] [--seed N]\n", argv[0]);
    return 1;
  }
  auto model = ir::load_model(path);
  if (!model.is_ok()) {
    std::fprintf(stderr, "%s\n", model.status().message().c_str());
    return 2;
  }
  std::map<std::string, ir::Tensor> inputs;
  std::string source;
  const fs::path data = fs::path(path).parent_path() / "test_data_set_0";
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
  std::vector<double> ms;
  for (int i = 0; i < warmup + iters; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    auto out = exec::run_model(*model, inputs);
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
  std::printf(
      "{\"model\": \"%s\", \"iters\": %d, \"ms_min\": %.3f, \"ms_median\": %.3f, \"ms_mean\": "
      "%.3f, \"inputs\": \"%s\"}\n",
      path.c_str(), iters, sorted.front(), median, mean, source.c_str());
  return 0;
}
