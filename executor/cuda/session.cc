#include "executor/cuda/session.h"

#include <cudnn.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>
#include <unordered_map>

#include "executor/cpu/session.h"
#include "executor/cuda/check.h"
#include "executor/cuda/context_figure.h"
#include "executor/cuda/cublaslt_lazy.h"
#include "executor/cuda/device_memory.h"
#include "planner/intervals.h"
#include "planner/offload.h"
#include "planner/planner.h"

namespace xopt::cuda {

namespace {

std::string op_label(const ir::Node& n) {
  return n.domain().empty() ? n.op_type() : n.domain() + "." + n.op_type();
}

std::string version_string(int v) {  // 13000 -> "13.0"
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

// A graph input or output's host-visible staging buffer (pinned, so copies are true async DMA and
// can live inside the captured graph).
struct Staging {
  std::string name;     // the graph input or output (the session keeps no pointer into the model)
  DeviceTensor device;  // its slot on the device
  PinnedBuffer host;    // pinned host bytes of the same size
};

}  // namespace

bool device_available(std::string* why) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    if (why != nullptr) *why = std::string("no usable CUDA device (") + cudaGetErrorString(e) + ")";
    cudaGetLastError();  // clear the sticky error
    return false;
  }
  if (n == 0) {
    if (why != nullptr) *why = "no CUDA device";
    return false;
  }
  return true;
}

Status check_kernels(const ir::Graph& graph) {
  for (const ir::Node* n : graph.nodes())
    if (KernelRegistry::global().find(n->domain(), n->op_type(), n->opset()) == nullptr)
      return unsupported(n->describe() + ": no CUDA kernel for " + op_label(*n) + " at opset " +
                         std::to_string(n->opset()));
  return Status::ok();
}

std::string DeviceInfo::summary() const {
  const size_t major = cudnn_version / 10000, minor = (cudnn_version % 10000) / 100,
               patch = cudnn_version % 100;
  return name + " (sm_" + std::to_string(compute_capability) + "), driver " +
         version_string(driver_version) + ", CUDA runtime " + version_string(runtime_version) +
         ", cuDNN " + std::to_string(major) + "." + std::to_string(minor) + "." +
         std::to_string(patch);
}

struct Session::Impl {
  Footprint footprint;
  cudaStream_t stream = nullptr;
  Handles handles;
  bool owns_stream = true;  // false: the shared arena's stream and handles
  cudaEvent_t start = nullptr, stop = nullptr;
  DeviceBuffer params, arena, workspace, io;
  std::shared_ptr<SharedDeviceArena> shared;  // when set, its arena and workspace are used
  void* arena_base() const { return shared ? shared->arena() : arena.data(); }
  void* workspace_base() const { return shared ? shared->workspace() : workspace.data(); }
  std::vector<Launch> launches;
  std::vector<size_t> workspace_of;  // per launch
  // Per launch: where its workspace starts, when the plan keeps workspace in the arena (nullptr:
  // the workspace region).
  std::vector<void*> workspace_at;
  void* workspace_of_launch(size_t i) {
    return workspace_at[i] != nullptr ? workspace_at[i] : workspace_base();
  }
  std::vector<std::string> node_names;  // describe() of each launch's node, for errors
  std::vector<std::string> node_ops;    // its op type, for profiles
  std::vector<Staging> inputs, outputs;
  cudaGraphExec_t graph_exec = nullptr;
  // run_device: the launches without the staging copies, captured on first use; the caller's
  // stream waits for `device_done`, the session's for `caller_ready`.
  cudaGraphExec_t device_graph_exec = nullptr;
  cudaEvent_t caller_ready = nullptr, device_done = nullptr;
  bool use_graph = true;
  size_t host_transfer_bytes = 0;

  // Parameter offload (planner/offload.h): weights in pinned host memory, copied into staging on
  // copy_stream. Per step k: the copies that leave before it (after step_done[prefetch - 1], or
  // the start of the inference), the copies it waits for (it is their first reader), and whether
  // a later copy waits for it to be done.
  struct Copy {
    void* device = nullptr;
    const void* host = nullptr;
    size_t bytes = 0;
    int prefetch_step = 0;
    cudaEvent_t done = nullptr;
  };
  DeviceBuffer staging;
  PinnedBuffer offload_host;
  cudaStream_t copy_stream = nullptr;
  cudaEvent_t inference_start = nullptr;
  std::vector<Copy> copies;
  std::vector<std::vector<size_t>> copies_before, waits_before;  // per step: copy indices
  std::vector<cudaEvent_t> step_done;                            // per step; nullptr: unused
  bool offloads() const { return !copies.empty(); }

  // Both streams: the copy stream joins the inference here (inside a capture too).
  Status offload_begin() {
    if (!offloads()) return Status::ok();
    XOPT_CUDA_RETURN_IF_ERROR(cudaEventRecord(inference_start, stream));
    XOPT_CUDA_RETURN_IF_ERROR(cudaStreamWaitEvent(copy_stream, inference_start, 0));
    return Status::ok();
  }
  Status offload_before(size_t k) {
    if (!offloads()) return Status::ok();
    int waited = -1;  // the step whose completion the copy stream already waits for
    for (size_t c : copies_before[k]) {
      const Copy& cp = copies[c];
      if (cp.prefetch_step > 0 && cp.prefetch_step - 1 != waited) {
        waited = cp.prefetch_step - 1;
        XOPT_CUDA_RETURN_IF_ERROR(
            cudaStreamWaitEvent(copy_stream, step_done[static_cast<size_t>(waited)], 0));
      }
      XOPT_CUDA_RETURN_IF_ERROR(
          cudaMemcpyAsync(cp.device, cp.host, cp.bytes, cudaMemcpyHostToDevice, copy_stream));
      XOPT_CUDA_RETURN_IF_ERROR(cudaEventRecord(cp.done, copy_stream));
    }
    for (size_t c : waits_before[k])
      XOPT_CUDA_RETURN_IF_ERROR(cudaStreamWaitEvent(stream, copies[c].done, 0));
    return Status::ok();
  }
  Status offload_after(size_t k) {
    if (offloads() && step_done[k] != nullptr)
      XOPT_CUDA_RETURN_IF_ERROR(cudaEventRecord(step_done[k], stream));
    return Status::ok();
  }

