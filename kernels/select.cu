/* Fused block selection (paper sections 3.1 and 3.3), portable path (mma.sync, sm_80+), v2.
   One CTA of 4 warps per segment (sequence, KV head, query tile of 128 packed rows); warp w
   holds the Q fragments of rows 32w .. 32w + 31 in registers. The pooled keys stream through
   a two-stage cp.async pipeline in chunks of 64, one barrier per chunk. A warp scores
   S^T = K̄ Q^T (keys as the MMA's M, rows as its N), so that a key's sum over the warp's rows
   stays inside a thread and its lane quad; per 32 keys each quad takes the maximum of its
   4 keys x 32 rows and writes its partial energies, sums of exp2(s - m_quad), with that
   maximum to shared memory. After the next chunk's barrier, threads 0-63 rescale the four
   warps' partials to their largest maximum and store the block energies in the segment's
   scratch index as log2 values (select_tile.cuh): no CTA-wide reduction inside the loop,
   nothing rescaled after it. Each warp's largest energy ends the CTA; the threshold,
   the always-kept blocks and the CSR come after, in select_csr.cu (fp2_select, for this
   kernel and the wgmma one in select_sm90.cu). No per-row score matrix exists. Tiles run
   heaviest (last) first.
   FP8 operands are staged as e4m3 bytes by cp.async (half the shared-memory traffic of
   bf16) and become f16 when a fragment is loaded: exact, as e4m3 is a subset of f16, so the
   f16 MMA's products are exact as the bf16 ones are.
   v1 (8 warps of 16 rows, so twice the K̄ reads from shared memory per score; one chunk in
   flight; a CTA-wide maximum and a shared-memory column sum per chunk, four barriers;
   exp2f; FP8 converted element by element while staging) took 4.62 ms at 128K in BF16 on
   the H200 and 5.26 ms in FP8; this version's first form 2.51 and 2.36 ms (NOTES.md). */
#include <cuda_fp16.h>

#include "cuda_check.h"
#include "select_tile.cuh"

