#include "executor/cuda/session.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>

#include "executor/cpu/session.h"
#include "executor/cuda/check.h"
#include "executor/cuda/device_memory.h"
#include "executor/cuda/session_impl.h"
#include "executor/cuda/session_layout.h"
#include "executor/cuda/session_phases.h"
#include "planner/offload.h"

namespace xopt::cuda {

namespace {

std::string version_string(int v) {  // 13000 -> "13.0"
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

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
  std::vector<const ir::Node*> nodes;
  for (const ir::Node* n : graph.nodes()) nodes.push_back(n);
  return find_kernels(nodes).status();
}

std::string DeviceInfo::summary() const {
  const size_t major = cudnn_version / 10000, minor = (cudnn_version % 10000) / 100,
               patch = cudnn_version % 100;
  return name + " (sm_" + std::to_string(compute_capability) + "), driver " +
         version_string(driver_version) + ", CUDA runtime " + version_string(runtime_version) +
         ", cuDNN " + std::to_string(major) + "." + std::to_string(minor) + "." +
         std::to_string(patch);
}

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
  // Every node needs a kernel, the offload schedule (unless told to keep every weight resident)
  // must fit this graph, and every tensor needs its place: all known before any device work.
  XOPT_ASSIGN_OR_RETURN(std::vector<const ir::Node*> order, exec::execution_order(g, &plan));
  XOPT_ASSIGN_OR_RETURN(const std::vector<const KernelDef*> kernels, find_kernels(order));
  std::optional<planner::OffloadPlan> offload;
  if (!options.ignore_offload) {
    XOPT_ASSIGN_OR_RETURN(offload, planner::read_offload(model));
  }
  XOPT_ASSIGN_OR_RETURN(
      const SessionLayout layout,
      lay_out_session(g, plan, std::move(order), offload,
                      LayoutOptions{options.workspace_limit, options.node_workspace_limit}));
  if (options.shared_arena)
    XOPT_RETURN_IF_ERROR(check_fits_shared_arena(plan, options.shared_arena->shared()));

  auto impl = std::make_unique<Impl>();
  impl->use_graph = options.use_graph;
  LoadState load;
  XOPT_RETURN_IF_ERROR(measure_context(*impl, options, load));
  XOPT_RETURN_IF_ERROR(allocate_regions(*impl, layout, options, load));
  XOPT_RETURN_IF_ERROR(compile_thunks(*impl, layout, kernels, options, load));
  XOPT_RETURN_IF_ERROR(stage_io(*impl, layout));
  XOPT_RETURN_IF_ERROR(capture_graph(*impl, load));
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

namespace {

// The caller's tensor for each planned input (parallel to `planned`): every input given once, by
// name, as planned.
Result<std::vector<const TensorRef*>> match_inputs(const std::vector<Staging>& planned,
                                                   const std::vector<TensorRef>& inputs) {
  std::vector<const TensorRef*> in_of(planned.size(), nullptr);
  for (const TensorRef& r : inputs) {
    size_t i = 0;
    while (i < planned.size() && planned[i].name != r.name) ++i;
    if (i == planned.size())
      return invalid_argument("'" + r.name + "' is not an input of the graph");
    if (in_of[i] != nullptr) return invalid_argument("input '" + r.name + "' is given twice");
    in_of[i] = &r;
  }
  for (size_t i = 0; i < planned.size(); ++i) {
    const IoSpec spec = spec_of(planned[i]);
    if (in_of[i] == nullptr)
      return invalid_argument("input '" + spec.name + "' is not given (planned " +
                              std::string(ir::dtype_name(spec.dtype)) + " " +
                              ir::Shape::of(spec.dims).to_string() + ")");
    XOPT_RETURN_IF_ERROR(check_input(spec, in_of[i]->dtype, in_of[i]->dims));
    if (spec.nbytes() > 0 && in_of[i]->data == nullptr)
      return invalid_argument("input '" + spec.name + "' has no data");
  }
  return in_of;
}

// One buffer per graph output, in graph order, each as planned.
Status check_output_buffers(const std::vector<Staging>& planned,
                            const std::vector<TensorRef>& outputs) {
  if (outputs.size() != planned.size())
    return invalid_argument("run_device: " + std::to_string(outputs.size()) +
                            " output buffers for " + std::to_string(planned.size()) +
                            " graph outputs");
  for (size_t i = 0; i < outputs.size(); ++i) {
    const IoSpec spec = spec_of(planned[i]);
    const TensorRef& r = outputs[i];
    if (r.dtype != spec.dtype || r.dims != spec.dims)
      return invalid_argument(
          "output buffer " + std::to_string(i) + " is " + std::string(ir::dtype_name(r.dtype)) +
          " " + ir::Shape::of(r.dims).to_string() + " but output '" + spec.name + "' is " +
          std::string(ir::dtype_name(spec.dtype)) + " " + ir::Shape::of(spec.dims).to_string());
    if (spec.nbytes() > 0 && r.data == nullptr)
      return invalid_argument("output buffer for '" + spec.name + "' has no data");
  }
  return Status::ok();
}

// The bytes run_device copies from or to host addresses (the figure it exists to keep at zero for
// device tensors).
Result<size_t> host_bytes_of(const Session::Impl& s, const std::vector<const TensorRef*>& in_of,
                             const std::vector<TensorRef>& outputs) {
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
  return host_bytes;
}

}  // namespace

Status Session::run_device(const std::vector<TensorRef>& inputs,
                           const std::vector<TensorRef>& outputs, void* stream, RunTiming* timing) {
  Impl& s = *impl_;
  const auto t0 = std::chrono::steady_clock::now();
  XOPT_ASSIGN_OR_RETURN(const std::vector<const TensorRef*> in_of, match_inputs(s.inputs, inputs));
  XOPT_RETURN_IF_ERROR(check_output_buffers(s.outputs, outputs));
  XOPT_ASSIGN_OR_RETURN(const size_t host_bytes, host_bytes_of(s, in_of, outputs));

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