  ~Impl() {
    if (stream != nullptr) cudaStreamSynchronize(stream);
    if (copy_stream != nullptr) cudaStreamSynchronize(copy_stream);
    launches.clear();  // closures own cuDNN descriptors: destroy them before the handles
    for (Copy& c : copies)
      if (c.done != nullptr) cudaEventDestroy(c.done);
    for (cudaEvent_t e : step_done)
      if (e != nullptr) cudaEventDestroy(e);
    if (inference_start != nullptr) cudaEventDestroy(inference_start);
    if (copy_stream != nullptr) cudaStreamDestroy(copy_stream);
    if (graph_exec != nullptr) cudaGraphExecDestroy(graph_exec);
    if (device_graph_exec != nullptr) cudaGraphExecDestroy(device_graph_exec);
    if (caller_ready != nullptr) cudaEventDestroy(caller_ready);
    if (device_done != nullptr) cudaEventDestroy(device_done);
    if (start != nullptr) cudaEventDestroy(start);
    if (stop != nullptr) cudaEventDestroy(stop);
    if (owns_stream) {  // else the shared arena's, destroyed with it
      if (handles.cudnn != nullptr) cudnnDestroy(handles.cudnn);
      if (handles.lt != nullptr) cublasLtDestroy(handles.lt);
      if (stream != nullptr) cudaStreamDestroy(stream);
    }
  }

  // The whole inference, in order: inputs in (from the pinned staging, when `staging`), every
  // launch, outputs out.
  Status enqueue(bool staging = true) {
    if (staging)
      for (Staging& s : inputs)
        if (s.device.nbytes() > 0)
          XOPT_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(s.device.data, s.host.data(), s.device.nbytes(),
                                                    cudaMemcpyHostToDevice, stream));
    XOPT_RETURN_IF_ERROR(offload_begin());
    for (size_t i = 0; i < launches.size(); ++i) {
      XOPT_RETURN_IF_ERROR(offload_before(i));
      LaunchEnv env{stream, workspace_of_launch(i), workspace_of[i]};
      Status st = launches[i](env);
      if (!st.is_ok()) return st.with_context(node_names[i] + ": ");
      XOPT_RETURN_IF_ERROR(offload_after(i));
    }
    if (staging)
      for (Staging& s : outputs)
        if (s.device.nbytes() > 0)
          XOPT_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(s.host.data(), s.device.data, s.device.nbytes(),
                                                    cudaMemcpyDeviceToHost, stream));
    return Status::ok();
  }

  Status capture(cudaGraphExec_t* exec, bool staging) {
    XOPT_CUDA_RETURN_IF_ERROR(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    Status st = enqueue(staging);
    cudaGraph_t graph = nullptr;
    cudaError_t end = cudaStreamEndCapture(stream, &graph);
    XOPT_RETURN_IF_ERROR(st.with_context("capturing the CUDA graph: "));
    XOPT_RETURN_IF_ERROR(cuda_status(end, "cudaStreamEndCapture"));
    cudaError_t inst = cudaGraphInstantiate(exec, graph, 0);
    cudaGraphDestroy(graph);
    return cuda_status(inst, "cudaGraphInstantiate");
  }

  // Holds the shared arena (if any) for one run; refuses when another session holds it.
  class Claim {
   public:
    explicit Claim(SharedDeviceArena* a) : a_(a != nullptr && a->try_acquire() ? a : nullptr) {}
    ~Claim() {
      if (a_ != nullptr) a_->release();
    }
    Claim(const Claim&) = delete;
    Claim& operator=(const Claim&) = delete;
    bool held() const { return a_ != nullptr; }

   private:
    SharedDeviceArena* a_;
  };
  Status claim_error() const {
    return invalid_argument("shared arena '" + shared->shared().id +
                            "': another model is running in it (models that share an arena run "
                            "one at a time)");
  }

  Status launch_once() {
    if (use_graph) {
      XOPT_CUDA_RETURN_IF_ERROR(cudaGraphLaunch(graph_exec, stream));
      return Status::ok();
    }
    return enqueue();
  }
  // The launches alone (run_device: the caller's tensors are copied in and out around them).
  Status launch_without_staging() {
    if (!use_graph) return enqueue(false);
    if (device_graph_exec == nullptr) XOPT_RETURN_IF_ERROR(capture(&device_graph_exec, false));
    XOPT_CUDA_RETURN_IF_ERROR(cudaGraphLaunch(device_graph_exec, stream));
    return Status::ok();
  }
};

