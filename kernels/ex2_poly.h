/* 2^x on the FMA pipe, for the share of a kernel's exponentials that the special-function
   unit (16 a clock per SM, 8 cycles for a warp's) cannot take in time: the select's
   exponentials leave its issue slots idle while MUFU is the busiest pipe (kernels/NOTES.md).
   x = j + r with j = rint(x) from the 1.5 * 2^23 rounding trick, 2^r on [-1/2, 1/2] by a
   cubic (minimax in relative error, 7.5e-5), 2^j built in the exponent field. x is clamped
   to [-126, 127] first, so that 2^j stays a normal number: 2^x below 2^-126 comes out near
   2^-126 instead of 0, above 2^127 as about 2^127; NaN stays NaN. Ten FMA-pipe and ALU
   instructions against one MUFU op. C (the host's check) and CUDA. */
#ifndef FP2_EX2_POLY_H
#define FP2_EX2_POLY_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define FP2_EX2_POLY_FN __host__ __device__ __forceinline__
#else
#define FP2_EX2_POLY_FN static inline
#endif

/* x within [lo, hi], NaN kept (fminf and fmaxf would drop it). */
FP2_EX2_POLY_FN float fp2_clamp_keep_nan(float x, float lo, float hi) {
#ifdef __CUDA_ARCH__
  float y;
  asm("max.NaN.f32 %0, %1, %2;\n" : "=f"(y) : "f"(x), "f"(lo));
  asm("min.NaN.f32 %0, %1, %2;\n" : "=f"(y) : "f"(y), "f"(hi));
  return y;
#else
  return x < lo ? lo : x > hi ? hi : x;
#endif
}

FP2_EX2_POLY_FN float fp2_ex2_poly(float x) {
  const float kRound = 0x1.8p23f; /* x + kRound holds rint(x) in its low mantissa bits */
  x = fp2_clamp_keep_nan(x, -126.0f, 127.0f);
  const float t = x + kRound;
  const float r = x - (t - kRound);
  const float p = fmaf(fmaf(fmaf(0.055171669074864f, r, 0.2426111221943308f), r, 0.6932609854573362f), r,
                       0.9999280735404956f);
  uint32_t bits;
  memcpy(&bits, &t, sizeof bits);
  bits = (bits << 23) + 0x3f800000u; /* 2^j: kRound's own bits leave nothing below bit 9 */
  float two_j;
  memcpy(&two_j, &bits, sizeof two_j);
  return p * two_j;
}

#undef FP2_EX2_POLY_FN

#endif
