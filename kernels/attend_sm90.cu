/* Block-sparse attention with mean correction on Hopper (sm_90a), BF16, head dim 128:
   TMA loads into a shared-memory pipeline on mbarriers, wgmma, warp specialisation.

   One CTA of three warpgroups per segment (sequence, KV head, query tile of 128 packed rows:
   positions x the g heads of the group, PackGQA). Warpgroup 0 is the producer: it gives up
   registers (setmaxnreg) and one thread issues the TMA loads, the Q tile once, then per item
   the K tile and the V tile into kStages stages guarded by full / empty barriers. Warpgroups
   1 and 2 are consumers of 64 rows each (more registers): S = Q K^T by wgmma from shared
   memory (both K-major), the online softmax in registers, O += P V by wgmma with P from
   registers and V read MN-major (transposed by the tensor core). The two consumers run
   independently, so one's softmax overlaps the other's products.

   Items are those of the portable kernel (attend.cu) with 128 keys each: the selected key
   blocks from the tile's CSR list, last first, then the chunks of 128 pooled vectors whose
   todo = fully-visible & ~selected mask is not empty, logits shifted by log|B_J|. Producer
   and consumers walk the same list independently. The causal mask is applied only on items
   that reach past the tile's first row.

   Shared memory holds every operand as 64-column halves of 128 rows x 128 bytes, swizzled by
   TMA with the 128-byte pattern that the wgmma descriptors name. Tiles run heaviest first
   (last tiles of a sequence first). Not yet here: intra-warpgroup overlap of QK(n+1) with
   softmax(n), pingpong ordering of the consumers, a persistent scheduler, TMA store of O. */
#include "attend_sm90.h"
#include "cuda_check.h"
#include "online_softmax.cuh"
#include "sm90_shape.h"
#include "sm90_tile.cuh"
#include "tensor_map.h"
#include "tile_mma.cuh"