namespace {

// Why a tensor of `dtype` and `dims` cannot be the planned input `spec`, or ok.
Status check_input(const IoSpec& spec, ir::DType dtype, const std::vector<int64_t>& dims) {
  if (dtype != spec.dtype)
    return invalid_argument("input '" + spec.name + "' is " + std::string(ir::dtype_name(dtype)) +
                            " but the plan has " + std::string(ir::dtype_name(spec.dtype)));
  if (dims == spec.dims) return Status::ok();
  std::string which;
  for (size_t i = 0; i < std::min(dims.size(), spec.dims.size()); ++i)
    if (dims[i] != spec.dims[i]) {
      which = " (dim " + std::to_string(i) + " is " + std::to_string(dims[i]) + ", not " +
              std::to_string(spec.dims[i]) + ")";
      break;
    }
  return invalid_argument("input '" + spec.name + "' has shape " + ir::Shape::of(dims).to_string() +
                          " but the model was planned for " + ir::Shape::of(spec.dims).to_string() +
                          which);
}

IoSpec spec_of(const Staging& s) {
  return {s.name, s.device.dtype, s.device.dims};
}

// Whether `p` is host memory (pageable or pinned) as CUDA sees it; an error for device memory of
// another GPU than the current one.
Result<bool> is_host_pointer(const void* p, const std::string& what) {
  cudaPointerAttributes attr{};
  XOPT_CUDA_RETURN_IF_ERROR(cudaPointerGetAttributes(&attr, p));
  if (attr.type == cudaMemoryTypeUnregistered || attr.type == cudaMemoryTypeHost) return true;
  int current = 0;
  XOPT_CUDA_RETURN_IF_ERROR(cudaGetDevice(&current));
  if (attr.device != current)
    return invalid_argument(what + " is on GPU " + std::to_string(attr.device) +
                            " but the session runs on GPU " + std::to_string(current));
  return false;
}

}  // namespace

size_t IoSpec::nbytes() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return static_cast<size_t>(n) * ir::dtype_size(dtype);
}

Result<size_t> Session::device_memory_used() {
  size_t free_bytes = 0, total = 0;
  XOPT_CUDA_RETURN_IF_ERROR(cudaMemGetInfo(&free_bytes, &total));
  return total - free_bytes;
}

Result<double> Session::measure_h2d_bandwidth(size_t bytes, int repeats) {
  if (bytes == 0 || repeats <= 0) return invalid_argument("measure_h2d_bandwidth: nothing to copy");
  XOPT_ASSIGN_OR_RETURN(PinnedBuffer host, PinnedBuffer::allocate(bytes));
  std::memset(host.data(), 0, bytes);
  XOPT_ASSIGN_OR_RETURN(DeviceBuffer device, DeviceBuffer::allocate(bytes, "bandwidth probe"));
  cudaStream_t st = nullptr;
  cudaEvent_t a = nullptr, b = nullptr;
  auto cleanup = [&] {
    if (a != nullptr) cudaEventDestroy(a);
    if (b != nullptr) cudaEventDestroy(b);
    if (st != nullptr) cudaStreamDestroy(st);
  };
  float ms = 0;
  Status status = [&]() -> Status {
    XOPT_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    XOPT_CUDA_RETURN_IF_ERROR(cudaEventCreate(&a));
    XOPT_CUDA_RETURN_IF_ERROR(cudaEventCreate(&b));
    // One copy first (warm-up), then the timed ones.
    XOPT_CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(device.data(), host.data(), bytes, cudaMemcpyHostToDevice, st));
    XOPT_CUDA_RETURN_IF_ERROR(cudaEventRecord(a, st));
    for (int i = 0; i < repeats; ++i)
      XOPT_CUDA_RETURN_IF_ERROR(
          cudaMemcpyAsync(device.data(), host.data(), bytes, cudaMemcpyHostToDevice, st));
    XOPT_CUDA_RETURN_IF_ERROR(cudaEventRecord(b, st));
    XOPT_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(st));
    XOPT_CUDA_RETURN_IF_ERROR(cudaEventElapsedTime(&ms, a, b));
    return Status::ok();
  }();
  cleanup();
  XOPT_RETURN_IF_ERROR(status);
  if (ms <= 0) return internal_error("measure_h2d_bandwidth: the copies took no time");
  return static_cast<double>(bytes) * repeats / static_cast<double>(ms);
}

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::~Session() = default;
const Footprint& Session::footprint() const {
  return impl_->footprint;
}

