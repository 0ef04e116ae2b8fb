/* Internal: the e4m3 quantisation of DESIGN.md section 3, as every kernel that produces codes
   applies it (quantize.cu, pool.cu, select.cu), so that a code does not depend on which
   kernel wrote it: scale = amax / 448 (1 when amax is 0), code = e4m3(x / scale) rounded to
   nearest even with saturation, x / scale correctly rounded. */
#ifndef FP2_E4M3_CUH
#define FP2_E4M3_CUH

#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <stdint.h>

namespace fp2 {

__device__ __forceinline__ float e4m3_scale(float amax) { return amax > 0.0f ? __fdiv_rn(amax, 448.0f) : 1.0f; }

__device__ __forceinline__ uint8_t e4m3_code(float x, float scale) {
  return (uint8_t)__nv_cvt_float_to_fp8(__fdiv_rn(x, scale), __NV_SATFINITE, __NV_E4M3);
}

/* The code's value (exact in f32). */
__device__ __forceinline__ float e4m3_value(uint8_t code) {
  return __half2float(__half(__nv_cvt_fp8_to_halfraw((__nv_fp8_storage_t)code, __NV_E4M3)));
}

/* Eight bf16 (one 16-byte load) to their eight codes, in order, as one 8-byte word. */
__device__ __forceinline__ uint2 e4m3_codes8(uint4 raw, float scale) {
  const __nv_bfloat16 *b = reinterpret_cast<const __nv_bfloat16 *>(&raw);
  uint32_t w[2] = {0, 0};
#pragma unroll
  for (int e = 0; e < 8; e++) w[e / 4] |= (uint32_t)e4m3_code(__bfloat162float(b[e]), scale) << (8 * (e % 4));
  return make_uint2(w[0], w[1]);
}

}  // namespace fp2

#endif
