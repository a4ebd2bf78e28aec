// xopt._xopt: the C++ core as the Python package sees it. xopt.optimize calls the pipeline library
// directly (python/src/optimize.cc) and the drawings the viz library (python/src/viz.cc); Session
// runs a model with the CPU reference executor (or the CUDA one, in a build with it), numpy or
// DLPack in and out; xopt.validate calls the validation library (python/src/validate.cc).
// `python -m xopt` runs the xopt command line itself (printing as it does): no command line runs
// in process for any other call, and no output is captured.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "executor/cpu/session.h"
#include "executor/cpu/validate.h"
#include "ir/onnx_io.h"
#include "planner/annotate.h"
#include "planner/memory_plan.h"
#include "planner/offload.h"
#include "python/src/errors.h"
#include "python/src/optimize.h"
#include "python/src/validate.h"
#include "python/src/viz.h"
#include "tools/xopt/command.h"
#include "tools/xopt/device.h"
#include "tools/xopt/validate.h"

#ifdef XOPT_WITH_CUDA
#include <cuda_runtime.h>

#include "executor/cuda/session.h"
#endif

namespace nb = nanobind;
using namespace nb::literals;

namespace xopt::python {
namespace {

// Runs `main_fn` on `args` (args[0] is the program name), printing as the command line does.
template <typename Fn>
int run_main(Fn main_fn, const std::vector<std::string>& args) {
  std::vector<std::string> copy = args;
  std::vector<char*> argv;
  argv.reserve(copy.size() + 1);
  for (std::string& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  const int rc = main_fn(static_cast<int>(copy.size()), argv.data());
  std::fflush(stdout);
  std::fflush(stderr);
  return rc;
}

ir::Model load_or_raise(const std::string& path) {
  auto m = ir::load_model(path);
  if (!m.is_ok()) raise_status(m.status(), path);
  return std::move(m).value();
}

// The plan stored in a model, as its JSON document, after the checks `xopt plan-info` makes, with
// the memory breakdown xopt prints (its offload schedule included) beside it.
std::string plan_json(const std::string& path) {
  ir::Model model = load_or_raise(path);
  auto plan = planner::read_plan(model);
  if (!plan.is_ok()) raise_status(plan.status(), path);
  Status st = planner::check_plan(*plan);
  if (!st.is_ok())
    raise_error(tool::kExitBadModel,
                tool::error_line("stored plan is invalid: " + st.message(), path));
  auto offload = planner::read_offload(model);
  if (!offload.is_ok()) raise_status(offload.status(), path);
  return plan_document(*plan, *offload ? &**offload : nullptr);
}

// ---- tensors: numpy / DLPack <-> ir::Tensor ----

using AnyArray = nb::ndarray<nb::ro>;

Result<ir::DType> dtype_of(const nb::dlpack::dtype& t) {
  using Code = nb::dlpack::dtype_code;
  const auto code = static_cast<Code>(t.code);
  if (t.lanes == 1) {
    if (code == Code::Float && t.bits == 32) return ir::DType::kFloat;
    if (code == Code::Float && t.bits == 64) return ir::DType::kDouble;
    if (code == Code::Float && t.bits == 16) return ir::DType::kFloat16;
    if (code == Code::Bfloat && t.bits == 16) return ir::DType::kBFloat16;
    if (code == Code::Int && t.bits == 8) return ir::DType::kInt8;
    if (code == Code::Int && t.bits == 16) return ir::DType::kInt16;
    if (code == Code::Int && t.bits == 32) return ir::DType::kInt32;
    if (code == Code::Int && t.bits == 64) return ir::DType::kInt64;
    if (code == Code::UInt && t.bits == 8) return ir::DType::kUInt8;
    if (code == Code::UInt && t.bits == 16) return ir::DType::kUInt16;
    if (code == Code::UInt && t.bits == 32) return ir::DType::kUInt32;
    if (code == Code::UInt && t.bits == 64) return ir::DType::kUInt64;
    if (code == Code::Bool && t.bits == 8) return ir::DType::kBool;
  }
  return invalid_argument("unsupported element type (DLPack code " + std::to_string(t.code) + ", " +
                          std::to_string(t.bits) + " bits)");
}

nb::dlpack::dtype dlpack_dtype(ir::DType t) {
  using Code = nb::dlpack::dtype_code;
  auto make = [](Code c, int bits) {
    nb::dlpack::dtype d;
    d.code = static_cast<uint8_t>(c);
    d.bits = static_cast<uint8_t>(bits);
    d.lanes = 1;
    return d;
  };
  switch (t) {
    case ir::DType::kFloat:
      return make(Code::Float, 32);
    case ir::DType::kDouble:
      return make(Code::Float, 64);
    case ir::DType::kFloat16:
      return make(Code::Float, 16);
    case ir::DType::kBFloat16:
      return make(Code::Bfloat, 16);
    case ir::DType::kInt8:
      return make(Code::Int, 8);
    case ir::DType::kInt16:
      return make(Code::Int, 16);
    case ir::DType::kInt32:
      return make(Code::Int, 32);
    case ir::DType::kInt64:
      return make(Code::Int, 64);
    case ir::DType::kUInt8:
      return make(Code::UInt, 8);
    case ir::DType::kUInt16:
      return make(Code::UInt, 16);
    case ir::DType::kUInt32:
      return make(Code::UInt, 32);
    case ir::DType::kUInt64:
      return make(Code::UInt, 64);
    case ir::DType::kBool:
      return make(Code::Bool, 8);
    default:
      return make(Code::Float, 0);
  }
}

// Whether the array's elements lie in C order without gaps.
bool c_contiguous(const AnyArray& a) {
  int64_t expected = 1;
  for (size_t i = a.ndim(); i-- > 0;) {
    if (a.shape(i) != 1 && a.stride(i) != expected) return false;
    expected *= static_cast<int64_t>(a.shape(i));
  }
  return true;
}

[[maybe_unused]] bool on_cuda(const AnyArray& a) {
  return a.device_type() == nb::device::cuda::value ||
         a.device_type() == nb::device::cuda_managed::value;
}

// A copy of `a` (host memory, or CUDA memory copied to the host) as an ir::Tensor.
ir::Tensor to_tensor(const std::string& name, const AnyArray& a) {
  auto dtype = dtype_of(a.dtype());
  if (!dtype.is_ok())
    raise_error(tool::kExitUsage, "input '" + name + "': " + dtype.status().message());
  if (!c_contiguous(a))
    raise_error(tool::kExitUsage,
                "input '" + name + "': not C-contiguous (pass a contiguous copy)");
  std::vector<int64_t> dims;
  for (size_t i = 0; i < a.ndim(); ++i) dims.push_back(static_cast<int64_t>(a.shape(i)));
  ir::Tensor t(*dtype, dims);
  const size_t bytes = t.nbytes();
  if (bytes == 0) return t;
  const int device = a.device_type();
  if (device == nb::device::cpu::value || device == nb::device::cuda_host::value) {
    std::memcpy(t.mutable_raw_data(), a.data(), bytes);
    return t;
  }
#ifdef XOPT_WITH_CUDA
  if (on_cuda(a)) {
    const cudaError_t e = cudaMemcpy(t.mutable_raw_data(), a.data(), bytes, cudaMemcpyDeviceToHost);
    if (e != cudaSuccess)
      raise_error(tool::kExitBadModel,
                  "input '" + name + "': copying from the GPU failed: " + cudaGetErrorString(e));
    return t;
  }
#endif
  raise_error(tool::kExitUsage, "input '" + name + "': DLPack device type " +
                                    std::to_string(device) +
                                    " is not supported by this build (CPU arrays are; CUDA ones "
                                    "in a build with the CUDA executor)");
}

// A host array that owns `t` (no copy): numpy's type when `numpy`, else nanobind's array with
// __dlpack__ and __dlpack_device__ (the array API's protocol).
nb::object from_tensor(const std::string& name, ir::Tensor t, bool numpy) {
  if (t.dtype() == ir::DType::kString || dlpack_dtype(t.dtype()).bits == 0)
    raise_error(tool::kExitUsage, "output '" + name + "': element type " +
                                      std::string(ir::dtype_name(t.dtype())) +
                                      " is not supported by the Python Session");
  auto* owned = new ir::Tensor(std::move(t));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<ir::Tensor*>(p); });
  std::vector<size_t> shape;
  for (int64_t d : owned->dims()) shape.push_back(static_cast<size_t>(d));
  void* data = owned->nbytes() == 0 ? nullptr : owned->mutable_raw_data();
  if (numpy)
    return nb::cast(nb::ndarray<nb::numpy>(data, shape.size(), shape.data(), owner, nullptr,
                                           dlpack_dtype(owned->dtype())));
  return nb::cast(nb::ndarray<nb::array_api>(data, shape.size(), shape.data(), owner, nullptr,
                                             dlpack_dtype(owned->dtype())));
}

std::map<std::string, AnyArray> to_arrays(const nb::dict& feeds) {
  std::map<std::string, AnyArray> arrays;
  for (auto [key, value] : feeds) {
    const std::string name = nb::cast<std::string>(key);
    AnyArray a;
    if (!nb::try_cast(value, a))
      raise_error(tool::kExitUsage, "input '" + name +
                                        "': expected a numpy array or a DLPack tensor, got " +
                                        nb::cast<std::string>(nb::str(value.type())));
    arrays.emplace(name, a);
  }
  return arrays;
}

std::map<std::string, ir::Tensor> to_inputs(const nb::dict& feeds) {
  std::map<std::string, ir::Tensor> inputs;
  for (const auto& [name, a] : to_arrays(feeds)) inputs.emplace(name, to_tensor(name, a));
  return inputs;
}

nb::list value_infos(const std::vector<ir::Value*>& values) {
  nb::list out;
  for (const ir::Value* v : values) {
    nb::list shape;
    const ir::Shape& s = v->shape();
    if (s.has_rank())
      for (size_t i = 0; i < s.rank(); ++i) {
        if (s[i].is_known())
          shape.append(s[i].value);
        else if (!s[i].symbol.empty())
          shape.append(s[i].symbol);
        else
          shape.append(nb::none());
      }
    out.append(nb::make_tuple(v->name(), std::string(ir::dtype_name(v->dtype())), shape));
  }
  return out;
}

// ---- Session ----

class Session {
 public:
  Session(const std::string& path, const std::string& device, bool use_plan, int threads)
      : path_(path), device_(device), threads_(threads), model_(load_or_raise(path)) {
    tool::DeviceFlags flags;
    flags.device = device;
    if (Status st = tool::check_device_flags(flags); !st.is_ok()) raise_status(st);
    if (use_plan && model_.metadata("xopt.memory_plan").has_value()) {
      auto plan = planner::read_plan(model_);
      if (!plan.is_ok()) raise_status(plan.status(), path);
      plan_ = std::move(plan).value();
    }
#ifdef XOPT_WITH_CUDA
    if (device == "cuda") {
      if (!plan_)
        raise_error(tool::kExitUsage,
                    tool::error_line("device='cuda' runs a planned model: optimize it with the "
                                     "plan group first (passes='fold,fuse,plan')",
                                     path));
      auto s = cuda::Session::create(model_, *plan_);
      if (!s.is_ok()) raise_status(s.status(), path);
      cuda_ = std::move(s).value();
    }
#endif
  }