Result<std::unique_ptr<Session>> Session::create(const ir::Model& model,
                                                 const planner::MemoryPlan& plan,
                                                 const SessionOptions& options) {
  std::string why;
  if (!device_available(&why)) return unsupported("CUDA executor: " + why);
  XOPT_RETURN_IF_ERROR(planner::check_plan(plan));
  const ir::Graph& g = *model.graph;
  // Every node needs a kernel: known before any device work.
  XOPT_ASSIGN_OR_RETURN(std::vector<const ir::Node*> order, exec::execution_order(g, &plan));
  std::vector<const KernelDef*> kernels;
  for (const ir::Node* n : order) {
    const KernelDef* k = KernelRegistry::global().find(n->domain(), n->op_type(), n->opset());
    if (k == nullptr)
      return unsupported(n->describe() + ": no CUDA kernel for " + op_label(*n) + " at opset " +
                         std::to_string(n->opset()));
    kernels.push_back(k);
  }
  // The offload schedule, unless told to keep every weight resident: checked against this graph
  // before any device work.
  std::optional<planner::OffloadPlan> offload;
  if (!options.ignore_offload) {
    XOPT_ASSIGN_OR_RETURN(offload, planner::read_offload(model));
  }
  std::unordered_map<const ir::Value*, const planner::OffloadedWeight*> offloaded;
  if (offload) {
    if (offload->steps != static_cast<int>(order.size()) || offload->alignment != plan.alignment)
      return invalid_argument("offload schedule: made for " + std::to_string(offload->steps) +
                              " steps at alignment " + std::to_string(offload->alignment) +
                              ", the plan has " + std::to_string(order.size()) + " at " +
                              std::to_string(plan.alignment));
    for (const planner::OffloadedWeight& w : offload->weights) {
      const ir::Value* v = g.find_value(w.name);
      if (v == nullptr || !v->is_constant() || v->initializer()->nbytes() != w.bytes)
        return invalid_argument("offload schedule: '" + w.name + "' (" + std::to_string(w.bytes) +
                                " bytes) is not a weight of that " + "size in the graph");
      for (const ir::Use& u : v->uses()) {
        const auto at = std::find(order.begin(), order.end(), u.node);
        const int step = static_cast<int>(at - order.begin());
        if (u.index < 0 || at == order.end() || step < w.first_use || step > w.last_use)
          return invalid_argument("offload schedule: '" + w.name + "' is read by " +
                                  u.node->describe() + " outside its staged steps " +
                                  std::to_string(w.first_use) + ".." + std::to_string(w.last_use));
      }
      offloaded[v] = &w;
    }
  }
  auto impl = std::make_unique<Impl>();
  Footprint& fp = impl->footprint;
  impl->use_graph = options.use_graph;

  // Context first, then the library handles; what the device then uses beyond what it used
  // before (other processes) is the context's cost.
  const std::optional<bool> context_existed = primary_context_active(0);
  const std::optional<ContextFigure> first_context = first_context_figure();
  std::string source;
  XOPT_ASSIGN_OR_RETURN(const size_t baseline, device_memory_in_use(0, &source));
  const bool baseline_before_context = source == "nvml";  // cudaMemGetInfo made the context
  XOPT_CUDA_RETURN_IF_ERROR(cudaSetDevice(0));
  XOPT_CUDA_RETURN_IF_ERROR(cudaFree(nullptr));
  cudaDeviceProp prop{};
  XOPT_CUDA_RETURN_IF_ERROR(cudaGetDeviceProperties(&prop, 0));
  fp.device.name = prop.name;
  fp.device.compute_capability = prop.major * 10 + prop.minor;
  fp.device.total_memory = prop.totalGlobalMem;
  XOPT_CUDA_RETURN_IF_ERROR(cudaDriverGetVersion(&fp.device.driver_version));
  XOPT_CUDA_RETURN_IF_ERROR(cudaRuntimeGetVersion(&fp.device.runtime_version));
  fp.device.cudnn_version = cudnnGetVersion();
  if (options.shared_arena) {  // the group's stream and handles: created once, for every member
    impl->stream = options.shared_arena->stream();
    impl->handles = options.shared_arena->handles();
    impl->owns_stream = false;
    impl->shared = options.shared_arena;  // keeps them alive while this session lives
  } else {
    XOPT_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&impl->stream, cudaStreamNonBlocking));
    XOPT_CUDNN_RETURN_IF_ERROR(cudnnCreate(&impl->handles.cudnn));
    XOPT_CUDNN_RETURN_IF_ERROR(cudnnSetStream(impl->handles.cudnn, impl->stream));
    XOPT_RETURN_IF_ERROR(load_cublaslt());
    XOPT_CUBLAS_RETURN_IF_ERROR(cublasLtCreate(&impl->handles.lt));
  }
  XOPT_CUDA_RETURN_IF_ERROR(cudaEventCreate(&impl->start));
  XOPT_CUDA_RETURN_IF_ERROR(cudaEventCreate(&impl->stop));
  XOPT_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(impl->stream));
  auto in_use = [&]() { return device_memory_in_use(0); };
  XOPT_ASSIGN_OR_RETURN(const size_t with_context, in_use());
  // Without NVML the baseline already held this process's context: count from zero then (what
  // other processes hold is then included, and footprint.context_source says so).
  const size_t other = baseline_before_context ? baseline : 0;
  const ContextFigure context = context_figure(
      context_existed, first_context, with_context - std::min(with_context, other),
      baseline_before_context ? "measured (NVML, other processes excluded)"
                              : "measured (cudaMemGetInfo: includes other processes' use)");
  fp.context = context.bytes;
  fp.context_source = context.source;
  fp.context_measured = context.measured;

  if (!plan.node_order.empty() && plan.node_order.size() != order.size())
    return invalid_argument("memory plan: it orders " + std::to_string(plan.node_order.size()) +
                            " nodes but the graph has " + std::to_string(order.size()));

  // Every tensor the model touches, with its static dims.
  std::unordered_map<const ir::Value*, DeviceTensor> slot;
  auto describe_value = [](const ir::Value& v) {
    return "value '" + v.name() + "' (" + std::string(ir::dtype_name(v.dtype())) + " " +
           v.shape().to_string() + ")";
  };
  auto static_tensor = [&](const ir::Value& v) -> Result<DeviceTensor> {
    if (!v.is_tensor() || v.dtype() == ir::DType::kString || v.dtype() == ir::DType::kUndefined)
      return unsupported("CUDA executor: " + describe_value(v) +
                         " is not a numeric tensor (strings, sequences and maps stay on the CPU)");
    if (!v.shape().is_static())
      return invalid_argument("CUDA executor: " + describe_value(v) +
                              " has no static shape: plan the model with --input-shape or --batch");
    DeviceTensor t;
    t.dtype = v.dtype();
    t.dims = v.shape().static_dims();
    return t;
  };

  // Parameters: every initializer, each aligned, in the graph's initializer order (the layout
  // planner::parameter_bytes counts).
  const size_t align = plan.alignment;
  size_t param_bytes = 0;
  std::vector<std::pair<const ir::Value*, size_t>> param_offsets;
  for (const ir::Value* v : g.initializers()) {
    if (v->initializer() == nullptr || offloaded.count(v) != 0) continue;
    param_offsets.emplace_back(v, param_bytes);
    param_bytes += planner::align_up(v->initializer()->nbytes(), align);
  }

  // Graph inputs and outputs outside the arena, and outputs nobody reads: the I/O region.
  size_t io_bytes = 0;
  std::vector<std::pair<const ir::Value*, size_t>> io_offsets;
  auto add_io = [&](const ir::Value* v) -> Status {
    XOPT_ASSIGN_OR_RETURN(DeviceTensor t, static_tensor(*v));
    io_offsets.emplace_back(v, io_bytes);
    io_bytes += planner::align_up(t.nbytes(), align);
    slot[v] = std::move(t);
    return Status::ok();
  };
  auto planned = [&](const ir::Value* v) { return plan.find(v->name()); };
  for (const ir::Value* v : g.runtime_inputs())
    if (planned(v) == nullptr) XOPT_RETURN_IF_ERROR(add_io(v));
  for (const ir::Node* n : order)
    for (const ir::Value* v : n->outputs()) {
      if (v == nullptr || planned(v) != nullptr) continue;
      if (v->has_uses() && !v->is_graph_output())
        return invalid_argument("memory plan: " + describe_value(*v) + " (produced by " +
                                n->describe() + ") is read but has no place in the plan");
      if (v->is_graph_output() && plan.io_in_arena)
        return invalid_argument("memory plan: graph output '" + v->name() +
                                "' has no place in the plan although it plans inputs and outputs "
                                "in the arena");
      XOPT_RETURN_IF_ERROR(add_io(v));
    }

  // One allocation per region, all now; none later.
  size_t used_before = 0, used_after = 0;
  XOPT_ASSIGN_OR_RETURN(used_before, in_use());
  XOPT_ASSIGN_OR_RETURN(impl->params, DeviceBuffer::allocate(param_bytes, "parameters"));
  if (options.shared_arena) {
    const planner::SharedArena& sh = options.shared_arena->shared();
    if (plan.arena_bytes > sh.arena_bytes || plan.workspace_bytes > sh.workspace_bytes ||
        plan.alignment != sh.alignment)
      return invalid_argument(
          "shared arena '" + sh.id + "' (arena " + std::to_string(sh.arena_bytes) + ", workspace " +
          std::to_string(sh.workspace_bytes) + ", alignment " + std::to_string(sh.alignment) +
          ") cannot hold this plan (arena " + std::to_string(plan.arena_bytes) + ", workspace " +
          std::to_string(plan.workspace_bytes) + ", alignment " + std::to_string(plan.alignment) +
          ")");
    impl->shared = options.shared_arena;
  } else {
    XOPT_ASSIGN_OR_RETURN(impl->arena,
                          DeviceBuffer::allocate(plan.arena_bytes, "activation arena"));
  }
  XOPT_ASSIGN_OR_RETURN(impl->io, DeviceBuffer::allocate(io_bytes, "input/output region"));
  fp.parameters = param_bytes;
  fp.arena = plan.arena_bytes;
  fp.io = io_bytes;
  if (offload && !offload->weights.empty()) {
    XOPT_ASSIGN_OR_RETURN(impl->staging,
                          DeviceBuffer::allocate(offload->staging_bytes, "offload staging"));
    XOPT_ASSIGN_OR_RETURN(impl->offload_host, PinnedBuffer::allocate(offload->offloaded_bytes));
    XOPT_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&impl->copy_stream, cudaStreamNonBlocking));
    XOPT_CUDA_RETURN_IF_ERROR(
        cudaEventCreateWithFlags(&impl->inference_start, cudaEventDisableTiming));
    impl->copies_before.resize(order.size());
    impl->waits_before.resize(order.size());
    impl->step_done.assign(order.size(), nullptr);
    size_t host_offset = 0;
    for (const planner::OffloadedWeight& w : offload->weights) {
      const ir::Value* v = g.find_value(w.name);
      Impl::Copy c;
      c.device = static_cast<std::byte*>(impl->staging.data()) + w.offset;
      c.host = static_cast<std::byte*>(impl->offload_host.data()) + host_offset;
      std::memcpy(static_cast<std::byte*>(impl->offload_host.data()) + host_offset,
                  v->initializer()->raw_data(), w.bytes);
      host_offset += w.size;
      c.bytes = w.bytes;
      c.prefetch_step = w.prefetch_step;
      XOPT_CUDA_RETURN_IF_ERROR(cudaEventCreateWithFlags(&c.done, cudaEventDisableTiming));
      const size_t index = impl->copies.size();
      impl->copies.push_back(c);
      impl->copies_before[static_cast<size_t>(w.prefetch_step)].push_back(index);
      impl->waits_before[static_cast<size_t>(w.first_use)].push_back(index);
      if (w.prefetch_step > 0) {
        cudaEvent_t& e = impl->step_done[static_cast<size_t>(w.prefetch_step - 1)];
        if (e == nullptr)
          XOPT_CUDA_RETURN_IF_ERROR(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
      }
      DeviceTensor t;
      t.dtype = v->initializer()->dtype();
      t.dims = v->initializer()->dims();
      t.data = c.device;
      slot[v] = std::move(t);
    }
    fp.staging = offload->staging_bytes;
    fp.offloaded = offload->offloaded_bytes;
    fp.offloaded_weights = offload->weights.size();
  }

  // Weights go up once.
  for (const auto& [v, off] : param_offsets) {
    DeviceTensor t;
    t.dtype = v->initializer()->dtype();
    t.dims = v->initializer()->dims();
    t.data = static_cast<std::byte*>(impl->params.data()) + off;
    if (t.dtype == ir::DType::kString)
      return unsupported("CUDA executor: initializer '" + v->name() + "' holds strings");
    if (t.nbytes() > 0)
      XOPT_CUDA_RETURN_IF_ERROR(
          cudaMemcpy(t.data, v->initializer()->raw_data(), t.nbytes(), cudaMemcpyHostToDevice));
    slot[v] = std::move(t);
  }
  for (const auto& [v, off] : io_offsets)
    slot[v].data = static_cast<std::byte*>(impl->io.data()) + off;
  // Workspace in the arena (planning for the GPU does that): each node's own planned bytes. A
  // session compiling with a workspace limit of its own (measuring) uses its region instead.
  const bool ws_in_arena = plan.workspace_in_arena && options.workspace_limit == 0;
  std::unordered_map<std::string, const planner::PlannedValue*> ws_value;
  for (const planner::PlannedValue& pv : plan.values) {
    if (pv.role == "workspace") {
      ws_value[pv.name] = &pv;
      continue;
    }
    const ir::Value* v = g.find_value(pv.name);
    if (v == nullptr)
      return invalid_argument("memory plan: planned value '" + pv.name + "' is not in the graph");
    XOPT_ASSIGN_OR_RETURN(DeviceTensor t, static_tensor(*v));
    if (t.nbytes() != pv.bytes)
      return invalid_argument("memory plan: " + describe_value(*v) + " needs " +
                              std::to_string(t.nbytes()) + " bytes but the plan gives it " +
                              std::to_string(pv.bytes));
    t.data = static_cast<std::byte*>(impl->arena_base()) + pv.offset;
    slot[v] = std::move(t);
  }

  // Compile every node into its launch record.
  const size_t limit =
      options.workspace_limit != 0 ? options.workspace_limit : plan.workspace_bytes;
  size_t workspace_needed = 0;
  for (size_t s = 0; s < order.size(); ++s) {
    const ir::Node& n = *order[s];
    const KernelDef* k = kernels[s];
    const planner::PlannedValue* own_ws = nullptr;
    if (ws_in_arena) {
      auto it = ws_value.find(planner::workspace_value_name(planner::node_key(n)));
      own_ws = it == ws_value.end() ? nullptr : it->second;
    }
    size_t node_limit = !ws_in_arena ? limit : own_ws != nullptr ? own_ws->bytes : 0;
    // Measuring with a limit per node (the bytes the activations leave free at its step): what
    // the node cannot do without (attention's buffers) it gets anyway, by a second compile.
    const bool soft_limit = options.workspace_limit != 0 && s < options.node_workspace_limit.size();
    if (soft_limit) node_limit = std::min(limit, options.node_workspace_limit[s]);
    std::vector<const DeviceTensor*> ins, outs;
    std::vector<const ir::Tensor*> consts;
    for (const ir::Value* v : n.inputs()) {
      if (v == nullptr) {
        ins.push_back(nullptr);
        consts.push_back(nullptr);
        continue;
      }
      auto it = slot.find(v);
      if (it == slot.end())
        return invalid_argument(n.describe() + ": input " + describe_value(*v) +
                                " has no device memory (not planned, not a parameter, not a "
                                "graph input)");
      ins.push_back(&it->second);
      consts.push_back(v->is_constant() ? v->initializer() : nullptr);
    }
    for (const ir::Value* v : n.outputs()) {
      if (v == nullptr) {
        outs.push_back(nullptr);
        continue;
      }
      outs.push_back(&slot.at(v));
    }
    auto stored = options.node_choices.find(planner::node_key(n));
    CompileContext ctx(n, ins, consts, outs, impl->handles, options.compile, node_limit,
                       impl->stream);
    if (stored != options.node_choices.end()) ctx.set_stored_choice(stored->second);
    Result<Launch> launch = k->compile(ctx);
    size_t requested = ctx.workspace_requested();
    std::string choice = ctx.choice();
    bool reused = ctx.choice_reused();
    if (soft_limit && launch.is_ok() && requested > node_limit) {
      node_limit = requested;
      CompileContext again(n, ins, consts, outs, impl->handles, options.compile, node_limit,
                           impl->stream);
      if (stored != options.node_choices.end()) again.set_stored_choice(stored->second);
      launch = k->compile(again);
      requested = again.workspace_requested();
      choice = again.choice();
      reused = again.choice_reused();
    }
    if (!launch.is_ok()) {
      Status st = launch.status();
      if (st.message().find(n.describe()) == std::string::npos)
        st = st.with_context(n.describe() + ": ");
      return st;
    }
    if (requested > node_limit)
      return invalid_argument(
          n.describe() + ": needs " + std::to_string(requested) + " bytes of workspace but " +
          (ws_in_arena ? "the plan gives it " + std::to_string(node_limit) + " in the arena"
                       : "the plan's workspace region holds " + std::to_string(limit)) +
          " (plan with `--device cuda` to size it from the GPU's algorithms)");
    impl->workspace_at.push_back(
        own_ws != nullptr ? static_cast<std::byte*>(impl->arena_base()) + own_ws->offset : nullptr);
    impl->launches.push_back(std::move(launch).value());
    impl->node_names.push_back(n.describe());
    impl->node_ops.push_back(n.domain().empty() || n.domain() == "ai.onnx"
                                 ? n.op_type()
                                 : n.domain() + "." + n.op_type());
    impl->workspace_of.push_back(requested);
    if (!choice.empty()) fp.node_choice[planner::node_key(n)] = choice;
    if (reused) ++fp.choices_reused;
    workspace_needed = std::max(workspace_needed, requested);
  }
  fp.node_workspace = impl->workspace_of;
  fp.workspace = options.workspace_limit != 0 ? planner::align_up(workspace_needed, align)
                                              : plan.workspace_bytes;
  if (!impl->shared) {
    XOPT_ASSIGN_OR_RETURN(impl->workspace, DeviceBuffer::allocate(fp.workspace, "workspace"));
  }
  XOPT_ASSIGN_OR_RETURN(used_after, in_use());
  fp.device_allocations = DeviceBuffer::allocations();

  // Pinned staging for every graph input and output.
  for (const ir::Value* v : g.runtime_inputs()) {
    Staging s;
    s.name = v->name();
    s.device = slot.at(v);
    XOPT_ASSIGN_OR_RETURN(s.host, PinnedBuffer::allocate(s.device.nbytes()));
    impl->inputs.push_back(std::move(s));
  }
  for (const ir::Value* v : g.outputs()) {
    auto it = slot.find(v);
    if (it == slot.end())
      return invalid_model("graph output '" + v->name() + "' is never computed");
    Staging s;
    s.name = v->name();
    s.device = it->second;
    XOPT_ASSIGN_OR_RETURN(s.host, PinnedBuffer::allocate(s.device.nbytes()));
    impl->outputs.push_back(std::move(s));
  }

  if (impl->use_graph) XOPT_RETURN_IF_ERROR(impl->capture(&impl->graph_exec, true));
  // Warm-up: the first run loads kernels lazily; what the device uses beyond our regions then is
  // the context's true cost.
  {
    Impl::Claim claim(impl->shared.get());
    if (impl->shared && !claim.held()) return impl->claim_error();
    XOPT_RETURN_IF_ERROR(impl->launch_once());
    XOPT_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(impl->stream));
  }
  XOPT_ASSIGN_OR_RETURN(size_t used_warm, in_use());
  const size_t ours = used_after - std::min(used_after, used_before);
  // Above the baseline: the whole context when this session made it; else what its handles and
  // first run added to the context an earlier session measured.
  const size_t grown = used_warm - std::min(used_warm, ours + other);
  if (context_existed == false) {
    fp.context_after_warmup = grown;
    record_first_context_figure({fp.context, grown, fp.context_source, true});
  } else {
    const bool reused = context_existed.value_or(false) && first_context.has_value();
    fp.context_after_warmup = (reused ? first_context->after_warmup : 0) + grown;
  }
  return std::unique_ptr<Session>(new Session(std::move(impl)));
}

