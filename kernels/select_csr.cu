/* The end of the selection, after either scoring kernel (select.cu, select_sm90.cu) has
   written every scored block's log2 energy to its segment's scratch and each warp's largest
   to warp_max: the threshold (the segment's largest + log2(alpha)), the always-kept blocks
   and the CSR. Two light passes, a warp per segment, a group of 32 segments a CTA:
   - compact reads the segment's energies in batches of 256 (eight loads in flight a lane),
     writes its kept blocks, ascending, to the front of its own scratch (in place: a batch is
     read whole before any of its blocks is written, and the kept ones never outrun the read
     ones), their count, and the group's count;
   - place sums the counts of the groups before its own (at most a load a thread: 1024
     groups hold 32768 segments, 128K at 32:8) and scans its group's in a warp, which gives
     each segment's offset, and moves its kept blocks there.
   No atomics, nothing to clear between passes, the same CSR every run. Each pass starts while
   the kernel before it drains and waits for it after its segments' plan (dependent_launch.cuh):
   at 128K in 8K chunks this and the select's own early start took 3.5 us off each chunk.
   History: until 2026-12-02 this ran inside the scoring CTA, in place, a round of 128 blocks
   at a time with two barriers and a read of the scratch each: 18 % of the sm90 kernel's
   stall samples at 128K (BF16, H200). Then compact, CUB's scan (two kernels) and a copy:
   four launches, 13-17 us a pass on the H200 however small the pass (kernels/NOTES.md). */
#include "cuda_check.h"
#include "dependent_launch.cuh"
#include "select_tile.cuh"

