/* Fused block selection on Hopper (sm_90a, head dim 128, BF16 or FP8): the scoring of
   select.cu on wgmma, behind fp2_select when p->kernel is FP2_KERNEL_SM90.
   One CTA of one warpgroup per segment (sequence, KV head, query tile of 128 packed rows),
   heaviest tiles first, several CTAs per SM. The Q tile comes once by TMA where g divides
   128 (by cp.async otherwise: a tile then starts inside a position's heads), issued before
   the kernel waits for the pool (it may start while the pool drains: dependent_launch.cuh).
   Q's tile is read under an evict-first L2 policy (by TMA or cp.async; FP8's conversion reads
   it plainly): one CTA reads each tile, so that its misses evict each other, not the lines
   other kernels left in L2, dirty ones included.
   FP8 from bf16 Q, the CTA converts its tile as it stages it and writes the codes out; the
   pooled keys come by TMA in stages of 64 on mbarriers. A stage's scores are S^T = K̄ Q^T (keys
   as M, the tile's rows as N; FP8: e4m3 wgmma on the codes, no conversion), so that a key's
   maximum and sum over the tile's rows stay within its lane quad: no cross-warp
   combination. BF16 scores a stage as one whole-tile product; FP8, whose 64 registers (8 CTAs
   per SM) hold half a tile's accumulator, as two products of half the tile's rows each, one
   after the other. Each half is scored (two keys x 16 rows a thread) apart, and the other
   CTAs' warps, not a product in flight under the exponentials, keep the SM busy (SelPrec).
   The stage is refilled as soon as its products have completed. A key's energy goes to the
   segment's scratch as a log2 value against a reference of its own (its score on the
   tile's first row where every row counts the stage, else a maximum; select_tile.cuh);
   select_csr.cu thresholds after.
   At 128K on the H200 (kernels/NOTES.md): v1 (stages of 128 keys as two products, the
   second overlapping only the first one's exponentials; 2 CTAs per SM in BF16) 2.48 ms in
   BF16 and 1.49 in FP8 (the portable kernel: 2.05 and 2.06); v2 (this pipeline, Q by
   cp.async) 1.91 and 1.40; v3 (Q by TMA) 1.49 and 1.20, then 1.32 and 1.11 with the CSR
   built apart; v4 (the first row's reference) 1.21 and 1.02; v5 (the mask only where a
   row does not count a scored key) FP8 1.33 → 1.29 with Q converted here, then FP8 on one
   accumulator at 4 CTAs per SM 1.29 → 1.12; v7 (FP8 on half-tile products at 8 CTAs per
   SM) 1.12 → 1.02; v9 (a quad's two sums in two shuffles, no division in the prologue: its
   I2F, MUFU.RCP and F2I queued behind the exponentials) FP8 1.01 → 0.95, BF16 1.18 → 1.14-1.19;
   v10 (a tile's KV heads side by side in the grid, so that they read Q's positions whole; the
   CSR's energies read once, select_csr.cu) FP8 0.950 → 0.931 (BF16, the grid alone: 1.15-1.18 →
   1.14); v11 (BF16 as FP8 since v7: half-tile products at 4 CTAs per SM, in place of
   whole-tile products on two accumulators at 3; 84 registers, was 168 and 24 bytes of spills)
   ncu at 32K 121 → 108 us, at an 8K chunk's first keys 28.4 → 25.0; at 128K in events
   within the noise (1.13-1.14 ms); 128K in 8K chunks 1.555 → 1.505; v14 (BF16 on one
   whole-tile product a stage at 4 CTAs, the stage released before the exponentials; 114
   registers, was 84) ncu at 128K 1.037 → 0.997 ms, 128K in 8K chunks 1.543 → 1.504; v15
   (BF16's unmasked stage scored in one pass, no vote between its halves; 121 registers) ncu
   at 128K 1.005 → 0.987 ms, 128K in 8K chunks 1.511 → 1.472; Q evict-first (2026-12-07), on an
   H100, 128K in 8K chunks: the index with the pooled cache 1.735 → 1.706 ms, without it 3.045 →
   3.030, the one pass's select unchanged; on its cp.async path too (2026-12-07, fifth session,
   an H100), 28:4 in 8K chunks: with the pooled cache 1.896 → 1.887 ms (kernels/NOTES.md). */
