// Softmax and layer normalization kernels (see norm.cuh).
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "executor/cuda/kernels/device_util.cuh"
#include "executor/cuda/kernels/lowp.cuh"
#include "executor/cuda/kernels/norm.cuh"

namespace xopt::cuda {
namespace {

using dev::grid_for;

// Threads per row block: a multiple of 32 covering `work` items, at most `cap`.
inline int row_threads(int64_t work, int cap) {
  int64_t t = (work + 31) / 32 * 32;
  if (t < 32) t = 32;
  if (t > cap) t = cap;
  return static_cast<int>(t);
}

inline unsigned row_grid(int64_t rows) {
  return static_cast<unsigned>(rows < (int64_t{1} << 20) ? rows : (int64_t{1} << 20));
}

using dev::load;
using dev::store;

// One block per row of n contiguous elements.
template <bool kLog, typename T>
__global__ void softmax_rows_kernel(const T* x, T* y, int64_t rows, int64_t n) {
  __shared__ float scratch[32];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* xr = x + r * n;
    T* yr = y + r * n;
    float mx = -INFINITY;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) mx = fmaxf(mx, load(xr[j]));
    mx = dev::block_max(mx, scratch);
    float sum = 0.0f;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) sum += expf(load(xr[j]) - mx);
    sum = dev::block_sum(sum, scratch);
    if (kLog) {
      const float lse = logf(sum);
      for (int64_t j = threadIdx.x; j < n; j += blockDim.x)
        yr[j] = store<T>((load(xr[j]) - mx) - lse);
    } else {
      const float scale = 1.0f / sum;
      for (int64_t j = threadIdx.x; j < n; j += blockDim.x)
        yr[j] = store<T>(expf(load(xr[j]) - mx) * scale);
    }
  }
}

// Rows of at most 32 * kPer elements: one warp per row, the row held in registers (one read of x),
// shuffles only.
template <int kPer, bool kLog, typename T>
__global__ void softmax_warp_kernel(const T* x, T* y, int64_t rows, int n) {
  const int lane = threadIdx.x & 31;
  const int64_t warps = blockDim.x >> 5;
  const int64_t step = static_cast<int64_t>(gridDim.x) * warps;
  for (int64_t r = blockIdx.x * warps + (threadIdx.x >> 5); r < rows; r += step) {
    const T* xr = x + r * n;
    T* yr = y + r * n;
    float v[kPer];
    float mx = -INFINITY;
#pragma unroll
    for (int t = 0; t < kPer; ++t) {
      const int j = lane + 32 * t;
      v[t] = j < n ? load(xr[j]) : -INFINITY;
      mx = fmaxf(mx, v[t]);
    }
    mx = dev::warp_max(mx);
    float sum = 0.0f;
#pragma unroll
    for (int t = 0; t < kPer; ++t) {
      if (lane + 32 * t < n) {
        const float e = expf(v[t] - mx);
        sum += e;
        if (!kLog) v[t] = e;
      }
    }
    sum = dev::warp_sum(sum);
    if (kLog) {
      const float lse = logf(sum);
#pragma unroll
      for (int t = 0; t < kPer; ++t)
        if (lane + 32 * t < n) yr[lane + 32 * t] = store<T>((v[t] - mx) - lse);
    } else {
      const float scale = 1.0f / sum;
#pragma unroll
      for (int t = 0; t < kPer; ++t)
        if (lane + 32 * t < n) yr[lane + 32 * t] = store<T>(v[t] * scale);
    }
  }
}

template <bool kLog, typename T>
cudaError_t run_softmax_warp(const T* x, T* y, int64_t rows, int n, cudaStream_t s) {
  constexpr int kWarps = dev::kThreads / 32;
  const unsigned g = grid_for((rows + kWarps - 1) / kWarps, 1);
  if (n <= 32)
    softmax_warp_kernel<1, kLog><<<g, dev::kThreads, 0, s>>>(x, y, rows, n);
  else if (n <= 64)
    softmax_warp_kernel<2, kLog><<<g, dev::kThreads, 0, s>>>(x, y, rows, n);
  else if (n <= 128)
    softmax_warp_kernel<4, kLog><<<g, dev::kThreads, 0, s>>>(x, y, rows, n);
  else if (n <= 256)
    softmax_warp_kernel<8, kLog><<<g, dev::kThreads, 0, s>>>(x, y, rows, n);
  else if (n <= 512)
    softmax_warp_kernel<16, kLog><<<g, dev::kThreads, 0, s>>>(x, y, rows, n);
  else
    softmax_warp_kernel<32, kLog><<<g, dev::kThreads, 0, s>>>(x, y, rows, n);
  return cudaGetLastError();
}