namespace fp2 {
namespace {

constexpr int kD = FP2_SM90_DIM;              /* head dim */
constexpr int kKeys = kTileRowsSm90;          /* keys (or pooled vectors) per item: one tile */
static_assert(kTileRowsSm90 == FP2_SM90_TILE, "the shape check and the tile agree");
constexpr int kStages = 2;                    /* K and V pipeline depth */
constexpr int kSm90Threads = 3 * 128;         /* producer + two consumer warpgroups */
constexpr int kConsumerThreads = 2 * 128;
constexpr int kProducerRegs = 24, kConsumerRegs = 240;

struct Sm90Args {
  fp2_params p;
  int total_blocks;
  const int *cu_q, *cu_k, *cu_tiles, *cu_blocks, *tile_seq;
  const int *offsets, *indices;
  __nv_bfloat16 *o;
};

/* Shared memory, 1024-byte aligned: operand tiles first, then barriers and the chunk masks. */
struct Smem {
  unsigned char q[kTileBytes];
  unsigned char k[kStages][kTileBytes];
  unsigned char v[kStages][kTileBytes];
  uint64_t q_full, k_full[kStages], k_empty[kStages], v_full[kStages], v_empty[kStages];
  int n_live;
  /* then: uint64_t todo[2 * chunks]; int live[chunks]; */
};

/* The item list of a segment, as both roles see it. */
struct Items {
  const int *sel; /* selected blocks, ascending */
  int nsel;
  const int *live; /* live pooled chunks */
  int n;
  __device__ bool pooled(int i) const { return i >= nsel; }
  __device__ int key_block(int i) const { return sel[nsel - 1 - i]; }
  __device__ int chunk(int i) const { return live[i - nsel]; }
};

__device__ void produce(Smem &sm, const Items &it, const CUtensorMap *tm_q,
                        const CUtensorMap *tm_k, const CUtensorMap *tm_v, const CUtensorMap *tm_kbar,
                        const CUtensorMap *tm_vbar, int q_row, int q_head, int k_row, int h, int pooled_row) {
#if FP2_SM90_DEVICE
  mbarrier_arrive_expect_tx(&sm.q_full, kTileBytes);
  tma_load_tile_3d(sm.q, tm_q, q_head, q_row, &sm.q_full);
  for (int i = 0; i < it.n; i++) {
    const int st = i % kStages;
    const uint32_t phase = (i / kStages) & 1;
    const bool pooled = it.pooled(i);
    const int row = pooled ? pooled_row + it.chunk(i) * kKeys : k_row + it.key_block(i) * kKeys;
    mbarrier_wait(&sm.k_empty[st], phase ^ 1);
    mbarrier_arrive_expect_tx(&sm.k_full[st], kTileBytes);
    if (pooled)
      tma_load_tile_2d(sm.k[st], tm_kbar, row, &sm.k_full[st]);
    else
      tma_load_tile_3d(sm.k[st], tm_k, h, row, &sm.k_full[st]);
    mbarrier_wait(&sm.v_empty[st], phase ^ 1);
    mbarrier_arrive_expect_tx(&sm.v_full[st], kTileBytes);
    if (pooled)
      tma_load_tile_2d(sm.v[st], tm_vbar, row, &sm.v_full[st]);
    else
      tma_load_tile_3d(sm.v[st], tm_v, h, row, &sm.v_full[st]);
  }
#endif
}

__global__ void __launch_bounds__(kSm90Threads, 1)
    attend_sm90_kernel(const __grid_constant__ CUtensorMap tm_q, const __grid_constant__ CUtensorMap tm_k,
                       const __grid_constant__ CUtensorMap tm_v, const __grid_constant__ CUtensorMap tm_kbar,
                       const __grid_constant__ CUtensorMap tm_vbar, const Sm90Args a) {
#if FP2_SM90_DEVICE
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  /* The swizzle atoms must start on 1024-byte boundaries; the launch adds the slack. */
  Smem &sm = *reinterpret_cast<Smem *>(align_1024(smem_raw));

  const fp2_params &p = a.p;
  const int gt = gridDim.x - 1 - blockIdx.x, h = blockIdx.y, s = a.tile_seq[gt]; /* heaviest first */
  const int t = gt - a.cu_tiles[s], ntiles = a.cu_tiles[s + 1] - a.cu_tiles[s];
  const int lq = a.cu_q[s + 1] - a.cu_q[s], lk = a.cu_k[s + 1] - a.cu_k[s], offset = lk - lq;
  const int g = fp2_group(&p);
  const fp2_tile tl = fp2_tile_at(&p, lq, lk, t);
  const int seg = fp2_segment(&p, a.cu_tiles[s], ntiles, h, t);
  const int *sel = a.indices + a.offsets[seg];
  const int nsel = a.offsets[seg + 1] - a.offsets[seg];

  /* Correction chunks: 128 blocks each, two mask words; a chunk is live if any bit is left. */
  const int nchunks = p.correction ? fp2_cdiv(tl.nfull, kKeys) : 0;
  uint64_t *todo = reinterpret_cast<uint64_t *>(&sm + 1);
  int *live = reinterpret_cast<int *>(todo + 2 * nchunks);
  for (int w = threadIdx.x; w < 2 * nchunks; w += kSm90Threads) {
    const int n = min(64, max(0, tl.nfull - w * 64));
    todo[w] = n == 64 ? ~0ull : (1ull << n) - 1;
  }
  if (threadIdx.x == 0) {
    mbarrier_init(&sm.q_full, 1);
    for (int st = 0; st < kStages; st++) {
      mbarrier_init(&sm.k_full[st], 1);
      mbarrier_init(&sm.v_full[st], 1);
      mbarrier_init(&sm.k_empty[st], kConsumerThreads);
      mbarrier_init(&sm.v_empty[st], kConsumerThreads);
    }
    fence_mbarrier_init();
  }
  __syncthreads();
  for (int i = threadIdx.x; i < nsel; i += kSm90Threads)
    if (sel[i] < tl.nfull)
      atomicAnd(reinterpret_cast<unsigned long long *>(&todo[sel[i] / 64]), ~(1ull << (sel[i] % 64)));
  __syncthreads();
  if (threadIdx.x == 0) {
    int n = 0;
    for (int c = 0; c < nchunks; c++)
      if (todo[2 * c] | todo[2 * c + 1]) live[n++] = c;
    sm.n_live = n;
  }
  __syncthreads();
  const Items items{sel, nsel, live, nsel + sm.n_live};

  if (threadIdx.x < 128) { /* producer warpgroup */
    setmaxnreg_dec<kProducerRegs>();
    if (threadIdx.x == 0) {
      prefetch_tensormap(&tm_k);
      prefetch_tensormap(&tm_v);
      produce(sm, items, &tm_q, &tm_k, &tm_v, &tm_kbar, &tm_vbar, a.cu_q[s] + tl.row_begin / g, h * g,
              a.cu_k[s], h, h * a.total_blocks + a.cu_blocks[s]);
    }
    return;
  }
  setmaxnreg_inc<kConsumerRegs>();
  if (threadIdx.x < 256) bar_arrive(1, kConsumerThreads); /* the first turn is consumer 0's */

  /* Consumer: warpgroup c holds tile rows 64 c .. 64 c + 63; this thread rows row0, row0 + 8. */
  const int c = threadIdx.x / 128 - 1, warp = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32;
  const int row0 = tl.row_begin + c * 64 + warp * 16 + lane / 4;
  int pos[2];
  for (int r = 0; r < 2; r++) pos[r] = row0 + r * 8 < tl.row_end ? offset + (row0 + r * 8) / g : -1;
  const float scale_log2 = rsqrtf((float)kD) * kLog2e;
  const float pooled_shift = log2f((float)kKeys); /* corrected blocks are whole blocks of 128 */

  /* The softmax statistics of item i on its raw scores, the mask mode chosen once per item:
     pooled (the chunk's todo bits), causal (the diagonal), or none. */
  SoftmaxRows rows;
  auto softmax_item = [&](int i, float (&sc)[kKeys / 8][4], float (&alpha)[2], float (&bias)[2]) {
    if (items.pooled(i)) {
      const uint64_t lo = todo[2 * items.chunk(i)], hi = todo[2 * items.chunk(i) + 1];
      softmax_max<kKeys / 8>(
          sc, rows, [&](int col, int r) { return (((col < 64 ? lo : hi) >> (col % 64)) & 1) && pos[r] >= 0; },
          scale_log2, pooled_shift, alpha, bias);
      return;
    }
    const int first = items.key_block(i) * kKeys;
    if (first + kKeys - 1 > tl.p_first)
      softmax_max<kKeys / 8>(sc, rows, [&](int col, int r) { return first + col <= pos[r]; }, scale_log2, 0.0f,
                             alpha, bias);
    else
      softmax_max<kKeys / 8>(sc, rows, [](int, int) { return true; }, scale_log2, 0.0f, alpha, bias);
  };
  auto issue_qk = [&](float (&sc)[kKeys / 8][4], int st) {
#pragma unroll
    for (int kk = 0; kk < kD / 16; kk++)
      wgmma_m64n128k16_bf16_ss(sc, desc_kmajor(sm.q, c * 64, kk), desc_kmajor(sm.k[st], 0, kk), kk > 0);
    wgmma_commit();
  };
  auto issue_pv = [&](float (&o)[kD / 8][4], const uint32_t (&pf)[kKeys / 16][4], int st) {
    wgmma_fence(); /* P and O were written by ordinary instructions since the last product */
#pragma unroll
    for (int kk = 0; kk < kKeys / 16; kk++) wgmma_m64n128k16_bf16_rs_tb(o, pf[kk], desc_mnmajor(sm.v[st], kk));
    wgmma_commit();
  };

  float o_acc[kD / 8][4];
#pragma unroll
  for (int nd = 0; nd < kD / 8; nd++) o_acc[nd][0] = o_acc[nd][1] = o_acc[nd][2] = o_acc[nd][3] = 0.0f;
  mbarrier_wait(&sm.q_full, 0);
  if (items.n > 0) {
    /* Item 0: S, its softmax and P, with nothing to overlap. */
    float sc[kKeys / 8][4], alpha[2], bias[2];
    uint32_t pf[kKeys / 16][4];
    mbarrier_wait(&sm.k_full[0], 0);
    wgmma_fence();
    issue_qk(sc, 0);
    wgmma_wait<0>();
    wgmma_hold(sc);
    mbarrier_arrive(&sm.k_empty[0]);
    softmax_item(0, sc, alpha, bias);
    softmax_exp<kKeys / 8, false>(sc, rows, scale_log2, bias);
    pack_a_fragments<kKeys / 8>(sc, pf);

    /* Item i: S(i) = Q K(i)^T and O += P(i-1) V(i-1) issued together, in turns with the other
       consumer (named barriers 1 + c: whoever holds the turn issues, then passes it on), so
       that one warpgroup's products run while the other does its softmax; the softmax of i
       then runs while PV(i-1) is still on the tensor cores. O is rescaled and P(i) packed
       only after PV(i-1) has completed, as it reads both. */
    for (int i = 1; i < items.n; i++) {
      const int st = i % kStages, prev = (i - 1) % kStages;
      mbarrier_wait(&sm.k_full[st], (i / kStages) & 1);
      bar_sync(1 + c, kConsumerThreads);
      wgmma_fence();
      issue_qk(sc, st);
      mbarrier_wait(&sm.v_full[prev], ((i - 1) / kStages) & 1);
      issue_pv(o_acc, pf, prev);
      bar_arrive(2 - c, kConsumerThreads);
      wgmma_wait<1>();
      wgmma_hold(sc);
      mbarrier_arrive(&sm.k_empty[st]);
      softmax_item(i, sc, alpha, bias);
      softmax_exp<kKeys / 8, false>(sc, rows, scale_log2, bias);
      wgmma_wait<0>();
      wgmma_hold(o_acc);
      wgmma_hold_a(pf);
      mbarrier_arrive(&sm.v_empty[prev]);
      rescale_output<kD / 8>(o_acc, alpha);
      pack_a_fragments<kKeys / 8>(sc, pf);
    }

    const int last = (items.n - 1) % kStages;
    mbarrier_wait(&sm.v_full[last], ((items.n - 1) / kStages) & 1);
    issue_pv(o_acc, pf, last);
    wgmma_wait<0>();
    wgmma_hold(o_acc);
    wgmma_hold_a(pf);
    mbarrier_arrive(&sm.v_empty[last]);
  }

  softmax_store<kD / 8>(o_acc, rows, 1.0f, p, a.cu_q[s], h, row0, tl.row_end, a.o);
#else
  __trap(); /* launched only on sm_90 (checked by the host) */
#endif
}

}  // namespace
}  // namespace fp2