#include <string.h>

#include "cuda_check.h"
#include "dependent_launch.cuh"
#include "e4m3.cuh"
#include "select_tile.cuh"
#include "sm90_device.h"
#include "sm90_shape.h"
#include "sm90_tile.cuh"
#include "tensor_map.h"

namespace fp2 {
namespace {

constexpr int kD = FP2_SM90_DIM;
constexpr int kStageKeys = 64; /* pooled keys per stage: the M of one wgmma product */
static_assert(kTileRows == kTileRowsSm90, "the query tile is one shared-memory tile");

/* What the precision changes beyond the operand's (Sm90Operand): a stage's bytes and the CTAs
   per SM. One stage: its keys are reloaded when the stage's products have completed, and the
   other CTAs cover the load.
   - BF16: 4 CTAs, as shared memory allows (Q's 32 KB and a stage of 16 KB), on whole-tile
     products (121 registers). Until v11, 3 CTAs on whole-tile products, the next stage's
     under this one's exponentials (two stages, two accumulators, 168 registers); v11 on
     half-tile products as FP8 (84 registers), 4 % slower at 128K than v14 (kernels/NOTES.md).
   - FP8: 8 CTAs (one stage of 8 KB, 64 registers, Q converted in two batches of loads). On
     the H200 at 128K, 5 CTAs (three stages) took 1.09 ms, 6 (two) 1.05 and 8 1.02, against
     1.12 for v5's 4 CTAs on whole-tile products (kernels/NOTES.md). */
template <bool kFp8>
struct SelPrec : Sm90Operand<kFp8> {
  static constexpr int stage_bytes = Sm90Operand<kFp8>::halves * kStageKeys * 128;
  static constexpr int stages = 1;
  static constexpr int ctas_per_sm = kFp8 ? 8 : 4;
  static constexpr int q_batches = 2; /* FP8: Q's rows converted in this many batches of loads */
};

/* Shared memory, 1024-byte aligned: the operand tiles first. */
template <bool kFp8>
struct SelSmem {
  unsigned char q[SelPrec<kFp8>::halves * kHalfBytes];
  unsigned char k[SelPrec<kFp8>::stages][SelPrec<kFp8>::stage_bytes];
  uint64_t full[SelPrec<kFp8>::stages];
  uint64_t q_full;
  int row_last[kTileRows];
};

/* The scores of the 64 rows of half h of the tile (h = 0: rows 0..63, 1: rows 64..127): a
   half-tile product's accumulator, 32 registers (d[i] holds rows 8i..8i+7 of the half). */
using HalfScores = float[8][4];

/* A stage's product: BF16 the whole tile's 128 rows (d[i] rows 8i..8i+7: half h in
   d[8h..8h+7]), FP8 one half's 64 rows. */
template <bool kFp8>
using ProductScores = float[kFp8 ? 8 : 16][4];

__device__ __forceinline__ const HalfScores &half_of(const float (&d)[16][4], int h) {
  return *reinterpret_cast<const HalfScores *>(&d[8 * h]);
}

/* d (64 keys x the tile's rows: BF16 all 128, FP8 the 64 of half h) = K̄ Q^T of one stage,
   committed as one group. */
template <bool kFp8>
__device__ __forceinline__ void issue_scores(ProductScores<kFp8> &d, const unsigned char *keys, const unsigned char *q,
                                             int h) {
  wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < kD / SelPrec<kFp8>::k_step; kk++) {
    const uint64_t kd = desc_kmajor<kStageKeys>(keys, 0, kk), qd = desc_kmajor(q, h * kTileRows / 2, kk);
    if constexpr (kFp8)
      wgmma_m64n64k32_e4m3_ss(d, kd, qd, kk > 0);
    else
      wgmma_m64n128k16_bf16_ss(d, kd, qd, kk > 0);
  }
  wgmma_commit();
}

/* This thread's first key of the stage of keys j0 .. j0 + 63: k0 = j0 + 16 warp + lane / 4 in
   d[i][0..1], k0 + 8 in d[i][2..3], rows 64 h + 8 i + 2 (lane % 4) + 0..1 of half h. */
__device__ __forceinline__ int stage_key0(int j0) { return j0 + threadIdx.x / 32 * 16 + threadIdx.x % 32 / 4; }

/* Score (i, e) of half h as a key sees it: kMasked counts a score past its row's last block
   as -inf. d is only read: writing the registers of a wgmma accumulator makes ptxas serialise
   every wgmma. */
template <bool kMasked>
__device__ __forceinline__ float score_at(const HalfScores &d, const int *row_last, int k0, int h, int i, int e) {
  return !kMasked || k0 + 8 * (e / 2) <= row_last[64 * h + 8 * i + 2 * (threadIdx.x % 4) + e % 2] ? d[i][e]
                                                                                                : -INFINITY;
}

/* Key k's (0: k0, 1: k0 + 8) maximum over this thread's 16 scores of half h. */
template <bool kMasked>
__device__ __forceinline__ float half_max(const HalfScores &d, const int *row_last, int k0, int h, int k) {
  float m = -INFINITY;
#pragma unroll
  for (int i = 0; i < 8; i++)
    m = fmaxf(m, fmaxf(score_at<kMasked>(d, row_last, k0, h, i, 2 * k),
                       score_at<kMasked>(d, row_last, k0, h, i, 2 * k + 1)));
  return m;
}

/* Over a lane quad (the four lanes that hold one key's rows). */
__device__ __forceinline__ float quad_max(float m) {
  m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 1));
  return fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 2));
}

