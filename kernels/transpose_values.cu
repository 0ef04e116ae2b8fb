/* V and its pooled means transposed for the Hopper FP8 kernel (transpose_values.h), v2: the
   8-bit wgmma reads its B operand K-major only, so O += P V needs V with the keys along each
   row. One CTA per (128 rows of one sequence, KV head), rows being keys or pooled means;
   warp w takes rows 32 w .. 32 w + 31, lane l head dims 4 l .. 4 l + 3. A thread loads, for
   each 4 slots of the transposed run, the 4 bytes of its dims from the 4 rows that
   fp8_slot_key puts there (a warp reads whole 128-byte rows), turns the 4 x 4 bytes around
   with byte permutes, and stores each dim's 32 slots with two 16-byte stores. No shared
   memory. v1 (16 KB through shared memory, one byte a read on the way out) took 169 us at
   128K on the H200. */
#include "transpose_values.h"

#include "cuda_check.h"
#include "online_softmax.cuh"

namespace fp2 {
namespace {

constexpr int kDim = 128, kRows = 128, kGroup = 32, kTransposeThreads = kRows / kGroup * 32;
static_assert(kRows == FP2_POOLED_CHUNK, "one CTA: one key block, or one chunk of means");
static_assert(kDim == 4 * 32, "a lane holds 4 head dims");

/* One tensor: row r of sequence s and head h at src + ((cu_src[s] + r) * row_stride + h * head_stride) bytes;
   its transposed column for that row at 128 cu_dst[s] + slot, rows of dst `pitch` bytes apart. */
struct TransposeArgs {
  const uint8_t *src;
  uint8_t *dst;
  const int *cu_src, *cu_dst;
  size_t row_stride, head_stride, pitch;
};

__global__ void __launch_bounds__(kTransposeThreads) transpose_kernel(TransposeArgs a) {
  const int c = blockIdx.x, h = blockIdx.y, s = blockIdx.z;
  const int n = a.cu_src[s + 1] - a.cu_src[s], r0 = c * kRows;
  if (r0 >= n) return;
  const int group = threadIdx.x / 32, lane = threadIdx.x % 32, first = r0 + group * kGroup;
  const uint8_t *src = a.src + (size_t)a.cu_src[s] * a.row_stride + (size_t)h * a.head_stride + 4 * lane;
  /* run[q][i]: slots 4 q .. 4 q + 3 of head dim 4 lane + i. */
  uint32_t run[kGroup / 4][4];
#pragma unroll
  for (int q = 0; q < kGroup / 4; q++) {
    uint32_t w[4];
#pragma unroll
    for (int j = 0; j < 4; j++) {
      const int row = first + fp8_slot_key(4 * q + j);
      w[j] = row < n ? *reinterpret_cast<const uint32_t *>(src + (size_t)row * a.row_stride) : 0u;
    }
    transpose_4x4_bytes(w, run[q]);
  }
#pragma unroll
  for (int i = 0; i < 4; i++) {
    uint4 *dst = reinterpret_cast<uint4 *>(a.dst + ((size_t)h * kDim + 4 * lane + i) * a.pitch +
                                           (size_t)a.cu_dst[s] * kRows + first);
    dst[0] = make_uint4(run[0][i], run[1][i], run[2][i], run[3][i]);
    dst[1] = make_uint4(run[4][i], run[5][i], run[6][i], run[7][i]);
  }
}

}  // namespace
}  // namespace fp2

extern "C" size_t fp2_transposed_values_bytes(const fp2_params *p, const fp2_plan *plan) {
  return (size_t)p->hkv * 128 * 128 * ((size_t)plan->total_blocks + plan->total_chunks);
}

extern "C" fp2_status fp2_transpose_values(const fp2_params *p, const fp2_plan *plan, const void *v, const void *vbar,
                                           void *vt, cudaStream_t stream) {
  using namespace fp2;
  if (p->dim != kDim || p->block != kRows)
    return fp2_fail(FP2_ERR_UNSUPPORTED, "fp2_transpose_values: head dim and block 128 only (got %d, %d)", p->dim,
                    p->block);
  uint8_t *vt8 = static_cast<uint8_t *>(vt);
  const size_t vt_pitch = (size_t)kRows * plan->total_blocks;
  const TransposeArgs keys = {static_cast<const uint8_t *>(v), vt8,           plan->cu_k, plan->cu_blocks,
                              (size_t)p->hkv * kDim,           (size_t)kDim, vt_pitch};
  const TransposeArgs means = {static_cast<const uint8_t *>(vbar),
                               vt8 + (size_t)p->hkv * kDim * vt_pitch,
                               plan->cu_blocks,
                               plan->cu_chunks,
                               (size_t)kDim,
                               (size_t)plan->total_blocks * kDim,
                               (size_t)kRows * plan->total_chunks};
  transpose_kernel<<<dim3(plan->max_blocks, p->hkv, plan->batch), kTransposeThreads, 0, stream>>>(keys);
  FP2_LAUNCHED("fp2_transpose_values: keys");
  transpose_kernel<<<dim3(fp2_cdiv(plan->max_blocks, FP2_POOLED_CHUNK), p->hkv, plan->batch), kTransposeThreads, 0,
                     stream>>>(means);
  FP2_LAUNCHED("fp2_transpose_values: pooled means");
  return FP2_OK;
}