fp2_status fp2_attend_sm90(const fp2_params *p, const fp2_plan *plan, const void *q, const void *k, const void *v,
                           const void *kbar, const void *vbar, const int *offsets, const int *indices, void *o,
                           cudaStream_t stream) {
  using namespace fp2;
  const int g = fp2_group(p);
  if (p->dtype != FP2_BF16)
    return fp2_fail(FP2_ERR_UNSUPPORTED, "fp2_attend: the sm90 kernel is BF16 only so far (use --kernel portable)");
  fp2_status st = fp2_sm90_shape_check(p, "fp2_attend: ");
  if (st != FP2_OK) return st;
  int dev = 0, major = 0, smem_max = 0;
  FP2_CUDA("fp2_attend (sm90)", cudaGetDevice(&dev));
  FP2_CUDA("fp2_attend (sm90)", cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  FP2_CUDA("fp2_attend (sm90)", cudaDeviceGetAttribute(&smem_max, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  if (major != 9)
    return fp2_fail(FP2_ERR_UNSUPPORTED, "fp2_attend: the sm90 kernel needs a Hopper GPU (this one is sm_%d*)", major);
  const int max_chunks = fp2_cdiv(plan->max_blocks, kKeys);
  const size_t smem = 1024 /* alignment slack */ + sizeof(Smem) + max_chunks * (2 * sizeof(uint64_t) + sizeof(int));
  if (smem > (size_t)smem_max)
    return fp2_fail(FP2_ERR_UNSUPPORTED, "fp2_attend: the sm90 kernel needs %zu bytes of shared memory (%d here)",
                    smem, smem_max);

  /* Q and O [total_q, hq, 128]; K, V [total_k, hkv, 128]; pooled [hkv * total_blocks, 128]. */
  CUtensorMap tm_q, tm_k, tm_v, tm_kbar, tm_vbar;
  const cuuint64_t row = kD * 2;
  const cuuint64_t q_dims[3] = {kD, (cuuint64_t)p->hq, (cuuint64_t)plan->total_q};
  const cuuint64_t q_strides[2] = {row, row * p->hq};
  const cuuint32_t q_box[3] = {64, (cuuint32_t)g, (cuuint32_t)(kTileRowsSm90 / g)};
  const cuuint64_t kv_dims[3] = {kD, (cuuint64_t)p->hkv, (cuuint64_t)plan->total_k};
  const cuuint64_t kv_strides[2] = {row, row * p->hkv};
  const cuuint32_t kv_box[3] = {64, 1, kKeys};
  const cuuint64_t pooled_dims[2] = {kD, (cuuint64_t)p->hkv * plan->total_blocks};
  const cuuint64_t pooled_strides[1] = {row};
  const cuuint32_t pooled_box[2] = {64, kKeys};
  if ((st = fp2_tensor_map_bf16(&tm_q, q, 3, q_dims, q_strides, q_box)) != FP2_OK) return st;
  if ((st = fp2_tensor_map_bf16(&tm_k, k, 3, kv_dims, kv_strides, kv_box)) != FP2_OK) return st;
  if ((st = fp2_tensor_map_bf16(&tm_v, v, 3, kv_dims, kv_strides, kv_box)) != FP2_OK) return st;
  if ((st = fp2_tensor_map_bf16(&tm_kbar, kbar, 2, pooled_dims, pooled_strides, pooled_box)) != FP2_OK) return st;
  if ((st = fp2_tensor_map_bf16(&tm_vbar, vbar, 2, pooled_dims, pooled_strides, pooled_box)) != FP2_OK) return st;

  const Sm90Args a = {*p,      plan->total_blocks, plan->cu_q, plan->cu_k, plan->cu_tiles,
                      plan->cu_blocks, plan->tile_seq, offsets, indices, static_cast<__nv_bfloat16 *>(o)};
  FP2_CUDA("fp2_attend (sm90)",
           cudaFuncSetAttribute(attend_sm90_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
  attend_sm90_kernel<<<dim3(plan->total_tiles, p->hkv), kSm90Threads, smem, stream>>>(tm_q, tm_k, tm_v, tm_kbar,
                                                                                      tm_vbar, a);
  FP2_LAUNCHED("fp2_attend (sm90)");
  return FP2_OK;
}
