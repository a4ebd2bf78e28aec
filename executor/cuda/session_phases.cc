#include "executor/cuda/session_phases.h"

#include <cudnn.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "executor/cuda/check.h"
#include "executor/cuda/cublaslt_lazy.h"
#include "executor/cuda/device_memory.h"
#include "planner/intervals.h"
#include "planner/planner.h"

namespace xopt::cuda {

namespace {

std::string op_label(const ir::Node& n) {
  return n.domain().empty() ? n.op_type() : n.domain() + "." + n.op_type();
}

// The device's name and versions.
Status read_device_info(DeviceInfo& info) {
  cudaDeviceProp prop{};
  XOPT_CUDA_RETURN_IF_ERROR(cudaGetDeviceProperties(&prop, 0));
  info.name = prop.name;
  info.compute_capability = prop.major * 10 + prop.minor;
  info.total_memory = prop.totalGlobalMem;
  XOPT_CUDA_RETURN_IF_ERROR(cudaDriverGetVersion(&info.driver_version));
  XOPT_CUDA_RETURN_IF_ERROR(cudaRuntimeGetVersion(&info.runtime_version));
  info.cudnn_version = cudnnGetVersion();
  return Status::ok();
}

// The session's stream and library handles: the shared arena's (created once, for every member),
// else its own.
Status create_stream_and_handles(Session::Impl& s, const SessionOptions& options) {
  if (options.shared_arena) {
    s.stream = options.shared_arena->stream();
    s.handles = options.shared_arena->handles();
    s.owns_stream = false;
    s.shared = options.shared_arena;  // keeps them alive while this session lives
  } else {
    XOPT_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking));
    XOPT_CUDNN_RETURN_IF_ERROR(cudnnCreate(&s.handles.cudnn));
    XOPT_CUDNN_RETURN_IF_ERROR(cudnnSetStream(s.handles.cudnn, s.stream));
    XOPT_RETURN_IF_ERROR(load_cublaslt());
    XOPT_CUBLAS_RETURN_IF_ERROR(cublasLtCreate(&s.handles.lt));
  }
  XOPT_CUDA_RETURN_IF_ERROR(cudaEventCreate(&s.start));
  XOPT_CUDA_RETURN_IF_ERROR(cudaEventCreate(&s.stop));
  XOPT_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(s.stream));
  return Status::ok();
}

// The offloaded weights: pinned host copies, the copy stream, and per copy its event and the
// steps it leaves before and is waited for at.
Status set_up_offload(Session::Impl& s, const SessionLayout& layout) {
  XOPT_ASSIGN_OR_RETURN(s.staging, DeviceBuffer::allocate(layout.staging_bytes, "offload staging"));
  XOPT_ASSIGN_OR_RETURN(s.offload_host, PinnedBuffer::allocate(layout.offloaded_bytes));
  XOPT_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&s.copy_stream, cudaStreamNonBlocking));
  XOPT_CUDA_RETURN_IF_ERROR(cudaEventCreateWithFlags(&s.inference_start, cudaEventDisableTiming));
  const size_t steps = layout.order.size();
  s.copies_before.resize(steps);
  s.waits_before.resize(steps);
  s.step_done.assign(steps, nullptr);
  for (const OffloadCopy& w : layout.copies) {
    Session::Impl::Copy c;
    c.device = static_cast<std::byte*>(s.staging.data()) + w.staging_offset;
    auto* host = static_cast<std::byte*>(s.offload_host.data()) + w.host_offset;
    std::memcpy(host, w.weight->initializer()->raw_data(), w.bytes);
    c.host = host;
    c.bytes = w.bytes;
    c.prefetch_step = w.prefetch_step;
    XOPT_CUDA_RETURN_IF_ERROR(cudaEventCreateWithFlags(&c.done, cudaEventDisableTiming));
    const size_t index = s.copies.size();
    s.copies.push_back(c);
    s.copies_before[static_cast<size_t>(w.prefetch_step)].push_back(index);
    s.waits_before[static_cast<size_t>(w.first_use)].push_back(index);
    if (w.prefetch_step > 0) {
      cudaEvent_t& e = s.step_done[static_cast<size_t>(w.prefetch_step - 1)];
      if (e == nullptr)
        XOPT_CUDA_RETURN_IF_ERROR(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    }
  }
  s.footprint.staging = layout.staging_bytes;
  s.footprint.offloaded = layout.offloaded_bytes;
  s.footprint.offloaded_weights = layout.copies.size();
  return Status::ok();
}

