#include "planner/offload.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "planner/intervals.h"
#include "planner/planner.h"
#include "planner/strategies.h"

namespace xopt::planner {
namespace {

std::string mib(size_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return buf;
}

// Places every weight's [prefetch_step, last_use] interval in staging; the smaller of two
// strategies' regions wins.
void place_staging(OffloadPlan& p) {
  std::vector<Buffer> buffers;
  buffers.reserve(p.weights.size());
  for (const OffloadedWeight& w : p.weights)
    buffers.push_back({w.size, w.prefetch_step, w.last_use});
  Assignment best = assign_best_fit_decreasing(buffers);
  Assignment by_size = assign_greedy_by_size(buffers);
  if (by_size.arena < best.arena) best = std::move(by_size);
  for (size_t i = 0; i < p.weights.size(); ++i) p.weights[i].offset = best.offsets[i];
  p.staging_bytes = best.arena;
  p.staging_lower_bound = peak_bytes(buffers);
  p.offloaded_bytes = 0;
  for (const OffloadedWeight& w : p.weights) p.offloaded_bytes += w.size;
  p.resident_parameters = p.parameters - p.offloaded_bytes;
  p.device_total = p.resident_parameters + p.staging_bytes + p.activations;
}

void sort_copy_order(std::vector<OffloadedWeight>& ws) {
  std::sort(ws.begin(), ws.end(), [](const OffloadedWeight& a, const OffloadedWeight& b) {
    return a.first_use != b.first_use ? a.first_use < b.first_use : a.name < b.name;
  });
}

// Copies leave in copy order, so a copy cannot start before an earlier one's step: prefetch steps
// are made non-decreasing (moving a copy earlier moves the copies before it at least as early).
void set_prefetch(std::vector<OffloadedWeight>& ws, size_t i, int step) {
  ws[i].prefetch_step = step;
  for (size_t j = i; j-- > 0;) ws[j].prefetch_step = std::min(ws[j].prefetch_step, step);
}

}  // namespace

size_t device_bytes_without_offload(const ir::Graph& graph, const MemoryPlan& plan) {
  return parameter_bytes(graph, plan.alignment) + plan.arena_bytes + plan.workspace_bytes +
         io_region_bytes(graph, plan);
}

Timeline simulate_offload(const OffloadPlan& p, const std::vector<double>& node_ms) {
  Timeline t;
  const size_t n = node_ms.size(), w = p.weights.size();
  t.step_start.assign(n, 0);
  t.step_end.assign(n, 0);
  t.copy_start.assign(w, 0);
  t.copy_end.assign(w, 0);
  std::vector<std::vector<size_t>> first_readers(n);
  for (size_t i = 0; i < w; ++i)
    if (p.weights[i].first_use >= 0 && static_cast<size_t>(p.weights[i].first_use) < n)
      first_readers[static_cast<size_t>(p.weights[i].first_use)].push_back(i);
  size_t next = 0;
  double copy_free = 0;
  for (size_t k = 0; k < n; ++k) {
    // Copies whose step has come leave in order, each once the step before its prefetch step is
    // done and the copy before it has finished.
    while (next < w && p.weights[next].prefetch_step <= static_cast<int>(k)) {
      const int ps = p.weights[next].prefetch_step;
      const double ready = ps <= 0 ? 0.0 : t.step_end[static_cast<size_t>(ps - 1)];
      t.copy_start[next] = std::max(copy_free, ready);
      t.copy_end[next] = t.copy_start[next] + p.weights[next].copy_ms;
      copy_free = t.copy_end[next];
      ++next;
    }
    double start = k == 0 ? 0.0 : t.step_end[k - 1];
    for (size_t i : first_readers[k]) start = std::max(start, t.copy_end[i]);
    t.step_start[k] = start;
    t.step_end[k] = start + node_ms[k];
  }
  t.total_ms = n == 0 ? 0.0 : t.step_end[n - 1];
  return t;
}

Result<OffloadPlan> offload_plan(const ir::Graph& graph, const std::vector<const ir::Node*>& order,
                                 const MemoryPlan& plan, const OffloadOptions& options) {
  OffloadPlan p;
  p.budget = options.budget;
  p.alignment = plan.alignment;
  p.steps = static_cast<int>(order.size());
  p.parameters = parameter_bytes(graph, plan.alignment);
  p.activations = plan.arena_bytes + plan.workspace_bytes + io_region_bytes(graph, plan);
  p.h2d_bytes_per_ms = options.device.h2d_bytes_per_ms;
  p.h2d_source = options.device.h2d_source;
  if (p.h2d_bytes_per_ms <= 0)
    return invalid_argument("offload: host-to-device bandwidth must be positive");
  std::vector<double> node_ms = options.node_ms;
  p.node_time_source = "profile";
  if (node_ms.empty()) {
    node_ms = estimate_node_ms(order, options.device);
    p.node_time_source = "roofline estimate";
  }
  if (node_ms.size() != order.size())
    return invalid_argument("offload: " + std::to_string(node_ms.size()) +
                            " node times for a plan of " + std::to_string(order.size()) + " nodes");
  for (double ms : node_ms) p.predicted_ms_resident += ms;
  place_staging(p);
  p.predicted_ms = p.predicted_ms_resident;
  if (p.device_total <= p.budget) return p;  // everything fits: nothing offloaded

  // Candidates: weights read by the planned nodes directly (not from inside a subgraph), large
  // enough to be worth a copy.
  std::unordered_map<const ir::Node*, int> step_of;
  for (size_t s = 0; s < order.size(); ++s) step_of[order[s]] = static_cast<int>(s);
  std::vector<OffloadedWeight> candidates;
  for (const ir::Value* v : graph.initializers()) {
    if (v->initializer() == nullptr || !v->is_constant()) continue;
    if (std::any_of(v->uses().begin(), v->uses().end(),
                    [](const ir::Use& u) { return u.index < 0; }))
      continue;  // read from inside a subgraph: resident
    const size_t bytes = v->initializer()->nbytes();
    if (bytes < options.min_weight_bytes) continue;
    OffloadedWeight w;
    w.name = v->name();
    w.bytes = bytes;
    w.size = align_up(bytes, plan.alignment);
    w.copy_ms = static_cast<double>(bytes) / p.h2d_bytes_per_ms;
    w.first_use = p.steps;
    w.last_use = -1;
    for (const ir::Use& use : v->uses()) {
      auto it = step_of.find(use.node);
      if (it == step_of.end()) continue;
      w.first_use = std::min(w.first_use, it->second);
      w.last_use = std::max(w.last_use, it->second);
    }
    if (w.last_use < 0) continue;  // read by no planned node
    w.prefetch_step = w.first_use;
    candidates.push_back(std::move(w));
  }
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const OffloadedWeight& a, const OffloadedWeight& b) {
                     return a.size != b.size ? a.size > b.size : a.name < b.name;
                   });

  // 1. Largest first, each copied just before its first reader (the least staging), until the
  //    device total fits.
  for (const OffloadedWeight& c : candidates) {
    p.weights.push_back(c);
    sort_copy_order(p.weights);
    // A new weight may sit before copies already scheduled: keep prefetch steps monotone.
    for (size_t i = p.weights.size(); i-- > 1;)
      p.weights[i - 1].prefetch_step =
          std::min(p.weights[i - 1].prefetch_step, p.weights[i].prefetch_step);
    place_staging(p);
    if (p.device_total <= p.budget) break;
  }
  if (p.device_total > p.budget) {
    return invalid_argument(
        "--mem-budget " + mib(p.budget) + " is " + mib(p.device_total - p.budget) +
        " short: with every weight of at least " + mib(options.min_weight_bytes) +
        " offloaded the device still needs " + mib(p.device_total) + " (activations, workspace " +
        "and I/O " + mib(p.activations) + ", staging " + mib(p.staging_bytes) +
        ", resident parameters " + mib(p.resident_parameters) + "; the CUDA context comes on top)");
  }

  // 2. Spend what the budget leaves on prefetch distance: a copy that compute would wait for
  //    starts earlier, as early as hides it (on the timeline without waits) and the budget allows.
  std::vector<double> prefix(node_ms.size() + 1, 0.0);
  for (size_t i = 0; i < node_ms.size(); ++i) prefix[i + 1] = prefix[i] + node_ms[i];
  p.predicted_ms = simulate_offload(p, node_ms).total_ms;
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t i = 0; i < p.weights.size(); ++i) {
      const OffloadedWeight& w = p.weights[i];
      if (w.prefetch_step == 0) continue;
      // The latest step whose start leaves copy_ms of compute before the first reader.
      int hide = w.first_use;
      while (hide > 0 &&
             prefix[static_cast<size_t>(w.first_use)] - prefix[static_cast<size_t>(hide)] <
                 w.copy_ms)
        --hide;
      if (hide >= w.prefetch_step) continue;
      // The earliest step in [hide, current] the budget allows (staging grows as copies move
      // earlier; binary search on that).
      auto fits = [&](int step) {
        OffloadPlan trial = p;
        set_prefetch(trial.weights, i, step);
        place_staging(trial);
        return trial.device_total <= trial.budget;
      };
      int lo = hide, hi = w.prefetch_step;  // hi always fits
      while (lo < hi) {
        const int mid = lo + (hi - lo) / 2;
        if (fits(mid))
          hi = mid;
        else
          lo = mid + 1;
      }
      if (hi == w.prefetch_step) continue;
      OffloadPlan trial = p;
      set_prefetch(trial.weights, i, hi);
      place_staging(trial);
      const double ms = simulate_offload(trial, node_ms).total_ms;
      if (ms < p.predicted_ms && trial.device_total <= trial.budget) {
        p = std::move(trial);
        p.predicted_ms = ms;
      }
    }
  }
  XOPT_RETURN_IF_ERROR(
      check_offload(p).with_context("offload planner produced an invalid schedule: "));
  return p;
}

