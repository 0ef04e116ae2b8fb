/* V and its pooled means transposed for the Hopper FP8 kernel (transpose_values.h), v1: the
   8-bit wgmma reads its B operand K-major only, so O += P V needs V with the keys along each
   row. One CTA per (128 rows of one sequence, KV head); rows are keys or pooled means, read
   as 128-byte e4m3 rows into shared memory and written as 128-byte runs of the transposed
   tensor's 128 rows of head dims, the keys of each run in fp8_slot_key's order. */
#include "transpose_values.h"

#include "cuda_check.h"
#include "online_softmax.cuh"

namespace fp2 {
namespace {

constexpr int kDim = 128, kRows = 128, kTransposeThreads = 256;
static_assert(kRows == FP2_POOLED_CHUNK, "one CTA: one key block, or one chunk of means");

/* One tensor: row r of sequence s and head h at src + ((cu_src[s] + r) * row_stride + h * head_stride) bytes;
   its transposed column for that row at 128 cu_dst[s] + slot, rows of dst `pitch` bytes apart. */
struct TransposeArgs {
  const uint8_t *src;
  uint8_t *dst;
  const int *cu_src, *cu_dst;
  size_t row_stride, head_stride, pitch;
};

__global__ void __launch_bounds__(kTransposeThreads) transpose_kernel(TransposeArgs a) {
  __shared__ uint8_t tile[kRows][kDim + 4]; /* +4: the column reads below spread over the banks */
  const int c = blockIdx.x, h = blockIdx.y, s = blockIdx.z;
  const int n = a.cu_src[s + 1] - a.cu_src[s], r0 = c * kRows;
  if (r0 >= n) return;
  for (int i = threadIdx.x; i < kRows * kDim / 4; i += kTransposeThreads) {
    const int r = i / (kDim / 4), col = (i % (kDim / 4)) * 4;
    uint32_t w = 0;
    if (r0 + r < n)
      w = *reinterpret_cast<const uint32_t *>(a.src + (size_t)(a.cu_src[s] + r0 + r) * a.row_stride +
                                               (size_t)h * a.head_stride + col);
    *reinterpret_cast<uint32_t *>(&tile[r][col]) = w;
  }
  __syncthreads();
  /* Thread: 16 consecutive columns (keys in slot order) of one head-dim row. */
  for (int i = threadIdx.x; i < kDim * kRows / 16; i += kTransposeThreads) {
    const int d = i / (kRows / 16), col0 = (i % (kRows / 16)) * 16;
    __align__(16) uint8_t run[16];
#pragma unroll
    for (int j = 0; j < 16; j++) {
      const int col = col0 + j;
      run[j] = tile[(col / 32) * 32 + fp8_slot_key(col % 32)][d];
    }
    *reinterpret_cast<uint4 *>(a.dst + ((size_t)h * kDim + d) * a.pitch + (size_t)a.cu_dst[s] * kRows + r0 + col0) =
        *reinterpret_cast<const uint4 *>(run);
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
