// A graph of N nodes (default 10^4, 10^5, 10^6: a chain of Add/Relu/Mul with shared constants)
// through load -> verify -> shapes -> cleanup,fold,fuse,plan -> save, seconds per stage and per
// node; time should grow linearly with N (issue 15). Prints figures, asserts nothing.
//   build/bench/xopt_bench_large_graph [N ...]
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "ir/onnx_io.h"
#include "ir/shape_inference.h"
#include "ir/verifier.h"
#include "passes/pass_manager.h"

namespace {

using namespace xopt;

// x -> Add(c) -> Relu -> Mul(c) -> Add(c) -> ... , N nodes, one float[16] constant.
onnx::ModelProto chain(int64_t n) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* op = m.add_opset_import();
  op->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("chain");
  auto io = [](onnx::ValueInfoProto* v, const std::string& name) {
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    t->mutable_shape()->add_dim()->set_dim_value(16);
  };
  io(g->add_input(), "x");
  auto* c = g->add_initializer();
  c->set_name("c");
  c->set_data_type(onnx::TensorProto::FLOAT);
  c->add_dims(16);
  for (int i = 0; i < 16; ++i) c->add_float_data(0.5f + static_cast<float>(i));
  std::string prev = "x";
  const char* ops[] = {"Add", "Relu", "Mul"};
  for (int64_t i = 0; i < n; ++i) {
    auto* node = g->add_node();
    const char* type = ops[i % 3];
    node->set_op_type(type);
    node->set_name("n" + std::to_string(i));
    node->add_input(prev);
    if (type[0] != 'R') node->add_input("c");
    prev = "v" + std::to_string(i);
    node->add_output(prev);
  }
  io(g->add_output(), prev);
  return m;
}

double since(std::chrono::steady_clock::time_point& t) {
  const auto now = std::chrono::steady_clock::now();
  const double s = std::chrono::duration<double>(now - t).count();
  t = now;
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int64_t> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::stoll(argv[i]));
  if (sizes.empty()) sizes = {10000, 100000, 1000000};
  const auto dir = std::filesystem::temp_directory_path() / "xopt_bench_large_graph";
  std::filesystem::create_directories(dir);
  const std::string in = (dir / "in.onnx").string(), out = (dir / "out.onnx").string();
  std::printf("%9s %8s %8s %8s %8s %8s %8s %10s\n", "nodes", "load", "verify", "shapes", "passes",
              "save", "total", "us/node");
  for (int64_t n : sizes) {
    {
      std::ofstream f(in, std::ios::binary);
      chain(n).SerializeToOstream(&f);
    }
    auto t = std::chrono::steady_clock::now();
    auto model = ir::load_model(in);
    if (!model.is_ok()) {
      std::fprintf(stderr, "%s\n", model.status().message().c_str());
      return 2;
    }
    const double load = since(t);
    Status st = ir::verify(*model->graph);
    const double verify = since(t);
    if (st.is_ok()) st = ir::infer_shapes(*model->graph);
    const double shapes = since(t);
    passes::PassManager pm;
    if (st.is_ok()) st = pm.add_pipeline("cleanup,fold,fuse,plan");
    passes::PassContext ctx;
    ctx.mark_shapes_valid();
    if (st.is_ok()) st = pm.run(*model, ctx);
    const double passes = since(t);
    if (st.is_ok()) st = ir::save_model(*model, out);
    const double save = since(t);
    if (!st.is_ok()) {
      std::fprintf(stderr, "%lld nodes: %s\n", static_cast<long long>(n), st.message().c_str());
      return 2;
    }
    const double total = load + verify + shapes + passes + save;
    std::printf("%9lld %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f %10.2f\n", static_cast<long long>(n),
                load, verify, shapes, passes, save, total, total / static_cast<double>(n) * 1e6);
    std::fflush(stdout);
  }
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  std::printf("peak RSS %.0f MB\n", static_cast<double>(ru.ru_maxrss) / 1024);
  std::filesystem::remove_all(dir);
  return 0;
}
