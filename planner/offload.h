// Parameter offload: when the parameters, the activation arena and the workspace do not fit a
// device-memory budget, some weights stay in pinned host memory and each is copied into a device
// staging region shortly before the first node that reads it, on a copy stream, while earlier
// nodes compute (the design notes' "parameter offload with prefetch"; TensorRT's weight streaming
// is the nearest peer, but it decides at run time).
//
// The schedule is a plan, made before anything runs and stored in the model
// (metadata_props["xopt.offload"]) next to the memory plan:
//
//   step:     0    1    2  ...  p_w  ...  u_w  ...  l_w  ...
//   compute:  [n0] [n1] [n2]      [..]     [u_w reads w]  [l_w: last reader of w]
//   copy:                    copy w -> staging[offset_w]   (after step p_w - 1 is done)
//
// - Copies run on one copy stream in the schedule's order (by first use); copy w waits for the
//   compute stream to finish step p_w - 1 (p_w = 0: for the inference to start), so every byte of
//   staging it overwrites belongs to a weight whose last reader is done.
// - Node u_w (w's first reader) waits for w's copy.
// - w holds staging[offset_w, offset_w + size_w) from step p_w to l_w: the staging region is an
//   offset assignment over those intervals (planner/intervals.h), with its own lower bound.
//
// Choice (offload_plan): the budget counts the session's device allocations: resident parameters
// + staging + arena + workspace + the I/O region; the CUDA context is outside it (reported beside
// it). Weights are offloaded largest first, each copied just before its first reader, until the
// total fits; then the budget left is spent moving copies earlier (longer prefetch distance, more
// staging) where the predicted timeline says compute waits for a copy. The prediction is a
// two-stream simulation with per-node times from planner/cost_model.h (or a profile) and the
// host-to-device bandwidth.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "ir/graph.h"
#include "planner/cost_model.h"
#include "planner/memory_plan.h"

namespace xopt::planner {

inline constexpr const char* kOffloadMetadataKey = "xopt.offload";

struct OffloadedWeight {
  std::string name;       // the initializer
  size_t bytes = 0;       // exact tensor bytes
  size_t size = 0;        // aligned bytes it takes in staging
  size_t offset = 0;      // in the staging region
  int prefetch_step = 0;  // its copy starts once step prefetch_step - 1 is done
  int first_use = 0;      // first step that reads it (waits for the copy)
  int last_use = 0;       // last step that reads it (its staging bytes are free after it)
  double copy_ms = 0;     // bytes / host-to-device bandwidth
};

struct OffloadPlan {
  size_t budget = 0;  // device bytes allowed (context not included)
  size_t alignment = 256;
  size_t parameters = 0;                 // every parameter, aligned (as if none were offloaded)
  size_t resident_parameters = 0;        // those left on the device
  size_t offloaded_bytes = 0;            // aligned bytes kept in pinned host memory
  size_t staging_bytes = 0;              // the staging region
  size_t staging_lower_bound = 0;        // max bytes of staging live at one step
  size_t activations = 0;                // arena + workspace + I/O region, as planned
  size_t device_total = 0;               // resident_parameters + staging_bytes + activations
  std::vector<OffloadedWeight> weights;  // in copy order (first use, then name)
  int steps = 0;                         // the plan's node count
  // The prediction: compute alone (every weight resident) and with the copies' waits.
  double h2d_bytes_per_ms = 0;
  std::string h2d_source;
  std::string node_time_source;  // "roofline estimate" or "profile"
  double predicted_ms_resident = 0;
  double predicted_ms = 0;
  double predicted_slowdown() const {
    return predicted_ms_resident > 0 ? predicted_ms / predicted_ms_resident : 1.0;
  }
};

struct OffloadOptions {
  size_t budget = 0;
  DeviceModel device;
  // Per node of the plan's order, in ms (e.g. from `xopt bench --profile`); empty: the roofline
  // estimate of planner/cost_model.h.
  std::vector<double> node_ms;
  // Weights smaller than this stay resident (their copies would cost more in launches and
  // events than they save).
  size_t min_weight_bytes = 64 << 10;
};

// The device bytes the model takes with no offload (parameters + arena + workspace + I/O region).
size_t device_bytes_without_offload(const ir::Graph& graph, const MemoryPlan& plan);

// The offload schedule for `graph` run in `order` (the plan's node order) under `options.budget`.
// nullopt-like empty plan (no weights) when everything fits. An error says by how many bytes the
// budget is short when even offloading every weight cannot meet it.
Result<OffloadPlan> offload_plan(const ir::Graph& graph, const std::vector<const ir::Node*>& order,
                                 const MemoryPlan& plan, const OffloadOptions& options);

// The two-stream simulation behind the prediction: the end of the last step, given each weight's
// schedule and each step's compute time. Also used by tests to prove the schedule's claims.
struct Timeline {
  std::vector<double> step_start, step_end;  // compute stream, per step
  std::vector<double> copy_start, copy_end;  // copy stream, per weight (plan order)
  double total_ms = 0;
};
Timeline simulate_offload(const OffloadPlan& plan, const std::vector<double>& node_ms);

// Proves the schedule's invariants: steps in range (prefetch <= first use <= last use < steps),
// prefetch steps non-decreasing in copy order, every weight inside the staging region, no two
// weights live together sharing staging bytes, figures that add up. The error names the weights.
Status check_offload(const OffloadPlan& plan);

// A few lines for people (plan-info, the optimizer's summary); `weights` adds one line per
// offloaded weight (staging offset, steps, copy time).
std::string offload_text(const OffloadPlan& plan, bool weights = false);

std::string offload_to_json(const OffloadPlan& plan);
Result<OffloadPlan> offload_from_json(const std::string& json);

void write_offload(ir::Model& model, const OffloadPlan& plan);
// nullopt when the model has no offload schedule; an error when its record cannot be read.
Result<std::optional<OffloadPlan>> read_offload(const ir::Model& model);

}  // namespace xopt::planner
