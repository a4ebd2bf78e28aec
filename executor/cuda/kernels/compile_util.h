// Helpers for the compile functions of our own kernel families (kernels/*.cc): element types,
// required inputs, constant integer inputs and axes. Host code only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "executor/cuda/check.h"
#include "executor/cuda/kernel.h"
#include "executor/cuda/kernels/launch_params.h"
#include "ir/dims_string.h"
#include "ir/dtype.h"

namespace xopt::cuda {

// The last opset of the schema history (onnx 1.23) up to which an unchanged op keeps its meaning.
inline constexpr int kLastOpset = 28;

inline std::optional<ElemType> elem_type(ir::DType t) {
  switch (t) {
    case ir::DType::kFloat:
      return ElemType::kFloat;
    case ir::DType::kInt32:
      return ElemType::kInt32;
    case ir::DType::kInt64:
      return ElemType::kInt64;
    case ir::DType::kBool:
      return ElemType::kBool;
    case ir::DType::kFloat16:
      return ElemType::kHalf;
    case ir::DType::kBFloat16:
      return ElemType::kBFloat16;
    default:
      return std::nullopt;
  }
}

// What the float kernels claim in `--list-ops --device cuda`.
inline constexpr const char* kFloatTypes = "float32, float16, bfloat16";

// Whether `t` is a type the float kernels take: float32, float16 or bfloat16.
inline bool is_float_type(ir::DType t) {
  return t == ir::DType::kFloat || t == ir::DType::kFloat16 || t == ir::DType::kBFloat16;
}

// The float element type of `t`, or an unsupported-type error naming the node.
inline Result<ElemType> float_elem(const CompileContext& ctx, ir::DType t) {
  if (!is_float_type(t))
    return ctx.unsupported("element type " + std::string(ir::dtype_name(t)) +
                           " is not supported on the GPU (float32, float16, bfloat16)");
  return *elem_type(t);
}

// Every given tensor (nullptr entries skipped) has element type `t`; else an error naming the node.
inline Status same_type(const CompileContext& ctx, ir::DType t,
                        std::initializer_list<const DeviceTensor*> ts) {
  for (const DeviceTensor* d : ts)
    if (d != nullptr && d->dtype != t)
      return ctx.unsupported("mixed element types (" + std::string(ir::dtype_name(t)) + " and " +
                             std::string(ir::dtype_name(d->dtype)) +
                             ") are not supported on the GPU");
  return Status::ok();
}

inline std::string type_text(ir::DType t) {
  return std::string(ir::dtype_name(t));
}

// Input i, or an error naming it when it is omitted.
inline Result<const DeviceTensor*> need_input(const CompileContext& ctx, size_t i) {
  const DeviceTensor* t = ctx.input(i);
  if (t == nullptr) return ctx.error("input " + std::to_string(i) + " is missing");
  return t;
}
inline Result<const DeviceTensor*> need_output(const CompileContext& ctx, size_t i) {
  const DeviceTensor* t = ctx.output(i);
  if (t == nullptr) return ctx.error("output " + std::to_string(i) + " is missing");
  return t;
}

// The value of input i when it is known at compile time: an initializer, or the output of a
// Constant node (a model that was not folded); nullopt otherwise.
inline std::optional<ir::Tensor> known_value(const CompileContext& ctx, size_t i) {
  if (const ir::Tensor* t = ctx.constant(i)) return *t;
  const ir::Value* v = ctx.input(i) != nullptr ? ctx.node().input(i) : nullptr;
  const ir::Node* p = v != nullptr ? v->producer() : nullptr;
  if (p == nullptr || !p->is("Constant") || v->producer_index() != 0) return std::nullopt;
  if (p->has_attr("value")) return p->attr_tensor("value");
  if (const auto* a = p->attr("value_int"); a != nullptr)
    return ir::Tensor::scalar<int64_t>(a->i());
  if (const auto* a = p->attr("value_ints"); a != nullptr)
    return ir::Tensor::of<int64_t>({a->ints_size()}, {a->ints().begin(), a->ints().end()});
  if (const auto* a = p->attr("value_float"); a != nullptr)
    return ir::Tensor::scalar<float>(a->f());
  if (const auto* a = p->attr("value_floats"); a != nullptr)
    return ir::Tensor::of<float>({a->floats_size()}, {a->floats().begin(), a->floats().end()});
  return std::nullopt;
}

// The integer contents of constant input i; an error when it is not a constant (computed at run
// time: the CUDA executor decides everything at compile time) or not an integer tensor.
inline Result<std::vector<int64_t>> const_ints(const CompileContext& ctx, size_t i,
                                               const char* what) {
  const std::optional<ir::Tensor> known = known_value(ctx, i);
  const ir::Tensor* t = known ? &*known : nullptr;
  if (t == nullptr) {
    if (ctx.input(i) == nullptr) return ctx.error(std::string("input '") + what + "' is missing");
    return ctx.unsupported(std::string("input '") + what +
                           "' must be a constant (an initializer) on the GPU");
  }
  if (!ir::is_integer(t->dtype()))
    return ctx.error(std::string("input '") + what + "' must be an integer tensor");
  return t->to_int64_vector();
}

// The float contents of constant input i (any numeric type), or an error as above.
inline Result<std::vector<double>> const_doubles(const CompileContext& ctx, size_t i,
                                                 const char* what) {
  const std::optional<ir::Tensor> known = known_value(ctx, i);
  const ir::Tensor* t = known ? &*known : nullptr;
  if (t == nullptr) {
    if (ctx.input(i) == nullptr) return ctx.error(std::string("input '") + what + "' is missing");
    return ctx.unsupported(std::string("input '") + what +
                           "' must be a constant (an initializer) on the GPU");
  }
  std::vector<double> v;
  for (int64_t k = 0; k < t->numel(); ++k) v.push_back(t->as_double(k));
  return v;
}

// `axis` in [-rank, rank) mapped to [0, rank).
inline Result<int64_t> fix_axis(const CompileContext& ctx, int64_t axis, int64_t rank,
                                const char* what = "axis") {
  if (axis < -rank || axis >= rank)
    return ctx.error(std::string(what) + " " + std::to_string(axis) + " is out of range for rank " +
                     std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

inline int64_t dims_product(const std::vector<int64_t>& d, size_t from = 0, size_t to = SIZE_MAX) {
  int64_t p = 1;
  for (size_t i = from; i < to && i < d.size(); ++i) p *= d[i];
  return p;
}

// A Launch that does nothing (empty outputs, or an alias the plan already made).
inline Launch no_op_launch() {
  return [](const LaunchEnv&) { return Status::ok(); };
}

}  // namespace xopt::cuda
