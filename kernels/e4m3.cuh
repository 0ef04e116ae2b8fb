/* Internal: the e4m3 quantisation of DESIGN.md section 3, as every kernel that produces codes
   applies it (quantize.cu, pool.cu), so that a code does not depend on which kernel wrote
   it: scale = amax / 448 (1 when amax is 0), code = e4m3(x / scale) rounded to
   nearest even with saturation, x / scale correctly rounded.
   The division is one multiplication by the reciprocal and one FMA correction (Markstein):
   about a third of __fdiv_rn's instructions. It is the correctly rounded quotient for every bf16
   |x| >= 2^-100 (checked exhaustively on the host for 200,000 scales of bf16 amax values,
   |x| <= amax); below that the quotient is under 2^-12, whose code is zero either way,
   unless the tensor's amax is under 2^-79. A -0 may come out +0: the same value. */
#ifndef FP2_E4M3_CUH
#define FP2_E4M3_CUH

#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <stdint.h>

namespace fp2 {

__device__ __forceinline__ float e4m3_scale(float amax) { return amax > 0.0f ? __fdiv_rn(amax, 448.0f) : 1.0f; }

/* A tensor's scale and its correctly rounded reciprocal. */
struct E4m3Divisor {
  float scale, inverse;
};
__device__ __forceinline__ E4m3Divisor e4m3_divisor(float scale) { return E4m3Divisor{scale, __frcp_rn(scale)}; }

__device__ __forceinline__ float e4m3_quotient(float x, E4m3Divisor d) {
  const float q = x * d.inverse;
  return fmaf(fmaf(-q, d.scale, x), d.inverse, q);
}

__device__ __forceinline__ uint8_t e4m3_code(float x, E4m3Divisor d) {
  return (uint8_t)__nv_cvt_float_to_fp8(e4m3_quotient(x, d), __NV_SATFINITE, __NV_E4M3);
}

/* The code's value (exact in f32). */
__device__ __forceinline__ float e4m3_value(uint8_t code) {
  return __half2float(__half(__nv_cvt_fp8_to_halfraw((__nv_fp8_storage_t)code, __NV_E4M3)));
}

/* Eight bf16 (one 16-byte load) to their eight codes, in order, as one 8-byte word: two bf16
   per 32-bit word widened by a shift and a mask, two codes per conversion. */
__device__ __forceinline__ uint2 e4m3_codes8(uint4 raw, E4m3Divisor d) {
  const uint32_t in[4] = {raw.x, raw.y, raw.z, raw.w};
  uint32_t pairs[4];
#pragma unroll
  for (int i = 0; i < 4; i++) {
    const float2 f = make_float2(e4m3_quotient(__uint_as_float(in[i] << 16), d),
                                 e4m3_quotient(__uint_as_float(in[i] & 0xffff0000u), d));
    pairs[i] = __nv_cvt_float2_to_fp8x2(f, __NV_SATFINITE, __NV_E4M3); /* .x in the low byte */
  }
  return make_uint2(pairs[0] | pairs[1] << 16, pairs[2] | pairs[3] << 16);
}

}  // namespace fp2

#endif
