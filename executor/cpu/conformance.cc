#include "executor/cpu/conformance.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "executor/cpu/broadcast.h"
#include "executor/cpu/session.h"
#include "ir/onnx_io.h"
#include "ir/tensor_proto.h"
#include "ir/value_type.h"
#include "onnx/onnx-data_pb.h"

namespace xopt::exec::conformance {

namespace fs = std::filesystem;

const char* outcome_name(Outcome o) {
  switch (o) {
    case Outcome::kPassed:
      return "passed";
    case Outcome::kFailed:
      return "failed";
    case Outcome::kUnsupported:
      return "unsupported";
  }
  return "?";
}

namespace {

bool is_light_model(const fs::path& p) {
  const std::string f = p.filename().string();
  if (f.rfind("light_", 0) != 0 || p.extension() != ".onnx") return false;
  return fs::exists(p.parent_path() / (p.stem().string() + "_output_0.pb"));
}

void collect(const fs::path& dir, int depth, std::vector<std::string>& out) {
  std::error_code ec;
  if (fs::exists(dir / "model.onnx", ec)) {
    out.push_back(dir.string());
    return;
  }
  if (depth < 0) return;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.is_directory(ec))
      collect(e.path(), depth - 1, out);
    else if (e.is_regular_file(ec) && is_light_model(e.path()))
      out.push_back(e.path().string());
  }
}

Outcome classify(const Status& s) {
  return s.code() == ErrorCode::kUnsupported ? Outcome::kUnsupported : Outcome::kFailed;
}

std::string element_string(const ir::Tensor& t, int64_t i) {
  if (t.dtype() == ir::DType::kString) return "\"" + t.strings()[static_cast<size_t>(i)] + "\"";
  if (ir::is_float(t.dtype()) || ir::is_narrow_float(t.dtype())) {
    std::ostringstream o;
    o.precision(9);
    o << t.as_double(i);
    if (ir::is_narrow_float(t.dtype()))  // and the bit pattern, which is what is compared
      o << " (0x" << std::hex << static_cast<int>(static_cast<const uint8_t*>(t.raw_data())[i])
        << ")";
    return o.str();
  }
  if (t.dtype() == ir::DType::kUInt64) return std::to_string(t.data<uint64_t>()[i]);
  return std::to_string(t.as_int64(i));
}

// A graph input's feed for light models: arange(n).reshape(shape) / n as float32.
Result<ir::Tensor> light_input(const ir::Value& v) {
  if (v.dtype() != ir::DType::kFloat)
    return unsupported("light model input '" + v.name() + "' is not float");
  std::vector<int64_t> dims;
  if (v.shape().has_rank())
    for (const ir::Dim& d : v.shape().dims()) dims.push_back(d.is_known() ? d.value : 1);
  ir::Tensor t(ir::DType::kFloat, dims);
  const int64_t n = t.numel();
  float* p = t.mutable_data<float>();
  for (int64_t i = 0; i < n; ++i)
    p[i] = static_cast<float>(static_cast<double>(i) / static_cast<double>(n));
  return t;
}

// The scalar value a node input holds before anything runs (initializer, Constant node, or test
// input), if it can be known.
const ir::Tensor* known_value(const ir::Value* v, const std::map<std::string, ir::Tensor>& feeds,
                              ir::Tensor* scratch) {
  if (v == nullptr) return nullptr;
  if (auto it = feeds.find(v->name()); it != feeds.end()) return &it->second;
  if (v->initializer() != nullptr) return v->initializer();
  if (v->producer() != nullptr && v->producer()->is("Constant")) {
    *scratch = v->producer()->attr_tensor("value");
    return scratch->empty() ? nullptr : scratch;
  }
  return nullptr;
}

// Why a model's outputs depend on numpy's random stream (a Dropout in training mode with ratio >
// 0), or "" when they do not.
std::string random_dependency(const ir::Graph& g, const std::map<std::string, ir::Tensor>& feeds) {
  for (const ir::Node* n : g.nodes()) {
    if (!n->is("Dropout") || n->opset() < 12) continue;
    ir::Tensor s1, s2;
    const ir::Tensor* tm = known_value(n->input(2), feeds, &s1);
    if (tm == nullptr || tm->numel() != 1 || tm->as_int64(0) == 0) continue;
    const ir::Tensor* r = known_value(n->input(1), feeds, &s2);
    double ratio = r != nullptr && r->numel() == 1 ? r->as_double(0) : 0.5;
    if (ratio > 0.0)
      return n->describe() + " runs in training mode with ratio " + std::to_string(ratio) +
             ": the expected values come from numpy's random stream";
  }
  return "";
}