namespace fp2 {
namespace {

/* kSelWarps warps of 32 query rows each: 4 MMA n-tiles of 8. */
constexpr int kChunk = 64; /* pooled keys per pipeline stage */
constexpr int kPart = 32;  /* keys per MMA pass: 2 m-tiles of 16 */
constexpr int kParts = kChunk / kPart;
constexpr int kGroups = kChunk / 4; /* a lane quad's 4 keys of a part share their maximum */

/* The key group of key t of a chunk: quad t % 8 of part t / 32 (its keys: t % 8 + 8i). */
__device__ __forceinline__ int group_of(int t) { return t / kPart * 8 + t % 8; }

/* Rows of D operands (bf16, or e4m3 codes) in shared memory, in 16-byte chunks. An
   ldmatrix covers one 16-wide k step of bf16 (two chunks) or two k steps of e4m3. */
template <int D, bool kFp8>
struct Operand {
  static constexpr int kRowBytes = D * (kFp8 ? 1 : 2);
  static constexpr int kStageBytes = kChunk * kRowBytes;
  static constexpr int kSteps = kFp8 ? 2 : 1; /* k steps per ldmatrix */
  static constexpr __device__ int chunk(int kk) { return kFp8 ? kk : 2 * kk; } /* first chunk of step kk */
};

/* Byte offset of chunk c of row r: chunks XOR-ed with the row so that the eight rows of an
   ldmatrix matrix hit eight bank groups (rows of 64 bytes share a group in pairs). */
template <int kRowBytes>
__device__ __forceinline__ uint32_t swz_chunk(int r, int c) {
  constexpr int n = kRowBytes / 16;
  return r * kRowBytes + ((c ^ (n >= 8 ? r & 7 : (r >> 1) & (n - 1))) << 4);
}

/* cp.async of `rows` rows into a swizzled tile from row_ptr(r) (global); rows r >= valid
   (valid >= 1) are zero-filled: they name row valid - 1 but read nothing. Each thread copies
   one chunk column of every (threads / chunks)-th row, a multiple of 8 rows, so its swizzle
   is the same in every row it copies. */
template <int kRowBytes, int kRows, typename RowPtr>
__device__ __forceinline__ void stage_bytes(unsigned char *tile, int valid, RowPtr row_ptr) {
  constexpr int n = kRowBytes / 16, kRowStep = kSelThreads / n;
  static_assert(kRowStep % 8 == 0 && kRows % kRowStep == 0, "rows of one thread share their swizzle");
  const int c = threadIdx.x % n, r0 = threadIdx.x / n;
  unsigned char *dst = tile + swz_chunk<kRowBytes>(r0, c);
  for (int i = 0; i < kRows / kRowStep; i++) {
    const int r = r0 + i * kRowStep;
    cp_async_16(dst + i * kRowStep * kRowBytes, static_cast<const char *>(row_ptr(min(r, valid - 1))) + c * 16,
                r < valid ? 16 : 0);
  }
}

/* An ldmatrix register of e4m3 codes holds k = 4c .. 4c + 3 of one row (c = lane % 4); they
   become the f16 pairs (2c, 2c + 1) (.x) and (2c + 8, 2c + 9) (.y) of the MMA's k step.
   Q and K̄ go through the same permutation of k, so their products are unchanged. */
__device__ __forceinline__ uint2 e4m3x4_to_f16(uint32_t v) {
  const __half2_raw lo = __nv_cvt_fp8x2_to_halfraw2((__nv_fp8x2_storage_t)(v & 0xffffu), __NV_E4M3);
  const __half2_raw hi = __nv_cvt_fp8x2_to_halfraw2((__nv_fp8x2_storage_t)(v >> 16), __NV_E4M3);
  return make_uint2(lo.x | (uint32_t)lo.y << 16, hi.x | (uint32_t)hi.y << 16);
}

/* B fragments (Q^T) of this warp's 32 rows: qf[kk][nt] for k step kk, n-tile nt of 8 rows. */
template <int D, bool kFp8>
__device__ __forceinline__ void load_qt_fragments(const unsigned char *q_tile, uint32_t (&qf)[D / 16][4][2]) {
  using Op = Operand<D, kFp8>;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
#pragma unroll
  for (int kk = 0; kk < D / 16; kk += Op::kSteps)
#pragma unroll
    for (int nt = 0; nt < 4; nt += 2) {
      /* matrices: (n-tile nt, first chunk), (nt, second), (nt + 1, first), (nt + 1, second) */
      const int row = warp * 32 + nt * 8 + (lane & 7) + (lane >> 4) * 8;
      uint32_t r[4];
      ldmatrix_x4(r, q_tile + swz_chunk<Op::kRowBytes>(row, Op::chunk(kk) + ((lane >> 3) & 1)));
#pragma unroll
      for (int i = 0; i < 4; i++) {
        if constexpr (kFp8) {
          const uint2 f = e4m3x4_to_f16(r[i]); /* n-tile nt + i / 2, k step kk + i % 2 */
          qf[kk + i % 2][nt + i / 2][0] = f.x;
          qf[kk + i % 2][nt + i / 2][1] = f.y;
        } else {
          qf[kk][nt + i / 2][i % 2] = r[i];
        }
      }
    }
}

/* s[m][nt] (C layout: 16 keys x 8 rows) = K̄ Q^T for keys 32 part + 16 m .. + 15 of a stage.
   a_row: this lane's ldmatrix row (16 m + 32 part added here) as a byte offset; a_xor: its
   chunk swizzle and matrix column, (lane / 16 ^ row swizzle) * 16, the same in every row.
   Load L of a row starts at byte 32 L ^ a_xor = (32 (L % 4) ^ a_xor) + 128 (L / 4), as
   a_xor < 128: four offsets in registers, the rest immediates. */
template <int D, bool kFp8>
__device__ __forceinline__ void score_part(const uint32_t (&qf)[D / 16][4][2], const unsigned char *keys,
                                           uint32_t a_row, uint32_t a_xor, int part, float (&s)[2][4][4]) {
  using Op = Operand<D, kFp8>;
  const unsigned char *row = keys + a_row + part * kPart * Op::kRowBytes;
  uint32_t off[4];
#pragma unroll
  for (int i = 0; i < 4; i++) off[i] = (32 * i) ^ a_xor;
#pragma unroll
  for (int m = 0; m < 2; m++)
#pragma unroll
    for (int nt = 0; nt < 4; nt++) s[m][nt][0] = s[m][nt][1] = s[m][nt][2] = s[m][nt][3] = 0.0f;
#pragma unroll
  for (int kk = 0; kk < D / 16; kk += Op::kSteps)
#pragma unroll
    for (int m = 0; m < 2; m++) {
      /* matrices: (keys 0-7, first chunk), (keys 8-15, first), (0-7, second), (8-15, second) */
      uint32_t r[4];
      const int load = kk / Op::kSteps; /* 16 chunk(kk) = 32 load */
      ldmatrix_x4(r, row + m * 16 * Op::kRowBytes + off[load % 4] + 128 * (load / 4));
      if constexpr (kFp8) {
#pragma unroll
        for (int i = 0; i < 2; i++) { /* k step kk + i */
          const uint2 top = e4m3x4_to_f16(r[2 * i]), bottom = e4m3x4_to_f16(r[2 * i + 1]);
          const uint32_t a[4] = {top.x, bottom.x, top.y, bottom.y};
#pragma unroll
          for (int nt = 0; nt < 4; nt++) mma_m16n8k16_f16(s[m][nt], a, qf[kk + i][nt][0], qf[kk + i][nt][1]);
        }
      } else {
#pragma unroll
        for (int nt = 0; nt < 4; nt++) mma_m16n8k16_bf16(s[m][nt], r, qf[kk][nt][0], qf[kk][nt][1]);
      }
    }
}

template <int D, bool kFp8>
__global__ void __launch_bounds__(kSelThreads, 4) select_kernel(SelectArgs a) {
  using Op = Operand<D, kFp8>;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  unsigned char *stages = smem_raw;                       /* [2][kChunk] K̄ rows */
  unsigned char *q_tile = smem_raw + Op::kStageBytes;     /* [kTileRows] Q rows, over stage 1: read before it is */
  float *part_sum = reinterpret_cast<float *>(smem_raw + 3 * Op::kStageBytes); /* [2][kSelWarps][kChunk] */
  float *part_max = part_sum + 2 * kSelWarps * kChunk;    /* [2][kSelWarps][kGroups], log2 units */
  int *row_last = reinterpret_cast<int *>(part_max + 2 * kSelWarps * kGroups); /* [kTileRows] */
  static_assert(kTileRows * Op::kRowBytes == 2 * Op::kStageBytes, "the Q tile is two stages long");

  const fp2_params &p = a.p;
  const SelectSegment sg = select_segment(a, p);
  const int h = sg.h, s = sg.s, elem = kFp8 ? 1 : 2;
  const fp2_tile &tl = sg.tl;
  const int nrows = sg.nrows, nchunks = fp2_cdiv(tl.nscored, kChunk);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const char *qb = static_cast<const char *>(a.q);
  const char *kb = static_cast<const char *>(a.kbar) + ((size_t)h * a.total_blocks + a.cu_blocks[s]) * p.dim * elem;
  auto stage_keys = [&](unsigned char *stage, int j0) { /* pooled keys j0 .. j0 + 63 */
    const char *first = kb + (size_t)j0 * Op::kRowBytes;
    stage_bytes<Op::kRowBytes, kChunk>(stage, tl.nscored - j0, [=](int r) { return first + r * Op::kRowBytes; });
  };

  stage_bytes<Op::kRowBytes, kTileRows>(q_tile, nrows, [&](int r) {
    return qb + packed_row_offset(p, a.cu_q[s], h, tl.row_begin + r) * elem;
  });
  if (nchunks > 0) stage_keys(stages, 0);
  cp_async_commit();
  fill_row_last(a, p, sg, row_last);
  cp_async_wait<0>();
  __syncthreads();
  uint32_t qf[D / 16][4][2];
  load_qt_fragments<D, kFp8>(q_tile, qf);

  const float sq = kFp8 ? a.scales[0] : 1.0f, sk = kFp8 ? a.scales[1] : 1.0f;
  const float scale_log2 = sq * sk * rsqrtf((float)p.dim) * kLog2e;
  const int full_end = select_full_end(sg);
  float l_max = -INFINITY; /* combining threads: the largest log2 energy so far */
  /* This lane's ldmatrix row in a stage's 16-key m-tiles, and the swizzle of its chunks (the
     row's swizzle depends on lane % 8 alone; 16-byte chunks XOR without carries). */
  const int a_lrow = (lane & 7) + ((lane >> 3) & 1) * 8;
  const uint32_t a_row = a_lrow * Op::kRowBytes;
  const uint32_t a_xor = swz_chunk<Op::kRowBytes>(a_lrow, lane >> 4) - a_row;

  /* Iteration c scores chunk c and combines chunk c - 1's partials. */
  for (int c = 0; c <= nchunks; c++) {
    cp_async_wait<0>();
    __syncthreads(); /* chunk c has landed; chunk c - 1's stage is read and its partials written */
    if (c + 1 < nchunks) stage_keys(stages + ((c + 1) & 1) * Op::kStageBytes, (c + 1) * kChunk);
    cp_async_commit();
    if (c > 0 && threadIdx.x < kChunk) {
      const int b = (c - 1) & 1, grp = group_of(threadIdx.x), j = (c - 1) * kChunk + threadIdx.x;
      const float *pm = part_max + b * kSelWarps * kGroups + grp;
      float mc = -INFINITY, e = 0.0f;
      for (int w = 0; w < kSelWarps; w++) mc = fmaxf(mc, pm[w * kGroups]);
      for (int w = 0; w < kSelWarps; w++)
        if (pm[w * kGroups] != -INFINITY)
          e += part_sum[(b * kSelWarps + w) * kChunk + threadIdx.x] * ex2_approx(pm[w * kGroups] - mc);
      const float l = log2_energy(e, mc);
      if (j < tl.nscored) sg.slot[j] = __float_as_int(l);
      l_max = fmaxf(l_max, l);
    }
    if (c == nchunks) break;

    const unsigned char *keys = stages + (c & 1) * Op::kStageBytes;
    const int j0 = c * kChunk;
    float *ps = part_sum + ((c & 1) * kSelWarps + warp) * kChunk;
    float *pm = part_max + ((c & 1) * kSelWarps + warp) * kGroups;
#pragma unroll 1
    for (int part = 0; part < kParts; part++) {
      float sc[2][4][4];
      score_part<D, kFp8>(qf, keys, a_row, a_xor, part, sc);
      /* C layout: key 16 m + lane / 4 + 8 (e / 2), row 8 nt + 2 (lane % 4) + e % 2. */
      if (j0 + kChunk > full_end)
#pragma unroll
        for (int nt = 0; nt < 4; nt++)
#pragma unroll
          for (int e = 0; e < 4; e++) {
            const int last = row_last[warp * 32 + nt * 8 + (lane % 4) * 2 + e % 2];
#pragma unroll
            for (int m = 0; m < 2; m++)
              if (j0 + part * kPart + m * 16 + lane / 4 + (e / 2) * 8 > last) sc[m][nt][e] = -INFINITY;
          }
      /* The quad's maximum (its keys' sums stay in the quad): two chains of 16, not one of 32. */
      float mq[2];
#pragma unroll
      for (int m = 0; m < 2; m++) {
        mq[m] = sc[m][0][0];
#pragma unroll
        for (int i = 1; i < 16; i++) mq[m] = fmaxf(mq[m], sc[m][i / 4][i % 4]);
      }
      float mx = fmaxf(mq[0], mq[1]);
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      /* exp2(s * scale - max) in one FFMA and one MUFU op; masked scores give exp2(-inf) = 0. */
      const float ref = mx == -INFINITY ? 0.0f : mx * scale_log2;
      float sum[2][2] = {{0.0f, 0.0f}, {0.0f, 0.0f}};
#pragma unroll
      for (int m = 0; m < 2; m++)
#pragma unroll
        for (int nt = 0; nt < 4; nt++)
#pragma unroll
          for (int e = 0; e < 4; e++) sum[m][e / 2] += ex2_approx(fmaf(sc[m][nt][e], scale_log2, -ref));
#pragma unroll
      for (int m = 0; m < 2; m++)
#pragma unroll
        for (int hf = 0; hf < 2; hf++) {
          float v = sum[m][hf];
          v += __shfl_xor_sync(0xffffffffu, v, 1);
          v += __shfl_xor_sync(0xffffffffu, v, 2);
          if (lane % 4 == 0) ps[part * kPart + m * 16 + hf * 8 + lane / 4] = v;
        }
      if (lane % 4 == 0) pm[part * 8 + lane / 4] = mx == -INFINITY ? -INFINITY : ref;
    }
  }

  write_warp_max(a, sg, l_max);
}

template <int D, bool kFp8>
fp2_status launch(const SelectArgs &a, int total_tiles, cudaStream_t stream) {
  const size_t smem = 3 * Operand<D, kFp8>::kStageBytes + sizeof(float) * 2 * kSelWarps * (kChunk + kGroups) +
                      sizeof(int) * kTileRows;
  FP2_CUDA("fp2_select", cudaFuncSetAttribute(select_kernel<D, kFp8>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                              (int)smem));
  /* Four CTAs of 51 KB (bf16, d = 128) share an SM only with the shared-memory carve-out at its most. */
  FP2_CUDA("fp2_select", cudaFuncSetAttribute(select_kernel<D, kFp8>, cudaFuncAttributePreferredSharedMemoryCarveout,
                                              cudaSharedmemCarveoutMaxShared));
  select_kernel<D, kFp8><<<select_grid(a, total_tiles), kSelThreads, smem, stream>>>(a);
  FP2_LAUNCHED("fp2_select: score and select");
  return FP2_OK;
}

}  // namespace
}  // namespace fp2

