#include "planner/shape_range.h"

#include <algorithm>
#include <map>
#include <set>

#include "ir/onnx_io.h"
#include "ir/shape_inference.h"

namespace xopt::planner {
namespace {

// Interior points checked between min and max (with min, opt and max themselves). Eight steps
// catch a size that dips or peaks inside the range without costing more than a few inferences.
constexpr int kSteps = 8;

const InputRange* find_range(const std::vector<InputRange>& ranges, const std::string& name) {
  for (const InputRange& r : ranges)
    if (r.name == name) return &r;
  return nullptr;
}

// One point of the range: every input's dims.
struct Point {
  std::string label;  // "min", "opt", "max" or "at 3/8"
  std::map<std::string, std::vector<int64_t>> dims;
};

std::string point_text(const Point& p) {
  std::string s;
  for (const auto& [name, dims] : p.dims)
    s += (s.empty() ? "" : ", ") + name + "=" + dims_text(dims);
  return s + " (" + p.label + ")";
}

Result<ir::Model> copy_model(const ir::Model& model) {
  return ir::model_from_proto(ir::model_to_proto(model), model.base_dir, model.path);
}

// A copy of `model` with every range input bound to `p` and every value's shape inferred again.
Result<ir::Model> bound_copy(const ir::Model& model, const Point& p) {
  XOPT_ASSIGN_OR_RETURN(ir::Model copy, copy_model(model));
  ir::ShapeBindings b;
  b.input_shapes = p.dims;
  XOPT_RETURN_IF_ERROR(ir::bind_input_shapes(*copy.graph, b));
  for (ir::Node* n : copy.graph->nodes())
    for (ir::Value* v : n->outputs())
      if (v != nullptr) v->set_shape(ir::Shape());
  XOPT_RETURN_IF_ERROR(ir::infer_shapes(*copy.graph));
  return copy;
}

// Every node output's byte size at one point; a tensor whose size inference leaves unknown is an
// error naming it.
struct Sizes {
  std::map<std::string, size_t> bytes;
  std::map<std::string, std::string> producer;
};

Result<Sizes> sizes_at(const ir::Model& model, const Point& p) {
  auto copy = bound_copy(model, p);
  if (!copy.is_ok()) return copy.status().with_context("shape range: at " + point_text(p) + ": ");
  Sizes s;
  for (const ir::Node* n : copy->graph->nodes())
    for (const ir::Value* v : n->outputs()) {
      if (v == nullptr || !v->is_tensor() || v->dtype() == ir::DType::kString) continue;
      auto numel = v->shape().numel();
      if (!numel)
        return invalid_argument("shape range: value '" + v->name() + "' (output of " +
                                n->describe() + ") has shape " + v->shape().to_string() + " at " +
                                point_text(p) +
                                ": its size is not determined by the input dims, so no plan "
                                "can hold every shape of the range");
      s.bytes[v->name()] = static_cast<size_t>(*numel) * ir::dtype_size(v->dtype());
      s.producer[v->name()] = n->describe();
    }
  return s;
}

// A value larger at `lo` than at `hi` (hi >= lo in every dim) breaks the plan made at the max.
Status check_not_smaller(const Sizes& lo, const Point& plo, const Sizes& hi, const Point& phi) {
  for (const auto& [name, bytes] : lo.bytes) {
    auto it = hi.bytes.find(name);
    if (it == hi.bytes.end() || it->second >= bytes) continue;
    return invalid_argument(
        "shape range: value '" + name + "' (output of " + lo.producer.at(name) + ") is " +
        std::to_string(bytes) + " bytes at " + point_text(plo) + " but " +
        std::to_string(it->second) + " bytes at " + point_text(phi) +
        ": its size is not monotone in the input dims, so the plan made at the largest shapes "
        "cannot hold it; plan a narrower range or one shape");
  }
  return Status::ok();
}

}  // namespace

std::string dims_text(const std::vector<int64_t>& dims) {
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "x" : "") + std::to_string(dims[i]);
  return s.empty() ? "(scalar)" : s;
}

std::string range_text(const InputRange& r) {
  return r.name + "=" + dims_text(r.min) + (r.opt.empty() ? "" : ":" + dims_text(r.opt)) + ":" +
         dims_text(r.max);
}

Status check_ranges(const std::vector<InputRange>& ranges) {
  std::set<std::string> seen;
  for (const InputRange& r : ranges) {
    const std::string what = "shape range " + range_text(r);
    if (!seen.insert(r.name).second)
      return invalid_argument("input '" + r.name + "' is given more than one shape range");
    if (r.min.size() != r.max.size() || (!r.opt.empty() && r.opt.size() != r.max.size()))
      return invalid_argument(what + ": min, opt and max must have the same rank");
    for (size_t i = 0; i < r.max.size(); ++i) {
      const int64_t opt = r.opt.empty() ? r.min[i] : r.opt[i];
      if (r.min[i] < 0) return invalid_argument(what + ": negative dimension");
      if (r.min[i] > r.max[i])
        return invalid_argument(what + ": dim " + std::to_string(i) + " has min " +
                                std::to_string(r.min[i]) + " above max " +
                                std::to_string(r.max[i]));
      if (opt < r.min[i] || opt > r.max[i])
        return invalid_argument(what + ": dim " + std::to_string(i) + " has opt " +
                                std::to_string(opt) + " outside " + std::to_string(r.min[i]) +
                                ".." + std::to_string(r.max[i]));
    }
  }
  return Status::ok();
}

