#include "precision/calibrate.h"

#include <algorithm>
#include <cmath>

#include "executor/cpu/model_inputs.h"
#include "executor/cpu/session.h"
#include "precision/float_data.h"

namespace xopt::precision {

void RangeStats::add(const float* p, int64_t n) {
  const double h_max = dtype_max(ir::DType::kFloat16);
  const double h_min = dtype_min_normal(ir::DType::kFloat16);
  const double b_max = dtype_max(ir::DType::kBFloat16);
  const double b_min = dtype_min_normal(ir::DType::kBFloat16);
  for (int64_t i = 0; i < n; ++i) {
    const double a = std::fabs(static_cast<double>(p[i]));
    ++count;
    if (!std::isfinite(a)) {
      ++nonfinite;
      continue;
    }
    if (a == 0.0) continue;
    max_abs = std::max(max_abs, a);
    min_nonzero_abs = std::min(min_nonzero_abs, a);
    if (a > h_max) ++fp16_saturate;
    if (a < h_min) ++fp16_subnormal;
    if (a > b_max) ++bf16_saturate;
    if (a < b_min) ++bf16_subnormal;
  }
}

Result<std::vector<std::map<std::string, ir::Tensor>>> calibration_inputs(
    const ir::Graph& graph, const CalibrationSource& source, std::vector<std::string>* notes) {
  std::vector<std::map<std::string, ir::Tensor>> sets;
  if (!source.dir.empty()) {
    const std::vector<std::string> dirs = exec::find_data_sets(source.dir);
    if (dirs.empty())
      return invalid_argument("calibration folder '" + source.dir +
                              "' holds no test_data_set_* folder and no input_0.pb");
    for (const std::string& d : dirs) {
      auto ds = exec::read_data_set(graph, d);
      if (!ds) return ds.status().with_context("calibration data '" + d + "': ");
      sets.push_back(std::move(ds->inputs));
    }
    if (notes != nullptr)
      notes->push_back("calibration: " + std::to_string(sets.size()) + " data set(s) from '" +
                       source.dir + "'");
    return sets;
  }
  exec::RandomInputOptions ro;
  ro.seed = source.seed;
  ro.shapes = source.shapes;
  XOPT_ASSIGN_OR_RETURN(auto inputs, exec::random_inputs(graph, ro));
  if (notes != nullptr)
    notes->push_back("calibration: seeded random inputs (seed " + std::to_string(source.seed) +
                     ")");
  sets.push_back(std::move(inputs));
  return sets;
}

namespace {

void record(Calibration& cal, const ir::Value& v, const ir::Tensor& t, bool keep) {
  if (keep) cal.values.emplace(v.name(), t);
  if (!ir::is_float(t.dtype())) return;
  RangeStats& r = cal.ranges[v.name()];
  r.is_initializer = v.is_initializer();
  if (t.dtype() == ir::DType::kFloat) {
    r.add(t.data<float>(), t.numel());
  } else {
    const std::vector<float> f = to_floats(t);
    r.add(f.data(), static_cast<int64_t>(f.size()));
  }
}

}  // namespace

Result<Calibration> calibrate(const ir::Model& model,
                              const std::vector<std::map<std::string, ir::Tensor>>& input_sets) {
  Calibration cal;
  const ir::Graph& g = *model.graph;
  for (const ir::Value* v : g.initializers())
    if (v->initializer() != nullptr) record(cal, *v, *v->initializer(), true);
  for (const auto& inputs : input_sets) {
    const bool keep = cal.input_sets == 0;
    for (const ir::Value* v : g.runtime_inputs()) {
      auto it = inputs.find(v->name());
      if (it != inputs.end()) record(cal, *v, it->second, keep);
    }
    exec::RunOptions ro;  // simple mode: every output its own buffer, nothing written in place
    ro.on_output = [&](const ir::Node&, const ir::Value& v, const ir::Tensor& t) {
      record(cal, v, t, keep);
    };
    auto out = exec::run_model(model, inputs, ro);
    if (!out) return out.status().with_context("calibration run: ");
    ++cal.input_sets;
  }
  return cal;
}

}  // namespace xopt::precision