  nb::list run(const std::optional<std::vector<std::string>>& names, const nb::dict& feeds,
               bool numpy, std::uintptr_t stream) {
#ifdef XOPT_WITH_CUDA
    if (cuda_) {
      std::map<std::string, AnyArray> arrays = to_arrays(feeds);
      if (std::any_of(arrays.begin(), arrays.end(),
                      [](const auto& kv) { return on_cuda(kv.second); }))
        return run_device(names, arrays, numpy, stream);
    }
#endif
    std::map<std::string, ir::Tensor> inputs = to_inputs(feeds);
    Result<std::vector<ir::Tensor>> outputs = invalid_argument("not run");
    {
      nb::gil_scoped_release release;
      outputs = run_inputs(inputs);
    }
    if (!outputs.is_ok()) raise_status(outputs.status(), path_);
    std::vector<nb::object> arrays;
    for (size_t i = 0; i < outputs->size(); ++i)
      arrays.push_back(from_tensor(model_.graph->outputs()[i]->name(), (*outputs)[i], numpy));
    return select_outputs(names, arrays);
  }

  // Bytes the CUDA session has moved between host and device for graph inputs and outputs (0 on
  // the CPU): what a run on CUDA tensors leaves unchanged.
  size_t host_transfer_bytes() const {
#ifdef XOPT_WITH_CUDA
    if (cuda_) return cuda_->host_transfer_bytes();
#endif
    return 0;
  }

