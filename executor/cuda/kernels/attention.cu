// Device code for attention.cuh.
#include <cfloat>
#include <cstdint>
#include <type_traits>

#include "executor/cuda/kernels/attention.cuh"
#include "executor/cuda/kernels/lowp.cuh"

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
      ab = static_cast<const float*>(p.attn_bias) +
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

// ---- Fused attention (flash-attention style) ----
//
// A block of 128 threads takes 16 * RQ queries of one (batch, head) pair and streams over its keys
// in tiles of 64: the Q tile stays in shared memory, each K and V tile is loaded there (bias added,
// zero past the ends), and per tile
//   1. scores: the 8 lanes of a row group (a quarter warp) own RQ query rows; lane tx computes the
//      scores of keys tx + 8j (j < 8) for them: an RQ x 8 register tile over float4 columns of
//      Q and K (row stride DH + 4: the 8 lanes' K rows fall in distinct banks);
//   2. masks exactly as attention_softmax_kernel, then the online softmax: the row max over the
//      tile (shuffles within the row group), the running max m, the accumulator and the running sum
//      rescaled by exp(m_old - m_new), p = exp(score - m_new) written to the row group's rows of a
//      shared P tile (only its own lanes read them: __syncwarp);
//   3. output: lane tx owns columns (c * 8 + tx) * 4 .. + 3 (c < DH / 32) of the RQ rows:
//      acc += P V over the tile's 64 keys.
// At the end y = acc / sum, reduced over the row group. While every score so far is -inf the
// exponentials are taken against 0 (no exp(-inf - -inf) = NaN), and a row whose every score is
// -inf ends with sum 0 and is written as zeros, as the CPU reference does.
constexpr int kFaThreads = 128;
constexpr int kFaKeys = 64;
constexpr int kFaLdp = kFaKeys + 4;  // row stride of the P tile

template <int RQ, int DH>
constexpr size_t fa_smem_bytes() {
  return (static_cast<size_t>(16 * RQ) * (DH + 4) + 2 * static_cast<size_t>(kFaKeys) * (DH + 4) +
          static_cast<size_t>(16 * RQ) * kFaLdp) *
         sizeof(float);
}

__device__ __forceinline__ float float4_at(const float4& v, int u) {
  return u == 0 ? v.x : u == 1 ? v.y : u == 2 ? v.z : v.w;
}

