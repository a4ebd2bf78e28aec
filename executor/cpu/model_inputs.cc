#include "executor/cpu/model_inputs.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>

#include "executor/cpu/broadcast.h"
#include "ir/tensor_proto.h"

namespace xopt::exec {

namespace fs = std::filesystem;

namespace {

// Ops that pass index values through unchanged (only their layout or type changes).
bool passes_indices_through(const ir::Node& n) {
  static const std::set<std::string> kOps = {"Cast",    "Identity",  "Reshape", "Flatten",
                                             "Squeeze", "Unsqueeze", "Expand",  "Transpose"};
  return n.domain().empty() && kOps.count(n.op_type()) != 0;
}

// Dims of a value known before running: an initializer, a Constant node, an Identity of either, or
// the value's (inferred or declared) shape.
std::optional<std::vector<int64_t>> static_dims(const ir::Value* v) {
  for (int hops = 0; v != nullptr && hops < 8; ++hops) {
    if (v->initializer() != nullptr) return v->initializer()->dims();
    const ir::Node* p = v->producer();
    if (p == nullptr) break;
    if (p->is("Constant") && p->has_attr("value")) return p->attr_tensor("value").dims();
    if (!p->is("Identity")) break;
    v = p->input(0);
  }
  if (v != nullptr && v->shape().has_rank() && v->shape().is_static()) {
    std::vector<int64_t> dims;
    for (const ir::Dim& d : v->shape().dims()) dims.push_back(d.value);
    return dims;
  }
  return std::nullopt;
}

// The size of `data`'s axis `axis` (negative counts from the end), or nullopt.
std::optional<int64_t> indexed_dim(const ir::Value* data, int64_t axis) {
  auto dims = static_dims(data);
  if (!dims) {
    // A partially known shape may still know the indexed axis.
    if (data == nullptr || !data->shape().has_rank()) return std::nullopt;
    const int64_t r = static_cast<int64_t>(data->shape().rank());
    if (axis < 0) axis += r;
    if (axis < 0 || axis >= r) return std::nullopt;
    const ir::Dim& d = data->shape()[static_cast<size_t>(axis)];
    return d.is_known() ? std::optional<int64_t>(d.value) : std::nullopt;
  }
  const int64_t r = static_cast<int64_t>(dims->size());
  if (axis < 0) axis += r;
  if (axis < 0 || axis >= r) return std::nullopt;
  return (*dims)[static_cast<size_t>(axis)];
}

// Smallest indexed dim among the index-taking uses of `v` (followed through pass-through ops).
void find_index_uses(const ir::Value* v, int depth, std::optional<int64_t>* best,
                     std::string* origin) {
  if (depth > 8) return;
  for (const ir::Use& u : v->uses()) {
    const ir::Node& n = *u.node;
    std::optional<int64_t> dim;
    if ((n.is("Gather") || n.is("GatherElements")) && u.index == 1) {
      dim = indexed_dim(n.input(0), n.attr_int("axis", 0));
    } else if (n.domain() == "com.microsoft" && n.op_type() == "EmbedLayerNormalization" &&
               (u.index == 0 || u.index == 1)) {
      dim = indexed_dim(n.input(u.index == 0 ? 2 : 3), 0);
    } else if (passes_indices_through(n) && u.index == 0) {
      for (const ir::Value* out : n.outputs())
        if (out != nullptr) find_index_uses(out, depth + 1, best, origin);
      continue;
    }
    if (dim && *dim > 0 && (!*best || *dim < **best)) {
      *best = dim;
      *origin = n.describe() + " indexes a dim of " + std::to_string(*dim);
    }
  }
}

// A double in [0, 1) from 53 bits of the generator (mt19937_64 is fully specified, so the same seed
// gives the same tensors everywhere, unlike std::uniform_real_distribution).
double unit(std::mt19937_64& gen) {
  return static_cast<double>(gen() >> 11) * (1.0 / 9007199254740992.0);
}

template <typename T>
void fill_integers(ir::Tensor& t, std::mt19937_64& gen, int64_t lo, int64_t hi) {
  T* p = t.mutable_data<T>();
  const uint64_t span = static_cast<uint64_t>(hi - lo) + 1;
  for (int64_t i = 0; i < t.numel(); ++i) {
    const uint64_t r = span == 0 ? gen() : gen() % span;  // span 0: the full 64-bit range
    p[i] = static_cast<T>(lo + static_cast<int64_t>(r));
  }
}

bool fits(ir::DType t, double lo, double hi) {
  double min = 0, max = 0;
  switch (t) {
    case ir::DType::kInt8:
      min = -128, max = 127;
      break;
    case ir::DType::kUInt8:
      min = 0, max = 255;
      break;
    case ir::DType::kInt16:
      min = -32768, max = 32767;
      break;
    case ir::DType::kUInt16:
      min = 0, max = 65535;
      break;
    case ir::DType::kInt32:
      min = -2147483648.0, max = 2147483647.0;
      break;
    case ir::DType::kUInt32:
      min = 0, max = 4294967295.0;
      break;
    case ir::DType::kUInt64:
      min = 0, max = 9.2e18;
      break;
    default:
      min = -9.2e18, max = 9.2e18;
  }
  return lo >= min && hi <= max;
}

Result<ir::Tensor> random_tensor(const ir::Value& v, const std::vector<int64_t>& dims,
                                 const ValueRange& range, std::mt19937_64& gen) {
  const ir::DType t = v.dtype();
  ir::Tensor out(t, dims);
  const int64_t n = out.numel();
  if (ir::is_float(t)) {
    for (int64_t i = 0; i < n; ++i) {
      const double x = range.lo + (range.hi - range.lo) * unit(gen);
      switch (t) {
        case ir::DType::kFloat:
          out.mutable_data<float>()[i] = static_cast<float>(x);
          break;
        case ir::DType::kDouble:
          out.mutable_data<double>()[i] = x;
          break;
        case ir::DType::kFloat16:
          out.mutable_data<uint16_t>()[i] = ir::float_to_half(static_cast<float>(x));
          break;
        default:  // bfloat16
          out.mutable_data<uint16_t>()[i] = ir::float_to_bfloat16(static_cast<float>(x));
      }
    }
    return out;
  }
  const double lo = std::ceil(range.lo), hi = std::floor(range.hi);
  if (hi < lo)
    return invalid_argument("input '" + v.name() + "': range " + std::to_string(range.lo) + ":" +
                            std::to_string(range.hi) + " holds no integer");
  if (t == ir::DType::kBool) {
    if (lo < 0 || hi > 1)
      return invalid_argument("input '" + v.name() + "' is bool: its range must lie in 0:1");
    fill_integers<uint8_t>(out, gen, static_cast<int64_t>(lo), static_cast<int64_t>(hi));
    return out;
  }
  if (!fits(t, lo, hi))
    return invalid_argument("input '" + v.name() + "': range " + std::to_string(range.lo) + ":" +
                            std::to_string(range.hi) + " does not fit " +
                            std::string(ir::dtype_name(t)));
  const auto l = static_cast<int64_t>(lo), h = static_cast<int64_t>(hi);
  switch (t) {
    case ir::DType::kInt8:
      fill_integers<int8_t>(out, gen, l, h);
      break;
    case ir::DType::kUInt8:
      fill_integers<uint8_t>(out, gen, l, h);
      break;
    case ir::DType::kInt16:
      fill_integers<int16_t>(out, gen, l, h);
      break;
    case ir::DType::kUInt16:
      fill_integers<uint16_t>(out, gen, l, h);
      break;
    case ir::DType::kInt32:
      fill_integers<int32_t>(out, gen, l, h);
      break;
    case ir::DType::kUInt32:
      fill_integers<uint32_t>(out, gen, l, h);
      break;
    case ir::DType::kInt64:
      fill_integers<int64_t>(out, gen, l, h);
      break;
    case ir::DType::kUInt64:
      fill_integers<uint64_t>(out, gen, l, h);
      break;
    default:
      return unsupported("input '" + v.name() + "' is " + std::string(ir::dtype_name(t)) +
                         ": random values of this type cannot be generated (give --input)");
  }
  return out;
}

}  // namespace

Result<ValueRange> input_value_range(const ir::Graph& graph, const ir::Value& input,
                                     const RandomInputOptions& options) {
  if (auto it = options.ranges.find(input.name()); it != options.ranges.end())
    return ValueRange{it->second.first, it->second.second, "given"};
  const ir::DType t = input.dtype();
  if (ir::is_float(t)) return ValueRange{-1.0, 1.0, "default"};
  if (t == ir::DType::kBool) return ValueRange{0.0, 1.0, "default"};
  if (!ir::is_integer(t))
    return unsupported("input '" + input.name() + "' is " + std::string(ir::dtype_name(t)) +
                       ": random values of this type cannot be generated (give --input)");
  std::optional<int64_t> dim;
  std::string origin;
  find_index_uses(&input, 0, &dim, &origin);
  if (dim) return ValueRange{0.0, static_cast<double>(*dim - 1), origin};
  return ValueRange{0.0, 9.0, "default"};
}

Result<std::vector<int64_t>> input_dims(const ir::Value& input, const RandomInputOptions& options) {
  const ir::Shape& s = input.shape();
  if (auto it = options.shapes.input_shapes.find(input.name());
      it != options.shapes.input_shapes.end()) {
    if (s.has_rank() && s.rank() != it->second.size())
      return invalid_argument("input '" + input.name() + "': shape " + ir::dims_string(it->second) +
                              " given but the graph declares " + s.to_string());
    for (size_t i = 0; s.has_rank() && i < s.rank(); ++i)
      if (s[i].is_known() && s[i].value != it->second[i])
        return invalid_argument("input '" + input.name() + "': shape " +
                                ir::dims_string(it->second) + " given but the graph declares " +
                                s.to_string());
    return it->second;
  }
  std::vector<int64_t> dims;
  if (!s.has_rank()) return dims;  // rank unknown: a scalar
  for (size_t i = 0; i < s.rank(); ++i) {
    if (s[i].is_known())
      dims.push_back(s[i].value);
    else if (i == 0 && options.shapes.batch)
      dims.push_back(*options.shapes.batch);
    else
      dims.push_back(1);
  }
  return dims;
}

Result<std::map<std::string, ir::Tensor>> random_inputs(const ir::Graph& graph,
                                                        const RandomInputOptions& options,
                                                        std::vector<std::string>* notes) {
  const std::vector<ir::Value*> ins = graph.runtime_inputs();
  for (const auto& entry : options.ranges) {
    // Not a structured binding: clang 14 cannot capture one in a lambda.
    const std::string& name = entry.first;
    if (std::none_of(ins.begin(), ins.end(), [&](const ir::Value* v) { return v->name() == name; }))
      return invalid_argument("--input-range: '" + name + "' is not an input of the graph");
  }
  std::map<std::string, ir::Tensor> out;
  for (size_t i = 0; i < ins.size(); ++i) {
    const ir::Value& v = *ins[i];
    if (options.skip.count(v.name()) != 0) continue;
    if (!v.is_tensor())
      return unsupported("input '" + v.name() + "' is not a tensor: give it as a stored data set");
    XOPT_ASSIGN_OR_RETURN(ValueRange range, input_value_range(graph, v, options));
    XOPT_ASSIGN_OR_RETURN(std::vector<int64_t> dims, input_dims(v, options));
    std::mt19937_64 gen(options.seed * 0x9E3779B97F4A7C15ull + i + 1);
    XOPT_ASSIGN_OR_RETURN(out[v.name()], random_tensor(v, dims, range, gen));
    if (notes != nullptr) {
      const bool integral = !ir::is_float(v.dtype());
      char buf[96];
      std::snprintf(buf, sizeof buf, integral ? "%.0f..%.0f" : "[%g, %g)", range.lo, range.hi);
      notes->push_back(v.name() + ": " + std::string(ir::dtype_name(v.dtype())) +
                       ir::dims_string(dims) + " random " + buf + " (" + range.origin + ")");
    }
  }
  return out;
}

std::vector<std::string> find_data_sets(const std::string& dir) {
  std::error_code ec;
  if (fs::exists(fs::path(dir) / "input_0.pb", ec)) return {dir};
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_directory(ec) && e.path().filename().string().rfind("test_data_set_", 0) == 0)
      out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

Result<ir::Tensor> read_tensor_proto_file(const std::string& path, std::string* name) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return io_error(path + ": cannot open");
  onnx::TensorProto p;
  if (!p.ParseFromIstream(&in)) return invalid_argument(path + ": not a serialized TensorProto");
  if (name != nullptr) *name = p.name();
  auto t = ir::tensor_from_proto(std::move(p), fs::path(path).parent_path().string());
  if (!t.is_ok()) return t.status().with_context(path + ": ");
  return t;
}

