/* FP8 quantisation of a bf16 tensor with one per-tensor scale (DESIGN.md section 3):
   amax over the finite values, scale = amax / 448, codes = e4m3(x / scale) rounded to
   nearest even with saturation. Two passes, bandwidth-bound: reduce, then convert. */
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include "cuda_check.h"
#include "fp2.h"

namespace {

constexpr int kThreads = 256;

__global__ void amax_kernel(const __nv_bfloat16 *x, size_t n, unsigned *amax) {
  float m = 0.0f;
  for (size_t i = blockIdx.x * (size_t)kThreads + threadIdx.x; i < n; i += (size_t)gridDim.x * kThreads) {
    float a = fabsf(__bfloat162float(x[i]));
    if (a > m) m = a; /* NaN never compares greater */
  }
  for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
  __shared__ float warp_max[kThreads / 32];
  if (threadIdx.x % 32 == 0) warp_max[threadIdx.x / 32] = m;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < kThreads / 32; w++) m = fmaxf(m, warp_max[w]);
    atomicMax(amax, __float_as_uint(m)); /* non-negative floats order as their bits */
  }
}

__global__ void quantize_kernel(const __nv_bfloat16 *x, size_t n, const unsigned *amax, uint8_t *out, float *scale) {
  float a = __uint_as_float(*amax);
  float s = a > 0.0f ? __fdiv_rn(a, 448.0f) : 1.0f;
  if (blockIdx.x == 0 && threadIdx.x == 0) *scale = s;
  for (size_t i = blockIdx.x * (size_t)kThreads + threadIdx.x; i < n; i += (size_t)gridDim.x * kThreads)
    out[i] = __nv_cvt_float_to_fp8(__fdiv_rn(__bfloat162float(x[i]), s), __NV_SATFINITE, __NV_E4M3);
}

int grid_for(size_t n) {
  size_t blocks = (n + kThreads - 1) / kThreads;
  return blocks > 4096 ? 4096 : (int)(blocks ? blocks : 1);
}

}  // namespace

extern "C" fp2_status fp2_quantize_e4m3(const void *x, size_t n, uint8_t *out, float *scale, unsigned *amax_scratch,
                                        cudaStream_t stream) {
  FP2_CUDA("fp2_quantize_e4m3", cudaMemsetAsync(amax_scratch, 0, sizeof(unsigned), stream));
  amax_kernel<<<grid_for(n), kThreads, 0, stream>>>(static_cast<const __nv_bfloat16 *>(x), n, amax_scratch);
  FP2_LAUNCHED("fp2_quantize_e4m3: amax");
  quantize_kernel<<<grid_for(n), kThreads, 0, stream>>>(static_cast<const __nv_bfloat16 *>(x), n, amax_scratch, out,
                                                        scale);
  FP2_LAUNCHED("fp2_quantize_e4m3: convert");
  return FP2_OK;
}
