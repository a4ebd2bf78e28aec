// Rendering benchmark (prints, asserts nothing): a 12-layer transformer encoder as PyTorch exports
// it before any fusion (about 1,300 nodes, names scoped /enc/layers.N/...), built here, drawn to
// SVG fully expanded and with --collapse-depth 2 (each layer one box) and 1.
//   build/bench/xopt_bench_viz [layers]
// Targets (issue 9): under 5 s expanded, under 1 s collapsed.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/shape_inference.h"
#include "viz/graph_drawing.h"

namespace {

using namespace xopt;

constexpr int64_t kSeq = 128, kHidden = 256, kHeads = 4, kFfn = 1024;

class Encoder {
 public:
  explicit Encoder(ir::Graph& g) : g_(g) {}

  ir::Value* op(const std::string& scope, const std::string& type, std::vector<ir::Value*> in,
                std::vector<std::pair<std::string, std::vector<int64_t>>> attrs = {}) {
    const std::string name = scope + "/" + type + (count_ ? "_" + std::to_string(count_) : "");
    ++count_;
    ir::Node* n = g_.add_node(type, in, {name + "_output_0"});
    n->set_name(name);
    for (const auto& [k, v] : attrs) {
      if (k == "axis" || k == "to")
        n->set_attr(k, v[0]);
      else
        n->set_attr(k, v);
    }
    return n->output(0);
  }
  ir::Value* weight(const std::string& name, std::vector<int64_t> dims) {
    return g_.add_initializer(name, ir::Tensor(ir::DType::kFloat, std::move(dims)));
  }
  ir::Value* index(const std::string& name, int64_t i) {
    return g_.add_initializer(name, ir::Tensor::scalar<int64_t>(i));
  }
  ir::Value* ints(const std::string& name, std::vector<int64_t> v) {
    const int64_t n = static_cast<int64_t>(v.size());
    return g_.add_initializer(name, ir::Tensor::of<int64_t>({n}, v));
  }

  // The shape arithmetic PyTorch exports around a head split: Shape, Gather, Unsqueeze, Concat.
  ir::Value* split_shape(const std::string& s, ir::Value* x) {
    ir::Value* shape = op(s, "Shape", {x});
    ir::Value* b = op(s, "Gather", {shape, index(s + "/i0", 0)}, {{"axis", {0}}});
    ir::Value* t = op(s, "Gather", {shape, index(s + "/i1", 1)}, {{"axis", {0}}});
    ir::Value* bu = op(s, "Unsqueeze", {b, ints(s + "/a0", {0})});
    ir::Value* tu = op(s, "Unsqueeze", {t, ints(s + "/a1", {0})});
    ir::Value* h = op(s, "Gather", {shape, index(s + "/i2", 2)}, {{"axis", {0}}});
    ir::Value* hd = op(s, "Div", {h, index(s + "/nh", kHeads)});
    ir::Value* hu = op(s, "Unsqueeze", {hd, ints(s + "/a2", {0})});
    ir::Value* c = op(s, "Concat", {bu, tu, ints(s + "/heads", {kHeads}), hu}, {{"axis", {0}}});
    return op(s, "Cast", {c}, {{"to", {7}}});
  }

  ir::Value* linear(const std::string& s, ir::Value* x, int64_t in, int64_t out) {
    ir::Value* m = op(s, "MatMul", {x, weight(s + ".weight", {in, out})});
    return op(s, "Add", {m, weight(s + ".bias", {out})});
  }

  // Mixed-precision exports wrap normalizations in Casts (to float and back).
  ir::Value* layer_norm(const std::string& s, ir::Value* x) {
    return op(s, "Cast", {layer_norm_f32(s, op(s, "Cast", {x}, {{"to", {1}}}))}, {{"to", {1}}});
  }
  ir::Value* layer_norm_f32(const std::string& s, ir::Value* x) {
    ir::Value* mean = op(s, "ReduceMean", {x}, {{"axes", {-1}}});
    ir::Value* d = op(s, "Sub", {x, mean});
    ir::Value* sq = op(s, "Pow", {d, weight(s + "/two", {})});
    ir::Value* var = op(s, "ReduceMean", {sq}, {{"axes", {-1}}});
    ir::Value* eps = op(s, "Add", {var, weight(s + "/eps", {})});
    ir::Value* sd = op(s, "Sqrt", {eps});
    ir::Value* n = op(s, "Div", {d, sd});
    ir::Value* m = op(s, "Mul", {n, weight(s + ".weight", {kHidden})});
    return op(s, "Add", {m, weight(s + ".bias", {kHidden})});
  }

  ir::Value* heads(const std::string& s, ir::Value* x) {
    ir::Value* r = op(s, "Reshape", {x, split_shape(s, x)});
    return op(s, "Transpose", {r}, {{"perm", {0, 2, 1, 3}}});
  }

  ir::Value* embeddings(ir::Value* x) {
    ir::Value* pos =
        op("/pos", "Gather", {weight("pos.weight", {kSeq, kHidden}), ints("ids", {0})});
    ir::Value* tt = op("/type", "Gather", {weight("type.weight", {2, kHidden}), ints("tt", {0})});
    x = op("/emb", "Add", {op("/emb", "Add", {x, pos}), tt});
    return layer_norm("/emb/norm", op("/emb/dropout", "Dropout", {x}));
  }