struct DataSet {
  std::map<std::string, ir::Tensor> inputs;
  std::vector<ir::Tensor> outputs;
  std::string name;
  // Models with sequence or optional inputs or outputs: every input and expected output, of any
  // kind (inputs and outputs above then hold only the tensors).
  bool has_values = false;
  std::map<std::string, ExecValue> value_inputs;
  std::vector<ExecValue> value_outputs;
};

bool is_plain(const ir::Value& v) {
  return ir::type_kind(v) == ir::TypeKind::kTensor;
}

Result<ExecValue> value_from_proto(const onnx::SequenceProto& p, const std::string& dir);

Result<ExecValue> value_from_proto(const onnx::OptionalProto& p, const std::string& dir) {
  switch (p.elem_type()) {
    case onnx::OptionalProto::TENSOR:
      if (!p.has_tensor_value())
        return ExecValue::none(ExecValue::Kind::kTensor, ir::DType::kUndefined);
      {
        XOPT_ASSIGN_OR_RETURN(ir::Tensor t, ir::tensor_from_proto(p.tensor_value(), dir));
        return ExecValue::some(ExecValue::of_tensor(std::move(t)));
      }
    case onnx::OptionalProto::SEQUENCE:
      if (!p.has_sequence_value())
        return ExecValue::none(ExecValue::Kind::kSequence, ir::DType::kUndefined);
      {
        XOPT_ASSIGN_OR_RETURN(ExecValue s, value_from_proto(p.sequence_value(), dir));
        return ExecValue::some(std::move(s));
      }
    case onnx::OptionalProto::UNDEFINED:
      return ExecValue::none(ExecValue::Kind::kTensor, ir::DType::kUndefined);
    default:
      return unsupported("an optional of element type " + std::to_string(p.elem_type()) +
                         " (only tensors and sequences)");
  }
}

Result<ExecValue> value_from_proto(const onnx::SequenceProto& p, const std::string& dir) {
  if (p.elem_type() != onnx::SequenceProto::TENSOR && p.elem_type() != 0)
    return unsupported("a sequence of element type " + std::to_string(p.elem_type()) +
                       " (only sequences of tensors)");
  std::vector<ir::Tensor> items;
  for (const auto& tp : p.tensor_values()) {
    XOPT_ASSIGN_OR_RETURN(ir::Tensor t, ir::tensor_from_proto(tp, dir));
    items.push_back(std::move(t));
  }
  return ExecValue::of_sequence(std::move(items), ir::DType::kUndefined);
}

