// Softmax and layer normalization kernels (see norm.cuh).
#include <cmath>
#include <cstdint>

#include "executor/cuda/kernels/device_util.cuh"
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

// One block per row of n contiguous elements.
template <bool kLog>
__global__ void softmax_rows_kernel(const float* x, float* y, int64_t rows, int64_t n) {
  __shared__ float scratch[32];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* xr = x + r * n;
    float* yr = y + r * n;
    float mx = -INFINITY;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) mx = fmaxf(mx, xr[j]);
    mx = dev::block_max(mx, scratch);
    float sum = 0.0f;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) sum += expf(xr[j] - mx);
    sum = dev::block_sum(sum, scratch);
    if (kLog) {
      const float lse = logf(sum);
      for (int64_t j = threadIdx.x; j < n; j += blockDim.x) yr[j] = (xr[j] - mx) - lse;
    } else {
      const float scale = 1.0f / sum;
      for (int64_t j = threadIdx.x; j < n; j += blockDim.x) yr[j] = expf(xr[j] - mx) * scale;
    }
  }
}

// Rows of at most 32 * kPer elements: one warp per row, the row held in registers (one read of x),
// shuffles only.
template <int kPer, bool kLog>
__global__ void softmax_warp_kernel(const float* x, float* y, int64_t rows, int n) {
  const int lane = threadIdx.x & 31;
  const int64_t warps = blockDim.x >> 5;
  const int64_t step = static_cast<int64_t>(gridDim.x) * warps;
  for (int64_t r = blockIdx.x * warps + (threadIdx.x >> 5); r < rows; r += step) {
    const float* xr = x + r * n;
    float* yr = y + r * n;
    float v[kPer];
    float mx = -INFINITY;
#pragma unroll
    for (int t = 0; t < kPer; ++t) {
      const int j = lane + 32 * t;
      v[t] = j < n ? xr[j] : -INFINITY;
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
        if (lane + 32 * t < n) yr[lane + 32 * t] = (v[t] - mx) - lse;
    } else {
      const float scale = 1.0f / sum;
#pragma unroll
      for (int t = 0; t < kPer; ++t)
        if (lane + 32 * t < n) yr[lane + 32 * t] = v[t] * scale;
    }
  }
}

template <bool kLog>
cudaError_t run_softmax_warp(const float* x, float* y, int64_t rows, int n, cudaStream_t s) {
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
template <bool kLog>
__global__ void softmax_cols_kernel(const float* x, float* y, int64_t outer, int64_t n,
                                    int64_t inner) {
  const int64_t total = outer * inner;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t c = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; c < total;
       c += stride) {
    const int64_t o = c / inner, i = c % inner;
    const float* xc = x + o * n * inner + i;
    float* yc = y + o * n * inner + i;
    float mx = -INFINITY;
    for (int64_t j = 0; j < n; ++j) mx = fmaxf(mx, xc[j * inner]);
    float sum = 0.0f;
    for (int64_t j = 0; j < n; ++j) sum += expf(xc[j * inner] - mx);
    if (kLog) {
      const float lse = logf(sum);
      for (int64_t j = 0; j < n; ++j) yc[j * inner] = (xc[j * inner] - mx) - lse;
    } else {
      const float scale = 1.0f / sum;
      for (int64_t j = 0; j < n; ++j) yc[j * inner] = expf(xc[j * inner] - mx) * scale;
    }
  }
}

template <int V>
__device__ __forceinline__ void load_v(const float* p, float* v) {
  if constexpr (V == 4) {
    const float4 t = *reinterpret_cast<const float4*>(p);
    v[0] = t.x;
    v[1] = t.y;
    v[2] = t.z;
    v[3] = t.w;
  } else {
    v[0] = *p;
  }
}
template <int V>
__device__ __forceinline__ void store_v(float* p, const float* v) {
  if constexpr (V == 4) {
    *reinterpret_cast<float4*>(p) = make_float4(v[0], v[1], v[2], v[3]);
  } else {
    *p = v[0];
  }
}

// The row's values v = x (+ skip) (+ bias) at vector j.
template <int V>
__device__ __forceinline__ void row_values(const LayerNormArgs& a, const float* xr, const float* sr,
                                           int64_t j, float* v) {
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

// One block per row; V floats per access; kCache keeps the row's values in dynamic shared memory
// (n floats) between the three passes, else they are read again (from sum_out when it exists, so
// that an output aliasing an input is never read back as an input).
template <int V, bool kCache>
__global__ void layer_norm_kernel(LayerNormArgs a) {
  extern __shared__ float cache[];
  __shared__ float scratch[32];
  const int64_t nv = a.n / V;
  const float inv_n = 1.0f / static_cast<float>(a.n);
  for (int64_t r = blockIdx.x; r < a.rows; r += gridDim.x) {
    const float* xr = a.x + r * a.n;
    const float* sr = a.skip != nullptr ? a.skip + (r % a.skip_rows) * a.n : nullptr;
    float* sum_r = a.sum_out != nullptr ? a.sum_out + r * a.n : nullptr;
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
    const float inv = 1.0f / sqrtf(var + a.eps);
    float* yr = a.y + r * a.n;
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
      if (a.mean_out != nullptr) a.mean_out[r] = mean;
      if (a.inv_out != nullptr) a.inv_out[r] = inv;
    }
    if (kCache) __syncthreads();  // the next row overwrites the cache
  }
}

template <int V>
cudaError_t run_layer_norm(const LayerNormArgs& a, cudaStream_t s) {
  const int threads = row_threads(a.n / V, 512);
  const size_t cache_bytes = static_cast<size_t>(a.n) * sizeof(float);
  if (cache_bytes <= 32 * 1024)
    layer_norm_kernel<V, true><<<row_grid(a.rows), threads, cache_bytes, s>>>(a);
  else
    layer_norm_kernel<V, false><<<row_grid(a.rows), threads, 0, s>>>(a);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_softmax(const float* x, float* y, int64_t outer, int64_t n, int64_t inner,
                           bool log, cudaStream_t s) {
  if (outer * n * inner == 0) return cudaSuccess;
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

cudaError_t launch_layer_norm(const LayerNormArgs& a, cudaStream_t s) {
  if (a.rows == 0 || a.n == 0) return cudaSuccess;
  bool vec = a.n % 4 == 0;
  for (const void* p : {static_cast<const void*>(a.x), static_cast<const void*>(a.skip),
                        static_cast<const void*>(a.bias), static_cast<const void*>(a.gamma),
                        static_cast<const void*>(a.beta), static_cast<const void*>(a.y),
                        static_cast<const void*>(a.sum_out)})
    vec = vec && dev::aligned(p, 16);
  return vec ? run_layer_norm<4>(a, s) : run_layer_norm<1>(a, s);
}

}  // namespace xopt::cuda
