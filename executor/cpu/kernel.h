// The CPU kernel interface. A kernel is a function of a KernelContext; kernels register themselves
// with XOPT_CPU_KERNEL in their own .cc file (one op family per file).
//
//   Status relu(KernelContext& ctx) {
//     const Tensor& x = *ctx.input(0);
//     XOPT_ASSIGN_OR_RETURN(Tensor* y, ctx.output(0, x.dtype(), x.dims()));
//     ...
//   }
//   XOPT_CPU_KERNEL("", "Relu", 6, 21, relu);
//
// Output memory contract (see executor/cpu/allocator.h):
// - Write outputs through the Tensor* that ctx.output() returns. In arena mode that tensor is the
//   value's planned slot. Its bytes are zero, except for a value the plan makes an alias (in-place
//   or view) of another, whose slot already holds that value's bytes: do not rely on zeroed outputs
//   unless you allocate your own scratch.
// - An output may share bytes with an input only when the memory plan says so (alias_of), and then
//   with an input of the same size. Elementwise kernels that read element i before writing element
//   i are safe; a kernel that cannot work in place must read what it needs before writing (or
//   copy).
// - Replacing *y by another tensor (e.g. `*y = x.reshaped(d)`, a view) is allowed: the session then
//   copies the bytes into the planned slot (counted in RunStats::outputs_copied_into_arena), so a
//   view kernel stays correct in arena mode at the price of a copy.
// - A kernel whose output is an input with new dims (Identity, Reshape, ...) calls
//   ctx.forward(i, x.reshaped(d)) instead of output(): with the simple allocator the output shares
//   the input's bytes (no allocation, no copy); in arena mode they are copied into the slot (or
//   left alone when the plan made the slot an alias of the input).
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "executor/cpu/value.h"
#include "executor/kernel_registry.h"
#include "ir/graph.h"
#include "ir/tensor.h"

namespace xopt::exec {

// Where kernel outputs live. The simple allocator gives every output its own buffer; the arena
// allocator places them at the offsets of a MemoryPlan (and refuses shapes that disagree with it).
class OutputAllocator {
 public:
  virtual ~OutputAllocator() = default;
  // zero: the bytes must be zero; otherwise they are unspecified (the kernel writes them all).
  virtual Result<ir::Tensor> allocate(const ir::Value& value, ir::DType dtype,
                                      const std::vector<int64_t>& dims, bool zero) = 0;
  // Whether an output may simply be another tensor (sharing its bytes) instead of an allocation.
  virtual bool can_forward() const { return false; }
};

class KernelContext {
 public:
  KernelContext(const ir::Node& node, std::vector<const ir::Tensor*> inputs,
                std::vector<ir::Tensor>* outputs, OutputAllocator* allocator)
      : node_(node), inputs_(std::move(inputs)), outputs_(outputs), allocator_(allocator) {
    // Sized once up front: pointers returned by output() stay valid while later outputs are made.
    if (outputs_->size() < node_.num_outputs()) outputs_->resize(node_.num_outputs());
  }

  const ir::Node& node() const { return node_; }
  int64_t opset() const { return node_.opset(); }

  // Inputs; nullptr for an omitted optional input (or an index past the end).
  size_t num_inputs() const { return inputs_.size(); }
  const ir::Tensor* input(size_t i) const { return i < inputs_.size() ? inputs_[i] : nullptr; }
  // The value of input i when it is not a tensor (a sequence or an optional), else nullptr;
  // input(i) is nullptr for such an input. Sequence and optional kernels read their inputs here.
  const ExecValue* input_value(size_t i) const {
    return i < input_values_.size() ? input_values_[i] : nullptr;
  }
  void set_input_values(std::vector<const ExecValue*> v) { input_values_ = std::move(v); }
  // Makes output i a sequence or an optional (a tensor value is forwarded, see forward()). These
  // live outside the memory plan, like subgraph values (planner/README.md).
  Status set_output_value(size_t i, ExecValue v);
  // The non-tensor outputs set so far, by output index (the session collects them).
  std::map<size_t, ExecValue>& value_outputs() { return value_outputs_; }
  // Any input or implicit input as an ExecValue (a tensor wrapped): for kernels that pass values
  // through without looking inside (If, Loop, Identity). Undefined when omitted.
  std::optional<ExecValue> any_input(size_t i) const;
  std::optional<ExecValue> any_implicit_input(size_t i) const;
  // Non-tensor outer-scope values, in node().implicit_inputs() order (nullptr where a tensor).
  const std::vector<const ExecValue*>& implicit_values() const { return implicit_values_; }
  void set_implicit_values(std::vector<const ExecValue*> v) { implicit_values_ = std::move(v); }

