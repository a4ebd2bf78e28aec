#include "executor/cpu/conformance_lowp.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <map>
#include <set>
#include <sstream>

#include "executor/cpu/conformance.h"
#include "executor/cpu/kernel_precision.h"
#include "executor/cpu/session.h"
#include "ir/onnx_io.h"
#include "ir/tensor_proto.h"

namespace xopt::exec::conformance {

const char* lowp_outcome_name(LowpOutcome o) {
  switch (o) {
    case LowpOutcome::kPassed:
      return "passed";
    case LowpOutcome::kFailed:
      return "failed";
    case LowpOutcome::kUnsupported:
      return "unsupported";
    case LowpOutcome::kSkipped:
      return "skipped";
  }
  return "?";
}

namespace {

constexpr int32_t kOnnxFloat = onnx::TensorProto::FLOAT;

int32_t onnx_code(ir::DType t) {
  return t == ir::DType::kBFloat16 ? onnx::TensorProto::BFLOAT16 : onnx::TensorProto::FLOAT16;
}

double eps_of(ir::DType t) {
  return t == ir::DType::kBFloat16 ? 0x1p-7 : 0x1p-10;
}
double tiny_of(ir::DType t) {
  return t == ir::DType::kBFloat16 ? 0x1p-133 : 0x1p-24;
}

bool is_low(ir::DType t) {
  return t == ir::DType::kFloat16 || t == ir::DType::kBFloat16;
}

void convert_type(onnx::TypeProto* t, int32_t to) {
  switch (t->value_case()) {
    case onnx::TypeProto::kTensorType:
      if (t->tensor_type().elem_type() == kOnnxFloat) t->mutable_tensor_type()->set_elem_type(to);
      break;
    case onnx::TypeProto::kSequenceType:
      convert_type(t->mutable_sequence_type()->mutable_elem_type(), to);
      break;
    case onnx::TypeProto::kOptionalType:
      convert_type(t->mutable_optional_type()->mutable_elem_type(), to);
      break;
    default:
      break;
  }
}

Status convert_tensor_proto(onnx::TensorProto* p, ir::DType to, const std::string& base_dir) {
  if (p->data_type() != kOnnxFloat) return Status::ok();
  const std::string name = p->name();
  XOPT_ASSIGN_OR_RETURN(ir::Tensor t, ir::tensor_from_proto(*p, base_dir));
  *p = ir::tensor_to_proto(convert_float(t, to));
  p->set_name(name);
  return Status::ok();
}

Status convert_graph(onnx::GraphProto* g, ir::DType to, const std::string& base_dir,
                     const std::set<std::string>& keep = {});

// Attributes naming an element type.
bool is_type_attribute(const std::string& name) {
  return name == "to" || name == "dtype" || name == "output_dtype" || name == "output_datatype";
}

Status convert_attribute(onnx::AttributeProto* a, ir::DType to, const std::string& base_dir) {
  const int32_t code = onnx_code(to);
  switch (a->type()) {
    case onnx::AttributeProto::INT:
      if (is_type_attribute(a->name()) && a->i() == kOnnxFloat) a->set_i(code);
      break;
    case onnx::AttributeProto::TENSOR:
      XOPT_RETURN_IF_ERROR(convert_tensor_proto(a->mutable_t(), to, base_dir));
      break;
    case onnx::AttributeProto::TENSORS:
      for (auto& t : *a->mutable_tensors())
        XOPT_RETURN_IF_ERROR(convert_tensor_proto(&t, to, base_dir));
      break;
    case onnx::AttributeProto::GRAPH:
      XOPT_RETURN_IF_ERROR(convert_graph(a->mutable_g(), to, base_dir));
      break;
    case onnx::AttributeProto::GRAPHS:
      for (auto& g : *a->mutable_graphs()) XOPT_RETURN_IF_ERROR(convert_graph(&g, to, base_dir));
      break;
    case onnx::AttributeProto::TYPE_PROTO:
      convert_type(a->mutable_tp(), code);
      break;
    default:
      break;
  }
  return Status::ok();
}

Status convert_graph(onnx::GraphProto* g, ir::DType to, const std::string& base_dir,
                     const std::set<std::string>& keep) {
  const int32_t code = onnx_code(to);
  for (auto* vs : {g->mutable_input(), g->mutable_output(), g->mutable_value_info()})
    for (auto& v : *vs)
      if (!keep.count(v.name())) convert_type(v.mutable_type(), code);
  for (auto& t : *g->mutable_initializer())
    if (!keep.count(t.name())) XOPT_RETURN_IF_ERROR(convert_tensor_proto(&t, to, base_dir));
  for (auto& n : *g->mutable_node()) {
    for (auto& a : *n.mutable_attribute()) {
      // FlexAttention's score_mod and prob_mod see softmax_precision (float32 for the low types).
      if (a.type() == onnx::AttributeProto::GRAPH && n.op_type() == "FlexAttention") continue;
      XOPT_RETURN_IF_ERROR(convert_attribute(&a, to, base_dir));
    }
    // Ops whose float32 output comes from an attribute's default: make it name T.
    static const char* const kDefaultFloat[] = {"HannWindow", "HammingWindow", "BlackmanWindow",
                                                "MelWeightMatrix"};
    if (std::find_if(std::begin(kDefaultFloat), std::end(kDefaultFloat), [&](const char* op) {
          return n.op_type() == op;
        }) != std::end(kDefaultFloat)) {
      bool has = false;
      for (const auto& a : n.attribute()) has = has || a.name() == "output_datatype";
      if (!has) {
        onnx::AttributeProto* a = n.add_attribute();
        a->set_name("output_datatype");
        a->set_type(onnx::AttributeProto::INT);
        a->set_i(code);
      }
    }
  }
  return Status::ok();
}

// The reference: `model` with a Cast to `to` and back after every top-level node output listed in
// `float_outputs`.
Result<ir::Model> rounded_reference(const ir::Model& model,
                                    const std::set<std::string>& float_outputs, ir::DType to) {
  onnx::ModelProto p = ir::model_to_proto(model);
  onnx::GraphProto* g = p.mutable_graph();
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  nodes.Swap(g->mutable_node());
  int counter = 0;
  for (onnx::NodeProto& n : nodes) {
    std::vector<std::pair<std::string, std::string>> casts;  // (fp32 name, final name)
    for (auto& o : *n.mutable_output()) {
      if (o.empty() || float_outputs.count(o) == 0) continue;
      const std::string raw = "xopt_lowp_ref_" + std::to_string(counter++) + "_" + o;
      casts.emplace_back(raw, o);
      o = raw;
    }
    *g->add_node() = std::move(n);
    for (const auto& [raw, final_name] : casts) {
      const std::string low = raw + "_low";
      for (int step = 0; step < 2; ++step) {
        onnx::NodeProto* c = g->add_node();
        c->set_op_type("Cast");
        c->set_name(raw + (step == 0 ? "_down" : "_up"));
        c->add_input(step == 0 ? raw : low);
        c->add_output(step == 0 ? low : final_name);
        onnx::AttributeProto* a = c->add_attribute();
        a->set_name("to");
        a->set_type(onnx::AttributeProto::INT);
        a->set_i(step == 0 ? onnx_code(to) : kOnnxFloat);
      }
    }
  }
  // The Casts run at the graph's own opset (the CPU kernel takes every type at each of them), or
  // at 13 (bfloat16's first) in a model that imports only another domain (ai.onnx.ml's tests).
  bool has_default = false;
  for (const auto& o : p.opset_import())
    has_default = has_default || o.domain().empty() || o.domain() == "ai.onnx";
  if (!has_default) {
    onnx::OperatorSetIdProto* o = p.add_opset_import();
    o->set_domain("");
    o->set_version(13);
  }
  return ir::model_from_proto(std::move(p), model.base_dir, model.path);
}

// Reads the schema of every top-level node at its opset: the float32 graph inputs, initializers
// and graph outputs whose parameter allows float32 but not `to` stay float32 in the twin (as a
// converted model keeps them: Resize's scales, TfIdfVectorizer's output), added to *keep. Returns
// why the case has no twin, or "": a node whose schema allows `to` nowhere the case has a float32,
// or a float32 value between two nodes that one allows in `to` and the other does not.
std::string schema_gaps(const ir::Graph& g, const std::map<std::string, ir::DType>& types,
                        ir::DType to, std::set<std::string>* keep) {
  const int bit = to == ir::DType::kBFloat16 ? SchemaTypes::kBF16 : SchemaTypes::kF16;
  const char* name = to == ir::DType::kBFloat16 ? "bfloat16" : "float16";
  auto is_f32 = [&](const ir::Value* v) {
    if (v == nullptr) return false;
    auto it = types.find(v->name());
    return it != types.end() && it->second == ir::DType::kFloat;
  };
  std::set<std::string> inner;  // float32 values produced by a node, converted
  for (const ir::Node* n : g.nodes())
    for (const ir::Value* o : n->outputs())
      if (is_f32(o)) inner.insert(o->name());
  for (const ir::Node* n : g.nodes()) {
    const SchemaTypes* s =
        onnx_schema_types(n->domain(), n->op_type(), static_cast<int>(n->opset()));
    if (s == nullptr) continue;  // contrib ops: every float parameter takes the low types
    const std::string what = n->op_type() + "-" + std::to_string(s->since_version);
    bool any_f32 = false, any_low = false;
    auto visit = [&](const ir::Value* v, int mask, const std::string& param) -> std::string {
      if (!is_f32(v)) return "";
      any_f32 = true;
      if (mask & bit) {
        any_low = true;
        return "";
      }
      const bool graph_output =
          std::find(g.outputs().begin(), g.outputs().end(), v) != g.outputs().end();
      if (inner.count(v->name()) && !graph_output)
        return what + " " + param + " '" + v->name() + "' is float32 only, between two nodes";
      keep->insert(v->name());
      return "";
    };
    for (size_t i = 0; i < n->num_inputs(); ++i) {
      std::string gap = visit(n->input(i), s->input_mask(i), "input " + std::to_string(i));
      if (!gap.empty()) return gap;
    }
    for (size_t i = 0; i < n->num_outputs(); ++i) {
      std::string gap = visit(n->output(i), s->output_mask(i), "output " + std::to_string(i));
      if (!gap.empty()) return gap;
    }
    if (any_f32 && !any_low) return what + "'s schema allows no " + std::string(name);
  }
  return "";
}

std::string number(double v) {
  std::ostringstream o;
  o.precision(3);
  o << v;
  return o.str();
}

// Compares one twin output with its reference; returns "" when within the tolerance (the ratio of
// the worst error to it goes to *ratio), else why not.
std::string compare(const ir::Tensor& got, const ir::Tensor& ref_f32, ir::DType to, double n_nodes,
                    double k, double* ratio) {
  // An output the twin keeps float32 (its parameter takes no T) is compared in float32.
  const ir::Tensor ref = ref_f32.dtype() == ir::DType::kFloat && got.dtype() != ir::DType::kFloat
                             ? convert_float(ref_f32, to)
                             : ref_f32;
  if (got.dtype() != ref.dtype())
    return "dtype " + std::string(ir::dtype_name(got.dtype())) + ", expected " +
           std::string(ir::dtype_name(ref.dtype()));
  if (got.dims() != ref.dims()) return "shape differs from the reference";
  if (!ir::is_float(got.dtype())) {
    std::string why;
    if (got.same_contents(ref) || outputs_match(got, ref, 0.0, 0.0, &why)) return "";
    return why.empty() ? "differs from the reference" : why;
  }
  double scale = 0.0;
  for (int64_t i = 0; i < ref.numel(); ++i) {
    const double v = std::fabs(ref.as_double(i));
    if (std::isfinite(v)) scale = std::max(scale, v);
  }
  const double eps = eps_of(to);
  const double tol = eps * scale * n_nodes + 0x1p-23 * scale * k + tiny_of(to);
  double worst = 0.0;
  int64_t bad = 0, first = -1;
  for (int64_t i = 0; i < ref.numel(); ++i) {
    const double a = got.as_double(i), b = ref.as_double(i);
    bool ok;
    if (std::isnan(a) || std::isnan(b)) {
      ok = std::isnan(a) && std::isnan(b);
    } else if (std::isinf(a) || std::isinf(b)) {
      ok = a == b;
    } else {
      const double err = std::fabs(a - b);
      worst = std::max(worst, err);
      ok = err <= tol;
    }
    if (!ok && first < 0) first = i;
    bad += ok ? 0 : 1;
  }
  *ratio = std::max(*ratio, worst / tol);
  if (bad == 0) return "";
  return std::to_string(bad) + " of " + std::to_string(ref.numel()) +
         " elements differ; first at " + std::to_string(first) + ": " +
         number(got.as_double(first)) + ", reference " + number(ref.as_double(first)) +
         " (max error " + number(worst) + ", tolerance " + number(tol) + ", scale " +
         number(scale) + ")";
}

LowpOutcome classify_status(const Status& s) {
  return s.code() == ErrorCode::kUnsupported ? LowpOutcome::kUnsupported : LowpOutcome::kFailed;
}

}  // namespace

ir::Tensor convert_float(const ir::Tensor& t, ir::DType to) {
  if (t.dtype() == ir::DType::kFloat && is_low(to)) {
    ir::Tensor out(to, t.dims());
    const float* s = t.data<float>();
    auto* d = out.mutable_data<uint16_t>();
    for (int64_t i = 0; i < t.numel(); ++i)
      d[i] = to == ir::DType::kFloat16 ? ir::float_to_half(s[i]) : ir::float_to_bfloat16(s[i]);
    return out;
  }
  if (is_low(t.dtype()) && to == ir::DType::kFloat) {
    ir::Tensor out(ir::DType::kFloat, t.dims());
    const auto* s = t.data<uint16_t>();
    float* d = out.mutable_data<float>();
    for (int64_t i = 0; i < t.numel(); ++i)
      d[i] =
          t.dtype() == ir::DType::kFloat16 ? ir::half_to_float(s[i]) : ir::bfloat16_to_float(s[i]);
    return out;
  }
  return t;
}

Result<ir::Model> lowp_twin(const ir::Model& model, ir::DType to,
                            const std::set<std::string>& keep_f32) {
  if (!is_low(to)) return invalid_argument("a twin is float16 or bfloat16");
  onnx::ModelProto p = ir::model_to_proto(model);
  XOPT_RETURN_IF_ERROR(convert_graph(p.mutable_graph(), to, model.base_dir, keep_f32));
  return ir::model_from_proto(std::move(p), model.base_dir, model.path);
}

std::vector<LowpCaseResult> run_lowp_case(const std::string& path,
                                          const std::vector<ir::DType>& types) {
  std::vector<LowpCaseResult> results(types.size());
  for (size_t i = 0; i < types.size(); ++i) results[i].dtype = types[i];
  auto all = [&](LowpOutcome o, const std::string& detail) {
    for (LowpCaseResult& r : results) {
      r.outcome = o;
      r.detail = detail;
    }
    return results;
  };
  auto loaded = load_case(path);
  for (LowpCaseResult& r : results) {
    r.name = path.substr(path.find_last_of('/') + 1);
    if (loaded.is_ok()) {
      r.op = loaded->op;
      r.opset = loaded->opset;
    }
  }
  if (!loaded.is_ok())
    return all(loaded.status().code() == ErrorCode::kUnsupported ? LowpOutcome::kSkipped
                                                                 : LowpOutcome::kFailed,
               "load: " + loaded.status().message());
  const LoadedCase& c = *loaded;
  if (!c.random.empty()) return all(LowpOutcome::kSkipped, c.random);
  for (const ir::Node* n : c.model.graph->nodes())
    if (n->op_type() == "BitCast")
      return all(LowpOutcome::kSkipped, "BitCast reinterprets bits: another width is another op");
  if (c.data_sets.empty()) return all(LowpOutcome::kSkipped, "no data set");
  const ir::Graph& g = *c.model.graph;

  // Element types of every tensor the top-level graph sees, from a run of the fp32 model.
  std::map<std::string, ir::DType> types_seen;
  int64_t k = 1;
  for (const auto& [name, t] : c.data_sets[0].inputs) {
    types_seen[name] = t.dtype();
    k = std::max(k, t.numel());
  }
  for (const ir::Value* v : g.initializers())
    if (v->initializer() != nullptr) {
      types_seen[v->name()] = v->initializer()->dtype();
      k = std::max(k, v->initializer()->numel());
    }
  std::set<std::string> top_outputs;
  for (const ir::Node* n : g.nodes())
    for (const ir::Value* o : n->outputs())
      if (o != nullptr) top_outputs.insert(o->name());
  RunOptions probe;
  probe.on_output = [&](const ir::Node&, const ir::Value& v, const ir::Tensor& t) {
    if (top_outputs.count(v.name())) types_seen[v.name()] = t.dtype();
  };
  auto probed = run_model(c.model, c.data_sets[0].inputs, probe);
  if (!probed.is_ok())
    return all(LowpOutcome::kSkipped, "the fp32 case does not run: " + probed.status().message());
  for (size_t i = 0; i < probed->size() && i < g.outputs().size(); ++i)
    types_seen[g.outputs()[i]->name()] = (*probed)[i].dtype();
  bool has_f32 = false, has_low = false;
  for (const auto& [name, t] : types_seen) {
    has_f32 = has_f32 || t == ir::DType::kFloat;
    has_low = has_low || is_low(t);
  }
  if (!has_f32 || has_low)
    return all(LowpOutcome::kSkipped, has_low ? "a low-precision case already" : "no float32");
  std::set<std::string> float_outputs;
  for (const auto& name : top_outputs)
    if (auto it = types_seen.find(name); it != types_seen.end() && it->second == ir::DType::kFloat)
      float_outputs.insert(name);
  const double n_nodes = static_cast<double>(std::max<size_t>(1, g.num_nodes()));

  for (LowpCaseResult& r : results) {
    const ir::DType to = r.dtype;
    std::set<std::string> keep;
    const std::string gap = schema_gaps(g, types_seen, to, &keep);
    if (!gap.empty()) {
      r.outcome = LowpOutcome::kSkipped;
      r.schema_lacks_type = true;
      r.detail = gap;
      continue;
    }
    auto twin = lowp_twin(c.model, to, keep);
    std::set<std::string> rounded;
    for (const std::string& o : float_outputs)
      if (!keep.count(o)) rounded.insert(o);
    auto ref = twin.is_ok() ? rounded_reference(c.model, rounded, to) : twin.status();
    if (!ref.is_ok()) {
      r.outcome = LowpOutcome::kFailed;
      r.detail = "building the twin: " + ref.status().message();
      continue;
    }
    r.outcome = LowpOutcome::kPassed;
    for (const LoadedCase::Data& ds : c.data_sets) {
      std::map<std::string, ir::Tensor> low_in, ref_in;
      for (const auto& [name, t] : ds.inputs) {
        low_in[name] = keep.count(name) ? t : convert_float(t, to);
        ref_in[name] = convert_float(low_in[name], ir::DType::kFloat);
      }
      auto want = run_model(*ref, ref_in);
      if (!want.is_ok()) {
        r.outcome = LowpOutcome::kFailed;
        r.detail = ds.name + ": the reference: " + want.status().message();
        break;
      }
      auto got = run_model(*twin, low_in);
      if (!got.is_ok() && g.num_nodes() > 1 && got.status().code() != ErrorCode::kUnsupported) {
        // A function expansion that fixes float32 inside (Cast to float, ConstantOfShape's float
        // default) mixes it with the low type once converted: that twin is ill-typed, not a
        // kernel's fault; its single-node twin covers the op.
        r.outcome = LowpOutcome::kSkipped;
        r.ill_typed = true;
        r.detail = ds.name + ": the twin is ill-typed: " + got.status().message();
        break;
      }
      if (!got.is_ok()) {
        r.outcome = classify_status(got.status());
        r.detail = ds.name + ": " + got.status().message();
        break;
      }
      if (got->size() != want->size()) {
        r.outcome = LowpOutcome::kFailed;
        r.detail = ds.name + ": " + std::to_string(got->size()) + " outputs, reference has " +
                   std::to_string(want->size());
        break;
      }
      for (size_t i = 0; i < got->size() && r.outcome == LowpOutcome::kPassed; ++i) {
        std::string why =
            compare((*got)[i], (*want)[i], to, n_nodes, static_cast<double>(k), &r.worst_ratio);
        if (!why.empty()) {
          r.outcome = LowpOutcome::kFailed;
          r.detail = ds.name + ": output '" + g.outputs()[i]->name() + "': " + why;
        }
      }
      if (r.outcome != LowpOutcome::kPassed) break;
    }
  }
  return results;
}

LowpCaseResult run_lowp_case(const std::string& path, ir::DType to) {
  return run_lowp_case(path, std::vector<ir::DType>{to}).front();
}

}  // namespace xopt::exec::conformance