  nb::list select_outputs(const std::optional<std::vector<std::string>>& names,
                          const std::vector<nb::object>& arrays) const {
    const std::vector<ir::Value*>& graph_outputs = model_.graph->outputs();
    std::vector<std::string> wanted;
    if (names && !names->empty())
      wanted = *names;
    else
      for (const ir::Value* v : graph_outputs) wanted.push_back(v->name());
    nb::list result;
    for (const std::string& name : wanted) {
      size_t i = 0;
      while (i < graph_outputs.size() && graph_outputs[i]->name() != name) ++i;
      if (i == graph_outputs.size()) {
        std::string all;
        for (const ir::Value* v : graph_outputs) all += (all.empty() ? "" : ", ") + v->name();
        raise_error(
            tool::kExitUsage,
            tool::error_line("'" + name + "' is not an output of the graph (outputs: " + all + ")",
                             path_));
      }
      result.append(arrays[i]);
    }
    return result;
  }

#ifdef XOPT_WITH_CUDA
  // Feeds with at least one CUDA tensor: every input is read where it lies (device-to-device for
  // CUDA tensors; host arrays through CUDA's unified addressing), no pinned staging, and the
  // outputs are written straight into new CUDA arrays (`numpy` false: DLPack, owned by the array)
  // or host arrays (`numpy`). The session's work follows what `stream` has queued (0: the legacy
  // default stream, PyTorch's default).
  nb::list run_device(const std::optional<std::vector<std::string>>& names,
                      const std::map<std::string, AnyArray>& arrays, bool numpy,
                      std::uintptr_t stream) {
    std::vector<cuda::TensorRef> inputs;
    for (const auto& [name, a] : arrays) {
      auto dtype = dtype_of(a.dtype());
      if (!dtype.is_ok())
        raise_error(tool::kExitUsage, "input '" + name + "': " + dtype.status().message());
      if (!c_contiguous(a))
        raise_error(tool::kExitUsage,
                    "input '" + name + "': not C-contiguous (pass a contiguous copy)");
      const int device = a.device_type();
      if (device != nb::device::cpu::value && device != nb::device::cuda_host::value && !on_cuda(a))
        raise_error(tool::kExitUsage, "input '" + name + "': DLPack device type " +
                                          std::to_string(device) + " is not supported");
      std::vector<int64_t> dims;
      for (size_t i = 0; i < a.ndim(); ++i) dims.push_back(static_cast<int64_t>(a.shape(i)));
      inputs.push_back({name, *dtype, dims, const_cast<void*>(a.data())});
    }
    std::vector<cuda::TensorRef> outputs;
    std::vector<nb::object> arrays_out;
    for (const cuda::IoSpec& spec : cuda_->output_specs()) {
      if (dlpack_dtype(spec.dtype).bits == 0)
        raise_error(tool::kExitUsage, "output '" + spec.name + "': element type " +
                                          std::string(ir::dtype_name(spec.dtype)) +
                                          " is not supported by the Python Session");
      std::vector<size_t> shape(spec.dims.begin(), spec.dims.end());
      if (numpy) {
        auto* owned = new ir::Tensor(spec.dtype, spec.dims);
        nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<ir::Tensor*>(p); });
        void* data = owned->nbytes() == 0 ? nullptr : owned->mutable_raw_data();
        outputs.push_back({spec.name, spec.dtype, spec.dims, data});
        arrays_out.push_back(nb::cast(nb::ndarray<nb::numpy>(
            data, shape.size(), shape.data(), owner, nullptr, dlpack_dtype(spec.dtype))));
        continue;
      }
      void* data = nullptr;
      if (spec.nbytes() > 0) {
        const cudaError_t e = cudaMalloc(&data, spec.nbytes());
        if (e != cudaSuccess)
          raise_error(tool::kExitBadModel, "output '" + spec.name + "': cudaMalloc of " +
                                               std::to_string(spec.nbytes()) +
                                               " bytes failed: " + cudaGetErrorString(e));
      }
      nb::capsule owner(data, [](void* p) noexcept { cudaFree(p); });
      int device_id = 0;
      cudaGetDevice(&device_id);
      outputs.push_back({spec.name, spec.dtype, spec.dims, data});
      arrays_out.push_back(nb::cast(nb::ndarray<nb::array_api>(
          data, shape.size(), shape.data(), owner, nullptr, dlpack_dtype(spec.dtype),
          nb::device::cuda::value, device_id)));
    }
    Status st = Status::ok();
    {
      nb::gil_scoped_release release;
      st = cuda_->run_device(inputs, outputs, reinterpret_cast<void*>(stream));
    }
    if (!st.is_ok()) raise_status(st, path_);
    return select_outputs(names, arrays_out);
  }