// Reads a test data file as the kind `v` declares: TensorProto, SequenceProto or OptionalProto.
Result<ExecValue> read_value_file(const std::string& path, const ir::Value& v) {
  const ir::TypeKind k = ir::type_kind(v);
  if (k == ir::TypeKind::kTensor) {
    XOPT_ASSIGN_OR_RETURN(ir::Tensor t, read_tensor_file(path));
    return ExecValue::of_tensor(std::move(t));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return io_error("cannot open '" + path + "'");
  const std::string dir = fs::path(path).parent_path().string();
  Result<ExecValue> r = unsupported("'" + v.name() + "' is a " +
                                    std::string(ir::type_kind_name(k)) + ", which is not run");
  if (k == ir::TypeKind::kSequence) {
    onnx::SequenceProto p;
    if (!p.ParseFromIstream(&in)) return invalid_model("'" + path + "' is not a SequenceProto");
    r = value_from_proto(p, dir);
  } else if (k == ir::TypeKind::kOptional) {
    onnx::OptionalProto p;
    if (!p.ParseFromIstream(&in)) return invalid_model("'" + path + "' is not an OptionalProto");
    r = value_from_proto(p, dir);
  }
  if (!r.is_ok()) return r.status().with_context(fs::path(path).filename().string() + ": ");
  return r;
}

// Compares any kind of output: the same kind, and each tensor as outputs_match does.
bool values_match(const ExecValue& actual, const ExecValue& expected, double rtol, double atol,
                  std::string* why, int64_t* below_resolution) {
  if (actual.kind() != expected.kind()) {
    *why = "a " + actual.describe() + ", expected a " + expected.describe();
    return false;
  }
  switch (actual.kind()) {
    case ExecValue::Kind::kTensor:
      return outputs_match(actual.tensor(), expected.tensor(), rtol, atol, why, below_resolution);
    case ExecValue::Kind::kSequence:
      if (actual.items().size() != expected.items().size()) {
        *why = std::to_string(actual.items().size()) + " elements, expected " +
               std::to_string(expected.items().size());
        return false;
      }
      for (size_t i = 0; i < actual.items().size(); ++i)
        if (!outputs_match(actual.items()[i], expected.items()[i], rtol, atol, why,
                           below_resolution)) {
          *why = "element " + std::to_string(i) + ": " + *why;
          return false;
        }
      return true;
    case ExecValue::Kind::kOptional:
      if (actual.has_element() != expected.has_element()) {
        *why = actual.has_element() ? "holds a value, expected an empty optional"
                                    : "is empty, expected a value";
        return false;
      }
      return !actual.has_element() ||
             values_match(actual.element(), expected.element(), rtol, atol, why, below_resolution);
  }
  return false;
}

Status load_data_sets(const ir::Graph& g, const fs::path& path, bool light,
                      std::vector<DataSet>* sets) {
  std::vector<ir::Value*> ins = g.runtime_inputs();
  bool has_values = false;
  for (const ir::Value* v : ins) has_values = has_values || !is_plain(*v);
  for (const ir::Value* v : g.outputs()) has_values = has_values || !is_plain(*v);
  if (light && has_values) return unsupported("a light model with non-tensor inputs or outputs");
  if (light) {
    DataSet ds;
    ds.name = "light";
    for (const ir::Value* v : ins) {
      XOPT_ASSIGN_OR_RETURN(ds.inputs[v->name()], light_input(*v));
    }
    fs::path out = path.parent_path() / (path.stem().string() + "_output_0.pb");
    XOPT_ASSIGN_OR_RETURN(ir::Tensor t, read_tensor_file(out.string()));
    ds.outputs.push_back(std::move(t));
    sets->push_back(std::move(ds));
    return Status::ok();
  }
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(path))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0)
      dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  if (dirs.empty()) return invalid_model("no test_data_set_* folder");
  for (const fs::path& d : dirs) {
    DataSet ds;
    ds.name = d.filename().string();
    for (size_t i = 0;; ++i) {
      fs::path f = d / ("input_" + std::to_string(i) + ".pb");
      if (!fs::exists(f)) break;
      if (i >= ins.size())
        return invalid_model(ds.name + ": more input files than graph inputs (" +
                             std::to_string(ins.size()) + ")");
      if (!has_values) {
        XOPT_ASSIGN_OR_RETURN(ds.inputs[ins[i]->name()], read_tensor_file(f.string()));
        continue;
      }
      XOPT_ASSIGN_OR_RETURN(ExecValue v, read_value_file(f.string(), *ins[i]));
      if (v.is_tensor()) ds.inputs[ins[i]->name()] = v.tensor();
      ds.value_inputs[ins[i]->name()] = std::move(v);
    }
    for (size_t i = 0;; ++i) {
      fs::path f = d / ("output_" + std::to_string(i) + ".pb");
      if (!fs::exists(f)) break;
      if (!has_values) {
        XOPT_ASSIGN_OR_RETURN(ir::Tensor t, read_tensor_file(f.string()));
        ds.outputs.push_back(std::move(t));
        continue;
      }
      if (i >= g.outputs().size())
        return invalid_model(ds.name + ": more output files than graph outputs (" +
                             std::to_string(g.outputs().size()) + ")");
      XOPT_ASSIGN_OR_RETURN(ExecValue v, read_value_file(f.string(), *g.outputs()[i]));
      ds.value_outputs.push_back(std::move(v));
    }
    ds.has_values = has_values;
    sets->push_back(std::move(ds));
  }
  return Status::ok();
}

