// Load + save wall time and peak RSS for one model (target for resnet18: < 0.3 s, < 2x the file
// size).
//   build/bench/xopt_bench_io ../shared/models/resnet18/model.onnx [iterations]
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>

#include "ir/onnx_io.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: xopt_bench_io MODEL.onnx [iterations]\n");
    return 1;
  }
  const std::string path = argv[1];
  const int iters = argc > 2 ? std::stoi(argv[2]) : 5;
  const std::string out = (std::filesystem::temp_directory_path() / "xopt_bench_io.onnx").string();
  double best = 1e9, total = 0;
  for (int i = 0; i < iters; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    auto model = xopt::ir::load_model(path);
    if (!model.is_ok()) {
      std::fprintf(stderr, "%s\n", model.status().message().c_str());
      return 2;
    }
    auto saved = xopt::ir::save_model(*model, out);
    if (!saved.is_ok()) {
      std::fprintf(stderr, "%s\n", saved.message().c_str());
      return 2;
    }
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::min(best, s);
    total += s;
  }
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  const double file_mb = static_cast<double>(std::filesystem::file_size(path)) / 1e6;
  const double rss_mb = static_cast<double>(ru.ru_maxrss) * 1024 / 1e6;
  std::printf("model            %s\n", path.c_str());
  std::printf("file size        %.1f MB\n", file_mb);
  std::printf("load+save        best %.3f s, mean %.3f s over %d runs (target < 0.3 s)\n", best,
              total / iters, iters);
  std::printf("peak RSS         %.1f MB = %.2fx file size (target < 2x)\n", rss_mb,
              rss_mb / file_mb);
  std::filesystem::remove(out);
  return 0;
}
