/* Bit-exact host emulation of the reduced-precision formats the kernels use:
   bf16 and e4m3 with round-to-nearest-even (what cvt.rn / __nv_cvt_float_to_fp8 with
   __NV_SATFINITE do on the GPU), and f16 for reading recorded tensors. */
#ifndef FP2_NUMERIC_H
#define FP2_NUMERIC_H

#include <stdint.h>

#define E4M3_MAX 448.0f

uint16_t bf16_from_f32(float x); /* round to nearest even; NaN stays NaN */
float bf16_to_f32(uint16_t h);
float bf16_round(float x); /* bf16_to_f32(bf16_from_f32(x)) */

float f16_to_f32(uint16_t h);
uint16_t f16_from_f32(float x); /* round to nearest even, overflow to inf */

/* e4m3 (OCP FP8, "fn": no infinities, 0x7f/0xff are NaN): round to nearest even,
   saturating finite values beyond +-448 to +-448; NaN maps to NaN (0x7f). */
uint8_t e4m3_from_f32(float x);
float e4m3_to_f32(uint8_t code);
float e4m3_round(float x);

/* Per-tensor FP8 scale of DESIGN.md's Definitions: amax / 448, or 1 for an all-zero tensor. */
float fp8_scale_from_amax(float amax);

/* The code value of x in a tensor of that scale, as the kernels quantise (kernels/e4m3.cuh):
   x times 1 / scale (each rounded once in f32), then e4m3_round. */
float e4m3_quantize(float x, float scale);

#endif
