// Ops that pass data through or produce it: Identity, Dropout (inference identity; random in
// training mode) and Constant (every value_* attribute, sparse included).
#include <cstring>
#include <random>

#include "executor/cpu/kernels/elementwise.h"
#include "ir/tensor_proto.h"

namespace xopt::exec {
namespace {

using ew::kLastOpset;

Status identity(KernelContext& ctx) {
  // Identity 16+ also passes sequences and optionals through.
  if (const ExecValue* v = ctx.input_value(0)) return ctx.set_output_value(0, *v);
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* x, ew::required_input(ctx, 0));
  return ctx.forward(0, *x);
}

// Dropout. Inference (is_test=1 before opset 7; always from 7 to 11; training_mode absent or false
// from 12) and training with ratio 0 are the identity with an all-true mask. Training with ratio >
// 0 keeps each element with probability 1 - ratio and scales kept ones by 1 / (1 - ratio), drawing
// from std::mt19937 seeded by `seed` when given (numpy's stream is not reproduced).
Status dropout(KernelContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(const ir::Tensor* x, ew::required_input(ctx, 0));
  const ir::Node& n = ctx.node();
  double ratio = n.attr_float("ratio", 0.5f);
  bool training = false;
  if (ctx.opset() < 7) training = n.attr_int("is_test", 0) == 0;
  if (ctx.opset() >= 12) {
    if (const ir::Tensor* r = ctx.input(1); r != nullptr) {
      if (r->numel() != 1) return ctx.error("ratio must be a scalar");
      ratio = r->as_double(0);
    }
    if (const ir::Tensor* t = ctx.input(2); t != nullptr) {
      if (t->dtype() != ir::DType::kBool || t->numel() != 1)
        return ctx.error("training_mode must be a bool scalar");
      training = t->data<bool>()[0];
    }
  }
  if (training && (ratio < 0.0 || ratio >= 1.0))
    return ctx.error("ratio must be in [0, 1), got " + std::to_string(ratio));
  const bool random = training && ratio > 0.0;
  // Mask: bool from opset 10, the input's type before.
  const bool want_mask = ctx.num_outputs() > 1 && ctx.wants_output(1);
  const ir::DType mask_type = ctx.opset() >= 10 ? ir::DType::kBool : x->dtype();
  if (!random) {
    XOPT_RETURN_IF_ERROR(ctx.forward(0, *x));
    if (!want_mask) return Status::ok();
    XOPT_ASSIGN_OR_RETURN(ir::Tensor * m, ctx.output(1, mask_type, x->dims()));
    return dispatch_all(mask_type, [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      T* pm = m->mutable_data<T>();
      for (int64_t i = 0; i < x->numel(); ++i) pm[i] = ew::store<T>(1);
      return Status::ok();
    });
  }
  std::mt19937 gen(n.has_attr("seed") ? static_cast<uint32_t>(n.attr_int("seed", 0))
                                      : std::random_device{}());
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<bool> keep(static_cast<size_t>(x->numel()));
  for (size_t i = 0; i < keep.size(); ++i) keep[i] = u(gen) >= ratio;
  const double scale = 1.0 / (1.0 - ratio);
  XOPT_RETURN_IF_ERROR(dispatch_float(x->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    XOPT_ASSIGN_OR_RETURN(ir::Tensor * y, ctx.output(0, x->dtype(), x->dims()));
    const T* px = x->data<T>();
    T* py = y->mutable_data<T>();
    for (size_t i = 0; i < keep.size(); ++i) {
      const auto v = to_compute(px[i]);
      using C = decltype(v);
      py[i] = ew::store<T>(keep[i] ? static_cast<C>(static_cast<double>(v) * scale) : C(0));
    }
    return Status::ok();
  }));
  if (!want_mask) return Status::ok();
  XOPT_ASSIGN_OR_RETURN(ir::Tensor * m, ctx.output(1, mask_type, x->dims()));
  return dispatch_all(mask_type, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    T* pm = m->mutable_data<T>();
    for (size_t i = 0; i < keep.size(); ++i) pm[i] = ew::store<T>(keep[i] ? 1 : 0);
    return Status::ok();
  });
}

