/* What the two selection kernels share (select.cu, mma.sync; select_sm90.cu, wgmma): the
   arguments, a CTA's segment (sequence, KV head, query tile of 128 packed rows, heaviest
   tiles first), the last block each row counts, and the end of the selection once every
   scored block's energy is in the segment's scratch: threshold and in-place compaction.
   Energies are kept as log2 values, L_J = log2(sum of exp2(s - m)) + m for the block's own
   reference m: a block is kept when L_J >= max L + log2(alpha), i.e. E_J >= alpha * max E,
   with no rescaling pass and no per-block maxima to keep. Both kernels run 4 warps. */
#ifndef FP2_SELECT_TILE_CUH
#define FP2_SELECT_TILE_CUH

#include "fp2.h"
#include "ptx.cuh"
#include "tile_mma.cuh"

namespace fp2 {

constexpr int kSelWarps = 4;
constexpr int kSelThreads = kSelWarps * 32;

struct SelectArgs {
  fp2_params p;
  int total_blocks;
  const int *cu_q, *cu_k, *cu_tiles, *cu_blocks, *tile_seq, *seg_base;
  const void *q, *kbar;
  const float *scales;
  int *scratch, *counts;
};

/* The segment of this CTA: blockIdx.x counts tiles from the last (they score the most
   blocks, so they go first), blockIdx.y is the KV head. */
struct SelectSegment {
  int s, h, t, ntiles, g;
  int offset; /* lk - lq: the position of the sequence's first query */
  fp2_tile tl;
  int nrows, seg;
  int *slot; /* the segment's scratch: log2 energies, then the kept blocks */
};

__device__ __forceinline__ SelectSegment select_segment(const SelectArgs &a) {
  SelectSegment sg;
  const fp2_params &p = a.p;
  const int gt = gridDim.x - 1 - blockIdx.x;
  sg.h = blockIdx.y;
  sg.s = a.tile_seq[gt];
  sg.t = gt - a.cu_tiles[sg.s];
  sg.ntiles = a.cu_tiles[sg.s + 1] - a.cu_tiles[sg.s];
  const int lq = a.cu_q[sg.s + 1] - a.cu_q[sg.s], lk = a.cu_k[sg.s + 1] - a.cu_k[sg.s];
  sg.offset = lk - lq;
  sg.g = p.hq / p.hkv;
  sg.tl = fp2_tile_at(&p, lq, lk, sg.t);
  sg.nrows = sg.tl.row_end - sg.tl.row_begin;
  sg.seg = fp2_segment(&p, a.cu_tiles[sg.s], sg.ntiles, sg.h, sg.t);
  sg.slot = a.scratch + a.seg_base[sg.seg];
  return sg;
}

/* row_last[r]: the last block row r counts (blocks J < nscored with J * B <= its position);
   -1 for rows past the tile. */
__device__ __forceinline__ void fill_row_last(const fp2_params &p, const SelectSegment &sg, int *row_last) {
  for (int r = threadIdx.x; r < kTileRows; r += kSelThreads)
    row_last[r] = r < sg.nrows ? min(sg.tl.nscored - 1, (sg.offset + (sg.tl.row_begin + r) / sg.g) / p.block) : -1;
}

/* Blocks below this are counted by every row of the tile: they need no mask. */
__device__ __forceinline__ int select_full_end(const SelectSegment &sg) {
  return sg.nrows == kTileRows ? min(sg.tl.nscored, sg.tl.first_k + 1) : 0;
}

/* log2 of a block's energy from the sum of exp2(s - ref) over its counted scores: -inf for
   none (a sum of 0). */
__device__ __forceinline__ float log2_energy(float sum, float ref) { return lg2_approx(sum) + ref; }

/* Maximum of v over the CTA; every thread gets it. */
__device__ __forceinline__ float cta_max(float v, float *red) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  __syncthreads();
  if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = v;
  __syncthreads();
  v = red[0];
  for (int w = 1; w < kSelWarps; w++) v = fmaxf(v, red[w]);
  return v;
}

/* The end of a segment: every thread passes the largest log2 energy it wrote (l_max, or
   -inf); the slot holds the log2 energies of blocks 0 .. nscored - 1. Keeps the always-kept
   blocks and those at or above the threshold, compacted in place, a block per thread a
   round (reads precede the round's writes, and the write position never passes the read
   position), and writes the segment's count. red and warp_count: kSelWarps each, shared. */
__device__ __forceinline__ void keep_blocks(const SelectArgs &a, const SelectSegment &sg, float l_max, float *red,
                                            int *warp_count) {
  const fp2_params &p = a.p;
  const float threshold = cta_max(l_max, red) + log2f(p.alpha);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  int count = 0;
  for (int j0 = 0; j0 <= sg.tl.last_k; j0 += kSelThreads) {
    const int j = j0 + threadIdx.x;
    bool keep = false;
    if (j <= sg.tl.last_k)
      keep = fp2_always_kept(&p, &sg.tl, sg.ntiles, sg.t, j) ||
             (j < sg.tl.nscored && __int_as_float(sg.slot[j]) >= threshold);
    const unsigned ballot = __ballot_sync(0xffffffffu, keep);
    if (lane == 0) warp_count[warp] = __popc(ballot);
    __syncthreads();
    int before = count;
    for (int w = 0; w < warp; w++) before += warp_count[w];
    int total = 0;
    for (int w = 0; w < kSelWarps; w++) total += warp_count[w];
    if (keep) sg.slot[before + __popc(ballot & ((1u << lane) - 1u))] = j;
    count += total;
    __syncthreads();
  }
  if (threadIdx.x == 0) a.counts[sg.seg] = count;
}

/* The wgmma scoring kernel (select_sm90.cu) on a, or FP2_ERR_UNSUPPORTED for a shape or GPU
   it does not take; fp2_select builds the CSR after it. */
fp2_status select_sm90(const SelectArgs &a, const fp2_plan *plan, cudaStream_t stream);

}  // namespace fp2

#endif
