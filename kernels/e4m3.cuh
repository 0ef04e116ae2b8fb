/* Internal: the e4m3 quantisation of DESIGN.md section 3, as every kernel that produces codes
   applies it (quantize.cu, pool.cu, select_sm90.cu), so that a code does not depend on which
   kernel wrote it: scale = amax / 448 (1 when amax is 0), code = e4m3(x * r) rounded to
   nearest even with saturation, r = 1 / scale correctly rounded in f32, x * r rounded once
   (the host's e4m3_quantize, src/base/numeric.c, does the same). One multiplication an
   element: the select converts Q inside a kernel whose time follows its instruction count.
   x * r is within one f32 rounding of x / scale, so a code differs from the correctly
   rounded quotient's only where x / scale lies that close to a midpoint between two codes. */
#ifndef FP2_E4M3_CUH
#define FP2_E4M3_CUH

#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <stdint.h>

namespace fp2 {

__device__ __forceinline__ float e4m3_scale(float amax) { return amax > 0.0f ? __fdiv_rn(amax, 448.0f) : 1.0f; }

/* What a tensor's codes multiply by: 1 / scale, correctly rounded. */
__device__ __forceinline__ float e4m3_inverse(float scale) { return __frcp_rn(scale); }

__device__ __forceinline__ uint8_t e4m3_code(float x, float inverse) {
  return (uint8_t)__nv_cvt_float_to_fp8(__fmul_rn(x, inverse), __NV_SATFINITE, __NV_E4M3);
}

/* The code's value (exact in f32). */
__device__ __forceinline__ float e4m3_value(uint8_t code) {
  return __half2float(__half(__nv_cvt_fp8_to_halfraw((__nv_fp8_storage_t)code, __NV_E4M3)));
}

/* Eight bf16 (one 16-byte load) to their eight codes, in order, as one 8-byte word: two bf16
   per 32-bit word widened by a shift and a mask, two codes per conversion. */
__device__ __forceinline__ uint2 e4m3_codes8(uint4 raw, float inverse) {
  const uint32_t in[4] = {raw.x, raw.y, raw.z, raw.w};
  uint32_t pairs[4];
#pragma unroll
  for (int i = 0; i < 4; i++) {
    const float2 f = make_float2(__fmul_rn(__uint_as_float(in[i] << 16), inverse),
                                 __fmul_rn(__uint_as_float(in[i] & 0xffff0000u), inverse));
    pairs[i] = __nv_cvt_float2_to_fp8x2(f, __NV_SATFINITE, __NV_E4M3); /* .x in the low byte */
  }
  return make_uint2(pairs[0] | pairs[1] << 16, pairs[2] | pairs[3] << 16);
}

}  // namespace fp2

#endif