__device__ __forceinline__ float quad_sum(float x) {
  x += __shfl_xor_sync(0xffffffffu, x, 1);
  return x + __shfl_xor_sync(0xffffffffu, x, 2);
}

/* Adds exp2(s * scale_log2 - ref) of key k's 16 scores of half h to this thread's two sums
   (even and odd rows; masked scores add exp2(-inf) = 0). */
template <bool kMasked>
__device__ __forceinline__ void add_half(float (&sum)[2], const HalfScores &d, const int *row_last, int k0, int h,
                                         int k, float scale_log2, float ref) {
#pragma unroll
  for (int i = 0; i < 8; i++) {
    sum[0] += ex2_approx(fmaf(score_at<kMasked>(d, row_last, k0, h, i, 2 * k), scale_log2, -ref));
    sum[1] += ex2_approx(fmaf(score_at<kMasked>(d, row_last, k0, h, i, 2 * k + 1), scale_log2, -ref));
  }
}

/* Whether a sum of this thread's may overflow once the quad adds its four (or is not a
   number): below 2^124 in each thread, the quad's sum stays below 2^126. */
__device__ __forceinline__ bool sums_unsafe(const float (&sum)[2][2]) {
  constexpr float kSafe = 0x1p124f;
  return !(sum[0][0] + sum[0][1] <= kSafe && sum[1][0] + sum[1][1] <= kSafe);
}

/* The two keys' log2 energies from this thread's sums into the slot; returns the energy this
   lane stored (-inf where none). The quad's sums of both keys take two shuffles: each lane
   hands its neighbour its partial of the neighbour's key (key 0 on even lanes, key 1 on odd),
   then adds the other pair's; lanes 0 and 1 of the quad then take one lg2 between them. */
__device__ __forceinline__ float store_energies(const float (&sum)[2][2], const float (&ref)[2], int k0, int nscored,
                                                int *slot) {
  const int k = threadIdx.x % 2;
  const float key0 = sum[0][0] + sum[0][1], key1 = sum[1][0] + sum[1][1];
  float e = (k ? key1 : key0) + __shfl_xor_sync(0xffffffffu, k ? key0 : key1, 1);
  e += __shfl_xor_sync(0xffffffffu, e, 2);
  const int j = k0 + 8 * k;
  if (threadIdx.x % 4 >= 2 || j >= nscored) return -INFINITY;
  const float l = log2_energy(e, k ? ref[1] : ref[0]);
  slot[j] = __float_as_int(l);
  return l;
}

/* Key k's score on the tile's first row (row 0 of half 0, held by lane 0 of the quad), in
   log2 units: the unmasked reference (score_first_half says why it is enough). */
__device__ __forceinline__ float first_row_ref(const HalfScores &d0, int k, float scale_log2) {
  return __shfl_sync(0xffffffffu, d0[0][2 * k], threadIdx.x % 32 & ~3) * scale_log2;
}