#endif

  nb::list inputs() const {
    return value_infos(model_.graph->runtime_inputs());
  }
  nb::list outputs() const {
    return value_infos(model_.graph->outputs());
  }
  bool planned() const {
    return plan_.has_value();
  }
  const std::string& device() const {
    return device_;
  }
  const std::string& path() const {
    return path_;
  }

 private:
  Result<std::vector<ir::Tensor>> run_inputs(const std::map<std::string, ir::Tensor>& inputs) {
#ifdef XOPT_WITH_CUDA
    if (cuda_) return cuda_->run(inputs);
#endif
    exec::RunOptions o;
    o.plan = plan_ ? &*plan_ : nullptr;
    o.threads = threads_;
    return exec::run_model(model_, inputs, o);
  }

  std::string path_;
  std::string device_;
  int threads_ = 0;
  ir::Model model_;
  std::optional<planner::MemoryPlan> plan_;
#ifdef XOPT_WITH_CUDA
  std::unique_ptr<cuda::Session> cuda_;
#endif
};

// The CPU executor as `xopt validate` runs a model (exec::run_for_validation: inside its plan when
// it carries one), outputs by name. Tests compare Session with it.
nb::dict run_reference(const std::string& path, const nb::dict& feeds) {
  ir::Model model = load_or_raise(path);
  std::map<std::string, ir::Tensor> inputs = to_inputs(feeds);
  auto r = exec::run_for_validation(model, inputs);
  if (!r.is_ok()) raise_status(r.status(), path);
  nb::dict out;
  for (size_t i = 0; i < r->names.size(); ++i)
    out[r->names[i].c_str()] = from_tensor(r->names[i], r->tensors[i], true);
  return out;
}

}  // namespace
}  // namespace xopt::python