Status check_offload(const OffloadPlan& p) {
  std::vector<Buffer> buffers;
  size_t offloaded = 0;
  std::map<std::string, size_t> seen;
  for (size_t i = 0; i < p.weights.size(); ++i) {
    const OffloadedWeight& w = p.weights[i];
    const std::string name = "offloaded weight '" + w.name + "'";
    if (!seen.emplace(w.name, i).second) return invalid_model(name + " is listed twice");
    if (w.prefetch_step < 0 || w.prefetch_step > w.first_use || w.first_use > w.last_use ||
        w.last_use >= p.steps)
      return invalid_model(name + ": steps out of order or range (prefetch " +
                           std::to_string(w.prefetch_step) + ", first use " +
                           std::to_string(w.first_use) + ", last use " +
                           std::to_string(w.last_use) + ", " + std::to_string(p.steps) + " steps)");
    if (w.size < w.bytes || w.size != align_up(w.bytes, p.alignment))
      return invalid_model(name + ": staging size " + std::to_string(w.size) + " does not hold " +
                           std::to_string(w.bytes) + " bytes aligned to " +
                           std::to_string(p.alignment));
    if (w.offset % p.alignment != 0)
      return invalid_model(name + ": staging offset " + std::to_string(w.offset) +
                           " is not aligned to " + std::to_string(p.alignment));
    if (w.offset > p.staging_bytes || w.size > p.staging_bytes - w.offset)
      return invalid_model(name + " ends past the staging region (" +
                           std::to_string(p.staging_bytes) + " bytes)");
    if (i > 0) {
      const OffloadedWeight& prev = p.weights[i - 1];
      if (prev.first_use > w.first_use || prev.prefetch_step > w.prefetch_step)
        return invalid_model(name + " is copied after '" + prev.name +
                             "' but is read first or prefetched earlier");
    }
    buffers.push_back({w.size, w.prefetch_step, w.last_use});
    offloaded += w.size;
  }
  for (size_t i = 0; i < p.weights.size(); ++i)
    for (size_t j = i + 1; j < p.weights.size(); ++j) {
      const OffloadedWeight &a = p.weights[i], &b = p.weights[j];
      if (live_together(buffers[i], buffers[j]) && a.offset < b.offset + b.size &&
          b.offset < a.offset + a.size)
        return invalid_model("offloaded weights '" + a.name + "' and '" + b.name +
                             "' are in staging at the same steps and share bytes");
    }
  if (offloaded != p.offloaded_bytes || p.offloaded_bytes > p.parameters ||
      p.resident_parameters != p.parameters - p.offloaded_bytes ||
      p.device_total != p.resident_parameters + p.staging_bytes + p.activations)
    return invalid_model("offload schedule: its byte figures do not add up");
  return Status::ok();
}