Result<DataSet> read_data_set(const ir::Graph& graph, const std::string& dir) {
  DataSet ds;
  ds.name = fs::path(dir).filename().string();
  const std::vector<ir::Value*> ins = graph.runtime_inputs();
  for (size_t i = 0;; ++i) {
    const fs::path f = fs::path(dir) / ("input_" + std::to_string(i) + ".pb");
    if (!fs::exists(f)) break;
    std::string name;
    XOPT_ASSIGN_OR_RETURN(ir::Tensor t, read_tensor_proto_file(f.string(), &name));
    const bool named =
        std::any_of(ins.begin(), ins.end(), [&](const ir::Value* v) { return v->name() == name; });
    if (!named) {
      if (i >= ins.size())
        return invalid_argument(f.string() + ": the graph has only " + std::to_string(ins.size()) +
                                " inputs");
      name = ins[i]->name();
    }
    if (ds.inputs.count(name) != 0)
      return invalid_argument(f.string() + ": input '" + name + "' is given twice");
    ds.inputs[name] = std::move(t);
  }
  for (size_t i = 0;; ++i) {
    const fs::path f = fs::path(dir) / ("output_" + std::to_string(i) + ".pb");
    if (!fs::exists(f)) break;
    XOPT_ASSIGN_OR_RETURN(ir::Tensor t, read_tensor_proto_file(f.string()));
    ds.outputs.push_back(std::move(t));
  }
  if (ds.inputs.empty() && !ins.empty()) return invalid_argument(dir + ": no input_0.pb");
  return ds;
}

Result<std::pair<std::string, std::string>> split_assignment(const std::string& text) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    return invalid_argument("expected NAME=VALUE, got '" + text + "'");
  return std::make_pair(text.substr(0, eq), text.substr(eq + 1));
}

Result<std::pair<double, double>> parse_range(const std::string& text) {
  // The separator is the ':' that is not a sign or exponent part: "-5:5", "0:1e3".
  const size_t colon = text.find(':');
  if (colon == std::string::npos) return invalid_argument("expected LO:HI, got '" + text + "'");
  const std::string a = text.substr(0, colon), b = text.substr(colon + 1);
  char* end = nullptr;
  const double lo = std::strtod(a.c_str(), &end);
  if (a.empty() || *end != '\0') return invalid_argument("bad range start in '" + text + "'");
  const double hi = std::strtod(b.c_str(), &end);
  if (b.empty() || *end != '\0') return invalid_argument("bad range end in '" + text + "'");
  if (!std::isfinite(lo) || !std::isfinite(hi) || lo > hi)
    return invalid_argument("range '" + text + "' must have finite LO <= HI");
  return std::make_pair(lo, hi);
}

}  // namespace xopt::exec