NB_MODULE(_xopt, m) {
  using namespace xopt::python;
  m.doc() = "xopt's C++ core (use the xopt package, not this module)";
  bind_pipeline(m);
  bind_validate(m);
  bind_viz(m);
  m.def(
      "run_cli",
      [](const std::vector<std::string>& args) { return run_main(xopt::tool::run_cli, args); },
      "args"_a,
      "Runs the xopt command line itself (`python -m xopt`; args[0] is the program name), "
      "printing as it does; returns its exit code.");
  m.def("plan_json", &plan_json, "path"_a,
        "The memory plan stored in a model as JSON, checked as `xopt plan-info` checks it.");
  m.def("run_reference", &run_reference, "path"_a, "feeds"_a,
        "Runs a model with the CPU executor as `xopt validate` does: {output name: array}.");
  m.def("cuda_built", &xopt::tool::cuda_built, "Whether this build has the CUDA executor.");
  nb::class_<Session>(m, "Session")
      .def(nb::init<const std::string&, const std::string&, bool, int>(), "path"_a,
           "device"_a = "cpu", "use_plan"_a = true, "threads"_a = 0)
      .def("run", &Session::run, "output_names"_a.none(), "feeds"_a, "numpy"_a = true,
           "stream"_a = 0)
      .def_prop_ro("host_transfer_bytes", &Session::host_transfer_bytes)
      .def("inputs", &Session::inputs)
      .def("outputs", &Session::outputs)
      .def_prop_ro("planned", &Session::planned)
      .def_prop_ro("device", &Session::device)
      .def_prop_ro("path", &Session::path);
}