// Whether the model draws random values (CaseResult::random_values).
bool draws_random_values(const ir::Graph& g) {
  static const char* const kRandom[] = {"RandomUniform",    "RandomNormal", "RandomUniformLike",
                                        "RandomNormalLike", "Bernoulli",    "Multinomial"};
  for (const ir::Node* n : g.nodes())
    for (const char* op : kRandom)
      if (n->is(op)) return true;
  return false;
}

// A random output against numpy's draw: type, shape, finite, within the expected values' range,
// integral where they all are.
bool random_output_plausible(const ir::Tensor& got, const ir::Tensor& expected, std::string* why) {
  if (got.dtype() != expected.dtype() || got.dims() != expected.dims()) {
    *why = "type/shape " + std::string(ir::dtype_name(got.dtype())) + ir::dims_string(got.dims()) +
           ", expected " + std::string(ir::dtype_name(expected.dtype())) +
           ir::dims_string(expected.dims());
    return false;
  }
  if (expected.numel() == 0 || expected.dtype() == ir::DType::kString) return true;
  double lo = INFINITY, hi = -INFINITY;
  bool integral = true;
  for (int64_t i = 0; i < expected.numel(); ++i) {
    const double e = expected.as_double(i);
    lo = std::min(lo, e);
    hi = std::max(hi, e);
    integral = integral && e == std::floor(e);
  }
  for (int64_t i = 0; i < got.numel(); ++i) {
    const double a = got.as_double(i);
    if (!std::isfinite(a) || a < lo || a > hi || (integral && a != std::floor(a))) {
      *why = "element " + std::to_string(i) + " is " + std::to_string(a) +
             ", outside the expected values' " + (integral ? "integers in [" : "range [") +
             std::to_string(lo) + ", " + std::to_string(hi) + "]";
      return false;
    }
  }
  return true;
}

// A data set of a model with sequence or optional inputs or outputs: the CPU executor only.
Result<std::string> check_value_data_set(const ir::Model& model, const DataSet& ds,
                                         const Options& o, int64_t* below_resolution) {
  if (o.runner) return unsupported("sequence and optional values are run by the CPU executor only");
  XOPT_ASSIGN_OR_RETURN(std::vector<ExecValue> got, run_model_values(model, ds.value_inputs));
  if (got.size() != ds.value_outputs.size())
    return ds.name + ": " + std::to_string(got.size()) + " outputs, expected " +
           std::to_string(ds.value_outputs.size());
  const auto& outs = model.graph->outputs();
  for (size_t i = 0; i < got.size(); ++i) {
    std::string why;
    if (!values_match(got[i], ds.value_outputs[i], o.rtol, o.atol, &why, below_resolution))
      return ds.name + ": output '" + outs[i]->name() + "': " + why;
  }
  return std::string();
}