  ir::Value* layer(int i, ir::Value* x, ir::Value* mask) {
    const std::string l = "/enc/layers." + std::to_string(i);
    const std::string a = l + "/self_attn";
    ir::Value* q = heads(a + "/q", linear(a + "/q_proj", x, kHidden, kHidden));
    ir::Value* k = heads(a + "/k", linear(a + "/k_proj", x, kHidden, kHidden));
    ir::Value* v = heads(a + "/v", linear(a + "/v_proj", x, kHidden, kHidden));
    ir::Value* kt = op(a, "Transpose", {k}, {{"perm", {0, 1, 3, 2}}});
    ir::Value* s = op(a, "MatMul", {q, kt});
    // 1 / sqrt(head dim), computed from the shape as the export does.
    ir::Value* qs = op(a, "Shape", {q});
    ir::Value* dim =
        op(a, "Cast", {op(a, "Gather", {qs, index(a + "/i3", 3)}, {{"axis", {0}}})}, {{"to", {1}}});
    s = op(a, "Div", {s, op(a, "Sqrt", {dim})});
    // The padding mask: (1 - mask) * -10000, then where the mask is zero.
    ir::Value* m = op(a, "Cast", {op(a, "Unsqueeze", {mask, ints(a + "/a3", {0})})}, {{"to", {1}}});
    m = op(a, "Mul", {op(a, "Sub", {weight(a + "/one", {}), m}), weight(a + "/neg", {})});
    ir::Value* zero = op(a, "Equal", {m, weight(a + "/zero", {})});
    s = op(a, "Add", {s, op(a, "Where", {zero, weight(a + "/zeros", {}), m})});
    s = op(a, "Cast", {op(a, "Softmax", {op(a, "Cast", {s}, {{"to", {1}}})}, {{"axis", {-1}}})},
           {{"to", {1}}});
    s = op(a, "Dropout", {s});
    ir::Value* c = op(a, "MatMul", {s, v});
    c = op(a, "Transpose", {c}, {{"perm", {0, 2, 1, 3}}});
    ir::Value* cs = op(a, "Shape", {c});
    ir::Value* cb =
        op(a, "Unsqueeze",
           {op(a, "Gather", {cs, index(a + "/i4", 0)}, {{"axis", {0}}}), ints(a + "/a4", {0})});
    ir::Value* merged = op(a, "Concat", {cb, ints(a + "/merge", {kSeq, kHidden})}, {{"axis", {0}}});
    c = op(a, "Reshape", {c, merged});
    c = linear(a + "/out_proj", c, kHidden, kHidden);
    c = op(l + "/dropout1", "Dropout", {c});
    x = layer_norm(l + "/norm1", op(l, "Add", {x, c}));
    ir::Value* f = linear(l + "/linear1", x, kHidden, kFfn);
    const std::string gs = l + "/activation";
    ir::Value* e = op(gs, "Erf", {op(gs, "Div", {f, weight(gs + "/sqrt2", {})})});
    f = op(gs, "Mul",
           {op(gs, "Mul", {f, op(gs, "Add", {e, weight(gs + "/one", {})})}),
            weight(gs + "/half", {})});
    f = linear(l + "/linear2", op(l + "/dropout", "Dropout", {f}), kFfn, kHidden);
    f = op(l + "/dropout2", "Dropout", {f});
    return layer_norm(l + "/norm2", op(l, "Add", {x, f}));
  }

 private:
  ir::Graph& g_;
  int count_ = 0;
};

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

int main(int argc, char** argv) {
  const int layers = argc > 1 ? std::atoi(argv[1]) : 12;
  ir::Model model;
  ir::Graph& g = *model.graph;
  g.require_opset("", 17);
  ir::Value* x = g.get_or_create_value("hidden_states");
  x->set_dtype(ir::DType::kFloat);
  x->set_shape(ir::Shape::of({1, kSeq, kHidden}));
  g.add_input(x);
  ir::Value* mask = g.get_or_create_value("attention_mask");
  mask->set_dtype(ir::DType::kFloat);
  mask->set_shape(ir::Shape::of({1, 1, 1, kSeq}));
  g.add_input(mask);
  Encoder enc(g);
  x = enc.embeddings(x);
  for (int i = 0; i < layers; ++i) x = enc.layer(i, x, mask);
  g.set_outputs({x});
  const Status st = ir::infer_shapes(g);
  std::printf("encoder: %d layers, %zu nodes (%s)\n", layers, g.num_nodes(),
              st.is_ok() ? "shapes inferred" : st.message().c_str());

  struct Case {
    const char* name;
    int depth;
  };
  for (const Case c :
       {Case{"expanded", -1}, Case{"collapse-depth 2", 2}, Case{"collapse-depth 1", 1}}) {
    viz::GraphOptions o;
    o.collapse_depth = c.depth;
    for (viz::Format f : {viz::Format::kDot, viz::Format::kSvg}) {
      const auto t0 = std::chrono::steady_clock::now();
      auto d = viz::draw_graph(g, f, o);
      const double s = seconds_since(t0);
      if (!d.is_ok()) {
        std::printf("%-18s %-4s failed: %s\n", c.name, viz::format_name(f),
                    d.status().message().c_str());
        return 1;
      }
      std::printf("%-18s %-4s %5zu boxes %5zu edges %4zu clusters  %8.3f s  %9zu bytes\n", c.name,
                  viz::format_name(f), d->stats.nodes.size(), d->stats.edges, d->stats.clusters, s,
                  d->data.size());
    }
  }
  return 0;
}
