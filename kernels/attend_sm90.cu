/* Block-sparse attention with mean correction on Hopper (sm_90a), BF16 or FP8, head dim 128:
   TMA loads into a shared-memory pipeline on mbarriers, wgmma, warp specialisation, a
   persistent grid. v3: the structure of FlashAttention-3's forward kernel; 2.2x v2 (one CTA
   per segment, consumers in lockstep: 31 % tensor-pipe use), see kernels/NOTES.md.

   One CTA per SM, three warpgroups, taking work units (KV head, query tile of 128 packed
   rows: positions x the g heads of the group, PackGQA) from an atomic counter, heaviest
   first within each KV head (the last tiles of a sequence first), one KV head after the
   other so that the CTAs in flight share their keys in L2. Warpgroup 0 gives up registers
   (setmaxnreg): its warps 1-3 take the next unit and build its item list into one of two
   buffers while the current unit runs; warp 0 issues the TMA loads: the unit's Q tile (once
   the last product of the previous unit has read the old one), then per item the K tile and
   the V tile into kStages stages guarded by full / empty barriers. The stages and their
   phases run on across units. V rows past the sequence's own data are zeroed by warp 0
   before the consumers see them (a NaN next door would survive P = 0). When g does not
   divide 128 a tile starts inside a position's heads, which no TMA box describes: then each
   consumer loads its own half of Q by cp.async. BF16 K and V may come in pages
   (fp2_kv_pages): a K or V tile is then one box a page of at most 128 keys, issued by as many
   lanes of warp 0 (a kernel of its own, kPaged, so that the contiguous one is unchanged; its
   producer spills 8 bytes under its 40 registers), the page table read before the stage is
   free. Warpgroups 1 and 2 are consumers of 64 rows each: S = Q K^T by wgmma from shared
   memory (both K-major), the online softmax in registers, O += P V by wgmma with P from
   registers and V read MN-major (transposed by the tensor core). Each consumer issues S(i) and
   PV(i-1) together and runs the softmax of i while PV(i-1) is on the tensor cores; the two
   consumers take turns issuing (named barriers), so that one's products run while the other
   does its softmax.

   Items are those of the portable kernel (attend.cu) with 128 keys each: the selected key
   blocks from the tile's CSR list, last first, then the chunks of 128 pooled vectors whose
   todo = fully-visible & ~selected mask is not empty, logits shifted by log|B_J|. The mask
   mode (pooled, causal diagonal, none) is chosen once per item.

   Shared memory holds every operand as 64-column halves of 128 rows x 128 bytes, swizzled by
   TMA with the 128-byte pattern that the wgmma descriptors name. FP8 (e4m3 codes, per-tensor
   scales): a tile is one such half (128 one-byte columns), three stages, both products by
   8-bit wgmma (k = 32), which reads B K-major only: V comes transposed, with each group of 32
   keys in the order a thread holds its probabilities (transpose_values.h, fp2_slot_key), so
   that P goes from the softmax to the PV product without moving between lanes. Not yet here:
   the epilogue through shared memory, the split of heavy segments. */
#include "attend_sm90.h"

#include <string.h>

#include "cuda_check.h"
#include "online_softmax.cuh"
#include "page_row.cuh"
#include "sm90_device.h"
#include "sm90_shape.h"
#include "sm90_tile.cuh"
#include "tensor_map.h"
#include "tile_mma.cuh"
#include "transpose_values.h"

