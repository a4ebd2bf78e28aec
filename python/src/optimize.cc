// xopt._xopt.optimize: the pipeline library called directly (pipeline/pipeline.h). The keywords
// become a pipeline::Request (the command line's flags in text, so both take the same values and
// give the same messages), the pipeline runs with the GIL released, its progress goes to a Python
// callable, and the outcome comes back as data (JSON documents the package turns into its types).
#include "python/src/optimize.h"

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "passes/pass_registry.h"
#include "pipeline/pipeline.h"
#include "pipeline/request.h"
#include "planner/memory_breakdown.h"
#include "planner/memory_plan.h"
#include "planner/report.h"
#include "python/src/errors.h"
#include "python/src/keywords.h"
#include "tools/xopt/command.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace xopt::python {
namespace {

using pipeline::Request;

// Sets the Request field `key` names (the command line's flag, '_' for '-'); false when there is
// no such field.
bool set_field(Request& r, const std::string& key, const nb::handle& v) {
  static const std::map<std::string, std::string Request::*> kText = {
      {"model", &Request::model},
      {"output", &Request::output},
      {"passes", &Request::passes},
      {"print_dir", &Request::print_dir},
      {"stats_json", &Request::stats_json},
      {"external_data", &Request::external_data},
      {"fold_max_bytes", &Request::fold_max_bytes},
      {"max_batch", &Request::max_batch},
      {"report", &Request::report_dir},
      {"dot", &Request::dot_dir},
      {"mem_budget", &Request::mem_budget}};
  static const std::map<std::string, bool Request::*> kFlags = {
      {"verify_each", &Request::verify_each},
      {"io_in_arena", &Request::io_in_arena},
      {"workspace_in_arena", &Request::workspace_in_arena}};
  static const std::map<std::string, std::vector<std::string> Request::*> kLists = {
      {"disable_pass", &Request::disable},
      {"print_after", &Request::print_after},
      {"input_shape", &Request::input_shapes}};
  if (auto it = kText.find(key); it != kText.end()) return (r.*(it->second) = text_of(v), true);
  if (auto it = kFlags.find(key); it != kFlags.end())
    return (r.*(it->second) = nb::cast<bool>(v), true);
  if (auto it = kLists.find(key); it != kLists.end()) return (r.*(it->second) = list_of(v), true);
  if (key == "batch") return (r.batch = nb::cast<int64_t>(v), true);
  if (key == "align") return (r.align = nb::cast<size_t>(v), true);
  if (key == "h2d_bandwidth") return (r.h2d_gbps = nb::cast<double>(v), true);
  return false;
}

Request request_of(const nb::dict& options) {
  Request r;
  for (auto [k, v] : options) {
    const std::string key = nb::cast<std::string>(k);
    if (v.is_none()) continue;
    bool known = false;
    try {
      known = set_field(r, key, v) || set_device_field(r.device, key, v);
    } catch (const nb::cast_error&) {
      raise_error(tool::kExitUsage, key + ": cannot take " + text_of(nb::repr(v)),
                  "invalid argument");
    }
    if (!known) raise_error(tool::kExitUsage, "unknown option '" + key + "'", "invalid argument");
  }
  return r;
}

// The observer, calling `progress(kind, name, nodes)` with the GIL held; the first exception the
// callable raises stops further calls and is raised once the pipeline returns.
struct PythonProgress {
  nb::object callable;
  std::unique_ptr<nb::python_error> error;

  void call(const char* kind, const std::string& name, size_t nodes) {
    nb::gil_scoped_acquire gil;
    if (error) return;
    try {
      callable(kind, name, nodes);
    } catch (nb::python_error& e) {
      error = std::make_unique<nb::python_error>(std::move(e));
    }
  }

  pipeline::Observer observer() {
    pipeline::Observer o;
    if (callable.is_none()) return o;
    o.step = [this](const std::string& what) { call("step", what, 0); };
    o.pass_start = [this](const std::string& pass, size_t nodes) { call("pass", pass, nodes); };
    return o;
  }
};

nb::object text_or_none(bool has, const std::function<std::string()>& text) {
  if (!has) return nb::none();
  return nb::cast(text());
}

nb::dict outcome_dict(const pipeline::Outcome& out) {
  nb::dict d;
  d["output"] = out.output;
  d["stats"] = passes::stats_to_json(out.stats).dump();
  const bool planned = out.plan.has_value();
  const planner::OffloadPlan* offload = out.offload ? &*out.offload : nullptr;
  d["plan"] = text_or_none(planned, [&] { return plan_document(out.plan->plan, offload); });
  d["report"] =
      text_or_none(planned, [&] { return planner::report_json(out.plan->plan, offload); });
  d["offload"] =
      text_or_none(out.offload.has_value(), [&] { return planner::offload_to_json(*out.offload); });
  if (planned && out.plan->batch_searched)
    d["max_batch"] = out.plan->fit.batch;
  else
    d["max_batch"] = nb::none();
  nb::dict provenance;
  for (const auto& [node, originals] : out.provenance) provenance[node.c_str()] = originals;
  d["provenance"] = provenance;
  return d;
}

nb::dict optimize(const nb::dict& options, nb::object progress) {
  auto request = pipeline::options_from_request(request_of(options));
  if (!request.is_ok()) raise_status(request.status());
  PythonProgress watcher{std::move(progress), nullptr};
  const pipeline::Observer observer = watcher.observer();
  std::optional<Result<pipeline::Outcome>> out;
  {
    nb::gil_scoped_release release;
    out.emplace(pipeline::optimize(*request, &observer));
  }
  if (watcher.error) {
    watcher.error->restore();
    throw nb::python_error();
  }
  if (!out->is_ok()) raise_status(out->status());
  return outcome_dict(out->value());
}

// (name, "group" or "pass", description, fixpoint, members) for every group and pass.
nb::list registry() {
  const auto& reg = passes::PassRegistry::global();
  nb::list out;
  for (const auto* g : reg.groups())
    out.append(nb::make_tuple(g->name, "group", g->description, g->fixpoint, reg.members(g->name)));
  for (const auto* p : reg.passes())
    out.append(nb::make_tuple(p->name, "pass", p->description, false, std::vector<std::string>{}));
  return out;
}

}  // namespace

std::string plan_document(const planner::MemoryPlan& plan, const planner::OffloadPlan* offload) {
  auto doc = nlohmann::json::parse(planner::plan_to_json(plan));
  doc["memory_breakdown"] =
      nlohmann::json::parse(planner::breakdown_json(planner::memory_breakdown(plan, offload)));
  return doc.dump();
}

void bind_pipeline(nb::module_& m) {
  m.def("optimize", &optimize, "options"_a, "progress"_a = nb::none(),
        "Runs the pipeline library on the options (the command line's flags as keywords, '_' for "
        "'-'), the GIL released; progress(kind, name, nodes) is called for each long step "
        "('step') and each pass start ('pass'). Returns the outcome as a dict of JSON documents.");
  m.def("registry", &registry,
        "The registered groups and passes: (name, kind, description, "
        "fixpoint, members).");
}

}  // namespace xopt::python
