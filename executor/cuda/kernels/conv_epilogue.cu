// Device code for conv_epilogue.cuh.
#include <cfloat>

#include "executor/cuda/kernels/conv_epilogue.cuh"
#include "executor/cuda/kernels/lowp.cuh"

namespace xopt::cuda {
namespace {

constexpr int kThreads = 256;

unsigned blocks_for(int64_t n) {
  const int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < 65535 * 16 ? b : 65535 * 16);
}

__device__ float softplus(float x) {
  return x > 0.0f ? x + log1pf(expf(-x)) : log1pf(expf(x));
}

__device__ float apply_act(float x, const ActParams& a) {
  switch (a.kind) {
    case ActKind::kIdentity:
      return x;
    case ActKind::kRelu:
      return x > 0.0f ? x : 0.0f;
    case ActKind::kTanh:
      return tanhf(x);
    case ActKind::kSigmoid:
      return 1.0f / (1.0f + expf(-x));
    case ActKind::kLeakyRelu:
      return x >= 0.0f ? x : a.alpha * x;
    case ActKind::kClip:
      return fminf(fmaxf(x, a.alpha), a.beta);
    case ActKind::kHardSigmoid:
      return fmaxf(0.0f, fminf(1.0f, a.alpha * x + a.beta));
    case ActKind::kElu:
      return x >= 0.0f ? x : a.alpha * (expf(x) - 1.0f);
    case ActKind::kSelu:
      return a.gamma * (x > 0.0f ? x : a.alpha * (expf(x) - 1.0f));
    case ActKind::kThresholdedRelu:
      return x > a.alpha ? x : 0.0f;
    case ActKind::kSoftplus:
      return softplus(x);
    case ActKind::kSoftsign:
      return x / (1.0f + fabsf(x));
    case ActKind::kScaledTanh:
      return a.alpha * tanhf(a.beta * x);
    case ActKind::kParametricSoftplus:
      return a.alpha * softplus(a.beta * x);
  }
  return x;
}

template <typename T>
__global__ void bias_act_kernel(T* y, const T* bias, const T* z, int64_t n, int64_t channels,
                                int64_t inner, ActParams act) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float v = dev::load(y[i]);
    if (bias != nullptr) v += dev::load(bias[(i / inner) % channels]);
    if (z != nullptr) v += dev::load(z[i]);
    y[i] = dev::store<T>(apply_act(v, act));
  }
}

struct PadGeom {
  int rank;
  int64_t in[3], before[3], out[3];
};

template <typename T>
__global__ void pad_kernel(const T* x, T* y, int64_t total, PadGeom g) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t rest = i, src = 0, mul = 1;
    bool inside = true;
    for (int d = g.rank - 1; d >= 0; --d) {
      const int64_t o = rest % g.out[d];
      rest /= g.out[d];
      const int64_t s = o - g.before[d];
      if (s < 0 || s >= g.in[d]) inside = false;
      src += s * mul;
      mul *= g.in[d];
    }
    y[i] = inside ? x[rest * mul + src] : dev::store<T>(0.0f);
  }
}

template <typename T>
__global__ void broadcast_2d_kernel(const T* c, T* y, int64_t m, int64_t n, int64_t c_rows,
                                    int64_t c_cols) {
  const int64_t total = m * n;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = i / n, col = i % n;
    y[i] = c[(c_rows == 1 ? 0 : r) * c_cols + (c_cols == 1 ? 0 : col)];
  }
}

}  // namespace

cudaError_t launch_bias_act(ElemType t, void* y, const void* bias, const void* z, int64_t n,
                            int64_t channels, int64_t inner, ActParams act, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return dev::dispatch_float(t, [&](auto tag) {
    using T = decltype(tag);
    bias_act_kernel<<<blocks_for(n), kThreads, 0, stream>>>(
        static_cast<T*>(y), static_cast<const T*>(bias), static_cast<const T*>(z), n,
        channels < 1 ? 1 : channels, inner < 1 ? 1 : inner, act);
    return cudaGetLastError();
  });
}

cudaError_t launch_pad_spatial(ElemType t, const void* x, void* y, int64_t lead, int rank,
                               const int64_t* in, const int64_t* before, const int64_t* out,
                               cudaStream_t stream) {
  if (rank < 1 || rank > 3) return cudaErrorInvalidValue;
  PadGeom g{};
  g.rank = rank;
  int64_t total = lead;
  for (int d = 0; d < rank; ++d) {
    g.in[d] = in[d];
    g.before[d] = before[d];
    g.out[d] = out[d];
    total *= out[d];
  }
  if (total == 0) return cudaSuccess;
  return dev::dispatch_float(t, [&](auto tag) {
    using T = decltype(tag);
    pad_kernel<<<blocks_for(total), kThreads, 0, stream>>>(static_cast<const T*>(x),
                                                           static_cast<T*>(y), total, g);
    return cudaGetLastError();
  });
}

cudaError_t launch_broadcast_2d(ElemType t, const void* c, void* y, int64_t m, int64_t n,
                                int64_t c_rows, int64_t c_cols, cudaStream_t stream) {
  if (m * n == 0) return cudaSuccess;
  return dev::dispatch_float(t, [&](auto tag) {
    using T = decltype(tag);
    broadcast_2d_kernel<<<blocks_for(m * n), kThreads, 0, stream>>>(
        static_cast<const T*>(c), static_cast<T*>(y), m, n, c_rows, c_cols);
    return cudaGetLastError();
  });
}

}  // namespace xopt::cuda
