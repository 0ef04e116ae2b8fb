/* Fused block selection (paper sections 3.1 and 3.3), portable path: one CTA per segment
   (sequence, KV head, query tile of 128 packed rows). One pass over the pooled keys in chunks
   of 64 on tensor cores keeps the running tile maximum; each chunk's block energies (sums of
   exp(s - M_chunk) over the rows that reach the block) go into the segment's scratch index as
   float bits, the chunk maximum into shared memory. Then energies are rescaled to the final
   maximum, thresholded at alpha * max, joined with the sink / window / tail blocks, and
   compacted in place (the write position never passes the read position). No per-row score
   matrix exists. A CUB scan and a gather turn the per-segment lists into the CSR. */
#include <cub/device/device_scan.cuh>

#include "cuda_check.h"
#include "tile_mma.cuh"

namespace fp2 {
namespace {

struct SelectArgs {
  fp2_params p;
  int total_blocks;
  const int *cu_q, *cu_k, *cu_tiles, *cu_blocks, *tile_seq, *seg_cap;
  const void *q, *kbar;
  const float *scales;
  int *scratch, *counts;
};

/* Maximum of v over the CTA; every thread gets it. */
__device__ float cta_max(float v, float *red) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  __syncthreads();
  if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = v;
  __syncthreads();
  v = red[0];
  for (int w = 1; w < kWarps; w++) v = fmaxf(v, red[w]);
  return v;
}

template <int D, bool kFp8>
__global__ void __launch_bounds__(kThreads, 1) select_kernel(SelectArgs a) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  __nv_bfloat16 *q_tile = reinterpret_cast<__nv_bfloat16 *>(smem_raw);
  __nv_bfloat16 *k_tile = q_tile + kTileRows * D;
  float *col_sum = reinterpret_cast<float *>(k_tile + kKeyRows * D); /* [kWarps][64] */
  float *red = col_sum + kWarps * kKeyRows;                           /* [kWarps] */
  float *chunk_max = red + kWarps;                                    /* [chunks] */
  __shared__ int warp_count[kWarps];

  const fp2_params &p = a.p;
  const int gt = blockIdx.x, h = blockIdx.y, s = a.tile_seq[gt];
  const int t = gt - a.cu_tiles[s], ntiles = a.cu_tiles[s + 1] - a.cu_tiles[s];
  const int lq = a.cu_q[s + 1] - a.cu_q[s], lk = a.cu_k[s + 1] - a.cu_k[s], offset = lk - lq;
  const int g = p.hq / p.hkv, elem = kFp8 ? 1 : 2;
  const fp2_tile tl = fp2_tile_at(&p, lq, lk, t);
  const int seg = fp2_segment(&p, a.cu_tiles[s], ntiles, h, t);
  int *slot = a.scratch + a.seg_cap[seg];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const char *qb = static_cast<const char *>(a.q);
  const char *kb = static_cast<const char *>(a.kbar) + ((size_t)h * a.total_blocks + a.cu_blocks[s]) * p.dim * elem;

  stage_rows<D, kFp8>(
      q_tile, kTileRows,
      [&](int r) -> const void * {
        int row = tl.row_begin + r;
        return row < tl.row_end ? qb + packed_row_offset(p, a.cu_q[s], h, row) * elem : nullptr;
      },
      a.q);
  cp_async_commit();
  cp_async_wait<0>();
  __syncthreads();
  uint32_t qf[D / 16][4];
  load_q_fragments<D>(q_tile, qf);

  /* Positions of this thread's two rows (C layout rows lane/4 and lane/4 + 8); -1: no row. */
  int pos[2];
  for (int i = 0; i < 2; i++) {
    int row = tl.row_begin + warp * 16 + lane / 4 + i * 8;
    pos[i] = row < tl.row_end ? offset + row / g : -1;
  }
  const float sq = kFp8 ? a.scales[0] : 1.0f, sk = kFp8 ? a.scales[1] : 1.0f;
  const float scale_log2 = sq * sk * rsqrtf((float)p.dim) * kLog2e;

