// Conv, com.microsoft FusedConv and ConvTranspose through cuDNN (legacy API), 1-D to 3-D, float32,
// float16 or bfloat16 (x, w, y, bias and Z of one type; the convolution descriptor's compute type
// is always CUDNN_DATA_FLOAT: PSEUDO_HALF_CONFIG / PSEUDO_BFLOAT16_CONFIG, fp32 accumulation).
//
// Conv(X, W, B?) and FusedConv(X, W, B?, Z?) = act(conv(X, W) + B + Z): with Relu and a bias, one
// cudnnConvolutionBiasActivationForward (Z through its alpha2 input); otherwise
// cudnnConvolutionForward followed by one epilogue kernel (bias + Z + activation) when there is
// anything to add. cuDNN takes symmetric pads only: asymmetric pads (SAME_UPPER with an even
// window, explicit [0, 0, 1, 1]) pad the input into the workspace first and convolve with the
// symmetric remainder. 1-D runs as 2-D with a unit height. ConvTranspose is cuDNN's backward-data
// convolution with ConvTranspose's W as the forward filter.
//
// The algorithm is chosen once here: cuDNN's heuristics (cudnnGet...Algorithm_v7), the best whose
// workspace fits ctx.workspace_limit(); with options().tune the candidates are timed
// (cudnnFind...AlgorithmEx) on scratch that is allocated and freed before returning. A choice an
// earlier load stored (ctx.stored_choice(), "algo:math") that is still among the fitting candidates
// is taken without either. Math is FMA-only (no TF32) for fp32 unless options().tf32; float16 and
// bfloat16 take the math type cuDNN suggests (tensor cores, fp32 accumulation). A geometry for
// which cuDNN's heuristics offer no algorithm in that type is refused with an error naming the
// node and the type (no silent fallback).
#include <cuda_runtime.h>
#include <cudnn.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "executor/cuda/check.h"
#include "executor/cuda/kernel.h"
#include "executor/cuda/kernels/conv_epilogue.cuh"
#include "executor/cuda/kernels/conv_util.h"