// inner > 1: one thread per (outer, inner) column, walking n with stride inner (coalesced across
// the threads of a warp).
template <bool kLog, typename T>
__global__ void softmax_cols_kernel(const T* x, T* y, int64_t outer, int64_t n, int64_t inner) {
  const int64_t total = outer * inner;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t c = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; c < total;
       c += stride) {
    const int64_t o = c / inner, i = c % inner;
    const T* xc = x + o * n * inner + i;
    T* yc = y + o * n * inner + i;
    float mx = -INFINITY;
    for (int64_t j = 0; j < n; ++j) mx = fmaxf(mx, load(xc[j * inner]));
    float sum = 0.0f;
    for (int64_t j = 0; j < n; ++j) sum += expf(load(xc[j * inner]) - mx);
    if (kLog) {
      const float lse = logf(sum);
      for (int64_t j = 0; j < n; ++j) yc[j * inner] = store<T>((load(xc[j * inner]) - mx) - lse);
    } else {
      const float scale = 1.0f / sum;
      for (int64_t j = 0; j < n; ++j)
        yc[j * inner] = store<T>(expf(load(xc[j * inner]) - mx) * scale);
    }
  }
}

// V elements at p as floats (V == 4: one 16-byte float4 access; float only).
template <int V, typename T>
__device__ __forceinline__ void load_v(const T* p, float* v) {
  if constexpr (V == 4) {
    static_assert(std::is_same_v<T, float>);
    const float4 t = *reinterpret_cast<const float4*>(p);
    v[0] = t.x;
    v[1] = t.y;
    v[2] = t.z;
    v[3] = t.w;
  } else {
    v[0] = load(*p);
  }
}
template <int V, typename T>
__device__ __forceinline__ void store_v(T* p, const float* v) {
  if constexpr (V == 4) {
    static_assert(std::is_same_v<T, float>);
    *reinterpret_cast<float4*>(p) = make_float4(v[0], v[1], v[2], v[3]);
  } else {
    *p = store<T>(v[0]);
  }
}

// The typed pointers of LayerNormArgs.
template <typename T>
struct RowPtrs {
  const T* x;
  const T* skip;
  const T* bias;
  const T* gamma;
  const T* beta;
  T* y;
  T* sum_out;
  __device__ explicit RowPtrs(const LayerNormArgs& a)
      : x(static_cast<const T*>(a.x)),
        skip(static_cast<const T*>(a.skip)),
        bias(static_cast<const T*>(a.bias)),
        gamma(static_cast<const T*>(a.gamma)),
        beta(static_cast<const T*>(a.beta)),
        y(static_cast<T*>(a.y)),
        sum_out(static_cast<T*>(a.sum_out)) {}
};

// The row's values v = x (+ skip) (+ bias) at vector j.
template <int V, typename T>
__device__ __forceinline__ void row_values(const RowPtrs<T>& a, const T* xr, const T* sr, int64_t j,
                                           float* v) {
  load_v<V>(xr + j * V, v);
  if (sr != nullptr) {
    float s[V];
    load_v<V>(sr + j * V, s);
#pragma unroll
    for (int k = 0; k < V; ++k) v[k] += s[k];
  }
  if (a.bias != nullptr) {
    float b[V];
    load_v<V>(a.bias + j * V, b);
#pragma unroll
    for (int k = 0; k < V; ++k) v[k] += b[k];
  }
}

// A statistic stored as float32 or as the element type.
__device__ __forceinline__ void store_stat(void* out, ElemType t, int64_t r, float v) {
  if (t == ElemType::kHalf)
    static_cast<__half*>(out)[r] = store<__half>(v);
  else if (t == ElemType::kBFloat16)
    static_cast<__nv_bfloat16*>(out)[r] = store<__nv_bfloat16>(v);
  else
    static_cast<float*>(out)[r] = v;
}