/* The first half of a stage: each key's reference and this thread's sums over half 0.
   Where some row does not count a scored key (kMasked), the reference is the key's maximum
   over half 0's counted scores (0 where there are none). Else it is the key's score on the
   tile's first row: a sum of exp2 in f32 needs a reference only near enough that no term
   overflows, and the first row's term, 1, keeps the sum from underflowing. That saves the
   maximum's FMNMX and shuffles, so that the exponentials start as soon as the product has
   completed. Where a sum may overflow (scores of a key more than about 120 / scale_log2
   apart) or a score is not finite, the warp takes half 0's maximum after all. */
template <bool kMasked>
__device__ __forceinline__ void score_first_half(float (&sum)[2][2], float (&ref)[2], const HalfScores &d0,
                                                 const int *row_last, int k0, float scale_log2) {
  auto at_max = [&](int k) {
    const float m = quad_max(half_max<kMasked>(d0, row_last, k0, 0, k));
    return m == -INFINITY ? 0.0f : m * scale_log2;
  };
#pragma unroll
  for (int k = 0; k < 2; k++) {
    ref[k] = kMasked ? at_max(k) : first_row_ref(d0, k, scale_log2);
    sum[k][0] = sum[k][1] = 0.0f;
    add_half<kMasked>(sum[k], d0, row_last, k0, 0, k, scale_log2, ref[k]);
  }
  if constexpr (!kMasked) {
    if (!__any_sync(0xffffffffu, sums_unsafe(sum))) return;
#pragma unroll
    for (int k = 0; k < 2; k++) {
      ref[k] = at_max(k);
      sum[k][0] = sum[k][1] = 0.0f;
      add_half<false>(sum[k], d0, row_last, k0, 0, k, scale_log2, ref[k]);
    }
  }
}

/* The second half: half 1's terms added to the sums. Unmasked, against the first half's
   reference, unless a sum may overflow. Masked, or where one may: each key's reference
   moves to the larger of the first half's (where that half counted a score) and half 1's
   maximum, the first half's part is rescaled to it, and half 1's terms are added against
   it. */
template <bool kMasked>
__device__ __forceinline__ void score_second_half(float (&sum)[2][2], float (&ref)[2], const HalfScores &d1,
                                                  const int *row_last, int k0, float scale_log2) {
  const float first[2] = {sum[0][0] + sum[0][1], sum[1][0] + sum[1][1]};
  if constexpr (!kMasked) {
#pragma unroll
    for (int k = 0; k < 2; k++) add_half<false>(sum[k], d1, row_last, k0, 1, k, scale_log2, ref[k]);
    if (!__any_sync(0xffffffffu, sums_unsafe(sum))) return;
  }
#pragma unroll
  for (int k = 0; k < 2; k++) {
    /* Over the quad, so that its four lanes move to one reference (a lane's own part may have
       underflowed to 0); a NaN counts, and stays. */
    const bool counted = quad_sum(first[k]) != 0.0f;
    const float r = fmaxf(counted ? ref[k] : -INFINITY,
                          quad_max(half_max<kMasked>(d1, row_last, k0, 1, k)) * scale_log2);
    const float to = r == -INFINITY ? 0.0f : r; /* no score counted in either half */
    sum[k][0] = counted ? first[k] * ex2_approx(ref[k] - to) : 0.0f;
    sum[k][1] = 0.0f;
    ref[k] = to;
    add_half<kMasked>(sum[k], d1, row_last, k0, 1, k, scale_log2, to);
  }
}

/* BF16's unmasked stage, both halves in one pass: every term against first_row_ref, with no
   check between the halves, so that a thread's 64 exponentials do not wait on a vote halfway
   (the select's timeline, kernels/NOTES.md: a warp's exponentials alone take about twice the
   MUFU's time).
   The same terms in the same order as the two halves scored apart. Returns false where a sum
   may overflow or a score is not finite: the caller then scores the halves apart. */