std::string offload_text(const OffloadPlan& p, bool weights) {
  char buf[512];
  std::string out;
  if (p.weights.empty()) {
    std::snprintf(buf, sizeof buf,
                  "offload: none (the device needs %s of the %s budget; context not included)\n",
                  mib(p.device_total).c_str(), mib(p.budget).c_str());
    return buf;
  }
  std::snprintf(
      buf, sizeof buf,
      "offload: %zu weights (%s) in pinned host memory, %s resident; staging %s (lower "
      "bound %s)\n"
      "  device %s of the %s budget (parameters %s + staging %s + activations, "
      "workspace and I/O %s; context not included)\n"
      "  predicted %.3f ms vs %.3f ms resident (%.2fx; node times: %s; host-to-device "
      "%.1f GB/s, %s)\n",
      p.weights.size(), mib(p.offloaded_bytes).c_str(), mib(p.resident_parameters).c_str(),
      mib(p.staging_bytes).c_str(), mib(p.staging_lower_bound).c_str(), mib(p.device_total).c_str(),
      mib(p.budget).c_str(), mib(p.resident_parameters).c_str(), mib(p.staging_bytes).c_str(),
      mib(p.activations).c_str(), p.predicted_ms, p.predicted_ms_resident, p.predicted_slowdown(),
      p.node_time_source.c_str(), p.h2d_bytes_per_ms / 1e6, p.h2d_source.c_str());
  out = buf;
  if (weights)
    for (const OffloadedWeight& w : p.weights) {
      const std::string when = w.prefetch_step == 0
                                   ? std::string("copy at the start")
                                   : "copy after step " + std::to_string(w.prefetch_step - 1);
      std::snprintf(buf, sizeof buf,
                    "  %-40s %10zu bytes at staging +%-10zu %s, read at steps %d..%d (%.3f ms)\n",
                    w.name.c_str(), w.bytes, w.offset, when.c_str(), w.first_use, w.last_use,
                    w.copy_ms);
      out += buf;
    }
  return out;
}

