// xopt._xopt.validate: pipeline/validate.h called directly. The keywords are `xopt validate`'s
// flags ('_' for '-'), the runs go with the GIL released, and every comparison table comes back
// as data beside the text the command line prints.
#include "python/src/validate.h"

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/onnx_io.h"
#include "pipeline/validate.h"
#include "python/src/errors.h"
#include "python/src/keywords.h"
#include "tools/xopt/command.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace xopt::python {
namespace {

using pipeline::ValidateRequest;

// `xopt validate A [B]` as keywords: the models, their input shapes and the request.
struct ValidateCall {
  std::string a, b;
  std::vector<std::string> input_shapes;
  int64_t batch = 0;
  ValidateRequest request;
};

// Sets the field `key` names; false when there is no such field.
bool set_field(ValidateCall& c, const std::string& key, const nb::handle& v) {
  static const std::map<std::string, std::string ValidateRequest::*> kText = {
      {"data", &ValidateRequest::data}, {"json", &ValidateRequest::json}};
  static const std::map<std::string, std::vector<std::string> ValidateRequest::*> kLists = {
      {"input", &ValidateRequest::inputs}, {"input_range", &ValidateRequest::ranges}};
  static const std::map<std::string, bool ValidateRequest::*> kFlags = {
      {"random_inputs", &ValidateRequest::random}, {"no_plan", &ValidateRequest::no_plan}};
  static const std::map<std::string, double ValidateRequest::*> kNumbers = {
      {"rtol", &ValidateRequest::rtol}, {"atol", &ValidateRequest::atol}};
  ValidateRequest& r = c.request;
  if (key == "a") return (c.a = text_of(v), true);
  if (key == "b") return (c.b = text_of(v), true);
  if (key == "input_shape") return (c.input_shapes = list_of(v), true);
  if (key == "batch") return (c.batch = nb::cast<int64_t>(v), true);
  if (key == "seed") return (r.seed = nb::cast<uint64_t>(v), true);
  if (auto it = kText.find(key); it != kText.end()) return (r.*(it->second) = text_of(v), true);
  if (auto it = kLists.find(key); it != kLists.end()) return (r.*(it->second) = list_of(v), true);
  if (auto it = kFlags.find(key); it != kFlags.end())
    return (r.*(it->second) = nb::cast<bool>(v), true);
  if (auto it = kNumbers.find(key); it != kNumbers.end())
    return (r.*(it->second) = nb::cast<double>(v), true);
  return set_device_field(r.device, key, v);
}

ValidateCall call_of(const nb::dict& options) {
  ValidateCall c;
  for (auto [k, v] : options) {
    const std::string key = nb::cast<std::string>(k);
    if (v.is_none()) continue;
    bool known = false;
    try {
      known = set_field(c, key, v);
    } catch (const nb::cast_error&) {
      raise_error(tool::kExitUsage, key + ": cannot take " + text_of(nb::repr(v)),
                  "invalid argument");
    }
    if (!known) raise_error(tool::kExitUsage, "unknown option '" + key + "'", "invalid argument");
  }
  return c;
}

ir::Model load(const std::string& path) {
  auto m = ir::load_model(path);
  if (!m.is_ok()) raise_status(m.status(), path);
  return std::move(m).value();
}

nb::dict diff_to_dict(const exec::TensorDiff& d) {
  nb::dict row;
  row["name"] = d.name;
  row["dtype"] = std::string(ir::dtype_name(d.dtype));
  row["shape"] = d.dims;
  row["problem"] = d.problem;
  row["max_abs"] = d.max_abs;
  row["max_ref"] = d.max_ref;
  row["max_rel"] = d.max_rel;
  row["cosine"] = d.cosine;
  row["worst_index"] = d.worst_index;
  row["unequal"] = d.unequal;
  row["nonfinite_mismatch"] = d.nonfinite_mismatch;
  row["ok"] = d.ok;
  return row;
}

// (passed, [(title, rows)], the text `xopt validate` prints on stdout, the verdict line); errors
// other than a mismatch raise as the command line reports them.
nb::tuple validate(const nb::dict& options) {
  const ValidateCall c = call_of(options);
  if (c.a.empty()) raise_error(tool::kExitUsage, "validate: no model given", "invalid argument");
  auto shapes = pipeline::validation_shapes(c.input_shapes, c.batch);
  if (!shapes.is_ok()) raise_status(shapes.status());
  const ir::Model a = load(c.a);
  std::optional<ir::Model> b;
  if (!c.b.empty()) b.emplace(load(c.b));
  pipeline::ValidationOutcome out;
  Status st;
  {
    nb::gil_scoped_release release;
    st = pipeline::validate_models(a, b ? &*b : nullptr, c.request, *shapes, c.a, c.b, &out);
  }
  if (!st.is_ok()) raise_status(st);
  nb::list tables;
  for (const pipeline::ValidationTable& t : out.tables) {
    nb::list rows;
    for (const exec::TensorDiff& d : t.diffs) rows.append(diff_to_dict(d));
    tables.append(nb::make_tuple(t.title, rows));
  }
  const std::string verdict = pipeline::validation_verdict(out);
  std::string text = pipeline::validation_text(out);
  if (out.passed()) text += verdict + "\n";
  return nb::make_tuple(out.passed(), tables, text, verdict);
}

}  // namespace

void bind_validate(nb::module_& m) {
  m.def("validate", &validate, "options"_a,
        "Runs the validation library on the options (`xopt validate`'s flags as keywords, '_' "
        "for '-'; the models as `a` and `b`), the GIL released. Returns (passed, [(title, "
        "rows)], text, verdict).");
}

}  // namespace xopt::python