namespace fp2 {
namespace {

constexpr int kD = FP2_SM90_DIM;              /* head dim */
constexpr int kKeys = kTileRowsSm90;          /* keys (or pooled vectors) per item: one tile */
static_assert(kTileRowsSm90 == FP2_SM90_TILE, "the shape check and the tile agree");
static_assert(kKeys == FP2_POOLED_CHUNK, "a correction item is one plan chunk");
constexpr int kSm90Threads = 3 * 128;         /* producer + two consumer warpgroups */
constexpr int kConsumerThreads = 2 * 128;
constexpr int kPlannerThreads = 96;           /* warps 1-3 of the producer warpgroup */
constexpr int kProducerRegs = 40, kConsumerRegs = 232;
/* setmaxnreg.inc waits until the registers are free: the three warpgroups must fit in what
   the launch gave the CTA (65536 / 384 threads, rounded down to 8: 168 each), or it hangs. */
static_assert(128 * kProducerRegs + kConsumerThreads * kConsumerRegs <= 65536 / kSm90Threads / 8 * 8 * kSm90Threads,
              "the register split exceeds the CTA's registers");
/* Named barriers: 1 and 2 are the consumers' turns; 3 is the planner warps'; 4 and 5 the
   consumers' own, once each has loaded its half of Q. */
constexpr int kPlannerBarrier = 3, kQRowsBarrier = 4;

/* What the precision changes beyond the operand's (Sm90Operand): a tile's bytes and the
   pipeline depth. */
template <bool kFp8>
struct Prec : Sm90Operand<kFp8> {
  static constexpr int tile_bytes = Sm90Operand<kFp8>::halves * kHalfBytes;
  static constexpr int stages = kFp8 ? 3 : 2;
};
constexpr int kMaxStages = Prec<true>::stages > Prec<false>::stages ? Prec<true>::stages : Prec<false>::stages;

/* The next work unit of the launch; zeroed before each launch (fp2_attend_sm90). Launches
   that share it must not overlap, as on one stream. */
__device__ int g_next_unit;

struct Sm90Args {
  fp2_params p;
  int total_blocks, total_tiles, units, max_chunks; /* units = total_tiles * hkv */
  int q_by_tma;                                     /* g divides 128: Q tiles are TMA boxes */
  const int *cu_q, *cu_k, *cu_tiles, *cu_blocks, *cu_chunks, *tile_seq;
  const int *offsets, *indices;
  const unsigned char *q; /* [total_q, hq, 128] bf16 or e4m3, read directly when not by TMA */
  const int *page_table;  /* BF16 K and V in pages (fp2_kv_pages); NULL: contiguous */
  int max_pages, page_shift; /* page_size = 1 << page_shift */
  const float *scales;    /* FP8: the dequantisation scales of q, k, v */
  __nv_bfloat16 *o;
};

/* A work unit as the planner hands it over: sequence s (< 0: no work is left), tile t, KV
   head h, and the item list: nsel selected blocks at indices[sel], then n_live chunks. */
struct Unit {
  int s, t, h, sel, nsel, n_live;
};

/* The barriers and the unit hand-over, the last member of shared memory; after it, per unit
   buffer: uint64_t todo[2 * max_chunks]; int live[max_chunks]. */
struct Control {
  uint64_t q_full, q_empty, k_full[kMaxStages], k_empty[kMaxStages], v_full[kMaxStages], v_empty[kMaxStages];
  uint64_t v_tail; /* the TMA of a V tile whose last rows warp 0 zeroes */
  uint64_t unit_full[2], unit_empty[2];
  Unit unit[2];
  int next; /* the planner's last draw from g_next_unit */
};

/* Shared memory, 1024-byte aligned: operand tiles first, then the control block. */
template <bool kFp8>
struct Smem {
  unsigned char q[Prec<kFp8>::tile_bytes];
  unsigned char k[Prec<kFp8>::stages][Prec<kFp8>::tile_bytes];
  unsigned char v[Prec<kFp8>::stages][Prec<kFp8>::tile_bytes];
  Control ctl;
};

__host__ __device__ constexpr size_t plan_bytes(int max_chunks) {
  return ((max_chunks * (2 * sizeof(uint64_t) + sizeof(int))) + 7) / 8 * 8;
}
__device__ uint64_t *unit_todo(Control &ctl, const Sm90Args &a, int buf) {
  return reinterpret_cast<uint64_t *>(reinterpret_cast<unsigned char *>(&ctl + 1) + buf * plan_bytes(a.max_chunks));
}
__device__ int *unit_live(Control &ctl, const Sm90Args &a, int buf) {
  return reinterpret_cast<int *>(unit_todo(ctl, a, buf) + 2 * a.max_chunks);
}

/* The geometry of a unit, as every role derives it. */
struct UnitGeom {
  int lq, lk, ntiles;
  fp2_tile tl;
};
__device__ UnitGeom unit_geom(const Sm90Args &a, int s, int t) {
  UnitGeom u;
  u.lq = a.cu_q[s + 1] - a.cu_q[s];
  u.lk = a.cu_k[s + 1] - a.cu_k[s];
  u.ntiles = a.cu_tiles[s + 1] - a.cu_tiles[s];
  u.tl = fp2_tile_at(&a.p, u.lq, u.lk, t);
  return u;
}

/* The item list of a unit, as both roles see it. */
struct Items {
  const int *sel; /* selected blocks, ascending */
  int nsel;
  const int *live; /* live pooled chunks */
  int n;
  __device__ bool pooled(int i) const { return i >= nsel; }
  __device__ int key_block(int i) const { return sel[nsel - 1 - i]; }
  __device__ int chunk(int i) const { return live[i - nsel]; }
};
__device__ Items unit_items(const Sm90Args &a, const Unit &u, const int *live) {
  return Items{a.indices + u.sel, u.nsel, live, u.nsel + u.n_live};
}

/* The k-th unit of this CTA as the producer and the consumers take it from the planner
   (buffer k % 2): false once no work is left. */
__device__ bool take_unit(Control &ctl, const Sm90Args &a, int k, Unit &u, UnitGeom &geom, Items &items) {
  mbarrier_wait(&ctl.unit_full[k & 1], (k >> 1) & 1);
  u = ctl.unit[k & 1];
  if (u.s < 0) return false;
  geom = unit_geom(a, u.s, u.t);
  items = unit_items(a, u, unit_live(ctl, a, k & 1));
  return true;
}

/* Planner (warps 1-3 of warpgroup 0): draws units until none is left, and for each builds
   the correction chunks into buffer k % 2 (128 blocks each, two mask words; a chunk is live
   if any bit is left after the selected blocks are cleared), then hands it over. */
__device__ void plan_units(Control &ctl, const Sm90Args &a) {
  const int tid = threadIdx.x - 32;
  for (int k = 0;; k++) {
    const int buf = k & 1;
    mbarrier_wait(&ctl.unit_empty[buf], ((k >> 1) & 1) ^ 1);
    if (tid == 0) ctl.next = atomicAdd(&g_next_unit, 1);
    bar_sync(kPlannerBarrier, kPlannerThreads);
    const int next = ctl.next;
    Unit &u = ctl.unit[buf];
    if (next >= a.units) {
      if (tid == 0) {
        u.s = -1;
        mbarrier_arrive(&ctl.unit_full[buf]);
      }
      return;
    }
    /* Heaviest first within a KV head, one head after the other. */
    const int head = next / a.total_tiles, gt = a.total_tiles - 1 - next % a.total_tiles;
    const int s = a.tile_seq[gt], t = gt - a.cu_tiles[s];
    const UnitGeom g = unit_geom(a, s, t);
    const int seg = fp2_segment(&a.p, a.cu_tiles[s], g.ntiles, head, t);
    const int sel = a.offsets[seg], nsel = a.offsets[seg + 1] - sel;
    const int nchunks = a.p.correction ? fp2_cdiv(g.tl.nfull, kKeys) : 0;
    uint64_t *todo = unit_todo(ctl, a, buf);
    int *live = unit_live(ctl, a, buf);
    for (int w = tid; w < 2 * nchunks; w += kPlannerThreads) {
      const int n = min(64, max(0, g.tl.nfull - w * 64));
      todo[w] = n == 64 ? ~0ull : (1ull << n) - 1;
    }
    bar_sync(kPlannerBarrier, kPlannerThreads);
    for (int i = tid; i < nsel; i += kPlannerThreads) {
      const int j = a.indices[sel + i];
      if (j < g.tl.nfull) atomicAnd(reinterpret_cast<unsigned long long *>(&todo[j / 64]), ~(1ull << (j % 64)));
    }
    bar_sync(kPlannerBarrier, kPlannerThreads);
    if (tid == 0) {
      int n = 0;
      for (int c = 0; c < nchunks; c++)
        if (todo[2 * c] | todo[2 * c + 1]) live[n++] = c;
      u = Unit{s, t, head, sel, nsel, n};
      mbarrier_arrive(&ctl.unit_full[buf]); /* releases the writes above to the other roles */
    }
  }
}

/* Rows valid .. 127 of a BF16 tile set to zero by the 32 lanes of a warp: whole rows of
   both halves, wherever the swizzle put their chunks. */
__device__ void zero_tile_rows(unsigned char *tile, int valid, int lane) {
  for (int i = lane; i < (kKeys - valid) * 16; i += 32) {
    const int r = valid + i / 16, half = (i / 8) % 2, chunk = i % 8;
    *reinterpret_cast<uint4 *>(tile + half * kHalfBytes + r * 128 + chunk * 16) = make_uint4(0, 0, 0, 0);
  }
}

/* A tile by TMA (call from one thread), completing on bar: its 64-column halves from a 2-D
   map at (c0, c1) or a 3-D map at (c0, c1, c2). */
template <bool kFp8>
__device__ void tma_tile(unsigned char *tile, const CUtensorMap *map, int rank, int c0, int c1, int c2,
                         uint64_t *bar) {
  mbarrier_arrive_expect_tx(bar, Prec<kFp8>::tile_bytes);
#pragma unroll
  for (int hf = 0; hf < Prec<kFp8>::halves; hf++) {
    if (rank == 2)
      tma_load_2d(tile + hf * kHalfBytes, map, c0 + 64 * hf, c1, bar);
    else
      tma_load_3d(tile + hf * kHalfBytes, map, c0 + 64 * hf, c1, c2, bar);
  }
}

/* An item's BF16 keys first .. first + 127 in pages: one TMA box of min(page size, 128) rows a
   page, lane b holding box b's row in the pages. A box starts on a multiple of 16 rows, 2 KB,
   so that the 128-byte swizzle of its rows is the one a whole tile's box gives them. Only the
   boxes that hold keys of the sequence (valid of them) are read: the table names no page past
   them. Their rows stay as the stage had them, masked in S like the keys past the sequence in
   a box, and zeroed in V by the producer. */
struct PagedBoxes {
  int boxes, row;
};
__device__ int page_box(int shift) { return min(1 << shift, kKeys); }
__device__ PagedBoxes paged_boxes(const int *pages, int shift, int first, int valid, int lane) {
  const int box = page_box(shift), boxes = min(kKeys / box, fp2_cdiv(valid, box));
  return PagedBoxes{boxes, lane < boxes ? (int)page_row(pages, shift, first + lane * box) : 0};
}

/* The tile of those boxes by TMA (call from the whole warp), completing on bar: lane b issues
   box b's two 64-column halves. */
__device__ void paged_tile(unsigned char *tile, const CUtensorMap *map, int shift, const PagedBoxes &b, int h,
                           int lane, uint64_t *bar) {
  const int box_bytes = page_box(shift) * 128; /* 128 bytes a row in each half */
  if (lane == 0) mbarrier_arrive_expect_tx(bar, b.boxes * box_bytes * 2);
  __syncwarp(); /* the expected bytes before any box's */
  if (lane < b.boxes) {
    tma_load_3d(tile + lane * box_bytes, map, 0, h, b.row, bar);
    tma_load_3d(tile + kHalfBytes + lane * box_bytes, map, 64, h, b.row, bar);
  }
}

/* Producer (warp 0; lane 0 issues, or from pages a lane a box): per unit, Q once the previous unit's products are done
   with the old one, then K and V of every item into the stages; `n` counts items over all
   units. FP8 reads V and its means transposed (2-D maps: head dims as rows, each sequence's
   keys from column 128 cu_blocks[s], its means from 128 cu_chunks[s]). BF16: the rows of an
   item past its sequence's data (the keys of a partial last block, pooled vectors past the
   fully visible blocks) are another sequence's or head's, masked in S but not in P V, where
   0 * NaN is NaN: for such an item the warp waits for its V tile, zeroes those rows and then
   releases it to the consumers itself. (FP8 needs none of it: the transposed values are
   zero past each sequence, and a NaN would have spoiled the shared scales anyway.) BF16 K
   and V in pages come a box a page (paged_tile). */
template <bool kFp8, bool kPaged>
__device__ void produce(Smem<kFp8> &sm, const Sm90Args &a, const CUtensorMap *tm_q, const CUtensorMap *tm_k,
                        const CUtensorMap *tm_v, const CUtensorMap *tm_kbar, const CUtensorMap *tm_vbar) {
  constexpr int kStages = Prec<kFp8>::stages;
  Control &ctl = sm.ctl;
  const int g = fp2_group(&a.p), lane = threadIdx.x % 32;
  int n = 0, tails = 0;
  for (int k = 0;; k++) {
    Unit u;
    UnitGeom geom;
    Items it;
    if (!take_unit(ctl, a, k, u, geom, it)) return;
    if (a.q_by_tma) {
      mbarrier_wait(&ctl.q_empty, (k & 1) ^ 1);
      if (lane == 0) tma_tile<kFp8>(sm.q, tm_q, 3, 0, u.h * g, a.cu_q[u.s] + geom.tl.row_begin / g, &ctl.q_full);
    }
    const int k_row = a.cu_k[u.s], pooled_row = u.h * a.total_blocks + a.cu_blocks[u.s];
    const int *pages = kPaged ? a.page_table + (size_t)u.s * a.max_pages : nullptr;
    const int vt_col = kKeys * (kFp8 ? a.cu_blocks[u.s] : 0), vbart_col = kKeys * (kFp8 ? a.cu_chunks[u.s] : 0);
    for (int i = 0; i < it.n; i++, n++) {
      const int st = n % kStages;
      const uint32_t phase = (n / kStages) & 1;
      const bool pooled = it.pooled(i);
      const int first = (pooled ? it.chunk(i) : it.key_block(i)) * kKeys;
      const int valid = (pooled ? geom.tl.nfull : geom.lk) - first; /* rows of this sequence's data */
      /* From pages: the table read before the stage is free, its latency hidden by the wait. */
      const PagedBoxes boxes = kPaged && !pooled ? paged_boxes(pages, a.page_shift, first, valid, lane) : PagedBoxes{};
      /* The item's K and V tiles from their maps (call from the whole warp). */
      auto load_k = [&](uint64_t *bar) {
        if (kPaged && !pooled)
          paged_tile(sm.k[st], tm_k, a.page_shift, boxes, u.h, lane, bar);
        else if (lane == 0 && pooled)
          tma_tile<kFp8>(sm.k[st], tm_kbar, 2, 0, pooled_row + first, 0, bar);
        else if (lane == 0)
          tma_tile<kFp8>(sm.k[st], tm_k, 3, 0, u.h, k_row + first, bar);
      };
      auto load_v = [&](uint64_t *bar) {
        if (kPaged && !pooled)
          paged_tile(sm.v[st], tm_v, a.page_shift, boxes, u.h, lane, bar);
        else if (lane == 0 && kFp8)
          tma_tile<kFp8>(sm.v[st], pooled ? tm_vbar : tm_v, 2, (pooled ? vbart_col : vt_col) + first, u.h * kD, 0,
                         bar);
        else if (lane == 0 && pooled)
          tma_tile<kFp8>(sm.v[st], tm_vbar, 2, 0, pooled_row + first, 0, bar);
        else if (lane == 0)
          tma_tile<kFp8>(sm.v[st], tm_v, 3, 0, u.h, k_row + first, bar);
      };
      mbarrier_wait(&ctl.k_empty[st], phase ^ 1);
      load_k(&ctl.k_full[st]);
      mbarrier_wait(&ctl.v_empty[st], phase ^ 1);
      if (kFp8 || valid >= kKeys) {
        load_v(&ctl.v_full[st]);
        continue;
      }
      load_v(&ctl.v_tail);
      mbarrier_wait(&ctl.v_tail, tails++ & 1);
      zero_tile_rows(sm.v[st], valid, lane);
      fence_proxy_async_shared(); /* the zeros, to wgmma */
      __syncwarp();
      if (lane == 0) mbarrier_arrive(&ctl.v_full[st]);
    }
    if (lane == 0) mbarrier_arrive(&ctl.unit_empty[k & 1]);
  }
}

/* Consumer c's 64 rows of a unit's Q tile when Q is not a TMA box: by cp.async into the
   layout TMA writes (16-byte chunk j of row r at j ^ (r % 8) within its half), zeros past
   the sequence, then handed to wgmma. Only this consumer reads these rows, and its products
   of the previous unit have completed. */
template <bool kFp8>
__device__ void load_q_rows(Smem<kFp8> &sm, const Sm90Args &a, const Unit &u, const fp2_tile &tl, int c) {
  cp_async_rows_sw128<kD * Prec<kFp8>::elem, 128>(
      sm.q, c * 64, 64, tl.row_end - tl.row_begin,
      [&](int r) { return a.q + packed_row_offset(a.p, a.cu_q[u.s], u.h, tl.row_begin + r) * Prec<kFp8>::elem; },
      a.q, 128 * (1 + c));
  cp_async_commit();
  cp_async_wait<0>();
  fence_proxy_async_shared();
  bar_sync(kQRowsBarrier + c, 128);
}

/* Consumer warpgroup c (0 or 1): tile rows 64 c .. 64 c + 63 of every unit. */
template <bool kFp8>
__device__ void consume(Smem<kFp8> &sm, const Sm90Args &a, int c) {
  constexpr int kStages = Prec<kFp8>::stages, kSteps = kKeys / Prec<kFp8>::k_step;
  Control &ctl = sm.ctl;
  const fp2_params &p = a.p;
  const int g = fp2_group(&p), warp = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32;
  const float sqk = kFp8 ? a.scales[0] * a.scales[1] : 1.0f, sv = kFp8 ? a.scales[2] : 1.0f;
  const float scale_log2 = sqk * rsqrtf((float)kD) * kLog2e;
  const float pooled_shift = log2f((float)kKeys); /* corrected blocks are whole blocks of 128 */
  auto issue_qk = [&](float (&sc)[kKeys / 8][4], int st) {
#pragma unroll
    for (int kk = 0; kk < kD / Prec<kFp8>::k_step; kk++) {
      const uint64_t qd = desc_kmajor(sm.q, c * 64, kk), kd = desc_kmajor(sm.k[st], 0, kk);
      if constexpr (kFp8)
        wgmma_m64n128k32_e4m3_ss(sc, qd, kd, kk > 0);
      else
        wgmma_m64n128k16_bf16_ss(sc, qd, kd, kk > 0);
    }
    wgmma_commit();
  };
  /* V: BF16 read MN-major (transposed by the tensor core), FP8 transposed in memory. */
  auto issue_pv = [&](float (&o)[kD / 8][4], const uint32_t (&pf)[kSteps][4], int st) {
    wgmma_fence(); /* P and O were written by ordinary instructions since the last product */
#pragma unroll
    for (int kk = 0; kk < kSteps; kk++) {
      if constexpr (kFp8)
        wgmma_m64n128k32_e4m3_rs(o, pf[kk], desc_kmajor(sm.v[st], 0, kk));
      else
        wgmma_m64n128k16_bf16_rs_tb(o, pf[kk], desc_mnmajor(sm.v[st], kk));
    }
    wgmma_commit();
  };
  auto pack_p = [&](const float (&sc)[kKeys / 8][4], uint32_t (&pf)[kSteps][4]) {
    if constexpr (kFp8)
      pack_a_fragments_e4m3<kKeys / 8>(sc, pf);
    else
      pack_a_fragments<kKeys / 8>(sc, pf);
  };

  int n = 0; /* items consumed over all units: the stage and its phase */
  for (int k = 0;; k++) {
    Unit u;
    UnitGeom geom;
    Items items;
    if (!take_unit(ctl, a, k, u, geom, items)) return;
    const fp2_tile &tl = geom.tl;
    const uint64_t *todo = unit_todo(ctl, a, k & 1);
    /* This thread's rows: row0 and row0 + 8 (packed rows of the sequence). */
    const int row0 = tl.row_begin + c * 64 + warp * 16 + lane / 4;
    int pos[2];
    for (int r = 0; r < 2; r++) pos[r] = row0 + r * 8 < tl.row_end ? geom.lk - geom.lq + (row0 + r * 8) / g : -1;

    /* The softmax statistics of item i on its raw scores, the mask mode chosen once per item:
       pooled (the chunk's todo bits), causal (the diagonal), or none. */
    SoftmaxRows rows;
    auto softmax_item = [&](int i, float (&sc)[kKeys / 8][4], float (&alpha)[2], float (&bias)[2]) {
      if (items.pooled(i)) {
        /* The chunk's todo words shifted by this thread's column offset 2 (lane % 4), so that
           the bit of column col = 8 nt + 2 (lane % 4) + e is bit 8 (nt % 8) + e, a constant
           of the unrolled loop: no per-column masks are computed (the compiler hoisted 16
           one-hot 64-bit masks out of the item loop, holding 32 registers through it). */
        const int shift = 2 * (lane % 4);
        const uint64_t lo = todo[2 * items.chunk(i)] >> shift, hi = todo[2 * items.chunk(i) + 1] >> shift;
        softmax_max<kKeys / 8>(
            sc, rows,
            [&](int col, int r) {
              const int bit = col - shift; /* 8 nt + e: below 64 exactly when col is */
              return (((bit < 64 ? lo : hi) >> (bit % 64)) & 1) && pos[r] >= 0;
            },
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

    float o_acc[kD / 8][4];
#pragma unroll
    for (int nd = 0; nd < kD / 8; nd++) o_acc[nd][0] = o_acc[nd][1] = o_acc[nd][2] = o_acc[nd][3] = 0.0f;
    /* Q by TMA is the producer's, handed back after the unit's last S product. */
    auto release_q = [&] {
      if (a.q_by_tma) mbarrier_arrive(&ctl.q_empty);
    };
    if (a.q_by_tma)
      mbarrier_wait(&ctl.q_full, k & 1);
    else
      load_q_rows<kFp8>(sm, a, u, tl, c);
    if (items.n == 0) release_q();
    if (items.n > 0) {
      /* Item 0: S, its softmax and P, with nothing to overlap. */
      float sc[kKeys / 8][4], alpha[2], bias[2];
      uint32_t pf[kSteps][4];
      mbarrier_wait(&ctl.k_full[n % kStages], (n / kStages) & 1);
      wgmma_fence();
      issue_qk(sc, n % kStages);
      wgmma_wait<0>();
      wgmma_hold(sc);
      mbarrier_arrive(&ctl.k_empty[n % kStages]);
      if (items.n == 1) release_q();
      softmax_item(0, sc, alpha, bias);
      softmax_exp<kKeys / 8, kFp8, false>(sc, rows, scale_log2, bias); /* FP8: rounded when packed */
      pack_p(sc, pf);

      /* Item i: S(i) = Q K(i)^T and O += P(i-1) V(i-1) issued together while this consumer
         holds the turn (named barrier 1 + c), which it then passes on, so that one
         warpgroup's products run while the other does its softmax; the softmax of i then
         runs while PV(i-1) is still on the tensor cores. O is rescaled and P(i) packed only
         after PV(i-1) has completed, as it reads both. */
      for (int i = 1; i < items.n; i++) {
        const int st = (n + i) % kStages, prev = (n + i - 1) % kStages;
        mbarrier_wait(&ctl.k_full[st], ((n + i) / kStages) & 1);
        bar_sync(1 + c, kConsumerThreads);
        wgmma_fence();
        issue_qk(sc, st);
        mbarrier_wait(&ctl.v_full[prev], ((n + i - 1) / kStages) & 1);
        issue_pv(o_acc, pf, prev);
        bar_arrive(2 - c, kConsumerThreads);
        wgmma_wait<1>();
        wgmma_hold(sc);
        mbarrier_arrive(&ctl.k_empty[st]);
        if (i == items.n - 1) release_q(); /* the unit's last read of Q */
        softmax_item(i, sc, alpha, bias);
        softmax_exp<kKeys / 8, kFp8, false>(sc, rows, scale_log2, bias);
        wgmma_wait<0>();
        wgmma_hold(o_acc);
        wgmma_hold_a(pf);
        mbarrier_arrive(&ctl.v_empty[prev]);
        rescale_output<kD / 8>(o_acc, alpha);
        pack_p(sc, pf);
      }

      const int last = (n + items.n - 1) % kStages;
      mbarrier_wait(&ctl.v_full[last], ((n + items.n - 1) / kStages) & 1);
      issue_pv(o_acc, pf, last);
      wgmma_wait<0>();
      wgmma_hold(o_acc);
      wgmma_hold_a(pf);
      mbarrier_arrive(&ctl.v_empty[last]);
    }
    n += items.n;
    mbarrier_arrive(&ctl.unit_empty[k & 1]); /* done with its todo and live lists */
    softmax_store<kD / 8>(o_acc, rows, sv, p, a.cu_q[u.s], u.h, row0, tl.row_end, a.o);
  }
}

template <bool kFp8, bool kPaged>
__global__ void __launch_bounds__(kSm90Threads, 1)
    attend_sm90_kernel(const __grid_constant__ CUtensorMap tm_q, const __grid_constant__ CUtensorMap tm_k,
                       const __grid_constant__ CUtensorMap tm_v, const __grid_constant__ CUtensorMap tm_kbar,
                       const __grid_constant__ CUtensorMap tm_vbar, const Sm90Args a) {
  static_assert(!(kFp8 && kPaged), "FP8 reads the pool's contiguous codes");
#if FP2_SM90_DEVICE
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  /* The swizzle atoms must start on 1024-byte boundaries; the launch adds the slack. */
  Smem<kFp8> &sm = *reinterpret_cast<Smem<kFp8> *>(align_1024(smem_raw));
  Control &ctl = sm.ctl;
  if (threadIdx.x == 0) {
    mbarrier_init(&ctl.q_full, 1);
    mbarrier_init(&ctl.q_empty, kConsumerThreads);
    for (int st = 0; st < Prec<kFp8>::stages; st++) {
      mbarrier_init(&ctl.k_full[st], 1);
      mbarrier_init(&ctl.v_full[st], 1);
      mbarrier_init(&ctl.k_empty[st], kConsumerThreads);
      mbarrier_init(&ctl.v_empty[st], kConsumerThreads);
    }
    for (int b = 0; b < 2; b++) {
      mbarrier_init(&ctl.unit_full[b], 1);
      mbarrier_init(&ctl.unit_empty[b], kConsumerThreads + 1); /* consumers and the producer */
    }
    mbarrier_init(&ctl.v_tail, 1);
    fence_mbarrier_init();
  }
  __syncthreads();

  if (threadIdx.x < 128) { /* producer warpgroup: the TMA warp and the planner warps */
    setmaxnreg_dec<kProducerRegs>();
    if (threadIdx.x >= 32) {
      plan_units(ctl, a);
      return;
    }
    if (threadIdx.x == 0) {
      if (a.q_by_tma) prefetch_tensormap(&tm_q);
      prefetch_tensormap(&tm_k);
      prefetch_tensormap(&tm_v);
    }
    produce<kFp8, kPaged>(sm, a, &tm_q, &tm_k, &tm_v, &tm_kbar, &tm_vbar);
    return;
  }
  setmaxnreg_inc<kConsumerRegs>();
  const int c = threadIdx.x / 128 - 1;
  if (c == 0) bar_arrive(1, kConsumerThreads); /* the first turn is consumer 0's */
  consume<kFp8>(sm, a, c);
#else
  __trap(); /* launched only on sm_90 (checked by the host) */
#endif
}

/* The five maps and the launch, for one precision; vt: FP8's transposed values; pages: BF16's
   K and V in pages (boxes of a page's rows, 128 at most), else NULL. */
template <bool kFp8, bool kPaged>
fp2_status launch(const fp2_params *p, const fp2_plan *plan, const void *q, const void *k, const void *v,
                  const fp2_kv_pages *pages, const void *kbar, const void *vbar, Sm90Args a, int sms, int smem_max,
                  cudaStream_t stream) {
  constexpr int elem = Prec<kFp8>::elem, inner = 128 / elem; /* elements per 128-byte box row */
  const size_t smem = 1024 /* alignment slack */ + sizeof(Smem<kFp8>) + 2 * plan_bytes(a.max_chunks);
  if (smem > (size_t)smem_max)
    return fp2_fail(FP2_ERR_UNSUPPORTED, "fp2_attend: the sm90 kernel needs %zu bytes of shared memory (%d here)",
                    smem, smem_max);
  /* Q and O [total_q, hq, 128]; K, V [total_k, hkv, 128] (in pages [num_pages * page_size, hkv,
     128]); pooled [hkv * total_blocks, 128]; FP8's transposed V [hkv * 128, 128 * total_blocks]
     and means [hkv * 128, 128 * total_chunks]. */
  CUtensorMap tm_q, tm_k, tm_v, tm_kbar, tm_vbar;
  const cuuint64_t row = kD * elem;
  const cuuint64_t kv_rows = pages ? (cuuint64_t)pages->num_pages * p->page_size : (cuuint64_t)plan->total_k;
  const cuuint64_t kv_dims[3] = {kD, (cuuint64_t)p->hkv, kv_rows};
  const cuuint64_t kv_strides[2] = {row, row * p->hkv};
  const cuuint32_t kv_box[3] = {(cuuint32_t)inner, 1,
                                (cuuint32_t)(pages && p->page_size < kKeys ? p->page_size : kKeys)};
  const cuuint64_t pooled_dims[2] = {kD, (cuuint64_t)p->hkv * plan->total_blocks};
  const cuuint64_t pooled_strides[1] = {row};
  const cuuint32_t pooled_box[2] = {(cuuint32_t)inner, kKeys};
  const cuuint64_t vt_cols = (cuuint64_t)kKeys * plan->total_blocks, vbart_cols = (cuuint64_t)kKeys * plan->total_chunks;
  const cuuint64_t vt_dims[2] = {vt_cols, (cuuint64_t)p->hkv * kD}, vbart_dims[2] = {vbart_cols, (cuuint64_t)p->hkv * kD};
  const cuuint64_t vt_strides[1] = {vt_cols}, vbart_strides[1] = {vbart_cols};
  const cuuint32_t vt_box[2] = {kKeys, kD};
  fp2_status st;
  memset(&tm_q, 0, sizeof tm_q);
  if (a.q_by_tma && (st = fp2_tensor_map_q_tiles(&tm_q, elem, q, p, plan->total_q)) != FP2_OK) return st;
  if ((st = fp2_tensor_map_sw128(&tm_k, elem, k, 3, kv_dims, kv_strides, kv_box)) != FP2_OK) return st;
  if ((st = fp2_tensor_map_sw128(&tm_kbar, elem, kbar, 2, pooled_dims, pooled_strides, pooled_box)) != FP2_OK)
    return st;
  if (kFp8) {
    const unsigned char *vt = static_cast<const unsigned char *>(v);
    if ((st = fp2_tensor_map_sw128(&tm_v, 1, vt, 2, vt_dims, vt_strides, vt_box)) != FP2_OK) return st;
    if ((st = fp2_tensor_map_sw128(&tm_vbar, 1, vt + (size_t)p->hkv * kD * vt_cols, 2, vbart_dims, vbart_strides,
                                   vt_box)) != FP2_OK)
      return st;
  } else {
    if ((st = fp2_tensor_map_sw128(&tm_v, elem, v, 3, kv_dims, kv_strides, kv_box)) != FP2_OK) return st;
    if ((st = fp2_tensor_map_sw128(&tm_vbar, elem, vbar, 2, pooled_dims, pooled_strides, pooled_box)) != FP2_OK)
      return st;
  }
  FP2_CUDA("fp2_attend (sm90)", cudaFuncSetAttribute(attend_sm90_kernel<kFp8, kPaged>,
                                                     cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
  void *next_unit = nullptr;
  FP2_CUDA("fp2_attend (sm90)", cudaGetSymbolAddress(&next_unit, g_next_unit));
  FP2_CUDA("fp2_attend (sm90)", cudaMemsetAsync(next_unit, 0, sizeof(int), stream));
  /* One CTA per SM (a persistent grid), fewer when there are fewer units. */
  const int ctas = a.units < sms ? a.units : sms;
  attend_sm90_kernel<kFp8, kPaged><<<ctas, kSm90Threads, smem, stream>>>(tm_q, tm_k, tm_v, tm_kbar, tm_vbar, a);
  FP2_LAUNCHED("fp2_attend (sm90)");
  return FP2_OK;
}

}  // namespace
}  // namespace fp2

size_t fp2_attend_sm90_workspace_bytes(const fp2_params *p, const fp2_plan *plan) {
  return p->dtype == FP2_FP8 ? fp2_transposed_values_bytes(p, plan) : 0;
}

fp2_status fp2_attend_sm90(const fp2_params *p, const fp2_plan *plan, const void *q, const void *k, const void *v,
                           const fp2_kv_pages *pages, const void *kbar, const void *vbar, const float *scales,
                           const int *offsets, const int *indices, void *o, void *workspace, size_t workspace_bytes,
                           cudaStream_t stream) {
  using namespace fp2;
  const int fp8 = p->dtype == FP2_FP8;
  int sms = 0, smem_max = 0;
  fp2_status st = fp2_sm90_device(p, "fp2_attend", &sms, &smem_max);
  if (st != FP2_OK) return st;
  if (fp8 && !scales) return fp2_fail(FP2_ERR_ARG, "fp2_attend: FP8 needs the scales");
  if (workspace_bytes < fp2_attend_sm90_workspace_bytes(p, plan))
    return fp2_fail(FP2_ERR_ARG, "fp2_attend: workspace of %zu bytes is too small (%zu needed)", workspace_bytes,
                    fp2_attend_sm90_workspace_bytes(p, plan));
  const Sm90Args a = {*p,
                      plan->total_blocks,
                      plan->total_tiles,
                      plan->total_tiles * p->hkv,
                      fp2_cdiv(plan->max_blocks, kKeys),
                      kTileRowsSm90 % fp2_group(p) == 0,
                      plan->cu_q,
                      plan->cu_k,
                      plan->cu_tiles,
                      plan->cu_blocks,
                      plan->cu_chunks,
                      plan->tile_seq,
                      offsets,
                      indices,
                      static_cast<const unsigned char *>(q),
                      pages ? pages->table : nullptr,
                      pages ? pages->max_pages : 0,
                      pages ? page_shift(p->page_size) : 0,
                      scales,
                      static_cast<__nv_bfloat16 *>(o)};
  if (!fp8)
    return pages ? launch<false, true>(p, plan, q, k, v, pages, kbar, vbar, a, sms, smem_max, stream)
                 : launch<false, false>(p, plan, q, k, v, nullptr, kbar, vbar, a, sms, smem_max, stream);
  /* The values transposed (and zero past each sequence) in the workspace, unless the pool
     has put them there (v NULL), then the kernel. */
  if (v && (st = fp2_transpose_values(p, plan, v, vbar, workspace, stream)) != FP2_OK) return st;
  return launch<true, false>(p, plan, q, k, workspace, nullptr, kbar, nullptr, a, sms, smem_max, stream);
}
