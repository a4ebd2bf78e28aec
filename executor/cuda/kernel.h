// The CUDA kernel interface. Following XLA's GPU runtime, a model is compiled once into a flat list
// of launch records bound to byte ranges of the planned buffers; running is replaying that list
// (captured as a CUDA graph). A kernel is therefore a *compile* function: it reads the node, its
// static shapes and constant inputs, chooses its algorithm, says how much scratch it needs, and
// returns the Launch that the session replays. Nothing is decided while running.
//
//   Result<Launch> relu(CompileContext& ctx) {
//     const DeviceTensor& x = *ctx.input(0);
//     const DeviceTensor& y = *ctx.output(0);
//     if (x.dtype != ir::DType::kFloat) return ctx.unsupported("only float32");
//     return Launch([x, y](const LaunchEnv& env) {
//       return check_launch(launch_relu(x.as<float>(), y.as<float>(), x.numel(), env.stream));
//     });
//   }
//   XOPT_CUDA_KERNEL("", "Relu", 6, 21, relu);
//
// Contract:
// - Every tensor has static dims, taken from the plan-time shapes of its value. Output pointers
//   are the values' planned slots; an output that the plan makes an alias (view or in-place) of
//   an input has the *same* pointer as that input (a Reshape then launches nothing when
//   y.data == x.data). In-place: elementwise kernels that read element i before writing it are
//   safe; others must not assume distinct buffers unless the pointers differ.
// - Outputs are NOT zeroed: a kernel writes every byte of its outputs.
// - A Launch runs asynchronously on env.stream and may be captured into a CUDA graph: it must not
//   allocate, synchronize, copy device memory back to the host, or change state read by other
//   launches. Host-side values it needs (shapes, strides, attributes, constant inputs) are captured
//   by value at compile time.
// - Scratch: call ctx.request_workspace(bytes) at compile time (at most ctx.workspace_limit());
//   env.workspace then points at that many bytes of the shared workspace region (valid only while
//   the launch runs: the next node reuses them).
// - Kernels for .cu code: the device code and a plain C++ launcher (pointers, sizes, stream) live
//   in kernels/<family>.cu with its declaration in kernels/<family>.cuh; the compile function that
//   reads the node lives in kernels/<family>.cc (nvcc never sees the IR or protobuf headers).
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/status.h"
#include "executor/kernel_registry.h"
#include "ir/dtype.h"
#include "ir/graph.h"
#include "ir/tensor.h"

namespace xopt::cuda {

// Library handles, created once per session on its stream (their memory is part of the measured
// CUDA context).
struct Handles {
  cudnnHandle_t cudnn = nullptr;
  cublasLtHandle_t lt = nullptr;
};

// A tensor in device memory with static dims.
struct DeviceTensor {
  void* data = nullptr;
  ir::DType dtype = ir::DType::kUndefined;
  std::vector<int64_t> dims;

  int64_t numel() const;
  size_t nbytes() const;
  size_t rank() const { return dims.size(); }
  template <typename T>
  T* as() const {
    return static_cast<T*>(data);
  }
};

struct LaunchEnv {
  cudaStream_t stream = nullptr;
  void* workspace = nullptr;   // this node's scratch (the shared workspace region)
  size_t workspace_bytes = 0;  // what the node requested
};

// A compiled node, ready to replay.
using Launch = std::function<Status(const LaunchEnv&)>;

// How the session compiles: set by the user (`--tf32`, `--tune`).
struct CompileOptions {
  bool tf32 = false;  // allow TF32 tensor-core math for fp32 GEMMs and convolutions
  bool tune = false;  // time the candidate algorithms once instead of trusting heuristics
};

class CompileContext {
 public:
  CompileContext(const ir::Node& node, std::vector<const DeviceTensor*> inputs,
                 std::vector<const ir::Tensor*> constants, std::vector<const DeviceTensor*> outputs,
                 const Handles& handles, const CompileOptions& options, size_t workspace_limit,
                 cudaStream_t stream)
      : node_(node),
        inputs_(std::move(inputs)),
        constants_(std::move(constants)),
        outputs_(std::move(outputs)),
        handles_(handles),
        options_(options),
        workspace_limit_(workspace_limit),
        stream_(stream) {}

