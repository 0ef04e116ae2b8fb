/* The end of the selection, after either scoring kernel (select.cu, select_sm90.cu) has
   written every scored block's log2 energy to its segment's scratch and each warp's largest
   to warp_max: the threshold (the segment's largest + log2(alpha)), the always-kept blocks
   and the CSR. Two light passes, a warp per segment: the compact pass reads the segment's
   energies in batches of 256 (eight loads in flight a lane) and writes its kept blocks,
   ascending, to the front of its own scratch (in place: a batch is read whole before any
   of its blocks is written, and the kept ones never outrun the read ones) and their count;
   a CUB scan of the counts gives the offsets; the copy pass moves each segment's kept blocks
   to its offset. The energies are read once (they were read twice, in a count pass and
   again in the write pass, until 2026-12-04).
   Until 2026-12-02 this ran inside the scoring CTA, in place, a round of 128 blocks at a time
   with two barriers and a read of the scratch each: 18 % of the sm90 kernel's stall samples
   at 128K (BF16, H200), while that CTA held its registers and shared memory (NOTES.md). */
#include <cub/device/device_scan.cuh>

#include "cuda_check.h"
#include "select_tile.cuh"

namespace fp2 {
namespace {

constexpr int kWarpsPerCta = 4;
constexpr int kBatch = 8; /* energies a lane loads before it tests them */

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

/* counts[seg]: the segment's kept blocks, written ascending to the front of its scratch;
   CTA 0 also writes offsets[0] = 0. The warp tests blocks 0 .. last_k 32 at a time, and a
   kept block goes at the count so far plus the kept lanes below its own in the warp's
   ballot. Plain loads: the scratch is written here. */
__global__ void __launch_bounds__(32 * kWarpsPerCta) compact_kernel(const SelectArgs a, int nseg, int *offsets) {
  const int seg = blockIdx.x * kWarpsPerCta + threadIdx.x / 32;
  if (seg == 0 && threadIdx.x == 0) offsets[0] = 0;
  if (seg >= nseg) return;
  const SelectSegment sg = numbered_segment(a, seg);
  const float threshold = segment_threshold(a, sg);
  const int n = sg.tl.last_k + 1, lane = threadIdx.x % 32;
  const unsigned below = (1u << lane) - 1u;
  const float *energy = reinterpret_cast<const float *>(sg.slot);
  int count = 0;
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

/* The segment's kept blocks, from the front of its scratch to offsets[seg]. */
__global__ void __launch_bounds__(32 * kWarpsPerCta) copy_kernel(const SelectArgs a, int nseg, const int *offsets,
                                                                 int *indices) {
  const int seg = blockIdx.x * kWarpsPerCta + threadIdx.x / 32;
  if (seg >= nseg) return;
  const int *kept = a.scratch + a.seg_base[seg];
  const int at = offsets[seg], count = a.counts[seg];
  for (int i = threadIdx.x % 32; i < count; i += 32) indices[at + i] = kept[i];
}

/* The workspace: warp_max first (the scoring kernels write it), then CUB's scan. */
size_t warp_max_bytes(const fp2_plan *plan) {
  return (sizeof(float) * kSelWarps * (size_t)plan->nseg + 255) / 256 * 256;
}

}  // namespace

size_t select_csr_workspace_bytes(const fp2_plan *plan) {
  size_t scan = 0;
  cub::DeviceScan::InclusiveSum(nullptr, scan, static_cast<const int *>(nullptr), static_cast<int *>(nullptr),
                                plan->nseg > 0 ? plan->nseg : 1);
  return warp_max_bytes(plan) + scan;
}

fp2_status select_csr(const SelectArgs &a, const fp2_plan *plan, fp2_index *index, void *workspace,
                      size_t workspace_bytes, cudaStream_t stream) {
  const size_t wm = warp_max_bytes(plan);
  void *scan_ws = static_cast<char *>(workspace) + wm;
  size_t scan_bytes = workspace_bytes - wm;
  const int ctas = fp2_cdiv(plan->nseg, kWarpsPerCta);
  compact_kernel<<<ctas, 32 * kWarpsPerCta, 0, stream>>>(a, plan->nseg, index->offsets);
  FP2_LAUNCHED("fp2_select: compact the kept blocks");
  FP2_CUDA("fp2_select: csr offsets", cub::DeviceScan::InclusiveSum(scan_ws, scan_bytes, index->counts,
                                                                     index->offsets + 1, plan->nseg, stream));
  copy_kernel<<<ctas, 32 * kWarpsPerCta, 0, stream>>>(a, plan->nseg, index->offsets, index->indices);
  FP2_LAUNCHED("fp2_select: copy the kept blocks");
  return FP2_OK;
}

}  // namespace fp2
