// Device code for attention.cuh.
#include <cfloat>

#include "executor/cuda/kernels/attention.cuh"

namespace xopt::cuda {
namespace {

constexpr int kThreads = 256;

__global__ void split_heads_kernel(const float* src, const float* bias, float* dst, int64_t b,
                                   int64_t t, int64_t n, int64_t h) {
  const int64_t total = b * t * n * h;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    // i indexes dst [b, n, t, h].
    const int64_t hi = i % h;
    const int64_t ti = (i / h) % t;
    const int64_t ni = (i / (h * t)) % n;
    const int64_t bi = i / (h * t * n);
    float v = src[((bi * t + ti) * n + ni) * h + hi];
    if (bias != nullptr) v += bias[ni * h + hi];
    dst[i] = v;
  }
}

__global__ void merge_heads_kernel(const float* src, float* dst, int64_t b, int64_t t, int64_t n,
                                   int64_t h) {
  const int64_t total = b * t * n * h;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    // i indexes dst [b, t, n * h].
    const int64_t hi = i % h;
    const int64_t ni = (i / h) % n;
    const int64_t ti = (i / (h * n)) % t;
    const int64_t bi = i / (h * n * t);
    dst[i] = src[((bi * n + ni) * t + ti) * h + hi];
  }
}

__device__ float block_reduce(float v, bool is_max, float* shared) {
  for (int o = 16; o > 0; o /= 2) {
    const float w = __shfl_xor_sync(0xffffffffu, v, o);
    v = is_max ? fmaxf(v, w) : v + w;
  }
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  const int warps = (blockDim.x + 31) / 32;
  if (warp == 0) {
    v = lane < warps ? shared[lane] : (is_max ? -INFINITY : 0.0f);
    for (int o = 16; o > 0; o /= 2) {
      const float w = __shfl_xor_sync(0xffffffffu, v, o);
      v = is_max ? fmaxf(v, w) : v + w;
    }
    if (lane == 0) shared[0] = v;
  }
  __syncthreads();
  const float r = shared[0];
  __syncthreads();
  return r;
}

__global__ void attention_softmax_kernel(float* scores, SoftmaxParams p) {
  __shared__ float shared[32];
  const int64_t rows = (p.chunk > 0 ? p.chunk : p.b) * p.n * p.s;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const int64_t si = row % p.s;
    const int64_t ni = (row / p.s) % p.n;
    const int64_t bi = p.b0 + row / (p.s * p.n);
    float* r = scores + row * p.l;
    const float* ab = nullptr;
    if (p.attn_bias != nullptr)
      ab = p.attn_bias +
           (((p.ab_b == 1 ? 0 : bi) * p.ab_n + (p.ab_n == 1 ? 0 : ni)) * p.s + si) * p.l;
    float mx = -INFINITY;  // stays -inf only when every key is masked with -inf
    for (int64_t li = threadIdx.x; li < p.l; li += blockDim.x) {
      bool padded = false;
      switch (p.mask_kind) {
        case KeyMask::kNone:
          break;
        case KeyMask::kLengths:
          padded = li >= p.mask[bi];
          break;
        case KeyMask::kEndStart: {
          const int64_t start = p.mask[bi + p.b];
          padded = li >= p.mask[bi] || li < (start < p.l ? start : p.l);
          break;
        }
        case KeyMask::k2d:
          padded = p.mask[bi * p.l + li] <= 0;
          break;
        case KeyMask::k3d:
          padded = p.mask[(bi * p.s + si) * p.l + li] <= 0;
          break;
      }
      float m = padded ? p.mask_filter : 0.0f;
      if (p.causal && li > si + (p.l - p.s)) m = -FLT_MAX;
      float v = r[li] + m;
      if (ab != nullptr) v += ab[li];
      r[li] = v;
      mx = fmaxf(mx, v);
    }
    mx = block_reduce(mx, true, shared);
    if (mx == -INFINITY) {  // every key masked with -inf: zeros, not NaN (as the CPU)
      for (int64_t li = threadIdx.x; li < p.l; li += blockDim.x) r[li] = 0.0f;
      continue;
    }
    float sum = 0.0f;
    for (int64_t li = threadIdx.x; li < p.l; li += blockDim.x) {
      const float e = expf(r[li] - mx);
      r[li] = e;
      sum += e;
    }
    sum = block_reduce(sum, false, shared);
    for (int64_t li = threadIdx.x; li < p.l; li += blockDim.x) r[li] /= sum;
  }
}

}  // namespace

cudaError_t launch_split_heads(const float* src, const float* bias, float* dst, int64_t b,
                               int64_t t, int64_t n, int64_t h, cudaStream_t stream) {
  const int64_t total = b * t * n * h;
  if (total == 0) return cudaSuccess;
  int64_t blocks = (total + kThreads - 1) / kThreads;
  if (blocks > 65535 * 16) blocks = 65535 * 16;
  split_heads_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(src, bias, dst, b, t,
                                                                             n, h);
  return cudaGetLastError();
}

cudaError_t launch_merge_heads(const float* src, float* dst, int64_t b, int64_t t, int64_t n,
                               int64_t h, cudaStream_t stream) {
  const int64_t total = b * t * n * h;
  if (total == 0) return cudaSuccess;
  int64_t blocks = (total + kThreads - 1) / kThreads;
  if (blocks > 65535 * 16) blocks = 65535 * 16;
  merge_heads_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(src, dst, b, t, n, h);
  return cudaGetLastError();
}

cudaError_t launch_attention_softmax(float* scores, const SoftmaxParams& p, cudaStream_t stream) {
  const int64_t rows = (p.chunk > 0 ? p.chunk : p.b) * p.n * p.s;
  if (rows == 0 || p.l == 0) return cudaSuccess;
  const int threads = p.l >= 256 ? 256 : (p.l >= 128 ? 128 : 64);
  const int64_t blocks = rows < (int64_t{1} << 30) ? rows : (int64_t{1} << 30);
  attention_softmax_kernel<<<static_cast<unsigned>(blocks), threads, 0, stream>>>(scores, p);
  return cudaGetLastError();
}

}  // namespace xopt::cuda