extern "C" size_t fp2_select_workspace_bytes(const fp2_plan *plan) { return fp2::select_csr_workspace_bytes(plan); }

extern "C" fp2_status fp2_select(const fp2_params *p, const fp2_plan *plan, const void *q, uint8_t *q8,
                                 const void *kbar, const float *scales, fp2_index *index, void *workspace,
                                 size_t workspace_bytes, cudaStream_t stream) {
  using namespace fp2;
  if (p->qtile != kTileRows)
    return fp2_fail(FP2_ERR_UNSUPPORTED, "fp2_select: the gpu kernels take --qtile %d (got %d)", kTileRows, p->qtile);
  if (p->dtype == FP2_FP8 && !scales) return fp2_fail(FP2_ERR_ARG, "fp2_select: FP8 needs the scales");
  if (q8 && p->dtype != FP2_FP8) return fp2_fail(FP2_ERR_ARG, "fp2_select: q8 is for FP8 only");
  if (q8 && ((uintptr_t)q % 16 != 0 || (uintptr_t)q8 % 8 != 0))
    return fp2_fail(FP2_ERR_ARG, "fp2_select: with q8, q must be 16-byte aligned and q8 8-byte aligned");
  if (workspace_bytes < fp2_select_workspace_bytes(plan))
    return fp2_fail(FP2_ERR_ARG, "fp2_select: workspace of %zu bytes is too small", workspace_bytes);
  fp2_status st;
  /* Q's codes by the convert pass first, unless the sm90 kernel makes them as it stages its tiles. */
  const int convert_pass = q8 && p->kernel != FP2_KERNEL_SM90;
  if (convert_pass) {
    if ((st = fp2_convert_e4m3(q, (size_t)plan->total_q * p->hq * p->dim, scales, q8, stream)) != FP2_OK) return st;
    q = q8;
  }
  SelectArgs a = {*p,           plan->total_blocks, plan->cu_q, plan->cu_k, plan->cu_tiles,  plan->cu_blocks,
                  plan->tile_seq, plan->seg_base,   q,          kbar,       convert_pass ? nullptr : q8,
                  scales,       index->scratch,     index->counts,
                  static_cast<float *>(workspace) /* warp_max: select_csr_workspace_bytes */,
                  fp2_divider_of(fp2_group(p)),
                  fp2_divider_of(p->hkv)};
  if (p->kernel == FP2_KERNEL_SM90)
    st = select_sm90(a, plan, stream);
  else if (p->dim == 128)
    st = p->dtype == FP2_FP8 ? launch<128, true>(a, plan->total_tiles, stream)
                             : launch<128, false>(a, plan->total_tiles, stream);
  else if (p->dim == 64)
    st = p->dtype == FP2_FP8 ? launch<64, true>(a, plan->total_tiles, stream)
                             : launch<64, false>(a, plan->total_tiles, stream);
  else
    return fp2_fail(FP2_ERR_UNSUPPORTED, "fp2_select: the gpu kernels take head dim 64 or 128 (got %d)", p->dim);
  if (st != FP2_OK) return st;
  return select_csr(a, plan, index, workspace, stream);
}