__device__ __forceinline__ bool score_tile_unmasked(float (&sum)[2][2], float (&ref)[2], const float (&d)[16][4],
                                                    const int *row_last, int k0, float scale_log2) {
#pragma unroll
  for (int k = 0; k < 2; k++) {
    ref[k] = first_row_ref(half_of(d, 0), k, scale_log2);
    sum[k][0] = sum[k][1] = 0.0f;
    add_half<false>(sum[k], half_of(d, 0), row_last, k0, 0, k, scale_log2, ref[k]);
    add_half<false>(sum[k], half_of(d, 1), row_last, k0, 1, k, scale_log2, ref[k]);
  }
  return !__any_sync(0xffffffffu, sums_unsafe(sum));
}

/* How a CTA stages its Q tile. */
enum QSource { kQByCpAsync, kQByTma, kQConverted };

/* FP8 from bf16 Q (a.q8 set): the tile's rows of bf16 read from global memory, a thread's 16
   loads of 16 bytes in flight at once, and their codes (e4m3.cuh, as fp2_convert_e4m3
   makes them) written into the shared tile in TMA's layout and, for the tile's own rows, to
   q8 at the same offsets. Thread t takes 16-byte column t % 16 of rows t / 16 + 8 j, so that
   a half-warp reads 256 contiguous bytes and writes 128; rows past the tile are zero. Packed
   row R is head h g + R % g of position R / g, stepped by 8 rows with no division. */
template <int kBatches>
__device__ __forceinline__ void convert_q_tile(unsigned char *tile, const SelectArgs &a, const SelectSegment &sg) {
  constexpr int kRowsPerThread = kTileRows * 16 / kSelThreads, kPerBatch = kRowsPerThread / kBatches;
  const fp2_params &p = a.p;
  const int col = threadIdx.x % 16, r0 = threadIdx.x / 16, g = sg.g;
  const int R = sg.tl.row_begin + r0, pos_of_R = fp2_div(a.group, R), pos_step = fp2_div(a.group, 8);
  const int head_step = 8 - pos_step * g;
  int pos = a.cu_q[sg.s] + pos_of_R, head = sg.h * g + R - pos_of_R * g;
  const __nv_bfloat16 *q = static_cast<const __nv_bfloat16 *>(a.q);
  const float inverse = e4m3_inverse(a.scales[0]);
#pragma unroll
  for (int b = 0; b < kBatches; b++) {
    size_t off[kPerBatch];
    uint4 raw[kPerBatch];
#pragma unroll
    for (int j = 0; j < kPerBatch; j++) {
      off[j] = ((size_t)pos * p.hq + head) * kD + col * 8;
      raw[j] = r0 + 8 * (b * kPerBatch + j) < sg.nrows ? __ldg(reinterpret_cast<const uint4 *>(q + off[j]))
                                                        : make_uint4(0, 0, 0, 0);
      pos += pos_step;
      head += head_step;
      if (head >= (sg.h + 1) * g) {
        head -= g;
        pos++;
      }
    }
#pragma unroll
    for (int j = 0; j < kPerBatch; j++) {
      const int r = r0 + 8 * (b * kPerBatch + j);
      const uint2 codes = e4m3_codes8(raw[j], inverse);
      *reinterpret_cast<uint2 *>(tile + r * 128 + ((col / 2) ^ (r % 8)) * 16 + (col % 2) * 8) = codes;
      if (r < sg.nrows) *reinterpret_cast<uint2 *>(a.q8 + off[j]) = codes;
    }
  }
}