// Runs one data set; returns "" when it matches, else why not. Elements that passed within the
// reference's resolution only are added to `below_resolution`.
Result<std::string> check_data_set(const ir::Model& model, const DataSet& ds, const Options& o,
                                   int64_t* below_resolution) {
  if (ds.has_values) return check_value_data_set(model, ds, o, below_resolution);
  XOPT_ASSIGN_OR_RETURN(std::vector<ir::Tensor> got,
                        o.runner ? o.runner(model, ds.inputs) : run_model(model, ds.inputs));
  if (got.size() != ds.outputs.size())
    return ds.name + ": " + std::to_string(got.size()) + " outputs, expected " +
           std::to_string(ds.outputs.size());
  const auto& outs = model.graph->outputs();
  const bool random = draws_random_values(*model.graph);
  for (size_t i = 0; i < got.size(); ++i) {
    std::string why;
    if (random ? !random_output_plausible(got[i], ds.outputs[i], &why)
               : !outputs_match(got[i], ds.outputs[i], o.rtol, o.atol, &why, below_resolution))
      return ds.name + ": output '" + outs[i]->name() + "': " + why;
  }
  if (o.also_arena && !o.runner && random) {  // another draw: plausible, not equal
    XOPT_ASSIGN_OR_RETURN(planner::MemoryPlan plan, sequential_plan(model, ds.inputs, true));
    RunOptions ro;
    ro.plan = &plan;
    XOPT_ASSIGN_OR_RETURN(std::vector<ir::Tensor> arena_got, run_model(model, ds.inputs, ro));
    for (size_t i = 0; i < got.size(); ++i) {
      std::string why;
      if (!random_output_plausible(arena_got[i], ds.outputs[i], &why))
        return ds.name + ": output '" + outs[i]->name() + "' in arena mode: " + why;
    }
  } else if (o.also_arena && !o.runner) {
    XOPT_ASSIGN_OR_RETURN(planner::MemoryPlan plan, sequential_plan(model, ds.inputs, true));
    RunOptions ro;
    ro.plan = &plan;
    XOPT_ASSIGN_OR_RETURN(std::vector<ir::Tensor> arena_got, run_model(model, ds.inputs, ro));
    for (size_t i = 0; i < got.size(); ++i) {
      bool same = got[i].same_contents(arena_got[i]);
      if (!same && got[i].dtype() != ir::DType::kString) {
        std::string why;  // NaN payloads may differ bitwise only if a kernel is nondeterministic
        same = outputs_match(arena_got[i], got[i], 0.0, 0.0, &why);
      }
      if (!same)
        return ds.name + ": output '" + outs[i]->name() + "' differs between simple and arena mode";
    }
  }
  return std::string();
}

}  // namespace

std::vector<std::string> list_cases(const std::string& dir) {
  std::vector<std::string> out;
  fs::path p(dir);
  if (fs::is_regular_file(p) && is_light_model(p)) return {p.string()};
  collect(p, 2, out);
  std::sort(out.begin(), out.end());
  return out;
}

Result<ir::Tensor> read_tensor_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return io_error("cannot open '" + path + "'");
  onnx::TensorProto p;
  if (!p.ParseFromIstream(&in)) return invalid_model("'" + path + "' is not a TensorProto");
  // Valid ONNX element types that xopt's IR does not represent (the float6 formats of ONNX 1.20).
  const int dt = p.data_type();
  if (dt > ir::kLastDTypeCode && dt <= 28)
    return unsupported(fs::path(path).filename().string() + ": element type " +
                       (dt == 27 ? "float6e2m3" : "float6e3m2") +
                       " is not represented in xopt's IR");
  auto t = ir::tensor_from_proto(std::move(p), fs::path(path).parent_path().string());
  if (!t.is_ok()) return t.status().with_context(fs::path(path).filename().string() + ": ");
  return t;
}

namespace {
// One ulp of the largest finite magnitude in `expected`: what a reference computed in its own
// precision cannot resolve (conformance.h).
double reference_resolution(const ir::Tensor& expected) {
  double eps = 0.0;
  switch (expected.dtype()) {
    case ir::DType::kFloat:
      eps = std::numeric_limits<float>::epsilon();
      break;
    case ir::DType::kDouble:
      eps = std::numeric_limits<double>::epsilon();
      break;
    case ir::DType::kFloat16:
      eps = 0x1p-10;
      break;
    case ir::DType::kBFloat16:
      eps = 0x1p-7;
      break;
    default:
      return 0.0;
  }
  double largest = 0.0;
  for (int64_t i = 0; i < expected.numel(); ++i) {
    const double v = std::fabs(expected.as_double(i));
    if (std::isfinite(v)) largest = std::max(largest, v);
  }
  return eps * largest;
}
}  // namespace