  /* Pass 1: energies per chunk against the running maximum (log2 units). */
  float m_run = -INFINITY;
  const int nchunks = (tl.nscored + kKeyRows - 1) / kKeyRows;
  for (int c = 0; c < nchunks; c++) {
    const int j0 = c * kKeyRows;
    __syncthreads(); /* the previous chunk's tile and sums are consumed */
    stage_rows<D, kFp8>(
        k_tile, kKeyRows,
        [&](int r) -> const void * { return j0 + r < tl.nscored ? kb + (size_t)(j0 + r) * p.dim * elem : nullptr; },
        a.kbar);
    cp_async_commit();
    cp_async_wait<0>();
    __syncthreads();
    float sc[kKeyRows / 8][4];
    qk_tile<D>(qf, k_tile, sc);
    float mx = -INFINITY;
#pragma unroll
    for (int nt = 0; nt < kKeyRows / 8; nt++)
#pragma unroll
      for (int e = 0; e < 4; e++) {
        int j = j0 + nt * 8 + (lane % 4) * 2 + (e & 1), row_pos = pos[e >> 1];
        bool counted = j < tl.nscored && row_pos >= j * p.block;
        sc[nt][e] = counted ? sc[nt][e] * scale_log2 : -INFINITY;
        mx = fmaxf(mx, sc[nt][e]);
      }
    const float m_chunk = fmaxf(m_run, cta_max(mx, red));
    m_run = m_chunk;
    /* Column sums of exp2(s - M): over this thread's 2 rows, then the 8 row groups of the warp. */
#pragma unroll
    for (int nt = 0; nt < kKeyRows / 8; nt++)
#pragma unroll
      for (int e = 0; e < 2; e++) {
        float v = (m_chunk == -INFINITY) ? 0.0f : exp2f(sc[nt][e] - m_chunk) + exp2f(sc[nt][e + 2] - m_chunk);
        v += __shfl_xor_sync(0xffffffffu, v, 4);
        v += __shfl_xor_sync(0xffffffffu, v, 8);
        v += __shfl_xor_sync(0xffffffffu, v, 16);
        if (lane < 4) col_sum[warp * kKeyRows + nt * 8 + lane * 2 + e] = v;
      }
    __syncthreads();
    if (threadIdx.x < kKeyRows && j0 + threadIdx.x < tl.nscored) {
      float e = 0.0f;
      for (int w = 0; w < kWarps; w++) e += col_sum[w * kKeyRows + threadIdx.x];
      slot[j0 + threadIdx.x] = __float_as_int(e);
    }
    if (threadIdx.x == 0) chunk_max[c] = m_chunk;
  }
  __syncthreads();

  /* Pass 2: energies against the final maximum, and their maximum. */
  float e_max = 0.0f;
  for (int j = threadIdx.x; j < tl.nscored; j += kThreads) {
    float e = __int_as_float(slot[j]) * exp2f(chunk_max[j / kKeyRows] - m_run);
    slot[j] = __float_as_int(e);
    e_max = fmaxf(e_max, e);
  }
  e_max = cta_max(e_max, red);
  const float threshold = p.alpha * e_max;

  /* Pass 3: keep and compact in place, 256 blocks a round; reads precede the round's writes. */
  int count = 0;
  for (int j0 = 0; j0 <= tl.last_k; j0 += kThreads) {
    const int j = j0 + threadIdx.x;
    bool keep = false;
    if (j <= tl.last_k)
      keep = fp2_always_kept(&p, &tl, ntiles, t, j) || (j < tl.nscored && __int_as_float(slot[j]) >= threshold);
    const unsigned ballot = __ballot_sync(0xffffffffu, keep);
    if (lane == 0) warp_count[warp] = __popc(ballot);
    __syncthreads();
    int before = count;
    for (int w = 0; w < warp; w++) before += warp_count[w];
    int total = 0;
    for (int w = 0; w < kWarps; w++) total += warp_count[w];
    if (keep) slot[before + __popc(ballot & ((1u << lane) - 1u))] = j;
    count += total;
    __syncthreads();
  }
  if (threadIdx.x == 0) a.counts[seg] = count;
}