Result<std::vector<ir::Tensor>> Session::run(const std::map<std::string, ir::Tensor>& inputs,
                                             RunTiming* timing) {
  Impl& s = *impl_;
  const auto t0 = std::chrono::steady_clock::now();
  for (const auto& input : inputs) {
    // (Not a structured binding: clang 14 cannot capture one in the lambda.)
    const std::string& name = input.first;
    const bool known = std::any_of(s.inputs.begin(), s.inputs.end(),
                                   [&](const Staging& st) { return st.name == name; });
    if (!known) return invalid_argument("'" + name + "' is not an input of the graph");
  }
  for (Staging& in : s.inputs) {
    auto it = inputs.find(in.name);
    if (it == inputs.end())
      return invalid_argument("input '" + in.name + "' is not given (planned " +
                              std::string(ir::dtype_name(in.device.dtype)) + " " +
                              ir::Shape::of(in.device.dims).to_string() + ")");
    const ir::Tensor& t = it->second;
    XOPT_RETURN_IF_ERROR(check_input(spec_of(in), t.dtype(), t.dims()));
    if (t.nbytes() > 0) std::memcpy(in.host.data(), t.raw_data(), t.nbytes());
    s.host_transfer_bytes += t.nbytes();
  }
  Impl::Claim claim(s.shared.get());
  if (s.shared && !claim.held()) return s.claim_error();
  XOPT_CUDA_RETURN_IF_ERROR(cudaEventRecord(s.start, s.stream));
  XOPT_RETURN_IF_ERROR(s.launch_once());
  XOPT_CUDA_RETURN_IF_ERROR(cudaEventRecord(s.stop, s.stream));
  XOPT_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(s.stream));
  std::vector<ir::Tensor> results;
  results.reserve(s.outputs.size());
  for (Staging& out : s.outputs) {
    ir::Tensor t(out.device.dtype, out.device.dims);
    if (t.nbytes() > 0) std::memcpy(t.mutable_raw_data(), out.host.data(), t.nbytes());
    s.host_transfer_bytes += t.nbytes();
    results.push_back(std::move(t));
  }
  if (timing != nullptr) {
    XOPT_CUDA_RETURN_IF_ERROR(cudaEventElapsedTime(&timing->gpu_ms, s.start, s.stop));
    timing->host_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
  return results;
}