// Over the 8 lanes of a row group (lanes that differ in their low 3 bits).
__device__ __forceinline__ float group_max(float v) {
  for (int o = 1; o < 8; o *= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
__device__ __forceinline__ float group_sum(float v) {
  for (int o = 1; o < 8; o *= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__device__ __forceinline__ bool fa_aligned(const void* p) {
  return (reinterpret_cast<uintptr_t>(p) & 15) == 0;
}

// dst [kTileRows][DH + 4] = rows t0 .. t0 + kTileRows of a [t_count, width] matrix at src (row
// stride `row`) plus bias [width], zeros past its ends; float4 loads where every row and the bias
// are 16-byte aligned.
template <int DH, int kTileRows, typename T>
__device__ __forceinline__ void fa_load_tile(float* dst, const T* src, int64_t row, int64_t t0,
                                             int64_t t_count, int64_t width, const T* bias) {
  constexpr int kLd = DH + 4;
  if constexpr (!std::is_same_v<T, float>) {
    // float16 / bfloat16: one element per access, converted to float (vector loads: next issue).
    for (int e = static_cast<int>(threadIdx.x); e < kTileRows * DH; e += kFaThreads) {
      const int r = e / DH, j = e % DH;
      float x = 0.0f;
      if (t0 + r < t_count && j < width) {
        x = dev::load(src[(t0 + r) * row + j]);
        if (bias != nullptr) x += dev::load(bias[j]);
      }
      dst[r * kLd + j] = x;
    }
  } else if (((width | row) & 3) == 0 && fa_aligned(src) && (bias == nullptr || fa_aligned(bias))) {
    for (int e = static_cast<int>(threadIdx.x); e < kTileRows * DH / 4; e += kFaThreads) {
      const int r = e / (DH / 4), j = e % (DH / 4) * 4;
      float4 x = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      if (t0 + r < t_count && j < width) {
        x = *reinterpret_cast<const float4*>(src + (t0 + r) * row + j);
        if (bias != nullptr) {
          const float4 bv = *reinterpret_cast<const float4*>(bias + j);
          x.x += bv.x, x.y += bv.y, x.z += bv.z, x.w += bv.w;
        }
      }
      *reinterpret_cast<float4*>(dst + r * kLd + j) = x;
    }
  } else {
    for (int e = static_cast<int>(threadIdx.x); e < kTileRows * DH; e += kFaThreads) {
      const int r = e / DH, j = e % DH;
      float x = 0.0f;
      if (t0 + r < t_count && j < width) {
        x = src[(t0 + r) * row + j];
        if (bias != nullptr) x += bias[j];
      }
      dst[r * kLd + j] = x;
    }
  }
}

template <int RQ, int DH, typename T>
__global__ void __launch_bounds__(kFaThreads) fused_attention_kernel(const FusedAttentionParams p) {
  constexpr int kRows = 16 * RQ;    // queries per block
  constexpr int kLd = DH + 4;       // row stride of the Q, K and V tiles
  constexpr int kChunks = DH / 32;  // float4 output chunks per thread and row
  extern __shared__ float4 fa_smem[];
  float* qs = reinterpret_cast<float*>(fa_smem);  // [kRows][kLd]
  float* ks = qs + kRows * kLd;                   // [kFaKeys][kLd]
  float* vs = ks + kFaKeys * kLd;                 // [kFaKeys][kLd]
  float* ps = vs + kFaKeys * kLd;                 // [kRows][kFaLdp]
  const int tid = static_cast<int>(threadIdx.x), lane = tid & 31;
  const int tx = lane & 7;
  const int row0 = ((tid >> 5) * 4 + (lane >> 3)) * RQ;  // this row group's first row in the tile
  const SoftmaxParams& mp = p.mask;
  const int64_t q_tiles = (p.s + kRows - 1) / kRows;
  const int64_t work = p.b * p.n * q_tiles;
  const bool vec_y = std::is_same_v<T, float> && (p.hv & 3) == 0 && fa_aligned(p.y);
  for (int64_t w = blockIdx.x; w < work; w += gridDim.x) {
    const int64_t qt = w % q_tiles, bn = w / q_tiles;
    const int64_t ni = bn % p.n, bi = bn / p.n;
    const int64_t q0 = qt * kRows;
    const T* qg = static_cast<const T*>(p.q) + bi * p.q_b + ni * p.q_n;
    const T* kg = static_cast<const T*>(p.k) + bi * p.k_b + ni * p.k_n;
    const T* vg = static_cast<const T*>(p.v) + bi * p.v_b + ni * p.v_n;
    const T* qbias = p.q_bias != nullptr ? static_cast<const T*>(p.q_bias) + ni * p.h : nullptr;
    const T* kbias = p.k_bias != nullptr ? static_cast<const T*>(p.k_bias) + ni * p.h : nullptr;
    const T* vbias = p.v_bias != nullptr ? static_cast<const T*>(p.v_bias) + ni * p.hv : nullptr;
    // Keys outside [key_lo, key_hi) are padding (valid lengths, end and start positions).
    int64_t key_lo = 0, key_hi = p.l;
    if (mp.mask_kind == KeyMask::kLengths) {
      key_hi = mp.mask[bi];
    } else if (mp.mask_kind == KeyMask::kEndStart) {
      key_hi = mp.mask[bi];
      const int64_t start = mp.mask[bi + p.b];
      key_lo = start < p.l ? start : p.l;
    }

    __syncthreads();  // the previous item's reads of the tiles are done
    fa_load_tile<DH, kRows>(qs, qg, p.q_row, q0, p.s, p.h, qbias);

    float m_run[RQ], l_run[RQ], acc[RQ][4 * kChunks];
#pragma unroll
    for (int i = 0; i < RQ; ++i) {
      m_run[i] = -INFINITY;
      l_run[i] = 0.0f;
#pragma unroll
      for (int d = 0; d < 4 * kChunks; ++d) acc[i][d] = 0.0f;
    }

    for (int64_t k0 = 0; k0 < p.l; k0 += kFaKeys) {
      __syncthreads();  // the previous tile's reads of K and V are done
      // Zeros past the ends: P V then adds 0 * 0, never 0 * garbage.
      fa_load_tile<DH, kFaKeys>(ks, kg, p.k_row, k0, p.l, p.h, kbias);
      fa_load_tile<DH, kFaKeys>(vs, vg, p.v_row, k0, p.l, p.hv, vbias);
      __syncthreads();

      // 1. Scores of keys k0 + tx + 8c for rows row0 + i.
      float sc[RQ][8];
#pragma unroll
      for (int i = 0; i < RQ; ++i)
#pragma unroll
        for (int c = 0; c < 8; ++c) sc[i][c] = 0.0f;
#pragma unroll
      for (int j = 0; j < DH; j += 4) {
        float4 qv[RQ];
#pragma unroll
        for (int i = 0; i < RQ; ++i)
          qv[i] = *reinterpret_cast<const float4*>(qs + (row0 + i) * kLd + j);
#pragma unroll
        for (int c = 0; c < 8; ++c) {
          const float4 kv = *reinterpret_cast<const float4*>(ks + (tx + 8 * c) * kLd + j);
#pragma unroll
          for (int i = 0; i < RQ; ++i) {
            sc[i][c] = fmaf(qv[i].x, kv.x, sc[i][c]);
            sc[i][c] = fmaf(qv[i].y, kv.y, sc[i][c]);
            sc[i][c] = fmaf(qv[i].z, kv.z, sc[i][c]);
            sc[i][c] = fmaf(qv[i].w, kv.w, sc[i][c]);
          }
        }
      }

      // 2. Masks, attention_bias and the online softmax.
#pragma unroll
      for (int i = 0; i < RQ; ++i) {
        const int64_t si = q0 + row0 + i;
        const bool row_ok = si < p.s;  // rows past the end are computed, never read or written
        const T* ab = nullptr;
        if (mp.attn_bias != nullptr && row_ok)
          ab = static_cast<const T*>(mp.attn_bias) +
               (((mp.ab_b == 1 ? 0 : bi) * mp.ab_n + (mp.ab_n == 1 ? 0 : ni)) * p.s + si) * p.l;
        const int32_t* m3 =
            mp.mask_kind == KeyMask::k3d && row_ok ? mp.mask + (bi * p.s + si) * p.l : nullptr;
        float tile_max = -INFINITY;
#pragma unroll
        for (int c = 0; c < 8; ++c) {
          const int64_t li = k0 + tx + 8 * c;
          float x = -INFINITY;  // keys past the end take no part
          if (li < p.l) {
            bool padded = li >= key_hi || li < key_lo;
            if (mp.mask_kind == KeyMask::k2d)
              padded = mp.mask[bi * p.l + li] <= 0;
            else if (m3 != nullptr)
              padded = m3[li] <= 0;
            float add = padded ? mp.mask_filter : 0.0f;
            if (mp.causal && li > si + (p.l - p.s)) add = -FLT_MAX;
            // Rounded as the unfused path does: scale * (q . k), then + mask, then + bias.
            x = __fadd_rn(__fmul_rn(sc[i][c], p.scale), add);
            if (ab != nullptr) x += dev::load(ab[li]);
          }
          sc[i][c] = x;
          tile_max = fmaxf(tile_max, x);
        }
        const float m_new = fmaxf(m_run[i], group_max(tile_max));
        // While every score is -inf, exponentiate against 0: exp(-inf - 0) = 0, no NaN.
        const float m_ref = m_new == -INFINITY ? 0.0f : m_new;
        const float alpha = __expf(m_run[i] - m_ref);  // 0 when m_run is -inf
        m_run[i] = m_new;
        float sum = 0.0f;
#pragma unroll
        for (int c = 0; c < 8; ++c) {
          const float e = __expf(sc[i][c] - m_ref);
          ps[(row0 + i) * kFaLdp + tx + 8 * c] = e;
          sum += e;
        }
        l_run[i] = l_run[i] * alpha + sum;
#pragma unroll
        for (int d = 0; d < 4 * kChunks; ++d) acc[i][d] *= alpha;
      }
      __syncwarp();  // the row group's P rows are written (only its own lanes read them)

      // 3. acc += P V over the tile's keys.
#pragma unroll
      for (int c = 0; c < kFaKeys; c += 4) {
        float4 pv[RQ];
#pragma unroll
        for (int i = 0; i < RQ; ++i)
          pv[i] = *reinterpret_cast<const float4*>(ps + (row0 + i) * kFaLdp + c);
#pragma unroll
        for (int u = 0; u < 4; ++u) {
#pragma unroll
          for (int ch = 0; ch < kChunks; ++ch) {
            const float4 vv =
                *reinterpret_cast<const float4*>(vs + (c + u) * kLd + (ch * 8 + tx) * 4);
#pragma unroll
            for (int i = 0; i < RQ; ++i) {
              const float pu = float4_at(pv[i], u);
              acc[i][ch * 4 + 0] = fmaf(pu, vv.x, acc[i][ch * 4 + 0]);
              acc[i][ch * 4 + 1] = fmaf(pu, vv.y, acc[i][ch * 4 + 1]);
              acc[i][ch * 4 + 2] = fmaf(pu, vv.z, acc[i][ch * 4 + 2]);
              acc[i][ch * 4 + 3] = fmaf(pu, vv.w, acc[i][ch * 4 + 3]);
            }
          }
        }
      }
    }

    // y = acc / sum; a row with no key (sum 0: every score -inf) gets zeros.
    float inv[RQ];
#pragma unroll
    for (int i = 0; i < RQ; ++i) {  // every lane shuffles, before any leaves for a missing row
      const float total = group_sum(l_run[i]);
      inv[i] = total > 0.0f ? 1.0f / total : 0.0f;
    }
#pragma unroll
    for (int i = 0; i < RQ; ++i) {
      const int64_t si = q0 + row0 + i;
      if (si >= p.s) continue;
      T* yr = static_cast<T*>(p.y) + (bi * p.s + si) * p.n * p.hv + ni * p.hv;
#pragma unroll
      for (int ch = 0; ch < kChunks; ++ch) {
        const int64_t d = (ch * 8 + tx) * 4;
        if (d >= p.hv) continue;
        const float4 o = make_float4(acc[i][ch * 4 + 0] * inv[i], acc[i][ch * 4 + 1] * inv[i],
                                     acc[i][ch * 4 + 2] * inv[i], acc[i][ch * 4 + 3] * inv[i]);
        if (vec_y) {
          *reinterpret_cast<float4*>(yr + d) = o;
        } else {
#pragma unroll
          for (int u = 0; u < 4; ++u)
            if (d + u < p.hv) yr[d + u] = dev::store<T>(float4_at(o, u));
        }
      }
    }
  }
}

using FaKernel = void (*)(FusedAttentionParams);
struct FaConfig {
  FaKernel kernel = nullptr;
  size_t smem = 0;
};

template <int RQ, int DH, typename T>
FaConfig fa_config() {
  return {fused_attention_kernel<RQ, DH, T>, fa_smem_bytes<RQ, DH>()};
}

// The instantiations: RQ 4 only up to DH 64 (registers and shared memory).
template <typename T>
FaConfig fa_pick_typed(int rows, int dh) {
  switch (dh) {
    case 32:
      return rows == 4   ? fa_config<4, 32, T>()
             : rows == 2 ? fa_config<2, 32, T>()
                         : fa_config<1, 32, T>();
    case 64:
      return rows == 4   ? fa_config<4, 64, T>()
             : rows == 2 ? fa_config<2, 64, T>()
                         : fa_config<1, 64, T>();
    case 128:
      return rows == 2 ? fa_config<2, 128, T>() : rows == 1 ? fa_config<1, 128, T>() : FaConfig{};
    default:
      return {};
  }
}

FaConfig fa_pick(ElemType t, int rows, int dh) {
  switch (t) {
    case ElemType::kFloat:
      return fa_pick_typed<float>(rows, dh);
    case ElemType::kHalf:
      return fa_pick_typed<__half>(rows, dh);
    case ElemType::kBFloat16:
      return fa_pick_typed<__nv_bfloat16>(rows, dh);
    default:
      return {};
  }
}

int64_t fa_blocks(const FusedAttentionParams& p, int rows) {
  const int64_t tile = 16 * static_cast<int64_t>(rows);
  return p.b * p.n * ((p.s + tile - 1) / tile);
}

}  // namespace

cudaError_t prepare_fused_attention(FusedAttentionParams& p) {
  const int64_t widest = p.h > p.hv ? p.h : p.hv;
  if (p.h < 1 || p.hv < 1 || widest > kFusedAttentionMaxHead) return cudaErrorInvalidValue;
  p.dh = widest <= 32 ? 32 : widest <= 64 ? 64 : 128;
  int device = 0, sms = 0;
  cudaError_t e = cudaGetDevice(&device);
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  if (e != cudaSuccess) return e;
  // The most rows per thread (more work per shared-memory load) that still gives every SM two
  // blocks; one row per thread when even that does not.
  p.rows = 1;
  for (int rows = p.dh == 128 ? 2 : 4; rows > 1; rows /= 2)
    if (fa_blocks(p, rows) >= 2 * static_cast<int64_t>(sms)) {
      p.rows = rows;
      break;
    }
  const FaConfig c = fa_pick(p.type, p.rows, p.dh);
  if (c.kernel == nullptr) return cudaErrorInvalidValue;
  return cudaFuncSetAttribute(c.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                              static_cast<int>(c.smem));
}

cudaError_t launch_fused_attention(const FusedAttentionParams& p, cudaStream_t stream) {
  const FaConfig c = fa_pick(p.type, p.rows, p.dh);
  if (c.kernel == nullptr) return cudaErrorInvalidValue;  // not prepared
  const int64_t work = fa_blocks(p, p.rows);
  if (work == 0) return cudaSuccess;
  const int64_t blocks = work < (int64_t{1} << 30) ? work : (int64_t{1} << 30);
  c.kernel<<<static_cast<unsigned>(blocks), kFaThreads, c.smem, stream>>>(p);
  return cudaGetLastError();
}

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
