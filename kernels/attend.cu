/* Block-sparse attention with mean correction, portable path (mma.sync, sm_80+), v1: for
   every GPU, shape and precision the Hopper kernel (attend_sm90.cu) does not take, and a
   second GPU path that check holds to the same oracle. One CTA per segment (sequence, KV
   head, query tile of 128 packed rows: positions x the g heads of the group), 8 warps of 16
   rows, keys in tiles of 64 double-buffered in shared memory.

   The iteration walks the tile's CSR list backwards (the diagonal block first, as a dense
   causal schedule does), two 64-key halves per 128-key block (halves wholly past the tile's
   last row are skipped), with the causal mask applied only where a half reaches past the
   tile's first row. Then the correction: chunks of 64 pooled vectors, one extra iteration
   per chunk whose todo = fully-visible & ~selected mask is not empty, logits shifted by
   log|B_J|, through the same online softmax. The dense pass is this kernel with the full
   causal index.

   K and V (BF16) may come in pages (fp2_kv_pages): each key row is then found through the
   page table as it is staged.

   BF16: P rounded to bf16 for the PV product, row sums from the unrounded P. FP8: operands
   are e4m3 codes (exact in bf16), logits dequantised by sq*sk, P scaled by 2^8 and rounded
   to e4m3 before PV, the offset and sv removed in the final normalisation. Output bf16. */
#include "attend_sm90.h"
#include "cuda_check.h"
#include "online_softmax.cuh"
#include "page_row.cuh"
#include "tile_mma.cuh"

namespace fp2 {
namespace {

struct AttendArgs {
  fp2_params p;
  int total_blocks;
  const int *cu_q, *cu_k, *cu_tiles, *cu_blocks, *tile_seq;
  const void *q, *k, *v, *kbar, *vbar;
  const int *page_table;     /* BF16 in pages (fp2_kv_pages); NULL: contiguous */
  int max_pages, page_shift; /* page_size = 1 << page_shift */
  const float *scales;
  const int *offsets, *indices;
  __nv_bfloat16 *o;
};

/* One unit of work: a 64-key half of a selected block, or a chunk of pooled vectors. */
struct Item {
  bool pooled;
  int first;     /* first key (keys) or first block (pooled) */
  uint64_t todo; /* pooled: which of the 64 blocks are corrected */
};

template <int D, bool kFp8>
__global__ void __launch_bounds__(kThreads, 1) attend_kernel(AttendArgs a) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  __nv_bfloat16 *q_tile = reinterpret_cast<__nv_bfloat16 *>(smem_raw);
  __nv_bfloat16 *k_tiles = q_tile + kTileRows * D;     /* [2][64][D] */
  __nv_bfloat16 *v_tiles = k_tiles + 2 * kKeyRows * D; /* [2][64][D] */
  uint64_t *todo = reinterpret_cast<uint64_t *>(v_tiles + 2 * kKeyRows * D); /* [chunks] */
  __shared__ int n_chunks_live;
  __shared__ int live_chunk[1024];

  const fp2_params &p = a.p;
  const int gt = blockIdx.x, h = blockIdx.y, s = a.tile_seq[gt];
  const int t = gt - a.cu_tiles[s], ntiles = a.cu_tiles[s + 1] - a.cu_tiles[s];
  const int lq = a.cu_q[s + 1] - a.cu_q[s], lk = a.cu_k[s + 1] - a.cu_k[s], offset = lk - lq;
  const int g = p.hq / p.hkv, elem = kFp8 ? 1 : 2, halves = p.block / kKeyRows;
  const fp2_tile tl = fp2_tile_at(&p, lq, lk, t);
  const int seg = fp2_segment(&p, a.cu_tiles[s], ntiles, h, t);
  const int *sel = a.indices + a.offsets[seg];
  const int nsel = a.offsets[seg + 1] - a.offsets[seg];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const char *qb = static_cast<const char *>(a.q);
  const size_t kv_row = (size_t)p.hkv * p.dim * elem; /* bytes between consecutive keys */
  const char *kb = static_cast<const char *>(a.k) + (size_t)h * p.dim * elem;
  const char *vb = static_cast<const char *>(a.v) + (size_t)h * p.dim * elem;
  const int *pages = a.page_table ? a.page_table + (size_t)s * a.max_pages : nullptr;
  /* Key t of the sequence: its row of K and V, contiguous or through its pages. */
  auto key_row = [&](int t) -> size_t { return pages ? page_row(pages, a.page_shift, t) : (size_t)a.cu_k[s] + t; };
  const size_t pooled_base = ((size_t)h * a.total_blocks + a.cu_blocks[s]) * p.dim * elem;
  const char *kbarb = static_cast<const char *>(a.kbar) + pooled_base;
  const char *vbarb = static_cast<const char *>(a.vbar) + pooled_base;