Status bind_range(ir::Graph& graph, const std::vector<InputRange>& ranges) {
  XOPT_RETURN_IF_ERROR(check_ranges(ranges));
  std::vector<ir::Value*> inputs = graph.runtime_inputs();
  for (const InputRange& r : ranges) {
    ir::Value* v = nullptr;
    std::string names;
    for (ir::Value* in : inputs) {
      if (in->name() == r.name) v = in;
      names += (names.empty() ? "" : ", ") + in->name();
    }
    const std::string what = "--input-shape " + range_text(r);
    if (v == nullptr)
      return invalid_argument(what + ": the model has no input '" + r.name + "' (inputs: " + names +
                              ")");
    const ir::Shape& s = v->shape();
    if (s.has_rank() && s.rank() != r.max.size())
      return invalid_argument(what + ": the input has rank " + std::to_string(s.rank()) + " " +
                              s.to_string());
    std::vector<ir::Dim> dims;
    for (size_t i = 0; i < r.max.size(); ++i) {
      const ir::Dim d = s.has_rank() ? s[i] : ir::Dim();
      const bool varies = r.min[i] != r.max[i];
      if (d.is_known() && (varies || d.value != r.max[i]))
        return invalid_argument(what + ": dimension " + std::to_string(i) + " is fixed to " +
                                std::to_string(d.value) + " by the model " + s.to_string());
      if (!varies)
        dims.emplace_back(r.max[i]);
      else
        dims.push_back(d.is_symbolic() ? d : ir::Dim::symbolic(r.name + ".d" + std::to_string(i)));
    }
    v->set_shape(ir::Shape(std::move(dims)));
  }
  return Status::ok();
}

std::vector<int64_t> range_point(const InputRange& r, double t) {
  std::vector<int64_t> dims(r.max.size());
  for (size_t i = 0; i < dims.size(); ++i)
    dims[i] = r.min[i] + static_cast<int64_t>(t * static_cast<double>(r.max[i] - r.min[i]));
  return dims;
}

Result<MemoryPlan> plan_range(const ir::Model& model, const std::vector<InputRange>& ranges,
                              const PlanOptions& options) {
  XOPT_RETURN_IF_ERROR(check_ranges(ranges));
  // The diagonal from min to max: every dim grows with t, so each point is at least the one
  // before it in every dim, and a value's size may never fall from one point to the next.
  std::vector<Point> diagonal;
  for (int k = 0; k <= kSteps; ++k) {
    Point p;
    p.label = k == 0 ? "min" : k == kSteps ? "max" : "at " + std::to_string(k) + "/8";
    for (const InputRange& r : ranges)
      p.dims[r.name] = k == kSteps ? r.max : range_point(r, static_cast<double>(k) / kSteps);
    diagonal.push_back(std::move(p));
  }
  std::vector<Sizes> sizes;
  for (const Point& p : diagonal) {
    XOPT_ASSIGN_OR_RETURN(Sizes s, sizes_at(model, p));
    if (!sizes.empty())
      XOPT_RETURN_IF_ERROR(check_not_smaller(sizes.back(), diagonal[sizes.size() - 1], s, p));
    sizes.push_back(std::move(s));
  }
  // opt lies off the diagonal when several dims vary: it must sit between min and max.
  if (std::any_of(ranges.begin(), ranges.end(),
                  [](const InputRange& r) { return !r.opt.empty(); })) {
    Point opt;
    opt.label = "opt";
    for (const InputRange& r : ranges) opt.dims[r.name] = r.opt.empty() ? r.min : r.opt;
    XOPT_ASSIGN_OR_RETURN(Sizes s, sizes_at(model, opt));
    XOPT_RETURN_IF_ERROR(check_not_smaller(sizes.front(), diagonal.front(), s, opt));
    XOPT_RETURN_IF_ERROR(check_not_smaller(s, opt, sizes.back(), diagonal.back()));
  }

  XOPT_ASSIGN_OR_RETURN(ir::Model at_min, bound_copy(model, diagonal.front()));
  XOPT_ASSIGN_OR_RETURN(MemoryPlan min_plan, plan(*at_min.graph, options));
  XOPT_ASSIGN_OR_RETURN(ir::Model at_max, bound_copy(model, diagonal.back()));
  XOPT_ASSIGN_OR_RETURN(MemoryPlan p, plan(*at_max.graph, options));
  p.input_ranges = ranges;
  p.min_arena_bytes = min_plan.arena_bytes;
  return p;
}

Status check_in_range(const MemoryPlan& plan, const std::string& input,
                      const std::vector<int64_t>& dims) {
  const InputRange* r = find_range(plan.input_ranges, input);
  if (r == nullptr) return Status::ok();
  const std::string range = dims_text(r->min) + " to " + dims_text(r->max);
  if (dims.size() != r->max.size())
    return invalid_argument("input '" + input + "' has shape " + dims_text(dims) +
                            " but the memory plan was made for rank " +
                            std::to_string(r->max.size()) + " shapes " + range);
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] < r->min[i] || dims[i] > r->max[i])
      return invalid_argument("input '" + input + "' has shape " + dims_text(dims) + ": dim " +
                              std::to_string(i) + " is " + std::to_string(dims[i]) +
                              ", outside the memory plan's range " + std::to_string(r->min[i]) +
                              ".." + std::to_string(r->max[i]) + " (" + range_text(*r) + ")");
  return Status::ok();
}

}  // namespace xopt::planner