__global__ void gather_kernel(int nseg, const int *seg_cap, const int *scratch, const int *offsets, int *indices) {
  const int seg = blockIdx.x;
  if (seg >= nseg) return;
  const int n = offsets[seg + 1] - offsets[seg];
  for (int i = threadIdx.x; i < n; i += blockDim.x) indices[offsets[seg] + i] = scratch[seg_cap[seg] + i];
}

template <int D, bool kFp8>
fp2_status launch(const SelectArgs &a, int total_tiles, int max_blocks, cudaStream_t stream) {
  const int nchunks = (max_blocks + kKeyRows - 1) / kKeyRows + 1;
  const size_t smem = sizeof(__nv_bfloat16) * (kTileRows + kKeyRows) * D +
                      sizeof(float) * (kWarps * kKeyRows + kWarps + nchunks);
  FP2_CUDA("fp2_select", cudaFuncSetAttribute(select_kernel<D, kFp8>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                              (int)smem));
  select_kernel<D, kFp8><<<dim3(total_tiles, a.p.hkv), kThreads, smem, stream>>>(a);
  FP2_LAUNCHED("fp2_select: score and select");
  return FP2_OK;
}

}  // namespace
}  // namespace fp2

extern "C" size_t fp2_select_workspace_bytes(const fp2_plan *plan) {
  size_t bytes = 0;
  cub::DeviceScan::InclusiveSum(nullptr, bytes, static_cast<const int *>(nullptr), static_cast<int *>(nullptr),
                                plan->nseg > 0 ? plan->nseg : 1);
  return bytes;
}

extern "C" fp2_status fp2_select(const fp2_params *p, const fp2_plan *plan, const void *q, const void *kbar,
                                 const float *scales, fp2_index *index, void *workspace, size_t workspace_bytes,
                                 cudaStream_t stream) {
  using namespace fp2;
  if (p->qtile != kTileRows)
    return fp2_fail(FP2_ERR_UNSUPPORTED, "fp2_select: the gpu kernels take --qtile %d (got %d)", kTileRows, p->qtile);
  if (p->dtype == FP2_FP8 && !scales) return fp2_fail(FP2_ERR_ARG, "fp2_select: FP8 needs the scales");
  if (workspace_bytes < fp2_select_workspace_bytes(plan))
    return fp2_fail(FP2_ERR_ARG, "fp2_select: workspace of %zu bytes is too small", workspace_bytes);
  SelectArgs a = {*p,           plan->total_blocks, plan->cu_q, plan->cu_k, plan->cu_tiles,  plan->cu_blocks,
                  plan->tile_seq, plan->seg_cap,    q,          kbar,       scales,          index->scratch,
                  index->counts};
  fp2_status st;
  if (p->dim == 128)
    st = p->dtype == FP2_FP8 ? launch<128, true>(a, plan->total_tiles, plan->max_blocks, stream)
                             : launch<128, false>(a, plan->total_tiles, plan->max_blocks, stream);
  else if (p->dim == 64)
    st = p->dtype == FP2_FP8 ? launch<64, true>(a, plan->total_tiles, plan->max_blocks, stream)
                             : launch<64, false>(a, plan->total_tiles, plan->max_blocks, stream);
  else
    return fp2_fail(FP2_ERR_UNSUPPORTED, "fp2_select: the gpu kernels take head dim 64 or 128 (got %d)", p->dim);
  if (st != FP2_OK) return st;
  size_t bytes = workspace_bytes;
  FP2_CUDA("fp2_select: csr offsets", cudaMemsetAsync(index->offsets, 0, sizeof(int), stream));
  FP2_CUDA("fp2_select: csr offsets",
           cub::DeviceScan::InclusiveSum(workspace, bytes, index->counts, index->offsets + 1, plan->nseg, stream));
  gather_kernel<<<plan->nseg, 128, 0, stream>>>(plan->nseg, plan->seg_cap, index->scratch, index->offsets,
                                                index->indices);
  FP2_LAUNCHED("fp2_select: csr gather");
  return FP2_OK;
}
