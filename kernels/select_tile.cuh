/* What the two selection kernels share (select.cu, mma.sync; select_sm90.cu, wgmma): the
   arguments, a CTA's segment (sequence, KV head, query tile of 128 packed rows, heaviest
   tiles first), the last block each row counts, and the end of a segment's scoring (each
   warp's largest energy), after which select_csr.cu thresholds and builds the CSR.
   Energies are kept as log2 values, L_J = log2(sum of exp2(s - m)) + m for the block's own
   reference m: a block is kept when L_J >= max L + log2(alpha), i.e. E_J >= alpha * max E,
   with no rescaling pass and no per-block maxima to keep. Both kernels run 4 warps. */
#ifndef FP2_SELECT_TILE_CUH
#define FP2_SELECT_TILE_CUH

#include "divider.h"
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
  uint8_t *q8; /* FP8 on the sm90 kernel: q is bf16 Q, converted into these codes; else NULL */
  const float *scales;
  int *scratch, *counts;
  float *warp_max; /* [nseg][kSelWarps]: each warp's largest log2 energy */
  fp2_divider group; /* g = hq / hkv: packed rows to positions */
  fp2_divider heads; /* hkv: a CTA's index to its tile and KV head */
};

/* A segment (sequence s, KV head h, tile t): its tile, its rows, its scratch. */
struct SelectSegment {
  int s, h, t, ntiles, g;
  int offset; /* lk - lq: the position of the sequence's first query */
  fp2_tile tl;
  int nrows, seg;
  int *slot; /* the segment's scratch: the log2 energies of its scored blocks, then its kept blocks (select_csr.cu) */
};

/* Segment (s, h, t) under params p: a.p, or a copy whose block and tile sizes are constants
   (the sm90 kernel's shape), so that dividing by them is a shift. Rows go to positions through
   a.group, with no division. */
__device__ __forceinline__ SelectSegment segment_of(const SelectArgs &a, const fp2_params &p, int s, int h, int t) {
  SelectSegment sg;
  sg.s = s;
  sg.h = h;
  sg.t = t;
  sg.ntiles = a.cu_tiles[s + 1] - a.cu_tiles[s];
  const int lq = a.cu_q[s + 1] - a.cu_q[s], lk = a.cu_k[s + 1] - a.cu_k[s];
  sg.offset = lk - lq;
  sg.g = a.group.d;
  const int row_begin = t * p.qtile, row_end = fp2_tile_row_end(&p, lq * sg.g, t);
  sg.tl = fp2_tile_of_rows(&p, row_begin, row_end, sg.offset + fp2_div(a.group, row_begin),
                           sg.offset + fp2_div(a.group, row_end - 1));
  sg.nrows = sg.tl.row_end - sg.tl.row_begin;
  sg.seg = fp2_segment(&p, a.cu_tiles[s], sg.ntiles, h, t);
  sg.slot = a.scratch + a.seg_base[sg.seg];
  return sg;
}

/* The scoring grid: tiles x KV heads in one dimension (select_segment). */
inline dim3 select_grid(const SelectArgs &a, int total_tiles) { return dim3((unsigned)total_tiles * a.p.hkv); }

/* The segment of a scoring CTA: tiles from the last (they score the most blocks, so they go
   first), the hkv KV heads of a tile side by side, so that together they read each of its
   positions' rows of Q whole (hq x D values, contiguous): a DRAM page is opened once, not
   once per head at other times. */
__device__ __forceinline__ SelectSegment select_segment(const SelectArgs &a, const fp2_params &p) {
  const int i = gridDim.x - 1 - blockIdx.x, gt = fp2_div(a.heads, i), s = a.tile_seq[gt];
  return segment_of(a, p, s, i - gt * a.heads.d, gt - a.cu_tiles[s]);
}

/* row_last[r]: the last block row r counts (blocks J < nscored with J * B <= its position);
   -1 for rows past the tile. */
__device__ __forceinline__ void fill_row_last(const SelectArgs &a, const fp2_params &p, const SelectSegment &sg,
                                              int *row_last) {
  for (int r = threadIdx.x; r < kTileRows; r += kSelThreads)
    row_last[r] = r < sg.nrows ? min(sg.tl.nscored - 1, (sg.offset + fp2_div(a.group, sg.tl.row_begin + r)) / p.block)
                               : -1;
}

/* Blocks below this are counted by every row of the tile: they need no mask. */
__device__ __forceinline__ int select_full_end(const SelectSegment &sg) {
  return sg.nrows == kTileRows ? min(sg.tl.nscored, sg.tl.first_k + 1) : 0;
}

/* log2 of a block's energy from the sum of exp2(s - ref) over its counted scores: -inf for
   none (a sum of 0). */
__device__ __forceinline__ float log2_energy(float sum, float ref) { return lg2_approx(sum) + ref; }

/* The end of a segment's scoring: each warp's largest log2 energy (of l_max over its lanes,
   -inf where none) to the segment's kSelWarps entries of warp_max, from which the CSR pass
   (select_csr.cu) takes the threshold. No barrier, no read of the scratch: that pass runs
   apart, in light CTAs. */
__device__ __forceinline__ void write_warp_max(const SelectArgs &a, const SelectSegment &sg, float l_max) {
  for (int o = 16; o > 0; o >>= 1) l_max = fmaxf(l_max, __shfl_xor_sync(0xffffffffu, l_max, o));
  if (threadIdx.x % 32 == 0) a.warp_max[sg.seg * kSelWarps + threadIdx.x / 32] = l_max;
}

/* The wgmma scoring kernel (select_sm90.cu) on a, or FP2_ERR_UNSUPPORTED for a shape or GPU
   it does not take; fp2_select builds the CSR after it. */
fp2_status select_sm90(const SelectArgs &a, const fp2_plan *plan, cudaStream_t stream);

/* The CSR from the scored scratch and warp_max (select_csr.cu): the threshold, the
   always-kept blocks, counts, offsets and indices. workspace: select_csr_workspace_bytes of
   them (fp2_select checks its size), a.warp_max at its start. */
size_t select_csr_workspace_bytes(const fp2_plan *plan);
fp2_status select_csr(const SelectArgs &a, const fp2_plan *plan, fp2_index *index, void *workspace,
                      cudaStream_t stream);

}  // namespace fp2

#endif