// One compile of `node` by `kernel` within `limit`.
struct Compiled {
  Result<Launch> launch = internal_error("not compiled");
  size_t requested = 0;
  std::string choice;
  bool reused = false;
};
Compiled compile_once(const KernelDef& kernel, const ir::Node& node,
                      const std::vector<const DeviceTensor*>& ins,
                      const std::vector<const ir::Tensor*>& consts,
                      const std::vector<const DeviceTensor*>& outs, const Session::Impl& s,
                      const SessionOptions& options, size_t limit) {
  CompileContext ctx(node, ins, consts, outs, s.handles, options.compile, limit, s.stream);
  auto stored = options.node_choices.find(planner::node_key(node));
  if (stored != options.node_choices.end()) ctx.set_stored_choice(stored->second);
  Compiled c;
  c.launch = kernel.compile(ctx);
  c.requested = ctx.workspace_requested();
  c.choice = ctx.choice();
  c.reused = ctx.choice_reused();
  return c;
}

// Node `b` compiled into its launch, appended to the session's list.
Status compile_node(Session::Impl& s, const SessionLayout& layout, const NodeBinding& b,
                    const KernelDef& kernel, const SessionOptions& options, LoadState& load) {
  const ir::Node& n = *b.node;
  const RegionBases bases = region_bases(s);
  std::vector<DeviceTensor>& held = load.node_tensors.emplace_back();
  held.reserve(b.inputs.size() + b.outputs.size());
  std::vector<const DeviceTensor*> ins, outs;
  std::vector<const ir::Tensor*> consts;
  for (size_t i = 0; i < b.inputs.size(); ++i) {
    const ir::Value* v = n.inputs()[i];
    ins.push_back(b.inputs[i] ? &held.emplace_back(tensor_at(*b.inputs[i], bases)) : nullptr);
    consts.push_back(v != nullptr && v->is_constant() ? v->initializer() : nullptr);
  }
  for (const std::optional<Slice>& o : b.outputs)
    outs.push_back(o ? &held.emplace_back(tensor_at(*o, bases)) : nullptr);
  size_t limit = b.workspace_limit;
  Compiled c = compile_once(kernel, n, ins, consts, outs, s, options, limit);
  // What the node cannot do without (attention's buffers) it gets anyway, by a second compile.
  if (b.soft_limit && c.launch.is_ok() && c.requested > limit) {
    limit = c.requested;
    c = compile_once(kernel, n, ins, consts, outs, s, options, limit);
  }
  if (!c.launch.is_ok()) {
    Status st = c.launch.status();
    if (st.message().find(n.describe()) == std::string::npos)
      st = st.with_context(n.describe() + ": ");
    return st;
  }
  if (c.requested > limit)
    return invalid_argument(
        n.describe() + ": needs " + std::to_string(c.requested) + " bytes of workspace but " +
        (layout.workspace_in_arena
             ? "the plan gives it " + std::to_string(limit) + " in the arena"
             : "the plan's workspace region holds " + std::to_string(layout.workspace_limit)) +
        " (plan with `--device cuda` to size it from the GPU's algorithms)");
  s.workspace_at.push_back(
      b.workspace_offset ? static_cast<std::byte*>(s.arena_base()) + *b.workspace_offset : nullptr);
  s.launches.push_back(std::move(c.launch).value());
  s.node_names.push_back(n.describe());
  s.node_ops.push_back(n.domain().empty() || n.domain() == "ai.onnx" ? n.op_type() : op_label(n));
  s.workspace_of.push_back(c.requested);
  if (!c.choice.empty()) s.footprint.node_choice[planner::node_key(n)] = c.choice;
  if (c.reused) ++s.footprint.choices_reused;
  load.workspace_needed = std::max(load.workspace_needed, c.requested);
  return Status::ok();
}