  /* Work list: key halves of the selected blocks, last block first, then live pooled chunks. */
  const int top_halves = nsel > 0 ? min(halves, (tl.p_last - sel[nsel - 1] * p.block) / kKeyRows + 1) : 0;
  const int n_key_items = nsel > 0 ? top_halves + (nsel - 1) * halves : 0;
  const int nchunks = p.correction ? (tl.nfull + kKeyRows - 1) / kKeyRows : 0;
  for (int c = threadIdx.x; c < nchunks; c += kThreads) {
    int first = c * kKeyRows, n = min(kKeyRows, tl.nfull - first);
    todo[c] = n == 64 ? ~0ull : ((1ull << n) - 1);
  }
  __syncthreads();
  for (int i = threadIdx.x; i < nsel; i += kThreads)
    if (sel[i] < tl.nfull) atomicAnd(reinterpret_cast<unsigned long long *>(&todo[sel[i] / kKeyRows]),
                                     ~(1ull << (sel[i] % kKeyRows)));
  __syncthreads();
  if (threadIdx.x == 0) {
    int n = 0;
    for (int c = 0; c < nchunks && n < 1024; c++)
      if (todo[c]) live_chunk[n++] = c;
    n_chunks_live = n;
  }
  __syncthreads();
  const int n_items = n_key_items + n_chunks_live;
  auto item_at = [&](int i) -> Item {
    if (i < n_key_items) {
      int block, half;
      if (i < top_halves) {
        block = sel[nsel - 1];
        half = top_halves - 1 - i;
      } else {
        int r = i - top_halves;
        block = sel[nsel - 2 - r / halves];
        half = halves - 1 - r % halves;
      }
      return Item{false, block * p.block + half * kKeyRows, 0};
    }
    int c = live_chunk[i - n_key_items];
    return Item{true, c * kKeyRows, todo[c]};
  };
  auto stage_item = [&](int i, int buf) {
    const Item it = item_at(i);
    __nv_bfloat16 *kt = k_tiles + buf * kKeyRows * D, *vt = v_tiles + buf * kKeyRows * D;
    if (it.pooled) {
      auto krow = [&](int r) -> const void * { return (it.todo >> r) & 1 ? kbarb + (size_t)(it.first + r) * p.dim * elem : nullptr; };
      auto vrow = [&](int r) -> const void * { return (it.todo >> r) & 1 ? vbarb + (size_t)(it.first + r) * p.dim * elem : nullptr; };
      stage_rows<D, kFp8>(kt, kKeyRows, krow, a.kbar);
      stage_rows<D, kFp8>(vt, kKeyRows, vrow, a.vbar);
    } else {
      auto krow = [&](int r) -> const void * {
        return it.first + r < lk ? kb + key_row(it.first + r) * kv_row : nullptr;
      };
      auto vrow = [&](int r) -> const void * {
        return it.first + r < lk ? vb + key_row(it.first + r) * kv_row : nullptr;
      };
      stage_rows<D, kFp8>(kt, kKeyRows, krow, a.k);
      stage_rows<D, kFp8>(vt, kKeyRows, vrow, a.v);
    }
    cp_async_commit();
  };

  stage_rows<D, kFp8>(
      q_tile, kTileRows,
      [&](int r) -> const void * {
        int row = tl.row_begin + r;
        return row < tl.row_end ? qb + packed_row_offset(p, a.cu_q[s], h, row) * elem : nullptr;
      },
      a.q);
  cp_async_commit();
  if (n_items > 0) {
    stage_item(0, 0);
    cp_async_wait<1>(); /* Q has landed; item 0 may still be in flight */
  } else {
    cp_async_wait<0>();
  }
  __syncthreads();
  uint32_t qf[D / 16][4];
  load_q_fragments<D>(q_tile, qf);

  int pos[2];
  for (int i = 0; i < 2; i++) {
    int row = tl.row_begin + warp * 16 + lane / 4 + i * 8;
    pos[i] = row < tl.row_end ? offset + row / g : -1;
  }
  const float sq = kFp8 ? a.scales[0] : 1.0f, sk = kFp8 ? a.scales[1] : 1.0f;
  const float scale_log2 = sq * sk * rsqrtf((float)p.dim) * kLog2e;
  const float pooled_shift = log2f((float)p.block); /* corrected blocks are whole blocks */

  float o_acc[D / 8][4];
#pragma unroll
  for (int nd = 0; nd < D / 8; nd++) o_acc[nd][0] = o_acc[nd][1] = o_acc[nd][2] = o_acc[nd][3] = 0.0f;
  SoftmaxRows rows;

  for (int i = 0; i < n_items; i++) {
    const int buf = i & 1;
    if (i + 1 < n_items) {
      __syncthreads(); /* everyone is done with the buffer item i+1 will use */
      stage_item(i + 1, buf ^ 1);
      cp_async_wait<1>();
    } else {
      cp_async_wait<0>();
    }
    __syncthreads();
    const Item it = item_at(i);
    float sc[kKeyRows / 8][4];
    qk_tile<D>(qf, k_tiles + buf * kKeyRows * D, sc);
    const bool needs_mask = it.pooled || it.first + kKeyRows - 1 > tl.p_first;
    uint32_t pf[kKeyRows / 16][4];
    softmax_step<kKeyRows / 8, D / 8, kFp8>(
        sc, o_acc, rows,
        [&](int col, int r) {
          if (it.pooled) return ((it.todo >> col) & 1) && pos[r] >= 0;
          return !needs_mask || it.first + col <= pos[r];
        },
        scale_log2, it.pooled ? pooled_shift : 0.0f, pf);
    pv_tile<D>(pf, v_tiles + buf * kKeyRows * D, o_acc);
  }