  const ir::Node& node() const { return node_; }
  int64_t opset() const { return node_.opset(); }

  size_t num_inputs() const { return inputs_.size(); }
  // nullptr for an omitted optional input (or an index past the end).
  const DeviceTensor* input(size_t i) const { return i < inputs_.size() ? inputs_[i] : nullptr; }
  // The host bytes of input i when it is a constant (an initializer): shapes, axes, pads, scales,
  // indices. nullptr when the input is computed at run time or omitted.
  const ir::Tensor* constant(size_t i) const {
    return i < constants_.size() ? constants_[i] : nullptr;
  }
  size_t num_outputs() const { return outputs_.size(); }
  // The planned slot of output i; nullptr for an omitted optional output.
  const DeviceTensor* output(size_t i) const { return i < outputs_.size() ? outputs_[i] : nullptr; }

  const Handles& handles() const { return handles_; }
  const CompileOptions& options() const { return options_; }
  // A stream for timing candidates (--tune); the session's own stream, idle during compilation.
  cudaStream_t stream() const { return stream_; }

  // Scratch bytes this node needs while it runs. Choose algorithms within workspace_limit(): the
  // session refuses a request above it, naming the node.
  void request_workspace(size_t bytes) { workspace_ = bytes > workspace_ ? bytes : workspace_; }
  size_t workspace_requested() const { return workspace_; }
  size_t workspace_limit() const { return workspace_limit_; }

  // Algorithm choice. stored_choice(): what an earlier load chose for this node (a `--tune`
  // search kept in the model as metadata "xopt.cuda_algorithms"; "" when none); a kernel that
  // finds it still valid (among the candidates, within the workspace limit) uses it and searches
  // nothing. record_choice(): what this compile chose, in the kernel's own words ("6:1": cuDNN
  // algorithm 6, math type 1), for the next load.
  const std::string& stored_choice() const { return stored_choice_; }
  void set_stored_choice(std::string choice) { stored_choice_ = std::move(choice); }
  void record_choice(std::string choice, bool reused) {
    choice_ = std::move(choice);
    choice_reused_ = reused;
  }
  const std::string& choice() const { return choice_; }
  bool choice_reused() const { return choice_reused_; }

  // "node 'conv1' (Conv): <message>".
  Status error(const std::string& message) const;
  Status unsupported(const std::string& message) const;

 private:
  const ir::Node& node_;
  std::vector<const DeviceTensor*> inputs_;
  std::vector<const ir::Tensor*> constants_;
  std::vector<const DeviceTensor*> outputs_;
  const Handles& handles_;
  const CompileOptions& options_;
  size_t workspace_limit_;
  cudaStream_t stream_;
  size_t workspace_ = 0;
  std::string stored_choice_, choice_;
  bool choice_reused_ = false;
};

using CompileFn = std::function<Result<Launch>(CompileContext&)>;

struct KernelDef {
  std::string domain;  // "" or "com.microsoft"
  std::string op_type;
  int since_version;
  int until_version;  // inclusive
  CompileFn compile;
  // What the claim covers, for `xopt --list-ops --device cuda` (e.g. "float32"; "float32, int64").
  std::string types;
};

// The CUDA kernels (executor/kernel_registry.h, the CPU executor's template).
using KernelRegistry = exec::KernelRegistryOf<KernelDef>;

struct KernelRegistrar {
  KernelRegistrar(const char* domain, const char* op, int since, int until, CompileFn fn,
                  const char* types) {
    KernelRegistry::global().add({domain, op, since, until, std::move(fn), types});
  }
};

}  // namespace xopt::cuda

// XOPT_CUDA_KERNEL(domain, op, since, until, compile_fn) claims float32;
// XOPT_CUDA_KERNEL_TYPES(domain, op, since, until, compile_fn, "float32, int64") states its types.
#define XOPT_CUDA_KERNEL_TYPES(domain, op, since, until, fn, types)                              \
  static const ::xopt::cuda::KernelRegistrar XOPT_CONCAT(xopt_cuda_kernel_registrar_, __LINE__)( \
      domain, op, since, until, fn, types)
#define XOPT_CUDA_KERNEL(domain, op, since, until, fn) \
  XOPT_CUDA_KERNEL_TYPES(domain, op, since, until, fn, "float32")