Result<Staging> staging_for(const ir::Value& v, const SessionLayout& layout,
                            const RegionBases& bases) {
  Staging st;
  st.name = v.name();
  st.device = tensor_at(layout.slice(&v), bases);
  XOPT_ASSIGN_OR_RETURN(st.host, PinnedBuffer::allocate(st.device.nbytes()));
  return st;
}

}  // namespace

Result<std::vector<const KernelDef*>> find_kernels(const std::vector<const ir::Node*>& order) {
  std::vector<const KernelDef*> kernels;
  kernels.reserve(order.size());
  for (const ir::Node* n : order) {
    const KernelDef* k = KernelRegistry::global().find(n->domain(), n->op_type(), n->opset());
    if (k == nullptr)
      return unsupported(n->describe() + ": no CUDA kernel for " + op_label(*n) + " at opset " +
                         std::to_string(n->opset()));
    kernels.push_back(k);
  }
  return kernels;
}

DeviceTensor tensor_at(const Slice& slice, const RegionBases& bases) {
  void* base = nullptr;
  switch (slice.region) {
    case Region::kParameters:
      base = bases.parameters;
      break;
    case Region::kArena:
      base = bases.arena;
      break;
    case Region::kIo:
      base = bases.io;
      break;
    case Region::kStaging:
      base = bases.staging;
      break;
  }
  DeviceTensor t;
  t.data = static_cast<std::byte*>(base) + slice.offset;
  t.dtype = slice.dtype;
  t.dims = slice.dims;
  return t;
}

RegionBases region_bases(const Session::Impl& s) {
  return {s.params.data(), s.arena_base(), s.io.data(), s.staging.data()};
}

Status measure_context(Session::Impl& s, const SessionOptions& options, LoadState& load) {
  // Context first, then the library handles; what the device then uses beyond what it used
  // before (other processes) is the context's cost.
  load.context_existed = primary_context_active(0);
  load.first_context = first_context_figure();
  std::string source;
  XOPT_ASSIGN_OR_RETURN(const size_t baseline, device_memory_in_use(0, &source));
  const bool baseline_before_context = source == "nvml";  // cudaMemGetInfo made the context
  XOPT_CUDA_RETURN_IF_ERROR(cudaSetDevice(0));
  XOPT_CUDA_RETURN_IF_ERROR(cudaFree(nullptr));
  XOPT_RETURN_IF_ERROR(read_device_info(s.footprint.device));
  XOPT_RETURN_IF_ERROR(create_stream_and_handles(s, options));
  XOPT_ASSIGN_OR_RETURN(const size_t with_context, device_memory_in_use(0));
  // Without NVML the baseline already held this process's context: count from zero then (what
  // other processes hold is then included, and footprint.context_source says so).
  load.other = baseline_before_context ? baseline : 0;
  const ContextFigure context = context_figure(
      load.context_existed, load.first_context, with_context - std::min(with_context, load.other),
      baseline_before_context ? "measured (NVML, other processes excluded)"
                              : "measured (cudaMemGetInfo: includes other processes' use)");
  s.footprint.context = context.bytes;
  s.footprint.context_source = context.source;
  s.footprint.context_measured = context.measured;
  return Status::ok();
}