bool outputs_match(const ir::Tensor& actual, const ir::Tensor& expected, double rtol, double atol,
                   std::string* why, int64_t* below_resolution) {
  if (actual.dtype() != expected.dtype()) {
    *why = "dtype " + std::string(ir::dtype_name(actual.dtype())) + ", expected " +
           std::string(ir::dtype_name(expected.dtype()));
    return false;
  }
  if (actual.dims() != expected.dims()) {
    *why = "shape " + ir::dims_string(actual.dims()) + ", expected " +
           ir::dims_string(expected.dims());
    return false;
  }
  const int64_t n = actual.numel();
  int64_t bad = 0, first = -1;
  double worst = 0.0;
  const bool fl = ir::is_float(actual.dtype());
  const size_t es = ir::dtype_size(actual.dtype());
  const double resolution =
      below_resolution != nullptr && fl ? reference_resolution(expected) : 0.0;
  int64_t resolved = 0;
  for (int64_t i = 0; i < n; ++i) {
    bool ok;
    if (actual.dtype() == ir::DType::kString) {
      ok = actual.strings()[static_cast<size_t>(i)] == expected.strings()[static_cast<size_t>(i)];
    } else if (fl) {
      double a = actual.as_double(i), b = expected.as_double(i);
      if (std::isnan(a) || std::isnan(b)) {
        ok = std::isnan(a) && std::isnan(b);
      } else if (std::isinf(a) || std::isinf(b)) {
        ok = a == b;
      } else {
        double err = std::fabs(a - b);
        ok = err <= atol + rtol * std::fabs(b);
        if (!ok && err < resolution) {
          ok = true;
          ++resolved;
        }
        if (!ok) worst = std::max(worst, err);
      }
    } else {
      ok = std::memcmp(
               static_cast<const std::byte*>(actual.raw_data()) + i * static_cast<int64_t>(es),
               static_cast<const std::byte*>(expected.raw_data()) + i * static_cast<int64_t>(es),
               es) == 0;
      if (!ok && actual.dtype() == ir::DType::kBool)
        ok = (actual.data<uint8_t>()[i] != 0) == (expected.data<uint8_t>()[i] != 0);
      if (!ok && ir::is_narrow_float(actual.dtype()))  // any NaN pattern matches any other
        ok = std::isnan(actual.as_double(i)) && std::isnan(expected.as_double(i));
    }
    if (!ok) {
      if (first < 0) first = i;
      ++bad;
    }
  }
  if (bad == 0) {
    if (below_resolution != nullptr) *below_resolution += resolved;
    return true;
  }
  *why = std::to_string(bad) + " of " + std::to_string(n) + " elements differ; first at " +
         std::to_string(first) + ": " + element_string(actual, first) + ", expected " +
         element_string(expected, first);
  if (fl) {
    std::ostringstream o;
    o.precision(3);
    o << worst;
    *why += " (max abs error " + o.str() + ")";
  }
  return false;
}

CaseResult run_case(const std::string& path, const Options& options) {
  CaseResult r;
  fs::path p(path);
  const bool light = fs::is_regular_file(p);
  r.path = path;
  r.name = light ? p.stem().string() : p.filename().string();
  r.suite = p.parent_path().filename().string();
  r.op = r.suite + "/" + r.name;
  auto model = ir::load_model(light ? path : (p / "model.onnx").string());
  if (!model.is_ok()) {
    r.outcome = classify(model.status());
    r.detail = "load: " + model.status().message();
    return r;
  }
  const ir::Graph& g = *model->graph;
  if (g.num_nodes() == 1) {
    const ir::Node* n = *g.nodes().begin();
    r.single_node = true;
    r.op = n->domain().empty() || n->domain() == "ai.onnx" ? n->op_type()
                                                           : n->domain() + "." + n->op_type();
    r.opset = n->opset();
  }
  std::vector<DataSet> sets;
  Status st = load_data_sets(g, p, light, &sets);
  if (!st.is_ok()) {
    r.outcome = classify(st);
    r.detail = "data: " + st.message();
    return r;
  }
  for (const DataSet& ds : sets) {
    std::string rnd = random_dependency(g, ds.inputs);
    if (!rnd.empty()) {
      r.outcome = Outcome::kUnsupported;
      r.detail = rnd;
      return r;
    }
    auto res = check_data_set(*model, ds, options, &r.below_resolution);
    ++r.data_sets;
    if (!res.is_ok()) {
      r.outcome = classify(res.status());
      r.detail = ds.name + ": " + res.status().message();
      return r;
    }
    if (!res->empty()) {
      r.outcome = Outcome::kFailed;
      r.detail = *res;
      return r;
    }
  }
  r.outcome = Outcome::kPassed;
  r.random_values = draws_random_values(g);
  return r;  // below_resolution was counted by the data sets
}

