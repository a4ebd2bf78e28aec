#include "tests/kernels_nn/node_runner.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "executor/cpu/session.h"
#include "ir/onnx_io.h"
#include "ir/tensor_proto.h"

namespace xopt::test {
namespace fs = std::filesystem;

namespace {

Result<ir::Tensor> read_tensor(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  onnx::TensorProto p;
  if (!f || !p.ParseFromIstream(&f)) return io_error("cannot read " + path);
  return ir::tensor_from_proto(std::move(p), fs::path(path).parent_path().string());
}

std::string compare(const ir::Tensor& want, const ir::Tensor& got, const std::string& what) {
  std::ostringstream os;
  if (want.dtype() != got.dtype()) {
    os << what << ": dtype " << ir::dtype_name(got.dtype()) << ", expected " << ir::dtype_name(want.dtype());
    return os.str();
  }
  if (want.dims() != got.dims()) {
    os << what << ": shape mismatch";
    return os.str();
  }
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double a = want.as_double(i), b = got.as_double(i);
    if (std::isnan(a) && std::isnan(b)) continue;
    if (std::isinf(a) && a == b) continue;
    if (!(std::abs(a - b) <= 1e-7 + 1e-3 * std::abs(a))) {
      os << what << "[" << i << "]: got " << b << ", expected " << a;
      return os.str();
    }
  }
  return "";
}

}  // namespace

std::string run_node_test_dir(const std::string& dir) {
  auto model = ir::load_model(dir + "/model.onnx");
  if (!model.is_ok()) return model.status().message();
  const ir::Graph& g = *model->graph;
  std::vector<fs::path> sets;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0)
      sets.push_back(e.path());
  std::sort(sets.begin(), sets.end());
  if (sets.empty()) return "no test_data_set";
  for (const auto& set : sets) {
    std::map<std::string, ir::Tensor> inputs;
    const auto ins = g.runtime_inputs();
    for (size_t i = 0; i < ins.size(); ++i) {
      const std::string p = (set / ("input_" + std::to_string(i) + ".pb")).string();
      if (!fs::exists(p)) continue;
      auto t = read_tensor(p);
      if (!t.is_ok()) return t.status().message();
      inputs[ins[i]->name()] = std::move(*t);
    }
    auto outs = exec::run_model(*model, inputs);
    if (!outs.is_ok()) return outs.status().message();
    for (size_t i = 0; i < g.outputs().size(); ++i) {
      auto want = read_tensor((set / ("output_" + std::to_string(i) + ".pb")).string());
      if (!want.is_ok()) return want.status().message();
      std::string d = compare(*want, (*outs)[i], g.outputs()[i]->name());
      if (!d.empty()) return set.filename().string() + ": " + d;
    }
  }
  return "";
}

}  // namespace xopt::test
