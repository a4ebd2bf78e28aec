#include "tests/cuda/lowp_test_util.h"

#include <random>
#include <regex>
#include <vector>

#include "executor/cpu/session.h"
#include "executor/cuda/session.h"
#include "ir/shape_inference.h"
#include "ir/text.h"
#include "planner/planner.h"
#include "tests/util/compare_outputs.h"
#include "tests/util/equivalence.h"

namespace xopt::test {

std::string lowp_text(std::string_view fp32_text, ir::DType t) {
  // "float" as a tensor type: followed by its dims or by a name, never part of another word
  // (float16, value_float, floats) or an attribute's declared type ("alpha: float = 1").
  static const std::regex kFloatType(R"((^|[^\w.])float(?=\[| [A-Za-z_]))");
  const std::string name(ir::dtype_name(t));
  return std::regex_replace(std::string(fp32_text), kFloatType, "$1" + name);
}

std::string lowp_text_keeping_literals(std::string_view fp32_text, ir::DType t) {
  // Initializers with float literals ("float[2] w = {...}", "float lo = {...}") stay float32: the
  // ONNX text parser reads no half-type literals. convert_float_initializers rounds them after.
  static const std::regex kLiteral(R"((^|[^\w.])float((\[[^\]]*\])? [A-Za-z_]\w* = \{))");
  const std::string marked = std::regex_replace(std::string(fp32_text), kLiteral, "$1\x01$2");
  std::string out = lowp_text(marked, t);
  for (size_t at = out.find('\x01'); at != std::string::npos; at = out.find('\x01', at))
    out.replace(at, 1, "float");
  return out;
}

void convert_float_initializers(ir::Graph& g, ir::DType t) {
  for (ir::Value* v : g.initializers()) {
    if (v->dtype() != ir::DType::kFloat || v->initializer() == nullptr) continue;
    *v->mutable_initializer() = round_to(*v->initializer(), t);
    v->set_dtype(t);
  }
}

ir::Tensor as_float32(const ir::Tensor& t) {
  if (t.dtype() != ir::DType::kFloat16 && t.dtype() != ir::DType::kBFloat16) return t;
  ir::Tensor out(ir::DType::kFloat, t.dims());
  for (int64_t i = 0; i < t.numel(); ++i)
    out.mutable_data<float>()[i] = static_cast<float>(t.as_double(i));
  return out;
}

ir::Tensor round_to(const ir::Tensor& t, ir::DType dtype) {
  ir::Tensor out(dtype, t.dims());
  const float* src = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (dtype == ir::DType::kFloat16)
      out.mutable_data<ir::Float16>()[i].bits = ir::float_to_half(src[i]);
    else
      out.mutable_data<ir::BFloat16>()[i].bits = ir::float_to_bfloat16(src[i]);
  }
  return out;
}

std::map<std::string, ir::Tensor> random_inputs_any_float(const ir::Graph& g, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  std::map<std::string, ir::Tensor> out;
  for (const ir::Value* v : g.runtime_inputs()) {
    std::vector<int64_t> dims;
    for (const ir::Dim& d : v->shape().dims()) dims.push_back(d.is_known() ? d.value : 2);
    ir::Tensor t(v->dtype(), dims);
    for (int64_t i = 0; i < t.numel(); ++i) {
      switch (v->dtype()) {
        case ir::DType::kFloat:
          t.mutable_data<float>()[i] = u(rng);
          break;
        case ir::DType::kFloat16:
          t.mutable_data<ir::Float16>()[i].bits = ir::float_to_half(u(rng));
          break;
        case ir::DType::kBFloat16:
          t.mutable_data<ir::BFloat16>()[i].bits = ir::float_to_bfloat16(u(rng));
          break;
        case ir::DType::kDouble:
          t.mutable_data<double>()[i] = u(rng);
          break;
        case ir::DType::kInt64:
          t.mutable_data<int64_t>()[i] = static_cast<int64_t>(rng() % 4);
          break;
        case ir::DType::kInt32:
          t.mutable_data<int32_t>()[i] = static_cast<int32_t>(rng() % 4);
          break;
        case ir::DType::kBool:
          t.mutable_data<bool>()[i] = (rng() & 1) != 0;
          break;
        default:
          ADD_FAILURE() << "random_inputs_any_float: no generator for the dtype of " << v->name();
      }
    }
    out.emplace(v->name(), std::move(t));
  }
  return out;
}