Result<LoadedCase> load_case(const std::string& path) {
  fs::path p(path);
  if (fs::is_regular_file(p)) return unsupported(path + ": a light model (no stored inputs)");
  XOPT_ASSIGN_OR_RETURN(ir::Model model, ir::load_model((p / "model.onnx").string()));
  LoadedCase c;
  c.name = p.filename().string();
  c.op = p.parent_path().filename().string() + "/" + c.name;
  const ir::Graph& g = *model.graph;
  if (g.num_nodes() == 1) {
    const ir::Node* n = *g.nodes().begin();
    c.single_node = true;
    c.op = n->domain().empty() || n->domain() == "ai.onnx" ? n->op_type()
                                                           : n->domain() + "." + n->op_type();
    c.opset = n->opset();
  }
  std::vector<DataSet> sets;
  XOPT_RETURN_IF_ERROR(load_data_sets(g, p, false, &sets));
  for (DataSet& ds : sets) {
    if (ds.has_values) return unsupported(path + ": sequence or optional inputs or outputs");
    if (c.random.empty()) c.random = random_dependency(g, ds.inputs);
    c.data_sets.push_back({ds.name, std::move(ds.inputs), std::move(ds.outputs)});
  }
  if (c.random.empty() && draws_random_values(g)) c.random = "the model draws random values";
  c.model = std::move(model);
  return c;
}

void Tally::add(const CaseResult& c) {
  if (c.outcome == Outcome::kPassed) {
    ++passed;
    if (c.random_values) ++random;
    if (c.below_resolution > 0) ++resolution;
  } else if (c.outcome == Outcome::kFailed) {
    ++failed;
  } else {
    ++unsupported;
  }
}

std::vector<std::pair<std::string, Tally>> tally_by_op(const std::vector<CaseResult>& results) {
  std::map<std::string, Tally> single, multi;
  for (const CaseResult& c : results) (c.single_node ? single : multi)[c.op].add(c);
  std::vector<std::pair<std::string, Tally>> out(single.begin(), single.end());
  out.insert(out.end(), multi.begin(), multi.end());
  return out;
}

Tally totals(const std::vector<CaseResult>& results) {
  Tally t;
  for (const CaseResult& c : results) t.add(c);
  return t;
}

std::string format_report(const std::vector<CaseResult>& results, bool details) {
  std::ostringstream o;
  auto row = [&](const std::string& name, const Tally& t) {
    o << name;
    for (size_t k = name.size(); k < 48; ++k) o << ' ';
    o << " " << t.passed << "/" << t.total() << " passed";
    if (t.failed) o << ", " << t.failed << " failed";
    if (t.unsupported) o << ", " << t.unsupported << " unsupported";
    if (t.random) o << " (" << t.random << " with random values: type, shape and range checked)";
    if (t.resolution) o << " (" << t.resolution << " within the reference's resolution)";
    o << "\n";
  };
  bool multi_header = false;
  o << "op (single-node tests)\n";
  for (const auto& [op, t] : tally_by_op(results)) {
    if (op.find('/') != std::string::npos && !multi_header) {
      o << "\nmulti-node models\n";
      multi_header = true;
    }
    row(op, t);
  }
  if (details) {
    o << "\n";
    for (const CaseResult& c : results)
      if (c.outcome != Outcome::kPassed)
        o << outcome_name(c.outcome) << ": " << c.suite << "/" << c.name << ": " << c.detail
          << "\n";
      else if (c.below_resolution > 0)
        o << "passed within the reference's resolution: " << c.suite << "/" << c.name << ": "
          << c.below_resolution
          << " elements differ by more than atol + rtol*|expected| but less than one ulp of "
             "the output's largest value\n";
  }
  Tally t = totals(results);
  o << "\ntotal: " << t.total() << " cases, " << t.passed << " passed, " << t.failed << " failed, "
    << t.unsupported << " unsupported";
  if (t.random)
    o << " (" << t.random << " passed with random values: type, shape and range checked)";
  if (t.resolution)
    o << " (" << t.resolution
      << " passed with elements within the reference's resolution: --details lists them)";
  o << "\n";
  return o.str();
}

}  // namespace xopt::exec::conformance