  softmax_store<D / 8>(o_acc, rows, kFp8 ? a.scales[2] : 1.0f, p, a.cu_q[s], h, tl.row_begin + warp * 16 + lane / 4,
                       tl.row_end, a.o);
}

template <int D, bool kFp8>
fp2_status launch(const AttendArgs &a, int total_tiles, int max_blocks, cudaStream_t stream) {
  const int nchunks = (max_blocks + kKeyRows - 1) / kKeyRows + 1;
  const size_t smem = sizeof(__nv_bfloat16) * (kTileRows + 4 * kKeyRows) * D + sizeof(uint64_t) * nchunks;
  FP2_CUDA("fp2_attend", cudaFuncSetAttribute(attend_kernel<D, kFp8>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                              (int)smem));
  attend_kernel<D, kFp8><<<dim3(total_tiles, a.p.hkv), kThreads, smem, stream>>>(a);
  FP2_LAUNCHED("fp2_attend");
  return FP2_OK;
}

}  // namespace
}  // namespace fp2

extern "C" size_t fp2_attend_workspace_bytes(const fp2_params *p, const fp2_plan *plan) {
  return p->kernel == FP2_KERNEL_SM90 ? fp2_attend_sm90_workspace_bytes(p, plan) : 0;
}

extern "C" fp2_status fp2_attend(const fp2_params *p, const fp2_plan *plan, const void *q, const void *k, const void *v,
                                 const fp2_kv_pages *pages, const void *kbar, const void *vbar, const float *scales,
                                 const int *offsets, const int *indices, void *o, void *workspace,
                                 size_t workspace_bytes, cudaStream_t stream) {
  using namespace fp2;
  if (!v && !(p->kernel == FP2_KERNEL_SM90 && p->dtype == FP2_FP8))
    return fp2_fail(FP2_ERR_ARG, "fp2_attend: v is required (it may be NULL only for FP8 on the sm90 kernel)");
  if (p->dtype == FP2_FP8 && pages)
    return fp2_fail(FP2_ERR_ARG, "fp2_attend: FP8 reads the pool's contiguous codes, not pages");
  fp2_status st;
  if (p->dtype == FP2_BF16 && (st = fp2_check_pages(p, pages)) != FP2_OK) return st;
  if (p->kernel == FP2_KERNEL_SM90)
    return fp2_attend_sm90(p, plan, q, k, v, pages, kbar, vbar, scales, offsets, indices, o, workspace, workspace_bytes,
                           stream);
  if (p->qtile != kTileRows)
    return fp2_fail(FP2_ERR_UNSUPPORTED, "fp2_attend: the gpu kernels take --qtile %d (got %d)", kTileRows, p->qtile);
  if (p->block % kKeyRows != 0)
    return fp2_fail(FP2_ERR_UNSUPPORTED, "fp2_attend: --block must be a multiple of %d (got %d)", kKeyRows, p->block);
  if (p->dtype == FP2_FP8 && !scales) return fp2_fail(FP2_ERR_ARG, "fp2_attend: FP8 needs the scales");
  if ((plan->max_blocks + kKeyRows - 1) / kKeyRows > 1024)
    return fp2_fail(FP2_ERR_UNSUPPORTED, "fp2_attend: sequences above %d key blocks", 1024 * kKeyRows);
  AttendArgs a = {*p,
                  plan->total_blocks,
                  plan->cu_q,
                  plan->cu_k,
                  plan->cu_tiles,
                  plan->cu_blocks,
                  plan->tile_seq,
                  q,
                  k,
                  v,
                  kbar,
                  vbar,
                  pages ? pages->table : nullptr,
                  pages ? pages->max_pages : 0,
                  pages ? page_shift(p->page_size) : 0,
                  scales,
                  offsets,
                  indices,
                  static_cast<__nv_bfloat16 *>(o)};
  if (p->dim == 128) return p->dtype == FP2_FP8 ? launch<128, true>(a, plan->total_tiles, plan->max_blocks, stream)
                                                 : launch<128, false>(a, plan->total_tiles, plan->max_blocks, stream);
  if (p->dim == 64) return p->dtype == FP2_FP8 ? launch<64, true>(a, plan->total_tiles, plan->max_blocks, stream)
                                                : launch<64, false>(a, plan->total_tiles, plan->max_blocks, stream);
  return fp2_fail(FP2_ERR_UNSUPPORTED, "fp2_attend: the gpu kernels take head dim 64 or 128 (got %d)", p->dim);
}
