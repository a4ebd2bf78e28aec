// Optional ops: Optional, OptionalHasElement, OptionalGetElement. An optional is an ExecValue that
// holds a tensor or a sequence, or nothing; like sequences it lives outside the memory plan.
#include <string>

#include "executor/cpu/kernel.h"
#include "executor/cpu/kernels/tensor_util.h"
#include "ir/value_type.h"

namespace xopt::exec {
namespace {

// Optional(x) holds x; Optional() with attribute `type` is empty.
Status optional_kernel(KernelContext& ctx) {
  if (std::optional<ExecValue> v = ctx.any_input(0)) {
    if (v->is_optional()) return ctx.error("input is itself an optional");
    if (v->is_tensor()) v = ExecValue::of_tensor(own_copy(v->tensor()));  // may be an arena slot
    return ctx.set_output_value(0, ExecValue::some(std::move(*v)));
  }
  const onnx::AttributeProto* type = ctx.node().attr("type");
  if (type == nullptr || !type->has_tp())
    return ctx.error("an Optional without input needs the 'type' attribute");
  const ir::TypeKind k = ir::type_kind(type->tp());
  if (k != ir::TypeKind::kTensor && k != ir::TypeKind::kSequence)
    return ctx.unsupported(std::string("an optional of a ") + ir::type_kind_name(k) +
                           " is not supported");
  return ctx.set_output_value(
      0, ExecValue::none(
             k == ir::TypeKind::kTensor ? ExecValue::Kind::kTensor : ExecValue::Kind::kSequence,
             ir::innermost_dtype(type->tp())));
}

// False for an empty optional or (opset 18) an omitted input; true for a full optional, and
// (opset 18) for a tensor or sequence.
Status optional_has_element(KernelContext& ctx) {
  std::optional<ExecValue> v = ctx.any_input(0);
  if (!v && ctx.opset() < 18) return ctx.error("input is missing");
  const bool has = v && (!v->is_optional() || v->has_element());
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output(0, ir::DType::kBool, {}));
  *y->mutable_data<bool>() = has;
  return Status::ok();
}

// The optional's content (an error when empty); a tensor or sequence (opset 18) passes through.
Status optional_get_element(KernelContext& ctx) {
  std::optional<ExecValue> v = ctx.any_input(0);
  if (!v) return ctx.error("input is missing");
  if (!v->is_optional()) return ctx.set_output_value(0, std::move(*v));
  if (!v->has_element()) return ctx.error("the optional is empty");
  return ctx.set_output_value(0, v->element());
}

}  // namespace

XOPT_CPU_KERNEL("", "Optional", 15, kLatestOpset, optional_kernel);
XOPT_CPU_KERNEL("", "OptionalHasElement", 15, kLatestOpset, optional_has_element);
XOPT_CPU_KERNEL("", "OptionalGetElement", 15, kLatestOpset, optional_get_element);

}  // namespace xopt::exec