Status allocate_regions(Session::Impl& s, const SessionLayout& layout,
                        const SessionOptions& options, LoadState& load) {
  // One allocation per region, all now; none later (but the workspace, sized by compile_thunks).
  XOPT_ASSIGN_OR_RETURN(load.used_before, device_memory_in_use(0));
  XOPT_ASSIGN_OR_RETURN(s.params, DeviceBuffer::allocate(layout.parameter_bytes, "parameters"));
  if (options.shared_arena) {
    s.shared = options.shared_arena;
  } else {
    XOPT_ASSIGN_OR_RETURN(s.arena, DeviceBuffer::allocate(layout.arena_bytes, "activation arena"));
  }
  XOPT_ASSIGN_OR_RETURN(s.io, DeviceBuffer::allocate(layout.io_bytes, "input/output region"));
  s.footprint.parameters = layout.parameter_bytes;
  s.footprint.arena = layout.arena_bytes;
  s.footprint.io = layout.io_bytes;
  if (!layout.copies.empty()) XOPT_RETURN_IF_ERROR(set_up_offload(s, layout));
  // Weights go up once.
  const RegionBases bases = region_bases(s);
  for (const ir::Value* v : layout.parameters) {
    const DeviceTensor t = tensor_at(layout.slice(v), bases);
    if (t.nbytes() > 0)
      XOPT_CUDA_RETURN_IF_ERROR(
          cudaMemcpy(t.data, v->initializer()->raw_data(), t.nbytes(), cudaMemcpyHostToDevice));
  }
  return Status::ok();
}

Status compile_thunks(Session::Impl& s, const SessionLayout& layout,
                      const std::vector<const KernelDef*>& kernels, const SessionOptions& options,
                      LoadState& load) {
  if (kernels.size() != layout.nodes.size())
    return internal_error("compile_thunks: " + std::to_string(kernels.size()) + " kernels for " +
                          std::to_string(layout.nodes.size()) + " nodes");
  load.node_tensors.reserve(layout.nodes.size());
  for (size_t i = 0; i < layout.nodes.size(); ++i)
    XOPT_RETURN_IF_ERROR(compile_node(s, layout, layout.nodes[i], *kernels[i], options, load));
  Footprint& fp = s.footprint;
  fp.node_workspace = s.workspace_of;
  fp.workspace = options.workspace_limit != 0
                     ? planner::align_up(load.workspace_needed, layout.alignment)
                     : layout.workspace_limit;
  if (!s.shared) {
    XOPT_ASSIGN_OR_RETURN(s.workspace, DeviceBuffer::allocate(fp.workspace, "workspace"));
  }
  XOPT_ASSIGN_OR_RETURN(load.used_after, device_memory_in_use(0));
  fp.device_allocations = DeviceBuffer::allocations();
  return Status::ok();
}

Status stage_io(Session::Impl& s, const SessionLayout& layout) {
  const RegionBases bases = region_bases(s);
  for (const ir::Value* v : layout.inputs) {
    XOPT_ASSIGN_OR_RETURN(Staging st, staging_for(*v, layout, bases));
    s.inputs.push_back(std::move(st));
  }
  for (const ir::Value* v : layout.outputs) {
    XOPT_ASSIGN_OR_RETURN(Staging st, staging_for(*v, layout, bases));
    s.outputs.push_back(std::move(st));
  }
  return Status::ok();
}

Status capture_graph(Session::Impl& s, LoadState& load) {
  if (s.use_graph) XOPT_RETURN_IF_ERROR(s.capture(&s.graph_exec, true));
  // Warm-up: the first run loads kernels lazily; what the device uses beyond our regions then is
  // the context's true cost.
  {
    Session::Impl::Claim claim(s.shared.get());
    if (s.shared && !claim.held()) return s.claim_error();
    XOPT_RETURN_IF_ERROR(s.launch_once());
    XOPT_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(s.stream));
  }
  XOPT_ASSIGN_OR_RETURN(size_t used_warm, device_memory_in_use(0));
  const size_t ours = load.used_after - std::min(load.used_after, load.used_before);
  // Above the baseline: the whole context when this session made it; else what its handles and
  // first run added to the context an earlier session measured.
  const size_t grown = used_warm - std::min(used_warm, ours + load.other);
  Footprint& fp = s.footprint;
  if (load.context_existed == false) {
    fp.context_after_warmup = grown;
    record_first_context_figure({fp.context, grown, fp.context_source, true});
  } else {
    const bool reused = load.context_existed.value_or(false) && load.first_context.has_value();
    fp.context_after_warmup = (reused ? load.first_context->after_warmup : 0) + grown;
  }
  return Status::ok();
}

}  // namespace xopt::cuda