namespace fp2 {
namespace {

constexpr int kGroup = 32; /* segments a group: a CTA of both passes, a warp each */
constexpr int kBatch = 8;  /* energies a lane loads before it tests them */

/* Segment seg of fp2_segment's order (sequence, KV head, tile). A sequence's segments are
   hkv * cu_tiles[s] .. hkv * cu_tiles[s + 1] - 1, so seg / hkv is one of its tiles. */
__device__ __forceinline__ SelectSegment numbered_segment(const SelectArgs &a, int seg) {
  const int s = a.tile_seq[seg / a.p.hkv], local = seg - a.p.hkv * a.cu_tiles[s];
  const int ntiles = a.cu_tiles[s + 1] - a.cu_tiles[s];
  return segment_of(a, a.p, s, local / ntiles, local % ntiles);
}

/* The segment's threshold from its scoring warps' largest log2 energies. */
__device__ __forceinline__ float segment_threshold(const SelectArgs &a, const SelectSegment &sg) {
  float m = -INFINITY;
  for (int w = 0; w < kSelWarps; w++) m = fmaxf(m, a.warp_max[sg.seg * kSelWarps + w]);
  return m + log2f(a.p.alpha);
}

__device__ __forceinline__ int warp_sum(int x) {
  for (int o = 16; o > 0; o >>= 1) x += __shfl_xor_sync(0xffffffffu, x, o);
  return x;
}

/* counts[seg]: the segment's kept blocks, written ascending to the front of its scratch;
   group_counts[group]: its segments' sum. The warp tests blocks 0 .. last_k 32 at a time,
   and a kept block goes at the count so far plus the kept lanes below its own in the warp's
   ballot. Plain loads: the scratch is written here. */
__global__ void __launch_bounds__(32 * kGroup) compact_kernel(const SelectArgs a, int nseg, int *group_counts) {
  __shared__ int warp_count[kGroup];
  const int seg = blockIdx.x * kGroup + threadIdx.x / 32, lane = threadIdx.x % 32;
  int count = 0;
  SelectSegment sg;
  if (seg < nseg) sg = numbered_segment(a, seg);
  grid_dependency_wait(); /* the scoring kernel's energies and warp_max */
  grid_dependents_launch();
  if (seg < nseg) {
    const float threshold = segment_threshold(a, sg);
    const int n = sg.tl.last_k + 1;
    const unsigned below = (1u << lane) - 1u;
    const float *energy = reinterpret_cast<const float *>(sg.slot);
    for (int j0 = 0; j0 < n; j0 += kBatch * 32) {
      float e[kBatch];
#pragma unroll
      for (int i = 0; i < kBatch; i++) {
        const int j = j0 + 32 * i + lane;
        e[i] = j < sg.tl.nscored ? energy[j] : -INFINITY;
      }
      __syncwarp(); /* the batch read by every lane before any lane writes into it */
#pragma unroll
      for (int i = 0; i < kBatch; i++) {
        const int j = j0 + 32 * i + lane;
        if (j0 + 32 * i >= n) break;
        const bool keep = j < n && (fp2_always_kept(&a.p, &sg.tl, sg.ntiles, sg.t, j) ||
                                    (j < sg.tl.nscored && e[i] >= threshold));
        const unsigned ballot = __ballot_sync(0xffffffffu, keep);
        if (keep) sg.slot[count + __popc(ballot & below)] = j;
        count += __popc(ballot);
      }
    }
    if (lane == 0) a.counts[seg] = count;
  }
  if (lane == 0) warp_count[threadIdx.x / 32] = count;
  __syncthreads();
  if (threadIdx.x < 32) {
    const int total = warp_sum(warp_count[lane]);
    if (lane == 0) group_counts[blockIdx.x] = total;
  }
}

/* offsets[seg + 1] (and offsets[0] = 0): the kept blocks of every segment up to seg's; and
   the segment's kept blocks from the front of its scratch to offsets[seg]. */
__global__ void __launch_bounds__(32 * kGroup) place_kernel(const SelectArgs a, int nseg, const int *group_counts,
                                                            int *offsets, int *indices) {
  __shared__ int partial[kGroup], at[kGroup];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, seg = blockIdx.x * kGroup + warp;
  grid_dependency_wait(); /* compact's counts and kept blocks */
  grid_dependents_launch();
  int before = 0; /* the kept blocks of the groups before this one */
  for (int i = threadIdx.x; i < (int)blockIdx.x; i += 32 * kGroup) before += group_counts[i];
  before = warp_sum(before);
  if (lane == 0) partial[warp] = before;
  __syncthreads();
  if (warp == 0) { /* the group's offsets: the groups before it, then an inclusive scan of its counts */
    const int base = warp_sum(partial[lane]), mine = blockIdx.x * kGroup + lane;
    const int count = mine < nseg ? a.counts[mine] : 0;
    int inclusive = count;
    for (int o = 1; o < 32; o <<= 1) {
      const int x = __shfl_up_sync(0xffffffffu, inclusive, o);
      if (lane >= o) inclusive += x;
    }
    at[lane] = base + inclusive - count;
    if (mine < nseg) offsets[mine + 1] = base + inclusive;
    if (mine == 0) offsets[0] = 0;
  }
  __syncthreads();
  if (seg >= nseg) return;
  const int *kept = a.scratch + a.seg_base[seg];
  const int to = at[warp], count = a.counts[seg];
  for (int i = lane; i < count; i += 32) indices[to + i] = kept[i];
}

/* The workspace: warp_max first (the scoring kernels write it), then the groups' counts. */
size_t warp_max_bytes(const fp2_plan *plan) {
  return (sizeof(float) * kSelWarps * (size_t)plan->nseg + 255) / 256 * 256;
}

size_t groups(const fp2_plan *plan) { return (size_t)fp2_cdiv(plan->nseg, kGroup); }

}  // namespace

size_t select_csr_workspace_bytes(const fp2_plan *plan) { return warp_max_bytes(plan) + sizeof(int) * groups(plan); }

fp2_status select_csr(const SelectArgs &a, const fp2_plan *plan, fp2_index *index, void *workspace,
                      cudaStream_t stream) {
  int *group_counts = reinterpret_cast<int *>(static_cast<char *>(workspace) + warp_max_bytes(plan));
  const unsigned ctas = (unsigned)groups(plan); /* at least one: every sequence has a query */
  FP2_CUDA("fp2_select: compact the kept blocks",
           launch_dependent(compact_kernel, ctas, 32 * kGroup, 0, stream, a, plan->nseg, group_counts));
  FP2_CUDA("fp2_select: place the kept blocks",
           launch_dependent(place_kernel, ctas, 32 * kGroup, 0, stream, a, plan->nseg,
                            static_cast<const int *>(group_counts), index->offsets, index->indices));
  return FP2_OK;
}

}  // namespace fp2