namespace {

// Every output of `got` (any float type, as float32) against `ref` within `ulps` of eps.
void expect_close(const std::vector<ir::Tensor>& got, const std::vector<ir::Tensor>& ref,
                  double ulps, const LowpType& t, const ir::Model& m, const std::string& what) {
  ASSERT_EQ(got.size(), ref.size()) << what;
  OutputTolerance tol;
  tol.rtol = ulps * t.eps;
  tol.atol = 1e-3 * t.eps;  // only for references of tiny scale; rtol is the rule
  tol.min_cosine = 1.0 - ulps * t.eps;
  for (size_t i = 0; i < ref.size(); ++i) {
    const std::string d = output_difference(as_float32(got[i]), as_float32(ref[i]), tol,
                                            m.graph->outputs()[i]->name());
    EXPECT_EQ(d, "") << what << " (" << t.name << ")";
  }
}

}  // namespace

void expect_cuda_lowp_matches_cpu(std::string_view fp32_text, const LowpType& t,
                                  const LowpCase& c) {
  auto m32 = ir::parse_model_text(fp32_text);
  ASSERT_TRUE(m32.is_ok()) << m32.status().message();
  const std::string text = lowp_text_keeping_literals(fp32_text, t.dtype);
  auto ml = ir::parse_model_text(text);
  ASSERT_TRUE(ml.is_ok()) << ml.status().message() << "\n" << text;
  convert_float_initializers(*ml->graph, t.dtype);
  const std::string first =
      ml->graph->num_nodes() > 0 ? (*ml->graph->nodes().begin())->describe() : "(no nodes)";
  // The float32 reference sees the same values: its float initializers rounded to the type too.
  for (ir::Value* v : m32->graph->initializers())
    if (v->dtype() == ir::DType::kFloat && v->initializer() != nullptr)
      *v->mutable_initializer() = as_float32(round_to(*v->initializer(), t.dtype));
  Status st = ir::infer_shapes(*m32->graph);
  ASSERT_TRUE(st.is_ok()) << first << " (float32): " << st.message();
  st = ir::infer_shapes(*ml->graph);
  ASSERT_TRUE(st.is_ok()) << first << " (" << t.name << "): " << st.message();
  auto plan = planner::plan(*ml->graph);
  ASSERT_TRUE(plan.is_ok()) << first << ": " << plan.status().message();

  // The same values for both models: float inputs rounded to the type.
  std::map<std::string, ir::Tensor> in32 = random_inputs_any_float(*m32->graph, c.seed);
  for (const auto& [name, v] : c.inputs) in32[name] = v;
  std::map<std::string, ir::Tensor> inl;
  for (const ir::Value* v : ml->graph->runtime_inputs()) {
    auto it = in32.find(v->name());
    ASSERT_NE(it, in32.end()) << "no input " << v->name();
    if (v->dtype() == t.dtype && it->second.dtype() == ir::DType::kFloat) {
      inl[v->name()] = round_to(it->second, t.dtype);
      it->second = as_float32(inl[v->name()]);
    } else {
      inl[v->name()] = it->second;
    }
  }

  // The twins: the CPU in the same precision (also inside the plan) and in float32.
  auto want = exec::run_model(*ml, inl);
  ASSERT_TRUE(want.is_ok()) << first << ": CPU reference (" << t.name
                            << "): " << want.status().message();
  exec::RunOptions in_plan;
  in_plan.plan = &*plan;
  auto want_planned = exec::run_model(*ml, inl, in_plan);
  ASSERT_TRUE(want_planned.is_ok())
      << first << ": CPU inside the plan: " << want_planned.status().message();
  auto want32 = exec::run_model(*m32, in32);
  ASSERT_TRUE(want32.is_ok()) << first
                              << ": CPU reference (float32): " << want32.status().message();
  expect_close(*want, *want32, c.fp32_ulps, t, *ml, first + ": CPU twin against float32");

  std::string why;
  if (!cuda::device_available(&why)) GTEST_SKIP() << "GPU half skipped: " << why;
  auto session = cuda::Session::create(*ml, *plan, cuda::SessionOptions{});
  ASSERT_TRUE(session.is_ok()) << first << ": " << session.status().message();
  auto got = (*session)->run(inl);
  ASSERT_TRUE(got.is_ok()) << first << ": " << got.status().message();
  for (size_t i = 0; i < got->size() && i < want->size(); ++i)
    EXPECT_EQ((*got)[i].dtype(), (*want)[i].dtype()) << "output " << i;
  expect_close(*got, *want, c.ulps, t, *ml, first + ": GPU against the CPU twin");
  expect_close(*got, *want32, c.fp32_ulps, t, *ml, first + ": GPU against float32");
}

}  // namespace xopt::test