Status Session::run_device(const std::vector<TensorRef>& inputs,
                           const std::vector<TensorRef>& outputs, void* stream, RunTiming* timing) {
  Impl& s = *impl_;
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<const TensorRef*> in_of(s.inputs.size(), nullptr);
  for (const TensorRef& r : inputs) {
    size_t i = 0;
    while (i < s.inputs.size() && s.inputs[i].name != r.name) ++i;
    if (i == s.inputs.size())
      return invalid_argument("'" + r.name + "' is not an input of the graph");
    if (in_of[i] != nullptr) return invalid_argument("input '" + r.name + "' is given twice");
    in_of[i] = &r;
  }
  for (size_t i = 0; i < s.inputs.size(); ++i) {
    const IoSpec spec = spec_of(s.inputs[i]);
    if (in_of[i] == nullptr)
      return invalid_argument("input '" + spec.name + "' is not given (planned " +
                              std::string(ir::dtype_name(spec.dtype)) + " " +
                              ir::Shape::of(spec.dims).to_string() + ")");
    XOPT_RETURN_IF_ERROR(check_input(spec, in_of[i]->dtype, in_of[i]->dims));
    if (spec.nbytes() > 0 && in_of[i]->data == nullptr)
      return invalid_argument("input '" + spec.name + "' has no data");
  }
  if (outputs.size() != s.outputs.size())
    return invalid_argument("run_device: " + std::to_string(outputs.size()) +
                            " output buffers for " + std::to_string(s.outputs.size()) +
                            " graph outputs");
  for (size_t i = 0; i < outputs.size(); ++i) {
    const IoSpec spec = spec_of(s.outputs[i]);
    const TensorRef& r = outputs[i];
    if (r.dtype != spec.dtype || r.dims != spec.dims)
      return invalid_argument(
          "output buffer " + std::to_string(i) + " is " + std::string(ir::dtype_name(r.dtype)) +
          " " + ir::Shape::of(r.dims).to_string() + " but output '" + spec.name + "' is " +
          std::string(ir::dtype_name(spec.dtype)) + " " + ir::Shape::of(spec.dims).to_string());
    if (spec.nbytes() > 0 && r.data == nullptr)
      return invalid_argument("output buffer for '" + spec.name + "' has no data");
  }
  // Host addresses are counted (the figure run_device exists to keep at zero for device tensors).
  size_t host_bytes = 0;
  for (size_t i = 0; i < s.inputs.size(); ++i)
    if (s.inputs[i].device.nbytes() > 0) {
      XOPT_ASSIGN_OR_RETURN(bool host,
                            is_host_pointer(in_of[i]->data, "input '" + s.inputs[i].name + "'"));
      if (host) host_bytes += s.inputs[i].device.nbytes();
    }
  for (size_t i = 0; i < outputs.size(); ++i)
    if (s.outputs[i].device.nbytes() > 0) {
      XOPT_ASSIGN_OR_RETURN(
          bool host,
          is_host_pointer(outputs[i].data, "output buffer for '" + s.outputs[i].name + "'"));
      if (host) host_bytes += s.outputs[i].device.nbytes();
    }

  Impl::Claim claim(s.shared.get());
  if (s.shared && !claim.held()) return s.claim_error();
  if (s.caller_ready == nullptr) {
    XOPT_CUDA_RETURN_IF_ERROR(cudaEventCreateWithFlags(&s.caller_ready, cudaEventDisableTiming));
    XOPT_CUDA_RETURN_IF_ERROR(cudaEventCreateWithFlags(&s.device_done, cudaEventDisableTiming));
  }
  auto caller = static_cast<cudaStream_t>(stream);
  // The caller's queued work (what produced the inputs) comes first.
  XOPT_CUDA_RETURN_IF_ERROR(cudaEventRecord(s.caller_ready, caller));
  XOPT_CUDA_RETURN_IF_ERROR(cudaStreamWaitEvent(s.stream, s.caller_ready, 0));
  XOPT_CUDA_RETURN_IF_ERROR(cudaEventRecord(s.start, s.stream));
  for (size_t i = 0; i < s.inputs.size(); ++i)
    if (s.inputs[i].device.nbytes() > 0)
      XOPT_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(s.inputs[i].device.data, in_of[i]->data,
                                                s.inputs[i].device.nbytes(), cudaMemcpyDefault,
                                                s.stream));
  XOPT_RETURN_IF_ERROR(s.launch_without_staging());
  for (size_t i = 0; i < outputs.size(); ++i)
    if (s.outputs[i].device.nbytes() > 0)
      XOPT_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(outputs[i].data, s.outputs[i].device.data,
                                                s.outputs[i].device.nbytes(), cudaMemcpyDefault,
                                                s.stream));
  XOPT_CUDA_RETURN_IF_ERROR(cudaEventRecord(s.stop, s.stream));
  XOPT_CUDA_RETURN_IF_ERROR(cudaEventRecord(s.device_done, s.stream));
  XOPT_CUDA_RETURN_IF_ERROR(cudaStreamWaitEvent(caller, s.device_done, 0));
  XOPT_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(s.stream));
  s.host_transfer_bytes += host_bytes;
  if (timing != nullptr) {
    XOPT_CUDA_RETURN_IF_ERROR(cudaEventElapsedTime(&timing->gpu_ms, s.start, s.stop));
    timing->host_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
  return Status::ok();
}

