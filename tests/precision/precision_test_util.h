// Helpers of the precision tests: models from ONNX text, calibration on given inputs, and a
// simulated conversion (each chosen node's float inputs and outputs rounded through Casts to its
// type, so it computes on stored-in-type values with fp32 arithmetic) to check a choice
// numerically against the fp32 run without the convert-precision pass.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "executor/cpu/compare.h"
#include "executor/cpu/session.h"
#include "ir/graph.h"
#include "ir/tensor.h"
#include "ir/text.h"
#include "passes/precision/precision_options.h"
#include "precision/calibrate.h"
#include "precision/float_data.h"
#include "precision/local_error.h"

namespace xopt::test {

inline ir::Model parse(const std::string& text) {
  auto m = ir::parse_model_text(text);
  EXPECT_TRUE(m.is_ok()) << m.status().message();
  return std::move(m).value();
}

// Values i * step + offset, wrapped into [-1, 1) * scale: deterministic, varied.
inline ir::Tensor ramp(std::vector<int64_t> dims, float scale, uint32_t seed = 1) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  uint32_t s = seed * 2654435761u + 12345u;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = scale * (static_cast<float>(s >> 8) / static_cast<float>(1u << 24) * 2.0f - 1.0f);
  }
  return ir::Tensor::of<float>(std::move(dims), v);
}

// Rounds value `v` (read by `use_node` at `index`, or the graph output at position `out` when
// use_node is null) through a Cast to `t` and back.
inline void round_trip_all_uses(ir::Graph& g, ir::Value* v, ir::DType t) {
  std::vector<ir::Use> uses = v->uses();
  ir::Node* c1 = g.add_node("Cast", {v}, {g.unique_name(v->name() + "_lowp")});
  c1->set_attr("to", static_cast<int64_t>(t));
  ir::Node* c2 = g.add_node("Cast", {c1->output(0)}, {g.unique_name(v->name() + "_back")});
  c2->set_attr("to", static_cast<int64_t>(ir::DType::kFloat));
  for (const ir::Use& u : uses)
    if (u.index >= 0) u.node->set_input(static_cast<size_t>(u.index), c2->output(0));
  std::vector<ir::Value*> outs = g.outputs();
  bool changed = false;
  for (auto& o : outs)
    if (o == v) {
      o = c2->output(0);
      changed = true;
    }
  if (changed) g.set_outputs(outs);
}

// The simulated conversion of `choice` (see the file comment), on a copy parsed from `text`.
inline ir::Model simulate_choice(const std::string& text, const passes::PrecisionChoice& choice,
                                 const precision::Calibration& cal) {
  ir::Model m = parse(text);
  ir::Graph& g = *m.graph;
  auto is_float = [&](const ir::Value* v) {
    auto it = v == nullptr ? cal.values.end() : cal.values.find(v->name());
    return it != cal.values.end() && it->second.dtype() == ir::DType::kFloat;
  };
  for (ir::Node* n : g.node_list()) {
    auto it = choice.find(precision::node_key(*n));
    if (it == choice.end()) continue;
    for (size_t i = 0; i < n->num_inputs(); ++i) {
      ir::Value* v = n->input(i);
      if (!is_float(v)) continue;
      ir::Node* c1 = g.add_node("Cast", {v}, {g.unique_name(v->name() + "_in")});
      c1->set_attr("to", static_cast<int64_t>(it->second));
      ir::Node* c2 = g.add_node("Cast", {c1->output(0)}, {g.unique_name(v->name() + "_in32")});
      c2->set_attr("to", static_cast<int64_t>(ir::DType::kFloat));
      n->set_input(i, c2->output(0));
    }
    for (ir::Value* v : n->outputs())
      if (is_float(v)) round_trip_all_uses(g, v, it->second);
  }
  std::string err;
  EXPECT_TRUE(g.topo_sort(&err)) << err;
  return m;
}

inline std::vector<ir::Tensor> run(const ir::Model& m,
                                   const std::map<std::string, ir::Tensor>& in) {
  auto out = exec::run_model(m, in);
  EXPECT_TRUE(out.is_ok()) << out.status().message();
  return out.is_ok() ? std::move(out).value() : std::vector<ir::Tensor>{};
}

// The largest max_rel (max|a - b| / max|b|) over the outputs; inf when one is not finite.
inline double worst_rel(const std::vector<ir::Tensor>& a, const std::vector<ir::Tensor>& ref) {
  double w = 0.0;
  EXPECT_EQ(a.size(), ref.size());
  for (size_t i = 0; i < a.size() && i < ref.size(); ++i) {
    exec::TensorDiff d = exec::compare_tensors("out", a[i], ref[i]);
    w = std::max(w, d.nonfinite_mismatch > 0 ? std::numeric_limits<double>::infinity() : d.max_rel);
  }
  return w;
}

// The largest relative RMS error ||a - b|| / ||b|| over the outputs (the figure --max-error
// bounds, precision/choose.h); inf when a is not finite where b is.
inline double worst_rms(const std::vector<ir::Tensor>& a, const std::vector<ir::Tensor>& ref) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  double w = 0.0;
  EXPECT_EQ(a.size(), ref.size());
  for (size_t i = 0; i < a.size() && i < ref.size(); ++i) {
    const std::vector<float> x = precision::to_floats(a[i]), y = precision::to_floats(ref[i]);
    if (x.size() != y.size()) return kInf;
    double d2 = 0.0, y2 = 0.0;
    for (size_t k = 0; k < x.size(); ++k) {
      if (!std::isfinite(y[k])) continue;
      if (!std::isfinite(x[k])) return kInf;
      d2 += (static_cast<double>(x[k]) - y[k]) * (static_cast<double>(x[k]) - y[k]);
      y2 += static_cast<double>(y[k]) * y[k];
    }
    if (d2 > 0.0) w = std::max(w, y2 == 0.0 ? kInf : std::sqrt(d2 / y2));
  }
  return w;
}

}  // namespace xopt::test