// A sparse tensor made dense: values scattered at indices (linear [NNZ] or coordinates [NNZ,
// rank]).
Result<ir::Tensor> densify(const KernelContext& ctx, const onnx::SparseTensorProto& sp) {
  XOPT_ASSIGN_OR_RETURN(ir::Tensor values, ir::tensor_from_proto(sp.values(), ""));
  XOPT_ASSIGN_OR_RETURN(ir::Tensor indices, ir::tensor_from_proto(sp.indices(), ""));
  std::vector<int64_t> dims(sp.dims().begin(), sp.dims().end());
  if (values.dtype() == ir::DType::kString) return ctx.unsupported("sparse string constants");
  ir::Tensor out(values.dtype(), dims);
  const int64_t nnz = values.numel();
  const size_t es = ir::dtype_size(values.dtype());
  std::vector<int64_t> idx = indices.to_int64_vector();
  const int64_t total = ir::numel(dims);
  auto* dst = static_cast<std::byte*>(out.mutable_raw_data());
  const auto* src = static_cast<const std::byte*>(values.raw_data());
  const bool coords = indices.rank() == 2;
  for (int64_t k = 0; k < nnz; ++k) {
    int64_t lin = 0;
    if (coords) {
      for (size_t d = 0; d < dims.size(); ++d)
        lin = lin * dims[d] + idx[static_cast<size_t>(k) * dims.size() + d];
    } else {
      lin = idx[static_cast<size_t>(k)];
    }
    if (lin < 0 || lin >= total) return ctx.error("sparse index out of range");
    std::memcpy(dst + lin * static_cast<int64_t>(es), src + k * static_cast<int64_t>(es), es);
  }
  return out;
}

Status constant(KernelContext& ctx) {
  const ir::Node& n = ctx.node();
  ir::Tensor t;
  if (const auto* a = n.attr("value"); a != nullptr) {
    XOPT_ASSIGN_OR_RETURN(t, ir::tensor_from_proto(a->t(), ""));
  } else if (const auto* sv = n.attr("sparse_value"); sv != nullptr) {
    XOPT_ASSIGN_OR_RETURN(t, densify(ctx, sv->sparse_tensor()));
  } else if (const auto* f = n.attr("value_float"); f != nullptr) {
    t = ir::Tensor::scalar<float>(f->f());
  } else if (const auto* fs = n.attr("value_floats"); fs != nullptr) {
    t = ir::Tensor::of<float>({fs->floats_size()}, {fs->floats().begin(), fs->floats().end()});
  } else if (const auto* i = n.attr("value_int"); i != nullptr) {
    t = ir::Tensor::scalar<int64_t>(i->i());
  } else if (const auto* is = n.attr("value_ints"); is != nullptr) {
    t = ir::Tensor::of<int64_t>({is->ints_size()}, {is->ints().begin(), is->ints().end()});
  } else if (const auto* s = n.attr("value_string"); s != nullptr) {
    t = ir::Tensor::of_strings({}, {s->s()});
  } else if (const auto* ss = n.attr("value_strings"); ss != nullptr) {
    t = ir::Tensor::of_strings({ss->strings_size()}, {ss->strings().begin(), ss->strings().end()});
  } else {
    return ctx.error("no value attribute");
  }
  return ctx.forward(0, t);
}

}  // namespace

XOPT_CPU_KERNEL("", "Identity", 1, kLastOpset, identity);
XOPT_CPU_KERNEL("", "Dropout", 1, kLastOpset, dropout);
XOPT_CPU_KERNEL("", "Constant", 1, kLastOpset, constant);

}  // namespace xopt::exec