template <bool kFp8>
__global__ void __launch_bounds__(kSelThreads, SelPrec<kFp8>::ctas_per_sm)
    select_sm90_kernel(const __grid_constant__ CUtensorMap tm_q, const __grid_constant__ CUtensorMap tm_kbar,
                       const SelectArgs a, QSource q_source) {
#if FP2_SM90_DEVICE
  using Prec = SelPrec<kFp8>;
  constexpr int kStages = Prec::stages;
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  SelSmem<kFp8> &sm = *reinterpret_cast<SelSmem<kFp8> *>(align_1024(smem_raw));
  fp2_params p = a.p; /* with the shape's block and tile sizes as constants (the host checked them) */
  p.block = p.qtile = FP2_SM90_TILE;
  const SelectSegment sg = select_segment(a, p);
  const int n = fp2_cdiv(sg.tl.nscored, kStageKeys);
  const int key_row0 = sg.h * a.total_blocks + a.cu_blocks[sg.s]; /* the segment's first pooled key in the map */
  auto load_keys = [&](int c) { /* thread 0: pooled keys 64 c .. 64 c + 63 into their stage */
    uint64_t *bar = &sm.full[c % kStages];
    unsigned char *dst = sm.k[c % kStages];
    mbarrier_arrive_expect_tx(bar, Prec::stage_bytes);
    for (int hf = 0; hf < Prec::halves; hf++)
      tma_load_2d(dst + hf * kStageKeys * 128, &tm_kbar, hf * 64, key_row0 + c * kStageKeys, bar);
  };
  if (threadIdx.x == 0) {
    for (int st = 0; st < kStages; st++) mbarrier_init(&sm.full[st], 1);
    mbarrier_init(&sm.q_full, 1);
    fence_mbarrier_init();
    if (q_source == kQByTma) { /* rows past the sequence read the next one's: every score of theirs is masked */
      mbarrier_arrive_expect_tx(&sm.q_full, Prec::halves * kHalfBytes);
      const uint64_t read_once = l2_evict_first_policy(); /* each tile is read by one CTA */
      for (int hf = 0; hf < Prec::halves; hf++)
        tma_load_3d_hinted(sm.q + hf * kHalfBytes, &tm_q, hf * 64, sg.h * sg.g,
                           a.cu_q[sg.s] + sg.tl.p_first - sg.offset, &sm.q_full, read_once);
    }
  }
  if (q_source == kQByCpAsync) {
    const unsigned char *q = static_cast<const unsigned char *>(a.q);
    const uint64_t read_once = l2_evict_first_policy();
    cp_async_rows_sw128<kD * Prec::elem, kSelThreads>(
        sm.q, 0, kTileRows, sg.nrows,
        [&](int r) { return q + packed_row_offset(p, a.cu_q[sg.s], sg.h, sg.tl.row_begin + r) * Prec::elem; }, q, 0,
        &read_once);
    cp_async_commit();
  }
  fill_row_last(a, p, sg, sm.row_last);
  /* Q and the plan above; the pool's keys (and FP8's scales) from here on: this kernel may
     start while the pool drains (dependent_launch.cuh). */
  grid_dependency_wait();
  grid_dependents_launch();
  if (threadIdx.x == 0)
    for (int c = 0; c < n && c < kStages; c++) load_keys(c);
  if (q_source == kQConverted) convert_q_tile<Prec::q_batches>(sm.q, a, sg);
  if (q_source == kQByCpAsync) cp_async_wait<0>();
  if (q_source != kQByTma) fence_proxy_async_shared(); /* Q's rows, to wgmma */
  __syncthreads(); /* Q's rows and the barriers' initialisation, to every thread */
  if (q_source == kQByTma) mbarrier_wait(&sm.q_full, 0);

  const float sq = kFp8 ? a.scales[0] : 1.0f, sk = kFp8 ? a.scales[1] : 1.0f;
  const float scale_log2 = sq * sk * rsqrtf((float)kD) * kLog2e;
  const int full_end = select_full_end(sg);
  float l_max = -INFINITY;
  auto issue = [&](int c, ProductScores<kFp8> &d, int h) { /* product h of stage c (BF16: 0 only) */
    if (h == 0) mbarrier_wait(&sm.full[c % kStages], (c / kStages) & 1);
    issue_scores<kFp8>(d, sm.k[c % kStages], sm.q, h);
  };
  auto release = [&](int c) { /* every warp's products of stage c have completed */
    __syncthreads();
    if (threadIdx.x == 0 && c + kStages < n) load_keys(c + kStages);
  };
  /* Only a stage with a scored key that some row does not count needs the mask: where every
     row counts every scored block (a full tile inside one block, as every full tile is for
     g = 1, 2, 4, 8), the last stage's keys past nscored are scored but never stored. */
  auto masked = [&](int c) { return min((c + 1) * kStageKeys, sg.tl.nscored) > full_end; };
  float sum[2][2], ref[2]; /* a stage's, from its first half to its second */
  auto first_half = [&](int c, const HalfScores &d) {
    const int k0 = stage_key0(c * kStageKeys);
    if (masked(c))
      score_first_half<true>(sum, ref, d, sm.row_last, k0, scale_log2);
    else
      score_first_half<false>(sum, ref, d, sm.row_last, k0, scale_log2);
  };
  auto store = [&](int c) {
    l_max = fmaxf(l_max, store_energies(sum, ref, stage_key0(c * kStageKeys), sg.tl.nscored, sg.slot));
  };
  auto second_half = [&](int c, const HalfScores &d) {
    const int k0 = stage_key0(c * kStageKeys);
    if (masked(c))
      score_second_half<true>(sum, ref, d, sm.row_last, k0, scale_log2);
    else
      score_second_half<false>(sum, ref, d, sm.row_last, k0, scale_log2);
    store(c);
  };
  ProductScores<kFp8> d;
  for (int c = 0; c < n; c++) {
    issue(c, d, 0);
    wgmma_wait<0>();
    wgmma_hold(d);
    if constexpr (kFp8) { /* half 0 scored before half 1's product, on the same registers */
      first_half(c, d);
      issue(c, d, 1);
      wgmma_wait<0>();
      wgmma_hold(d);
      release(c);
      second_half(c, d);
    } else { /* the stage released before both halves' exponentials: the next one lands under them */
      release(c);
      if (!masked(c) && score_tile_unmasked(sum, ref, d, sm.row_last, stage_key0(c * kStageKeys), scale_log2)) {
        store(c);
      } else {
        first_half(c, half_of(d, 0));
        second_half(c, half_of(d, 1));
      }
    }
  }
  write_warp_max(a, sg, l_max);
#else
  __trap(); /* launched only on sm_90 (checked by the host) */
#endif
}

