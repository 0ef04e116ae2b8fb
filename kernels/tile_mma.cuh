/* Pieces shared by the portable (mma.sync) kernels: a 128-row query tile held by 8 warps of
   16 rows, 64-row key tiles in swizzled shared memory, S = Q K^T and O += P V per warp.
   FP8 operands are e4m3 codes, converted to bf16 (exactly: e4m3 is a subset of bf16) when
   staged, so both precisions share one bf16 tensor-core path whose products are exact. */
#ifndef FP2_TILE_MMA_CUH
#define FP2_TILE_MMA_CUH

#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include "fp2.h"
#include "ptx.cuh"

namespace fp2 {

constexpr int kTileRows = 128; /* packed query rows per tile (the index granularity) */
constexpr int kWarps = 8;      /* 16 rows each */
constexpr int kThreads = kWarps * 32;
constexpr int kKeyRows = 64;   /* keys (or pooled vectors) per shared-memory key tile */
constexpr float kLog2e = 1.4426950408889634f; /* scores go to exp2 as s * log2(e) */

/* Element (r, c) of a swizzled tile of rows of D bf16: 16-byte chunks XOR-ed with r % 8, so
   that ldmatrix's eight rows at one column hit eight different bank groups. */
template <int D>
__device__ __forceinline__ int swz(int r, int c) {
  return r * D + (((c >> 3) ^ (r & 7)) << 3) + (c & 7);
}

/* Stages `rows` rows into a swizzled tile; row_ptr(r) gives the global row (bf16 or e4m3
   elements) or nullptr for a row of zeros. BF16 rows go by cp.async (the caller commits and
   waits); FP8 rows are converted through registers. `base`: any valid global address (the
   zero-fill copies name one but read nothing). */
template <int D, bool kFp8, typename RowPtr>
__device__ __forceinline__ void stage_rows(__nv_bfloat16 *tile, int rows, RowPtr row_ptr, const void *base) {
  constexpr int kChunks = D / 8; /* 16-byte bf16 chunks per row */
  for (int i = threadIdx.x; i < rows * kChunks; i += kThreads) {
    int r = i / kChunks, c = (i % kChunks) * 8;
    const void *src = row_ptr(r);
    __nv_bfloat16 *dst = tile + swz<D>(r, c);
    if constexpr (kFp8) {
      uint2 raw = src ? *reinterpret_cast<const uint2 *>(static_cast<const uint8_t *>(src) + c) : make_uint2(0, 0);
      const uint8_t *b = reinterpret_cast<const uint8_t *>(&raw);
      __align__(16) __nv_bfloat16 v[8];
#pragma unroll
      for (int e = 0; e < 8; e++) {
        __half_raw h = __nv_cvt_fp8_to_halfraw(b[e], __NV_E4M3);
        v[e] = __float2bfloat16_rn(__half2float(__half(h)));
      }
      *reinterpret_cast<uint4 *>(dst) = *reinterpret_cast<const uint4 *>(v);
    } else {
      const __nv_bfloat16 *g = src ? static_cast<const __nv_bfloat16 *>(src) + c : nullptr;
      cp_async_16(dst, g ? static_cast<const void *>(g) : base, g ? 16 : 0);
    }
  }
}

/* A fragments of this warp's 16 query rows for every 16-wide k step of D. */
template <int D>
__device__ __forceinline__ void load_q_fragments(const __nv_bfloat16 *q_tile, uint32_t (&qf)[D / 16][4]) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int r = warp * 16 + (lane & 7) + ((lane >> 3) & 1) * 8;
#pragma unroll
  for (int kk = 0; kk < D / 16; kk++) ldmatrix_x4(qf[kk], q_tile + swz<D>(r, kk * 16 + (lane >> 4) * 8));
}

/* S[nt] (16 rows x 8 keys, C layout) = Q K^T over the 64 keys of a key tile. */
template <int D>
__device__ __forceinline__ void qk_tile(const uint32_t (&qf)[D / 16][4], const __nv_bfloat16 *k_tile,
                                        float (&s)[kKeyRows / 8][4]) {
  const int lane = threadIdx.x % 32;
#pragma unroll
  for (int nt = 0; nt < kKeyRows / 8; nt++) s[nt][0] = s[nt][1] = s[nt][2] = s[nt][3] = 0.0f;
#pragma unroll
  for (int nt = 0; nt < kKeyRows / 8; nt += 2) {
    const int key = nt * 8 + (lane & 7) + (lane >> 4) * 8;
#pragma unroll
    for (int kk = 0; kk < D / 16; kk++) {
      uint32_t b[4];
      ldmatrix_x4(b, k_tile + swz<D>(key, kk * 16 + ((lane >> 3) & 1) * 8));
      mma_m16n8k16_bf16(s[nt], qf[kk], b[0], b[1]);
      mma_m16n8k16_bf16(s[nt + 1], qf[kk], b[2], b[3]);
    }
  }
}

__device__ __forceinline__ uint32_t pack_bf16(float lo, float hi) {
  __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<uint32_t *>(&v);
}

/* O (16 rows x D, C layout per 8 columns) += P V; p holds the probabilities as bf16 pairs in
   the A layout: p[kk] covers keys 16 kk .. 16 kk + 15 of the tile. */
template <int D>
__device__ __forceinline__ void pv_tile(const uint32_t (&p)[kKeyRows / 16][4], const __nv_bfloat16 *v_tile,
                                        float (&o)[D / 8][4]) {
  const int lane = threadIdx.x % 32;
#pragma unroll
  for (int kk = 0; kk < kKeyRows / 16; kk++) {
    const int key = kk * 16 + (lane & 7) + ((lane >> 3) & 1) * 8;
#pragma unroll
    for (int nd = 0; nd < D / 8; nd += 2) {
      uint32_t b[4];
      ldmatrix_x4_trans(b, v_tile + swz<D>(key, nd * 8 + (lane >> 4) * 8));
      mma_m16n8k16_bf16(o[nd], p[kk], b[0], b[1]);
      mma_m16n8k16_bf16(o[nd + 1], p[kk], b[2], b[3]);
    }
  }
}

/* Where the packed query row r of KV head h of a sequence lives in Q (or O). */
__device__ __forceinline__ size_t packed_row_offset(const fp2_params &p, int cu_q, int h, int r) {
  const int g = p.hq / p.hkv;
  return ((size_t)(cu_q + r / g) * p.hq + (size_t)h * g + r % g) * p.dim;
}

}  // namespace fp2

#endif
