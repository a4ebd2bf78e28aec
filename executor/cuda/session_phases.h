// Session::create in phases, each its own function (XLA's GPU compiler: buffer assignment, then the
// thunk sequence, then the command buffer). What needs no device is decided first, from the model
// and its plan (executor/cuda/session_layout.h: the regions and every node's slices); then, on the
// device:
//   1. measure_context   the CUDA context, the stream and the library handles, and what they cost
//   2. allocate_regions  one allocation per region of the layout; weights up; every slice bound
//   3. compile_thunks    every node compiled into its Launch, bound to its slices; the workspace
//                        region sized from what the chosen algorithms ask
//   4. stage_io          pinned host staging for every graph input and output
//   5. capture_graph     the launch list captured as a CUDA graph, run once, the context measured
//                        again (lazily loaded kernels)
// Internal to the CUDA executor and its tests (tests/cuda/session_phases_test.cc).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "executor/cuda/context_figure.h"
#include "executor/cuda/kernel.h"
#include "executor/cuda/session.h"
#include "executor/cuda/session_impl.h"
#include "executor/cuda/session_layout.h"

namespace xopt::cuda {

// The kernel of every node in `order`; an unsupported error names the first node without one.
Result<std::vector<const KernelDef*>> find_kernels(const std::vector<const ir::Node*>& order);

// Where each region starts on the device (nullptr for an empty one).
struct RegionBases {
  void* parameters = nullptr;
  void* arena = nullptr;
  void* io = nullptr;
  void* staging = nullptr;
};
// The device tensor at `slice`: its region's base plus its offset (no device access).
DeviceTensor tensor_at(const Slice& slice, const RegionBases& bases);
RegionBases region_bases(const Session::Impl& s);

// What the phases hand on to each other while loading.
struct LoadState {
  std::optional<bool> context_existed;  // the primary context before this session
  std::optional<ContextFigure> first_context;
  size_t other = 0;  // device bytes in use before the context (NVML: other processes'), else 0
  size_t used_before = 0, used_after = 0;  // device bytes in use around our allocations
  // The compiled nodes' tensors (CompileContext points into them while compiling).
  std::vector<std::vector<DeviceTensor>> node_tensors;
  size_t workspace_needed = 0;  // the most any compiled node asked
};

// 1. The context first, then the stream and library handles (the shared arena's, if any); what
// the device then uses beyond its baseline is the context's cost (footprint.context*), and the
// device's name and versions (footprint.device).
Status measure_context(Session::Impl& s, const SessionOptions& options, LoadState& load);

// 2. One allocation per region of `layout` (the arena unless shared: `options.shared_arena`, which
// check_fits_shared_arena accepted), the weights uploaded, the offloaded ones copied into pinned
// host memory with their copy events. Footprint: parameters, arena, io, staging, offloaded.
Status allocate_regions(Session::Impl& s, const SessionLayout& layout,
                        const SessionOptions& options, LoadState& load);

// 3. Each node of `layout` compiled by its kernel (`kernels`, parallel) into a Launch bound to its
// slices, within its workspace limit (an error names the node and the bytes); then the workspace
// region, sized to the plan's (or, measuring, to the most a node asked). Footprint: workspace,
// node_workspace, node_choice, choices_reused, device_allocations.
Status compile_thunks(Session::Impl& s, const SessionLayout& layout,
                      const std::vector<const KernelDef*>& kernels, const SessionOptions& options,
                      LoadState& load);

// 4. Pinned host staging for each graph input and output, at its slice.
Status stage_io(Session::Impl& s, const SessionLayout& layout);

// 5. The launch list captured as a CUDA graph (when s.use_graph), replayed once; the device's use
// then, beyond our regions, is footprint.context_after_warmup.
Status capture_graph(Session::Impl& s, LoadState& load);

}  // namespace xopt::cuda