template <bool kFp8>
fp2_status launch(const SelectArgs &a, const fp2_plan *plan, int smem_max, cudaStream_t stream) {
  constexpr int elem = SelPrec<kFp8>::elem;
  const size_t smem = 1024 /* alignment slack */ + sizeof(SelSmem<kFp8>);
  if (smem > (size_t)smem_max)
    return fp2_fail(FP2_ERR_UNSUPPORTED, "fp2_select: the sm90 kernel needs %zu bytes of shared memory (%d here)",
                    smem, smem_max);
  /* Q's tiles where g divides 128; the pooled keys [hkv * total_blocks, 128], boxes of 64
     rows x 128 bytes. */
  CUtensorMap tm_q, tm_kbar;
  fp2_status st;
  const QSource q_source = a.q8 ? kQConverted : kTileRows % fp2_group(&a.p) == 0 ? kQByTma : kQByCpAsync;
  memset(&tm_q, 0, sizeof tm_q);
  if (q_source == kQByTma && (st = fp2_tensor_map_q_tiles(&tm_q, elem, a.q, &a.p, plan->total_q)) != FP2_OK)
    return st;
  const cuuint64_t dims[2] = {kD, (cuuint64_t)a.p.hkv * a.total_blocks};
  const cuuint64_t strides[1] = {(cuuint64_t)kD * elem};
  const cuuint32_t box[2] = {(cuuint32_t)(128 / elem), kStageKeys};
  if ((st = fp2_tensor_map_sw128(&tm_kbar, elem, a.kbar, 2, dims, strides, box)) != FP2_OK) return st;
  FP2_CUDA("fp2_select (sm90)",
           cudaFuncSetAttribute(select_sm90_kernel<kFp8>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
  FP2_CUDA("fp2_select (sm90)", cudaFuncSetAttribute(select_sm90_kernel<kFp8>,
                                                     cudaFuncAttributePreferredSharedMemoryCarveout,
                                                     cudaSharedmemCarveoutMaxShared));
  FP2_CUDA("fp2_select (sm90): score and select",
           launch_dependent(select_sm90_kernel<kFp8>, select_grid(a, plan->total_tiles), kSelThreads, smem, stream,
                            tm_q, tm_kbar, a, q_source));
  return FP2_OK;
}

}  // namespace

fp2_status select_sm90(const SelectArgs &a, const fp2_plan *plan, cudaStream_t stream) {
  int smem_max = 0;
  const fp2_status st = fp2_sm90_device(&a.p, "fp2_select", nullptr, &smem_max);
  if (st != FP2_OK) return st;
  return a.p.dtype == FP2_FP8 ? launch<true>(a, plan, smem_max, stream)
                              : launch<false>(a, plan, smem_max, stream);
}

}  // namespace fp2