namespace xopt::cuda {
namespace {

constexpr size_t kAlign = 256;
size_t align_up(size_t n) {
  return (n + kAlign - 1) / kAlign * kAlign;
}

std::string type_name(ir::DType t) {
  return std::string(ir::dtype_name(t));
}

// Scratch allocated at compile time for --tune and freed when it goes out of scope.
struct TempDevice {
  void* p = nullptr;
  TempDevice() = default;
  TempDevice(const TempDevice&) = delete;
  TempDevice& operator=(const TempDevice&) = delete;
  ~TempDevice() {
    if (p != nullptr) cudaFree(p);
  }
  Status alloc(size_t bytes) {
    if (bytes == 0) return Status::ok();
    return cuda_status(cudaMalloc(&p, bytes), "cudaMalloc (algorithm search scratch)");
  }
};

// A cuDNN candidate as a stored choice: "algo:math".
template <typename Perf>
std::string choice_of(const Perf& p) {
  return std::to_string(static_cast<int>(p.algo)) + ":" +
         std::to_string(static_cast<int>(p.mathType));
}

// The fitting candidate a stored choice names, or nullptr (none stored, or no longer valid here).
template <typename Perf>
const Perf* stored_candidate(const std::vector<Perf>& fits, const std::string& stored) {
  if (stored.empty()) return nullptr;
  for (const Perf& p : fits)
    if (choice_of(p) == stored) return &p;
  return nullptr;
}

cudnnMathType_t math_type(const CompileContext& ctx, cudnnMathType_t suggested, ir::DType t) {
  // With TF32 off, FMA_MATH keeps cuDNN off the tensor cores for fp32 (DEFAULT_MATH allows TF32
  // on Ampere and later). Half types accumulate in fp32 on the tensor cores either way.
  if (t != ir::DType::kFloat) return suggested;
  return ctx.options().tf32 ? suggested : CUDNN_FMA_MATH;
}

// Everything a compiled convolution keeps: descriptors and the chosen algorithm.
struct ConvState {
  CudnnDescriptors d;
  cudnnTensorDescriptor_t x = nullptr, y = nullptr, bias = nullptr;
  cudnnConvolutionFwdAlgo_t fwd_algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  cudnnConvolutionBwdDataAlgo_t bwd_algo = CUDNN_CONVOLUTION_BWD_DATA_ALGO_0;
  size_t conv_ws = 0;  // cuDNN's workspace, after the padded input (pad_bytes)
  size_t pad_bytes = 0;
  // Input padding into the workspace (asymmetric pads).
  bool pad = false;
  int pad_rank = 0;
  int64_t pad_lead = 0;
  int64_t pad_in[3] = {}, pad_before[3] = {}, pad_out[3] = {};
};

// Spatial geometry in cuDNN's terms: 1-D promoted to 2-D, symmetric pads.
struct CudnnGeom {
  std::vector<int64_t> x_dims, y_dims, w_dims;  // full dims as cuDNN sees them
  std::vector<int> pads, strides, dilations;
};

Result<Launch> compile_conv(CompileContext& ctx, const ActParams& act, const DeviceTensor* z) {
  const DeviceTensor* xp = ctx.input(0);
  const DeviceTensor* wp = ctx.input(1);
  if (xp == nullptr || wp == nullptr) return ctx.error("X and W are required");
  XOPT_ASSIGN_OR_RETURN(const ir::DType dt, require_float(ctx, {0, 1, 2, 3}));
  const ElemType et = elem_of(dt);
  const cudnnDataType_t cdt = cudnn_type(dt);
  const size_t es = ir::dtype_size(dt);
  const DeviceTensor& x = *xp;
  const DeviceTensor& wt = *wp;
  const DeviceTensor* b = ctx.input(2);
  if (x.rank() < 3 || wt.rank() != x.rank())
    return ctx.error("X " + ir::dims_string(x.dims) + " and W " + ir::dims_string(wt.dims) +
                     " must have the same rank >= 3");
  const size_t r = x.rank() - 2;
  if (r > 3) return ctx.unsupported(std::to_string(r) + "-D convolution (cuDNN: 1-D to 3-D)");
  const int64_t group = ctx.node().attr_int("group", 1);
  const int64_t n_batch = x.dims[0], c_in = x.dims[1], m_out = wt.dims[0];
  if (group < 1 || c_in % group != 0 || m_out % group != 0 || wt.dims[1] * group != c_in)
    return ctx.error("W " + ir::dims_string(wt.dims) + " does not fit X with " +
                     std::to_string(c_in) + " channels and group " + std::to_string(group));
  if (b != nullptr && b->numel() != m_out)
    return ctx.error("B has " + std::to_string(b->numel()) + " elements, expected " +
                     std::to_string(m_out));
  XOPT_ASSIGN_OR_RETURN(
      Window w, make_window(ctx, x.dims, std::vector<int64_t>(wt.dims.begin() + 2, wt.dims.end()),
                            /*ceil_mode=*/false));
  for (size_t i = 0; i < r; ++i)
    if (w.kernel[i] != wt.dims[i + 2])
      return ctx.error("kernel_shape does not match the dims of W " + ir::dims_string(wt.dims));
  std::vector<int64_t> y_dims = {n_batch, m_out};
  y_dims.insert(y_dims.end(), w.out.begin(), w.out.end());
  XOPT_RETURN_IF_ERROR(check_output_dims(ctx, 0, y_dims));
  if (z != nullptr && z->dims != y_dims)
    return ctx.error("Z " + ir::dims_string(z->dims) + " must have the output's shape " +
                     ir::dims_string(y_dims));
  const DeviceTensor& y = *ctx.output(0);
  if (y.numel() == 0) return Launch([](const LaunchEnv&) { return Status::ok(); });

  auto st = std::make_shared<ConvState>();
  // Symmetric part of the pads for cuDNN; the rest is padded explicitly into the workspace.
  CudnnGeom g;
  std::vector<int64_t> in_padded(w.in);
  std::vector<int64_t> before(r, 0);
  for (size_t i = 0; i < r; ++i) {
    const int64_t m = std::min(w.pads[i], w.pads[i + r]);
    before[i] = w.pads[i] - m;
    in_padded[i] = w.in[i] + w.pads[i] + w.pads[i + r] - 2 * m;
    if (in_padded[i] != w.in[i]) st->pad = true;
    g.pads.push_back(static_cast<int>(m));
    g.strides.push_back(static_cast<int>(w.strides[i]));
    g.dilations.push_back(static_cast<int>(w.dilations[i]));
  }
  g.x_dims = {n_batch, c_in};
  g.x_dims.insert(g.x_dims.end(), in_padded.begin(), in_padded.end());
  g.y_dims = y_dims;
  g.w_dims = wt.dims;
  if (st->pad) {
    st->pad_rank = static_cast<int>(r);
    st->pad_lead = n_batch * c_in;
    for (size_t i = 0; i < r; ++i) {
      st->pad_in[i] = w.in[i];
      st->pad_before[i] = before[i];
      st->pad_out[i] = in_padded[i];
    }
    st->pad_bytes = align_up(static_cast<size_t>(product(g.x_dims)) * es);
  }
  if (r == 1) {  // [N, C, W] as [N, C, 1, W]
    g.x_dims.insert(g.x_dims.begin() + 2, 1);
    g.y_dims.insert(g.y_dims.begin() + 2, 1);
    g.w_dims.insert(g.w_dims.begin() + 2, 1);
    g.pads.insert(g.pads.begin(), 0);
    g.strides.insert(g.strides.begin(), 1);
    g.dilations.insert(g.dilations.begin(), 1);
  }
  if (st->pad_bytes > ctx.workspace_limit())
    return ctx.unsupported("asymmetric pads need " + std::to_string(st->pad_bytes) +
                           " bytes of workspace for the padded input, above the limit of " +
                           std::to_string(ctx.workspace_limit()));
  const size_t budget = ctx.workspace_limit() - st->pad_bytes;

  cudnnHandle_t h = ctx.handles().cudnn;
  XOPT_ASSIGN_OR_RETURN(st->x, st->d.tensor(g.x_dims, cdt));
  XOPT_ASSIGN_OR_RETURN(st->y, st->d.tensor(g.y_dims, cdt));
  XOPT_CUDNN_RETURN_IF_ERROR(cudnnCreateFilterDescriptor(&st->d.filter));
  const std::vector<int> wd = to_ints(g.w_dims);
  XOPT_CUDNN_RETURN_IF_ERROR(cudnnSetFilterNdDescriptor(st->d.filter, cdt, CUDNN_TENSOR_NCHW,
                                                        static_cast<int>(wd.size()), wd.data()));
  XOPT_CUDNN_RETURN_IF_ERROR(cudnnCreateConvolutionDescriptor(&st->d.conv));
  XOPT_CUDNN_RETURN_IF_ERROR(cudnnSetConvolutionNdDescriptor(
      st->d.conv, static_cast<int>(g.pads.size()), g.pads.data(), g.strides.data(),
      g.dilations.data(), CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
  XOPT_CUDNN_RETURN_IF_ERROR(cudnnSetConvolutionGroupCount(st->d.conv, static_cast<int>(group)));
  XOPT_CUDNN_RETURN_IF_ERROR(
      cudnnSetConvolutionMathType(st->d.conv, math_type(ctx, CUDNN_DEFAULT_MATH, dt)));
  {  // cuDNN must agree with the planned output shape.
    std::vector<int> od(g.y_dims.size());
    XOPT_CUDNN_RETURN_IF_ERROR(cudnnGetConvolutionNdForwardOutputDim(
        st->d.conv, st->x, st->d.filter, static_cast<int>(od.size()), od.data()));
    for (size_t i = 0; i < od.size(); ++i)
      if (od[i] != g.y_dims[i])
        return ctx.error("cuDNN computes output dim " + std::to_string(i) + " = " +
                         std::to_string(od[i]) + ", the plan " + ir::dims_string(y_dims));
  }

  // Heuristics, best first.
  int count = 0;
  XOPT_CUDNN_RETURN_IF_ERROR(cudnnGetConvolutionForwardAlgorithmMaxCount(h, &count));
  std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(static_cast<size_t>(std::max(count, 1)));
  int returned = 0;
  XOPT_CUDNN_RETURN_IF_ERROR(cudnnGetConvolutionForwardAlgorithm_v7(
      h, st->x, st->d.filter, st->d.conv, st->y, count, &returned, perf.data()));
  perf.resize(static_cast<size_t>(returned));
  std::vector<cudnnConvolutionFwdAlgoPerf_t> fits;
  size_t max_fit = 0;
  for (const auto& p : perf)
    if (p.status == CUDNN_STATUS_SUCCESS && p.memory <= budget) {
      fits.push_back(p);
      max_fit = std::max(max_fit, p.memory);
    }
  if (fits.empty())
    return ctx.unsupported("no cuDNN forward algorithm for " + type_name(dt) +
                           (perf.empty() ? "" : " that fits") + " the workspace limit of " +
                           std::to_string(budget) + " bytes (" + std::to_string(perf.size()) +
                           " candidates)");
  cudnnConvolutionFwdAlgoPerf_t chosen = fits.front();
  const cudnnConvolutionFwdAlgoPerf_t* reuse = stored_candidate(fits, ctx.stored_choice());
  if (reuse != nullptr) {
    chosen = *reuse;
  } else if (ctx.options().tune && x.data != nullptr && wt.data != nullptr && y.data != nullptr) {
    TempDevice scratch;
    XOPT_RETURN_IF_ERROR(scratch.alloc(st->pad_bytes + max_fit));
    const void* xin = st->pad ? scratch.p : x.data;
    void* ws = static_cast<char*>(scratch.p) + st->pad_bytes;
    std::vector<cudnnConvolutionFwdAlgoPerf_t> timed(perf.size() + 1);
    int n_timed = 0;
    XOPT_CUDNN_RETURN_IF_ERROR(cudnnFindConvolutionForwardAlgorithmEx(
        h, st->x, xin, st->d.filter, wt.data, st->d.conv, st->y, y.data,
        static_cast<int>(timed.size()), &n_timed, timed.data(), max_fit > 0 ? ws : nullptr,
        max_fit));
    for (int i = 0; i < n_timed; ++i)
      if (timed[i].status == CUDNN_STATUS_SUCCESS && timed[i].memory <= max_fit) {
        chosen = timed[i];
        break;
      }
  }
  st->fwd_algo = chosen.algo;
  ctx.record_choice(choice_of(chosen), reuse != nullptr);
  XOPT_CUDNN_RETURN_IF_ERROR(
      cudnnSetConvolutionMathType(st->d.conv, math_type(ctx, chosen.mathType, dt)));
  XOPT_CUDNN_RETURN_IF_ERROR(cudnnGetConvolutionForwardWorkspaceSize(
      h, st->x, st->d.filter, st->d.conv, st->y, st->fwd_algo, &st->conv_ws));
  if (st->conv_ws > budget)
    return ctx.unsupported("cuDNN algorithm " + std::to_string(static_cast<int>(st->fwd_algo)) +
                           " needs " + std::to_string(st->conv_ws) + " bytes of workspace");
  ctx.request_workspace(st->pad_bytes + st->conv_ws);

  // Relu with a bias: one fused cuDNN call (y = relu(conv + Z + bias)).
  const bool fused = act.kind == ActKind::kRelu && b != nullptr;
  if (fused) {
    std::vector<int64_t> bd(g.y_dims.size(), 1);
    bd[1] = m_out;
    XOPT_ASSIGN_OR_RETURN(st->bias, st->d.tensor(bd, cdt));
    XOPT_CUDNN_RETURN_IF_ERROR(cudnnCreateActivationDescriptor(&st->d.act));
    XOPT_CUDNN_RETURN_IF_ERROR(cudnnSetActivationDescriptor(st->d.act, CUDNN_ACTIVATION_RELU,
                                                            CUDNN_NOT_PROPAGATE_NAN, 0.0));
  }
  const bool epilogue = !fused && (b != nullptr || z != nullptr || act.kind != ActKind::kIdentity);
  const void* xd = x.data;
  const void* wdp = wt.data;
  const void* bdp = b != nullptr ? b->data : nullptr;
  const void* zd = z != nullptr ? z->data : nullptr;
  void* yd = y.data;
  // Z planned in Y's bytes: the convolution accumulates onto it (beta = 1) instead of reading it
  // after it has been overwritten.
  const bool z_in_y = zd != nullptr && zd == yd;
  if (z_in_y && !fused) zd = nullptr;
  const int64_t n_out = y.numel(), inner = product(w.out);
  return Launch([st, h, et, xd, wdp, bdp, zd, yd, fused, epilogue, z_in_y, act, n_out, m_out,
                 inner](const LaunchEnv& env) -> Status {
    if (env.workspace_bytes < st->pad_bytes + st->conv_ws)
      return internal_error("conv: workspace smaller than requested");
    XOPT_CUDNN_RETURN_IF_ERROR(cudnnSetStream(h, env.stream));
    const void* xin = xd;
    if (st->pad) {
      void* xpad = env.workspace;
      XOPT_RETURN_IF_ERROR(
          check_launch(launch_pad_spatial(et, xd, xpad, st->pad_lead, st->pad_rank, st->pad_in,
                                          st->pad_before, st->pad_out, env.stream)));
      xin = xpad;
    }
    void* ws = st->conv_ws > 0 ? static_cast<char*>(env.workspace) + st->pad_bytes : nullptr;
    const float one = 1.0f, zero = 0.0f;
    if (fused) {
      const float alpha2 = zd != nullptr ? 1.0f : 0.0f;
      // Where cuDNN refuses the fused call for this geometry (it says so before enqueuing
      // anything), the plain convolution and the epilogue kernel do the same.
      if (cudnnConvolutionBiasActivationForward(h, &one, st->x, xin, st->d.filter, wdp, st->d.conv,
                                                st->fwd_algo, ws, st->conv_ws, &alpha2, st->y,
                                                zd != nullptr ? zd : yd, st->bias, bdp, st->d.act,
                                                st->y, yd) == CUDNN_STATUS_SUCCESS)
        return Status::ok();
    }
    XOPT_CUDNN_RETURN_IF_ERROR(cudnnConvolutionForward(h, &one, st->x, xin, st->d.filter, wdp,
                                                       st->d.conv, st->fwd_algo, ws, st->conv_ws,
                                                       z_in_y ? &one : &zero, st->y, yd));
    if (epilogue || fused)
      return check_launch(launch_bias_act(et, yd, bdp, z_in_y ? nullptr : zd, n_out, m_out, inner,
                                          act, env.stream));
    return Status::ok();
  });
}

Result<Launch> conv(CompileContext& ctx) {
  return compile_conv(ctx, ActParams{}, nullptr);
}

// FusedConv(X, W, B?, Z?): activation(Conv(X, W, B) + Z).
Result<Launch> fused_conv(CompileContext& ctx) {
  XOPT_ASSIGN_OR_RETURN(ActParams act, read_conv_activation(ctx));
  return compile_conv(ctx, act, ctx.input(3));
}

// ConvTranspose(X [N, C, in...], W [C, M/group, k...], B?) as cuDNN backward data: the forward
// convolution that maps Y to X has W as its filter, so dy = X and dx = Y.
Result<Launch> conv_transpose(CompileContext& ctx) {
  const DeviceTensor* xp = ctx.input(0);
  const DeviceTensor* wp = ctx.input(1);
  if (xp == nullptr || wp == nullptr) return ctx.error("X and W are required");
  XOPT_ASSIGN_OR_RETURN(const ir::DType dt, require_float(ctx, {0, 1, 2}));
  const ElemType et = elem_of(dt);
  const cudnnDataType_t cdt = cudnn_type(dt);
  const size_t es = ir::dtype_size(dt);
  const DeviceTensor& x = *xp;
  const DeviceTensor& wt = *wp;
  const DeviceTensor* b = ctx.input(2);
  const ir::Node& node = ctx.node();
  if (x.rank() < 3 || wt.rank() != x.rank())
    return ctx.error("X " + ir::dims_string(x.dims) + " and W " + ir::dims_string(wt.dims) +
                     " must have the same rank >= 3");
  const size_t r = x.rank() - 2;
  if (r > 3) return ctx.unsupported(std::to_string(r) + "-D ConvTranspose (cuDNN: 1-D to 3-D)");
  const int64_t group = node.attr_int("group", 1);
  const int64_t n_batch = x.dims[0], c_in = x.dims[1];
  if (group < 1 || c_in % group != 0 || wt.dims[0] != c_in)
    return ctx.error("W " + ir::dims_string(wt.dims) + " does not fit X with " +
                     std::to_string(c_in) + " channels (group " + std::to_string(group) + ")");
  const int64_t m_out = wt.dims[1] * group;
  if (b != nullptr && b->numel() != m_out)
    return ctx.error("B has " + std::to_string(b->numel()) + " elements, expected " +
                     std::to_string(m_out));
  // The output geometry, exactly as the CPU reference computes it.
  Window w;
  w.in.assign(x.dims.begin() + 2, x.dims.end());
  w.kernel =
      node.attr_ints("kernel_shape", std::vector<int64_t>(wt.dims.begin() + 2, wt.dims.end()));
  w.strides = node.attr_ints("strides", std::vector<int64_t>(r, 1));
  w.dilations = node.attr_ints("dilations", std::vector<int64_t>(r, 1));
  std::vector<int64_t> out_pad = node.attr_ints("output_padding", std::vector<int64_t>(r, 0));
  std::vector<int64_t> out_shape = node.attr_ints("output_shape");
  if (out_shape.size() == r + 2) out_shape.erase(out_shape.begin(), out_shape.begin() + 2);
  const std::string auto_pad = node.attr_string("auto_pad", "NOTSET");
  if (w.kernel.size() != r || w.strides.size() != r || w.dilations.size() != r ||
      out_pad.size() != r || (!out_shape.empty() && out_shape.size() != r))
    return ctx.error(
        "kernel_shape/strides/dilations/output_padding/output_shape do not match the " +
        std::to_string(r) + " spatial dims of X");
  for (size_t i = 0; i < r; ++i)
    if (w.kernel[i] != wt.dims[i + 2]) return ctx.error("kernel_shape does not match W");
  const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  if (!same && auto_pad != "NOTSET" && auto_pad != "VALID" && !auto_pad.empty())
    return ctx.error("unknown auto_pad '" + auto_pad + "'");
  if (same && out_shape.empty())
    for (size_t i = 0; i < r; ++i) out_shape.push_back(w.in[i] * w.strides[i]);
  w.out.resize(r);
  if (!out_shape.empty()) {
    w.pads.assign(2 * r, 0);
    for (size_t i = 0; i < r; ++i) {
      const int64_t total = w.strides[i] * (w.in[i] - 1) + out_pad[i] + w.extent(i) - out_shape[i];
      const int64_t half = total / 2;
      if (total < 0) {
        w.pads[i] = 0;
        w.pads[i + r] = total;
      } else if (auto_pad == "SAME_UPPER") {
        w.pads[i] = half;
        w.pads[i + r] = total - half;
      } else {
        w.pads[i] = total - half;
        w.pads[i + r] = half;
      }
      w.out[i] = out_shape[i];
    }
  } else {
    w.pads = auto_pad == "VALID" ? std::vector<int64_t>(2 * r, 0)
                                 : node.attr_ints("pads", std::vector<int64_t>(2 * r, 0));
    if (w.pads.size() != 2 * r) return ctx.error("pads must have 2 * spatial rank entries");
    for (size_t i = 0; i < r; ++i)
      w.out[i] =
          w.strides[i] * (w.in[i] - 1) + out_pad[i] + w.extent(i) - w.pads[i] - w.pads[i + r];
  }
  std::vector<int64_t> y_dims = {n_batch, m_out};
  y_dims.insert(y_dims.end(), w.out.begin(), w.out.end());
  XOPT_RETURN_IF_ERROR(check_output_dims(ctx, 0, y_dims));
  const DeviceTensor& y = *ctx.output(0);
  if (y.numel() == 0) return Launch([](const LaunchEnv&) { return Status::ok(); });
  // Output index o is the full result's index o + pads_begin; cuDNN's backward data with pad
  // pads_begin on both ends computes exactly that when the forward convolution of Y's shape gives
  // back X's shape. Otherwise (an end pad larger than the begin pad, as SAME_UPPER makes, or an
  // output_shape beyond the full result) the full result goes to the workspace, unpadded, and is
  // cropped into Y.
  bool direct = true;
  for (size_t i = 0; i < r; ++i) {
    const int64_t span = w.out[i] + 2 * w.pads[i] - w.extent(i);
    if (w.pads[i] < 0 || span < 0 || span / w.strides[i] + 1 != w.in[i]) direct = false;
  }

  auto st = std::make_shared<ConvState>();
  CudnnGeom g;
  g.x_dims = x.dims;
  g.y_dims = y_dims;
  g.w_dims = wt.dims;
  for (size_t i = 0; i < r; ++i) {
    g.pads.push_back(direct ? static_cast<int>(w.pads[i]) : 0);
    g.strides.push_back(static_cast<int>(w.strides[i]));
    g.dilations.push_back(static_cast<int>(w.dilations[i]));
  }
  if (!direct) {
    st->pad = true;  // here: crop the full result into Y
    st->pad_rank = static_cast<int>(r);
    st->pad_lead = n_batch * m_out;
    for (size_t i = 0; i < r; ++i) {
      const int64_t full = w.strides[i] * (w.in[i] - 1) + w.extent(i);
      g.y_dims[i + 2] = full;
      st->pad_in[i] = full;
      st->pad_before[i] = -w.pads[i];
      st->pad_out[i] = w.out[i];
    }
    st->pad_bytes = align_up(static_cast<size_t>(product(g.y_dims)) * es);
    if (st->pad_bytes > ctx.workspace_limit())
      return ctx.unsupported("these pads need the full result in the workspace (" +
                             std::to_string(st->pad_bytes) + " bytes), above the limit of " +
                             std::to_string(ctx.workspace_limit()));
  }
  if (r == 1) {
    g.x_dims.insert(g.x_dims.begin() + 2, 1);
    g.y_dims.insert(g.y_dims.begin() + 2, 1);
    g.w_dims.insert(g.w_dims.begin() + 2, 1);
    g.pads.insert(g.pads.begin(), 0);
    g.strides.insert(g.strides.begin(), 1);
    g.dilations.insert(g.dilations.begin(), 1);
  }
  cudnnHandle_t h = ctx.handles().cudnn;
  XOPT_ASSIGN_OR_RETURN(st->x, st->d.tensor(g.x_dims, cdt));  // dy
  XOPT_ASSIGN_OR_RETURN(st->y, st->d.tensor(g.y_dims, cdt));  // dx
  XOPT_CUDNN_RETURN_IF_ERROR(cudnnCreateFilterDescriptor(&st->d.filter));
  const std::vector<int> wd = to_ints(g.w_dims);
  XOPT_CUDNN_RETURN_IF_ERROR(cudnnSetFilterNdDescriptor(st->d.filter, cdt, CUDNN_TENSOR_NCHW,
                                                        static_cast<int>(wd.size()), wd.data()));
  XOPT_CUDNN_RETURN_IF_ERROR(cudnnCreateConvolutionDescriptor(&st->d.conv));
  XOPT_CUDNN_RETURN_IF_ERROR(cudnnSetConvolutionNdDescriptor(
      st->d.conv, static_cast<int>(g.pads.size()), g.pads.data(), g.strides.data(),
      g.dilations.data(), CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
  XOPT_CUDNN_RETURN_IF_ERROR(cudnnSetConvolutionGroupCount(st->d.conv, static_cast<int>(group)));
  XOPT_CUDNN_RETURN_IF_ERROR(
      cudnnSetConvolutionMathType(st->d.conv, math_type(ctx, CUDNN_DEFAULT_MATH, dt)));

  const size_t budget = ctx.workspace_limit() - st->pad_bytes;
  int count = 0;
  XOPT_CUDNN_RETURN_IF_ERROR(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(h, &count));
  std::vector<cudnnConvolutionBwdDataAlgoPerf_t> perf(static_cast<size_t>(std::max(count, 1)));
  int returned = 0;
  XOPT_CUDNN_RETURN_IF_ERROR(cudnnGetConvolutionBackwardDataAlgorithm_v7(
      h, st->d.filter, st->x, st->d.conv, st->y, count, &returned, perf.data()));
  perf.resize(static_cast<size_t>(returned));
  std::vector<cudnnConvolutionBwdDataAlgoPerf_t> fits;
  size_t max_fit = 0;
  for (const auto& p : perf)
    if (p.status == CUDNN_STATUS_SUCCESS && p.memory <= budget) {
      fits.push_back(p);
      max_fit = std::max(max_fit, p.memory);
    }
  if (fits.empty())
    return ctx.unsupported("no cuDNN backward-data algorithm for " + type_name(dt) +
                           (perf.empty() ? "" : " that fits") + " the workspace limit of " +
                           std::to_string(budget) + " bytes (" + std::to_string(perf.size()) +
                           " candidates)");
  cudnnConvolutionBwdDataAlgoPerf_t chosen = fits.front();
  const cudnnConvolutionBwdDataAlgoPerf_t* reuse = stored_candidate(fits, ctx.stored_choice());
  if (reuse != nullptr) {
    chosen = *reuse;
  } else if (ctx.options().tune && x.data != nullptr && wt.data != nullptr && y.data != nullptr) {
    TempDevice scratch;
    XOPT_RETURN_IF_ERROR(scratch.alloc(st->pad_bytes + max_fit));
    void* dx = st->pad ? scratch.p : y.data;
    std::vector<cudnnConvolutionBwdDataAlgoPerf_t> timed(perf.size() + 1);
    int n_timed = 0;
    XOPT_CUDNN_RETURN_IF_ERROR(cudnnFindConvolutionBackwardDataAlgorithmEx(
        h, st->d.filter, wt.data, st->x, x.data, st->d.conv, st->y, dx,
        static_cast<int>(timed.size()), &n_timed, timed.data(),
        max_fit > 0 ? static_cast<char*>(scratch.p) + st->pad_bytes : nullptr, max_fit));
    for (int i = 0; i < n_timed; ++i)
      if (timed[i].status == CUDNN_STATUS_SUCCESS && timed[i].memory <= max_fit) {
        chosen = timed[i];
        break;
      }
  }
  st->bwd_algo = chosen.algo;
  ctx.record_choice(choice_of(chosen), reuse != nullptr);
  XOPT_CUDNN_RETURN_IF_ERROR(
      cudnnSetConvolutionMathType(st->d.conv, math_type(ctx, chosen.mathType, dt)));
  XOPT_CUDNN_RETURN_IF_ERROR(cudnnGetConvolutionBackwardDataWorkspaceSize(
      h, st->d.filter, st->x, st->d.conv, st->y, st->bwd_algo, &st->conv_ws));
  if (st->conv_ws > budget)
    return ctx.unsupported("cuDNN backward-data algorithm needs " + std::to_string(st->conv_ws) +
                           " bytes of workspace");
  ctx.request_workspace(st->pad_bytes + st->conv_ws);

  const void* xd = x.data;
  const void* wdp = wt.data;
  const void* bdp = b != nullptr ? b->data : nullptr;
  void* yd = y.data;
  const int64_t n_out = y.numel(), inner = product(w.out);
  return Launch([st, h, et, xd, wdp, bdp, yd, n_out, m_out, inner](const LaunchEnv& env) -> Status {
    if (env.workspace_bytes < st->pad_bytes + st->conv_ws)
      return internal_error("ConvTranspose: workspace smaller than requested");
    XOPT_CUDNN_RETURN_IF_ERROR(cudnnSetStream(h, env.stream));
    const float one = 1.0f, zero = 0.0f;
    void* full = st->pad ? env.workspace : yd;
    void* ws = st->conv_ws > 0 ? static_cast<char*>(env.workspace) + st->pad_bytes : nullptr;
    XOPT_CUDNN_RETURN_IF_ERROR(cudnnConvolutionBackwardData(h, &one, st->d.filter, wdp, st->x, xd,
                                                            st->d.conv, st->bwd_algo, ws,
                                                            st->conv_ws, &zero, st->y, full));
    if (st->pad)
      XOPT_RETURN_IF_ERROR(
          check_launch(launch_pad_spatial(et, full, yd, st->pad_lead, st->pad_rank, st->pad_in,
                                          st->pad_before, st->pad_out, env.stream)));
    if (bdp != nullptr)
      return check_launch(
          launch_bias_act(et, yd, bdp, nullptr, n_out, m_out, inner, ActParams{}, env.stream));
    return Status::ok();
  });
}

}  // namespace

// Registered up to the newest opset the CPU reference is checked against (nn_util.h kLatestOpset):
// neither op has changed meaning since its first version.
constexpr const char* kTypes = "float32, float16, bfloat16 (fp32 accumulation)";
XOPT_CUDA_KERNEL_TYPES("", "Conv", 1, 28, conv, kTypes);
XOPT_CUDA_KERNEL_TYPES("", "ConvTranspose", 1, 28, conv_transpose, kTypes);
XOPT_CUDA_KERNEL_TYPES("com.microsoft", "FusedConv", 1, 1, fused_conv, kTypes);

}  // namespace xopt::cuda