std::vector<IoSpec> Session::input_specs() const {
  std::vector<IoSpec> out;
  for (const Staging& s : impl_->inputs) out.push_back(spec_of(s));
  return out;
}

std::vector<IoSpec> Session::output_specs() const {
  std::vector<IoSpec> out;
  for (const Staging& s : impl_->outputs) out.push_back(spec_of(s));
  return out;
}

size_t Session::host_transfer_bytes() const {
  return impl_->host_transfer_bytes;
}

Result<std::vector<NodeTime>> Session::profile(int iterations) {
  Impl& s = *impl_;
  if (iterations <= 0) return invalid_argument("profile: iterations must be positive");
  Impl::Claim claim(s.shared.get());
  if (s.shared && !claim.held()) return s.claim_error();
  const size_t n = s.launches.size();
  std::vector<cudaEvent_t> events(n + 1, nullptr);
  auto destroy = [&] {
    for (cudaEvent_t e : events)
      if (e != nullptr) cudaEventDestroy(e);
  };
  std::vector<double> total(n, 0.0);
  Status st = [&]() -> Status {
    for (cudaEvent_t& e : events) XOPT_CUDA_RETURN_IF_ERROR(cudaEventCreate(&e));
    for (int it = 0; it < iterations; ++it) {
      XOPT_RETURN_IF_ERROR(s.offload_begin());
      XOPT_CUDA_RETURN_IF_ERROR(cudaEventRecord(events[0], s.stream));
      for (size_t i = 0; i < n; ++i) {
        // A node's time includes its wait for an offloaded weight's copy.
        XOPT_RETURN_IF_ERROR(s.offload_before(i));
        LaunchEnv env{s.stream, s.workspace_of_launch(i), s.workspace_of[i]};
        Status launched = s.launches[i](env);
        if (!launched.is_ok()) return launched.with_context(s.node_names[i] + ": ");
        XOPT_RETURN_IF_ERROR(s.offload_after(i));
        XOPT_CUDA_RETURN_IF_ERROR(cudaEventRecord(events[i + 1], s.stream));
      }
      XOPT_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(s.stream));
      for (size_t i = 0; i < n; ++i) {
        float ms = 0;
        XOPT_CUDA_RETURN_IF_ERROR(cudaEventElapsedTime(&ms, events[i], events[i + 1]));
        total[i] += ms;
      }
    }
    return Status::ok();
  }();
  destroy();
  XOPT_RETURN_IF_ERROR(st);
  std::vector<NodeTime> out(n);
  for (size_t i = 0; i < n; ++i)
    out[i] = {s.node_names[i], s.node_ops[i], total[i] / static_cast<double>(iterations)};
  return out;
}

}  // namespace xopt::cuda