// One block per row; V floats per access; kCache keeps the row's values in dynamic shared memory
// (n floats) between the three passes, else they are read again (from sum_out when it exists, so
// that an output aliasing an input is never read back as an input).
template <int V, bool kCache, typename T>
__global__ void layer_norm_kernel(LayerNormArgs args) {
  extern __shared__ float cache[];
  __shared__ float scratch[32];
  const RowPtrs<T> a(args);
  const int64_t nv = args.n / V;
  const float inv_n = 1.0f / static_cast<float>(args.n);
  for (int64_t r = blockIdx.x; r < args.rows; r += gridDim.x) {
    const T* xr = a.x + r * args.n;
    const T* sr = a.skip != nullptr ? a.skip + (r % args.skip_rows) * args.n : nullptr;
    T* sum_r = a.sum_out != nullptr ? a.sum_out + r * args.n : nullptr;
    float local = 0.0f;
    for (int64_t j = threadIdx.x; j < nv; j += blockDim.x) {
      float v[V];
      row_values<V>(a, xr, sr, j, v);
      if (sum_r != nullptr) store_v<V>(sum_r + j * V, v);
      if (kCache) store_v<V>(cache + j * V, v);
#pragma unroll
      for (int k = 0; k < V; ++k) local += v[k];
    }
    const float mean = dev::block_sum(local, scratch) * inv_n;
    auto reload = [&](int64_t j, float* v) {
      if (kCache)
        load_v<V>(cache + j * V, v);
      else if (sum_r != nullptr)
        load_v<V>(sum_r + j * V, v);
      else
        row_values<V>(a, xr, sr, j, v);
    };
    local = 0.0f;
    for (int64_t j = threadIdx.x; j < nv; j += blockDim.x) {
      float v[V];
      reload(j, v);
#pragma unroll
      for (int k = 0; k < V; ++k) {
        const float d = v[k] - mean;
        local += d * d;
      }
    }
    const float var = dev::block_sum(local, scratch) * inv_n;
    const float inv = 1.0f / sqrtf(var + args.eps);
    T* yr = a.y + r * args.n;
    for (int64_t j = threadIdx.x; j < nv; j += blockDim.x) {
      float v[V], g[V], b[V] = {};
      reload(j, v);
      load_v<V>(a.gamma + j * V, g);
      if (a.beta != nullptr) load_v<V>(a.beta + j * V, b);
#pragma unroll
      for (int k = 0; k < V; ++k) v[k] = (v[k] - mean) * inv * g[k] + b[k];
      store_v<V>(yr + j * V, v);
    }
    if (threadIdx.x == 0) {
      if (args.mean_out != nullptr) store_stat(args.mean_out, args.stat_type, r, mean);
      if (args.inv_out != nullptr) store_stat(args.inv_out, args.stat_type, r, inv);
    }
    if (kCache) __syncthreads();  // the next row overwrites the cache
  }
}

template <int V, typename T>
cudaError_t run_layer_norm(const LayerNormArgs& a, cudaStream_t s) {
  const int threads = row_threads(a.n / V, 512);
  const size_t cache_bytes = static_cast<size_t>(a.n) * sizeof(float);
  if (cache_bytes <= 32 * 1024)
    layer_norm_kernel<V, true, T><<<row_grid(a.rows), threads, cache_bytes, s>>>(a);
  else
    layer_norm_kernel<V, false, T><<<row_grid(a.rows), threads, 0, s>>>(a);
  return cudaGetLastError();
}

template <typename T>
cudaError_t run_softmax(const T* x, T* y, int64_t outer, int64_t n, int64_t inner, bool log,
                        cudaStream_t s) {
  if (inner == 1 && n <= 1024) {
    return log ? run_softmax_warp<true>(x, y, outer, static_cast<int>(n), s)
               : run_softmax_warp<false>(x, y, outer, static_cast<int>(n), s);
  }
  if (inner == 1) {
    const int threads = row_threads(n, n >= 4096 ? 512 : 256);
    if (log)
      softmax_rows_kernel<true><<<row_grid(outer), threads, 0, s>>>(x, y, outer, n);
    else
      softmax_rows_kernel<false><<<row_grid(outer), threads, 0, s>>>(x, y, outer, n);
  } else {
    const unsigned g = grid_for(outer * inner);
    if (log)
      softmax_cols_kernel<true><<<g, dev::kThreads, 0, s>>>(x, y, outer, n, inner);
    else
      softmax_cols_kernel<false><<<g, dev::kThreads, 0, s>>>(x, y, outer, n, inner);
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_softmax(ElemType type, const void* x, void* y, int64_t outer, int64_t n,
                           int64_t inner, bool log, cudaStream_t s) {
  if (outer * n * inner == 0) return cudaSuccess;
  return dev::dispatch_float(type, [&](auto tag) {
    using T = decltype(tag);
    return run_softmax(static_cast<const T*>(x), static_cast<T*>(y), outer, n, inner, log, s);
  });
}

cudaError_t launch_layer_norm(const LayerNormArgs& a, cudaStream_t s) {
  if (a.rows == 0 || a.n == 0) return cudaSuccess;
  if (a.type != ElemType::kFloat) {
    return dev::dispatch_float(a.type, [&](auto tag) {
      using T = decltype(tag);
      return run_layer_norm<1, T>(a, s);
    });
  }
  bool vec = a.n % 4 == 0;
  for (const void* p : {a.x, a.skip, a.bias, a.gamma, a.beta, static_cast<const void*>(a.y),
                        static_cast<const void*>(a.sum_out)})
    vec = vec && dev::aligned(p, 16);
  return vec ? run_layer_norm<4, float>(a, s) : run_layer_norm<1, float>(a, s);
}

}  // namespace xopt::cuda
