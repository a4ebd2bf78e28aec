// What a CUDA session allocates and where every tensor lives, decided from the model and its plan
// alone: no device, no CUDA call. Session::create (executor/cuda/session.cc) lays the session out
// first, then allocates exactly the regions named here and binds each node's launch to the slices
// named here. Following XLA's GPU compiler (buffer assignment before the thunk sequence), the
// layout is data that a CPU test can read: which regions of which size a plan asks for, and which
// slice each node reads, writes and scratches in.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "ir/graph.h"
#include "planner/memory_plan.h"
#include "planner/offload.h"
#include "planner/shared_arena.h"

namespace xopt::cuda {

// The session's device regions (one allocation each; the workspace region is sized after the
// kernels are compiled, executor/cuda/session_phases.h).
enum class Region { kParameters, kArena, kIo, kStaging };
const char* region_name(Region r);  // "parameters", "arena", "io", "staging"

// A tensor's place: bytes at `offset` in `region`, with its static element type and dims.
struct Slice {
  Region region = Region::kArena;
  size_t offset = 0;
  ir::DType dtype = ir::DType::kUndefined;
  std::vector<int64_t> dims;
  size_t nbytes() const;
  bool operator==(const Slice& o) const {
    return region == o.region && offset == o.offset && dtype == o.dtype && dims == o.dims;
  }
};

// One offloaded weight (planner/offload.h): copied from its bytes of the pinned host buffer into
// its staging slice before step `prefetch_step`; step `first_use` waits for the copy.
struct OffloadCopy {
  const ir::Value* weight = nullptr;
  size_t host_offset = 0;
  size_t staging_offset = 0;
  size_t bytes = 0;
  int prefetch_step = 0;
  int first_use = 0;
};

// One node, bound to its planned slices (parallel to its inputs and outputs; nullopt for an
// omitted optional one) and to its scratch.
struct NodeBinding {
  const ir::Node* node = nullptr;
  std::vector<std::optional<Slice>> inputs, outputs;
  // Where its workspace starts in the arena, when the plan keeps workspace there; nullopt: the
  // workspace region.
  std::optional<size_t> workspace_offset;
  // The workspace it may request. With `soft_limit` (measuring with a limit per node) a node that
  // needs more to run at all is compiled again with what it needs.
  size_t workspace_limit = 0;
  bool soft_limit = false;
};

// What Session::create allocates and binds.
struct SessionLayout {
  std::vector<const ir::Node*> order;  // execution order
  size_t alignment = 256;
  size_t parameter_bytes = 0;  // every resident initializer, each aligned
  size_t arena_bytes = 0;      // plan.arena_bytes
  size_t io_bytes = 0;         // graph inputs and outputs the plan keeps outside the arena
  size_t staging_bytes = 0;    // offload staging on the device
  size_t offloaded_bytes = 0;  // pinned host bytes of the offloaded weights
  // The workspace region's bound before compiling: what one node may request (the plan's region,
  // or SessionOptions::workspace_limit when measuring).
  size_t workspace_limit = 0;
  bool workspace_in_arena = false;  // each node's workspace is its own planned arena bytes
  std::unordered_map<const ir::Value*, Slice> slices;  // every tensor the model touches
  std::vector<const ir::Value*> parameters;            // resident initializers, in upload order
  std::vector<OffloadCopy> copies;                     // in the schedule's copy order
  std::vector<NodeBinding> nodes;                      // parallel to order
  std::vector<const ir::Value*> inputs;                // graph runtime inputs, in graph order
  std::vector<const ir::Value*> outputs;               // graph outputs, in graph order

  const Slice& slice(const ir::Value* v) const { return slices.at(v); }
};

// How the session was asked to compile (from SessionOptions; see executor/cuda/session.h).
struct LayoutOptions {
  size_t workspace_limit = 0;
  std::vector<size_t> node_workspace_limit;
};

// The whole layout: check_offload, then lay_out_regions, then bind_nodes. `order` is the plan's
// execution order (exec::execution_order); `offload` the model's schedule, if it runs offloaded.
Result<SessionLayout> lay_out_session(const ir::Graph& graph, const planner::MemoryPlan& plan,
                                      std::vector<const ir::Node*> order,
                                      const std::optional<planner::OffloadPlan>& offload,
                                      const LayoutOptions& options = {});

// The offload schedule agrees with this graph and order: same step count and alignment, every
// weight it names an initializer of that size, read only inside its staged steps.
Status check_offload(const planner::OffloadPlan& offload, const ir::Graph& graph,
                     const std::vector<const ir::Node*>& order, const planner::MemoryPlan& plan);

// The regions and every tensor's slice: parameters (the graph's initializer order, as
// planner::parameter_bytes counts them), the I/O region (graph inputs and node outputs the plan
// does not place), staging (offloaded weights) and the arena (the plan's offsets). Errors name the
// value whose size, type or place disagrees with the plan. Fills `layout` (order set).
Status lay_out_regions(const ir::Graph& graph, const planner::MemoryPlan& plan,
                       const std::optional<planner::OffloadPlan>& offload, SessionLayout& layout);

// Each node's input and output slices and its workspace (place and limit); errors name a node
// whose input has no slice. Then every graph output must have one.
Status bind_nodes(const ir::Graph& graph, const planner::MemoryPlan& plan,
                  const LayoutOptions& options, SessionLayout& layout);

// Why the shared arena `shared` cannot hold `plan` (arena, workspace and alignment), or ok.
Status check_fits_shared_arena(const planner::MemoryPlan& plan, const planner::SharedArena& shared);

// "value 'x' (float32 [2, 8])": how load errors name a value.
std::string describe_value(const ir::Value& v);

}  // namespace xopt::cuda