  // The outer-scope values the node's subgraphs read, in node().implicit_inputs() order (If, Loop
  // and Scan hand them to their bodies); nullptr where not available.
  const std::vector<const ir::Tensor*>& implicit_inputs() const { return implicit_inputs_; }
  void set_implicit_inputs(std::vector<const ir::Tensor*> t) { implicit_inputs_ = std::move(t); }
  // Number of declared outputs; an omitted optional output has no Value and needs no allocation.
  size_t num_outputs() const { return node_.num_outputs(); }
  bool wants_output(size_t i) const { return node_.output(i) != nullptr; }
  // Allocates output i. For an omitted optional output it returns a scratch tensor the kernel may
  // write and that is then dropped.
  Result<ir::Tensor*> output(size_t i, ir::DType dtype, const std::vector<int64_t>& dims);
  // Like output(), but the bytes are unspecified (not zero-filled): for kernels that write every
  // element of the output.
  Result<ir::Tensor*> output_uninit(size_t i, ir::DType dtype, const std::vector<int64_t>& dims);
  // Makes output i hold the contents of `t`: `t` itself (sharing its bytes) when the allocator
  // allows it, else a copy into output(i, t.dtype(), t.dims()) (a memmove, skipped when the slot
  // already is t's bytes).
  Status forward(size_t i, const ir::Tensor& t);

  // Error helper: "node 'conv1' (Conv): <message>".
  Status error(const std::string& message) const;
  Status unsupported(const std::string& message) const;

 private:
  Result<ir::Tensor*> make_output(size_t i, ir::DType dtype, const std::vector<int64_t>& dims,
                                  bool zero);

  const ir::Node& node_;
  std::vector<const ir::Tensor*> inputs_;
  std::vector<ir::Tensor>* outputs_;
  OutputAllocator* allocator_;
  std::deque<ir::Tensor>
      scratch_;  // outputs past the node's declared ones (deque: stable addresses)
  std::vector<const ir::Tensor*> implicit_inputs_;
  std::vector<const ExecValue*> input_values_;
  std::vector<const ExecValue*> implicit_values_;
  std::map<size_t, ExecValue> value_outputs_;
};

using KernelFn = std::function<Status(KernelContext&)>;

struct KernelDef {
  std::string domain;  // "" or "com.microsoft"
  std::string op_type;
  int since_version;  // first opset (of that domain) this kernel implements
  int until_version;  // last opset it implements (inclusive)
  KernelFn fn;
};

// The CPU kernels (executor/kernel_registry.h): find(domain, op, opset) is the kernel, or nullptr.
using KernelRegistry = KernelRegistryOf<KernelDef>;

struct KernelRegistrar {
  KernelRegistrar(const char* domain, const char* op, int since, int until, KernelFn fn) {
    KernelRegistry::global().add({domain, op, since, until, std::move(fn)});
  }
};

}  // namespace xopt::exec

#define XOPT_CPU_KERNEL(domain, op, since, until, fn)                                       \
  static const ::xopt::exec::KernelRegistrar XOPT_CONCAT(xopt_kernel_registrar_, __LINE__)( \
      domain, op, since, until, fn)
