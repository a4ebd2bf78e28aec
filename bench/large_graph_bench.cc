// Graphs of N nodes (default 10^4, 10^5, 10^6) through load -> verify -> shapes ->
// cleanup,fold,fuse,plan -> save: seconds per stage, microseconds per node, peak RSS, and the
// passes' own times per node. Time should grow linearly with N (issue 15): a stage or pass whose
// us/node column grows with N is superlinear. Prints figures, asserts nothing.
//   build/bench/xopt_bench_large_graph [--shape chain|residual|fanout|all] [N ...]
// Shapes (all share one float[16] constant c, so c has ~N uses):
//   chain     x -> Add(c) -> Relu -> Mul(c) -> Add(c) -> ...                      (one path)
//   residual  h -> Mul(h, c) -> Relu -> Add(h, .) -> ...  each block reads h twice (a skip edge)
//   fanout    x -> N-1 identical Mul(x, c) -> Sum of them all: CSE merges the N-1 copies of one
//             op on one value (x and c have N-1 readers each, removed one by one)
#include <malloc.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "ir/onnx_io.h"
#include "ir/shape_inference.h"
#include "ir/verifier.h"
#include "passes/pass_manager.h"

namespace {

using namespace xopt;

onnx::ModelProto empty_model(const char* name, std::string* prev) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* op = m.add_opset_import();
  op->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name(name);
  auto* v = g->add_input();
  v->set_name("x");
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::FLOAT);
  t->mutable_shape()->add_dim()->set_dim_value(16);
  auto* c = g->add_initializer();
  c->set_name("c");
  c->set_data_type(onnx::TensorProto::FLOAT);
  c->add_dims(16);
  for (int i = 0; i < 16; ++i) c->add_float_data(0.5f + static_cast<float>(i));
  *prev = "x";
  return m;
}

void add_node(onnx::GraphProto* g, const char* type, int64_t i, const std::string& a,
              const std::string& b, std::string* out) {
  auto* node = g->add_node();
  node->set_op_type(type);
  node->set_name("n" + std::to_string(i));
  node->add_input(a);
  if (!b.empty()) node->add_input(b);
  *out = "v" + std::to_string(i);
  node->add_output(*out);
}

void finish(onnx::GraphProto* g, const std::string& last) {
  auto* v = g->add_output();
  v->set_name(last);
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::FLOAT);
  t->mutable_shape()->add_dim()->set_dim_value(16);
}

onnx::ModelProto chain(int64_t n) {
  std::string prev;
  onnx::ModelProto m = empty_model("chain", &prev);
  auto* g = m.mutable_graph();
  const char* ops[] = {"Add", "Relu", "Mul"};
  for (int64_t i = 0; i < n; ++i) {
    const char* type = ops[i % 3];
    add_node(g, type, i, prev, type[0] == 'R' ? "" : "c", &prev);
  }
  finish(g, prev);
  return m;
}

onnx::ModelProto residual(int64_t n) {
  std::string h;
  onnx::ModelProto m = empty_model("residual", &h);
  auto* g = m.mutable_graph();
  std::string a, b;
  for (int64_t i = 0; i + 3 <= n || i == 0; i += 3) {
    add_node(g, "Mul", i, h, "c", &a);
    add_node(g, "Relu", i + 1, a, "", &b);
    add_node(g, "Add", i + 2, h, b, &h);
  }
  finish(g, h);
  return m;
}

onnx::ModelProto fanout(int64_t n) {
  std::string x;
  onnx::ModelProto m = empty_model("fanout", &x);
  auto* g = m.mutable_graph();
  std::vector<std::string> copies;
  for (int64_t i = 0; i + 1 < std::max<int64_t>(n, 2); ++i) {
    std::string v;
    add_node(g, "Mul", i, x, "c", &v);
    copies.push_back(v);
  }
  auto* sum = g->add_node();
  sum->set_op_type("Sum");
  sum->set_name("sum");
  for (const std::string& v : copies) sum->add_input(v);
  sum->add_output("y");
  finish(g, "y");
  return m;
}

double since(std::chrono::steady_clock::time_point& t) {
  const auto now = std::chrono::steady_clock::now();
  const double s = std::chrono::duration<double>(now - t).count();
  t = now;
  return s;
}

// Resets the process's peak RSS (Linux: clear_refs 5) to what it holds now, after handing the
// previous size's freed memory back, so each size reports its own peak.
void reset_peak_rss() {
  malloc_trim(0);
  if (FILE* f = std::fopen("/proc/self/clear_refs", "w")) {
    std::fputs("5", f);
    std::fclose(f);
  }
}

// Peak RSS in MiB since the last reset (VmHWM), or over the process (getrusage) without /proc.
double peak_rss_mib() {
  if (FILE* f = std::fopen("/proc/self/status", "r")) {
    char line[256];
    while (std::fgets(line, sizeof line, f) != nullptr)
      if (std::strncmp(line, "VmHWM:", 6) == 0) {
        std::fclose(f);
        return std::strtod(line + 6, nullptr) / 1024;
      }
    std::fclose(f);
  }
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024;
}

