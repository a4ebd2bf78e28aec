#include "executor/cuda/session_impl.h"

namespace xopt::cuda {

Status Session::Impl::offload_begin() {
  if (!offloads()) return Status::ok();
  XOPT_CUDA_RETURN_IF_ERROR(cudaEventRecord(inference_start, stream));
  XOPT_CUDA_RETURN_IF_ERROR(cudaStreamWaitEvent(copy_stream, inference_start, 0));
  return Status::ok();
}

Status Session::Impl::offload_before(size_t k) {
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

Status Session::Impl::offload_after(size_t k) {
  if (offloads() && step_done[k] != nullptr)
    XOPT_CUDA_RETURN_IF_ERROR(cudaEventRecord(step_done[k], stream));
  return Status::ok();
}

Session::Impl::~Impl() {
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

Status Session::Impl::enqueue(bool staging) {
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

Status Session::Impl::capture(cudaGraphExec_t* exec, bool staging) {
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

Status Session::Impl::claim_error() const {
  return invalid_argument("shared arena '" + shared->shared().id +
                          "': another model is running in it (models that share an arena run "
                          "one at a time)");
}

Status Session::Impl::launch_once() {
  if (use_graph) {
    XOPT_CUDA_RETURN_IF_ERROR(cudaGraphLaunch(graph_exec, stream));
    return Status::ok();
  }
  return enqueue();
}

Status Session::Impl::launch_without_staging() {
  if (!use_graph) return enqueue(false);
  if (device_graph_exec == nullptr) XOPT_RETURN_IF_ERROR(capture(&device_graph_exec, false));
  XOPT_CUDA_RETURN_IF_ERROR(cudaGraphLaunch(device_graph_exec, stream));
  return Status::ok();
}

}  // namespace xopt::cuda