std::string offload_to_json(const OffloadPlan& p) {
  nlohmann::json ws = nlohmann::json::array();
  for (const OffloadedWeight& w : p.weights)
    ws.push_back({{"name", w.name},
                  {"bytes", w.bytes},
                  {"size", w.size},
                  {"offset", w.offset},
                  {"prefetch_step", w.prefetch_step},
                  {"first_use", w.first_use},
                  {"last_use", w.last_use},
                  {"copy_ms", w.copy_ms}});
  nlohmann::json j = {{"format", "xopt.offload"},
                      {"version", 1},
                      {"budget", p.budget},
                      {"alignment", p.alignment},
                      {"steps", p.steps},
                      {"parameters", p.parameters},
                      {"resident_parameters", p.resident_parameters},
                      {"offloaded_bytes", p.offloaded_bytes},
                      {"staging_bytes", p.staging_bytes},
                      {"staging_lower_bound", p.staging_lower_bound},
                      {"activations", p.activations},
                      {"device_total", p.device_total},
                      {"h2d_bytes_per_ms", p.h2d_bytes_per_ms},
                      {"h2d_source", p.h2d_source},
                      {"node_time_source", p.node_time_source},
                      {"predicted_ms_resident", p.predicted_ms_resident},
                      {"predicted_ms", p.predicted_ms},
                      {"weights", ws}};
  return j.dump();
}

Result<OffloadPlan> offload_from_json(const std::string& text) {
  try {
    auto j = nlohmann::json::parse(text);
    if (j.value("format", "") != "xopt.offload")
      return invalid_model("offload schedule: not an xopt.offload document");
    if (j.value("version", 0) != 1)
      return unsupported("offload schedule: version " + std::to_string(j.value("version", 0)) +
                         " (this xopt reads 1)");
    OffloadPlan p;
    p.budget = j.at("budget").get<size_t>();
    p.alignment = j.at("alignment").get<size_t>();
    p.steps = j.at("steps").get<int>();
    p.parameters = j.at("parameters").get<size_t>();
    p.resident_parameters = j.at("resident_parameters").get<size_t>();
    p.offloaded_bytes = j.at("offloaded_bytes").get<size_t>();
    p.staging_bytes = j.at("staging_bytes").get<size_t>();
    p.staging_lower_bound = j.at("staging_lower_bound").get<size_t>();
    p.activations = j.at("activations").get<size_t>();
    p.device_total = j.at("device_total").get<size_t>();
    p.h2d_bytes_per_ms = j.at("h2d_bytes_per_ms").get<double>();
    p.h2d_source = j.value("h2d_source", "");
    p.node_time_source = j.value("node_time_source", "");
    p.predicted_ms_resident = j.at("predicted_ms_resident").get<double>();
    p.predicted_ms = j.at("predicted_ms").get<double>();
    for (const auto& e : j.at("weights")) {
      OffloadedWeight w;
      w.name = e.at("name").get<std::string>();
      w.bytes = e.at("bytes").get<size_t>();
      w.size = e.at("size").get<size_t>();
      w.offset = e.at("offset").get<size_t>();
      w.prefetch_step = e.at("prefetch_step").get<int>();
      w.first_use = e.at("first_use").get<int>();
      w.last_use = e.at("last_use").get<int>();
      w.copy_ms = e.at("copy_ms").get<double>();
      p.weights.push_back(std::move(w));
    }
    if (p.alignment == 0) return invalid_model("offload schedule: alignment 0");
    XOPT_RETURN_IF_ERROR(check_offload(p));
    return p;
  } catch (const nlohmann::json::exception& e) {
    return invalid_model(std::string("offload schedule: ") + e.what());
  }
}

void write_offload(ir::Model& model, const OffloadPlan& plan) {
  model.set_metadata(kOffloadMetadataKey, offload_to_json(plan));
}

Result<std::optional<OffloadPlan>> read_offload(const ir::Model& model) {
  auto text = model.metadata(kOffloadMetadataKey);
  if (!text) return std::optional<OffloadPlan>();
  XOPT_ASSIGN_OR_RETURN(OffloadPlan p, offload_from_json(*text));
  return std::optional<OffloadPlan>(std::move(p));
}

}  // namespace xopt::planner