double load_average() {
  double l[1] = {0};
  return getloadavg(l, 1) == 1 ? l[0] : -1;
}

// Per pass: seconds at each size.
using PassTimes = std::map<std::string, std::map<int64_t, double>>;

int run_shape(const std::string& shape, const std::vector<int64_t>& sizes) {
  const auto dir = std::filesystem::temp_directory_path() / "xopt_bench_large_graph";
  std::filesystem::create_directories(dir);
  const std::string in = (dir / "in.onnx").string(), out = (dir / "out.onnx").string();
  std::printf("shape %s (load average %.2f)\n", shape.c_str(), load_average());
  std::printf("%9s %8s %8s %8s %8s %8s %8s %9s %9s\n", "nodes", "load", "verify", "shapes",
              "passes", "save", "total", "us/node", "peak MiB");
  PassTimes per_pass;
  std::vector<std::string> pass_order;
  std::vector<int64_t> done;
  for (int64_t n : sizes) {
    {
      std::ofstream f(in, std::ios::binary);
      (shape == "chain"      ? chain(n)
       : shape == "residual" ? residual(n)
                             : fanout(n))
          .SerializeToOstream(&f);
    }
    reset_peak_rss();
    auto t = std::chrono::steady_clock::now();
    auto model = ir::load_model(in);
    if (!model.is_ok()) {
      std::fprintf(stderr, "%s\n", model.status().message().c_str());
      return 2;
    }
    const int64_t nodes = static_cast<int64_t>(model->graph->num_nodes());
    const double load = since(t);
    Status st = ir::verify(*model->graph);
    const double verify = since(t);
    if (st.is_ok()) st = ir::infer_shapes(*model->graph);
    const double shapes = since(t);
    passes::PassManager pm;
    if (st.is_ok()) st = pm.add_pipeline("cleanup,fold,fuse,plan");
    passes::PassContext ctx;
    ctx.mark_shapes_valid();
    passes::PipelineStats stats;
    if (st.is_ok()) st = pm.run(*model, ctx, &stats);
    const double passes = since(t);
    if (st.is_ok()) st = ir::save_model(*model, out);
    const double save = since(t);
    if (!st.is_ok()) {
      std::fprintf(stderr, "%lld nodes: %s\n", static_cast<long long>(nodes), st.message().c_str());
      return 2;
    }
    const double total = load + verify + shapes + passes + save;
    std::printf("%9lld %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f %9.2f %9.0f\n",
                static_cast<long long>(nodes), load, verify, shapes, passes, save, total,
                total / static_cast<double>(nodes) * 1e6, peak_rss_mib());
    std::fflush(stdout);
    for (const auto& p : stats.passes) {
      if (!per_pass.count(p.name)) pass_order.push_back(p.name);
      per_pass[p.name][nodes] = p.seconds;
    }
    per_pass["(shape inference in passes)"][nodes] = stats.shape_inference_seconds;
    done.push_back(nodes);
  }
  pass_order.push_back("(shape inference in passes)");
  // The passes' own times in us per node, the slowest at the largest size first.
  std::printf("%-28s", "pass us/node at");
  for (int64_t n : done) std::printf(" %9lld", static_cast<long long>(n));
  std::printf("\n");
  const int64_t largest = done.empty() ? 0 : done.back();
  std::stable_sort(pass_order.begin(), pass_order.end(), [&](const auto& a, const auto& b) {
    return per_pass[a][largest] > per_pass[b][largest];
  });
  for (const auto& name : pass_order) {
    double sum = 0;
    for (int64_t n : done) sum += per_pass[name][n];
    if (sum < 1e-3 * static_cast<double>(done.size())) continue;  // under 1 ms: noise
    std::printf("%-28s", name.c_str());
    for (int64_t n : done) std::printf(" %9.3f", per_pass[name][n] / static_cast<double>(n) * 1e6);
    std::printf("\n");
  }
  std::printf("\n");
  std::filesystem::remove_all(dir);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int64_t> sizes;
  std::vector<std::string> shapes = {"chain", "residual"};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--shape" && i + 1 < argc) {
      const std::string s = argv[++i];
      if (s == "all")
        shapes = {"chain", "residual", "fanout"};
      else if (s == "chain" || s == "residual" || s == "fanout")
        shapes = {s};
      else {
        std::fprintf(stderr, "unknown shape '%s' (chain, residual, fanout, all)\n", s.c_str());
        return 2;
      }
      continue;
    }
    sizes.push_back(std::stoll(a));
  }
  if (sizes.empty()) sizes = {10000, 100000, 1000000};
  for (const auto& s : shapes)
    if (int rc = run_shape(s, sizes); rc != 0) return rc;
  return 0;
}
