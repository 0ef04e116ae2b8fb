#include "numeric.h"

#include <math.h>
#include <string.h>

static uint32_t f32_bits(float x) {
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}

static float f32_from_bits(uint32_t u) {
  float x;
  memcpy(&x, &u, sizeof x);
  return x;
}

uint16_t bf16_from_f32(float x) {
  uint32_t u = f32_bits(x);
  if (isnan(x)) return (uint16_t)((u >> 16) | 0x40); /* keep sign, force a quiet NaN */
  u += 0x7fffu + ((u >> 16) & 1u);                   /* round to nearest even */
  return (uint16_t)(u >> 16);
}

float bf16_to_f32(uint16_t h) { return f32_from_bits((uint32_t)h << 16); }

float bf16_round(float x) { return bf16_to_f32(bf16_from_f32(x)); }

float f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  int exp = (h >> 10) & 0x1f;
  uint32_t man = h & 0x3ffu;
  if (exp == 0x1f) return f32_from_bits(sign | 0x7f800000u | (man << 13));
  if (exp == 0) { /* zero or subnormal: man * 2^-24 */
    float v = ldexpf((float)man, -24);
    return sign ? -v : v;
  }
  return f32_from_bits(sign | ((uint32_t)(exp - 15 + 127) << 23) | (man << 13));
}

uint16_t f16_from_f32(float x) {
  uint32_t u = f32_bits(x);
  uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
  if (isnan(x)) return (uint16_t)(sign | 0x7e00u);
  float a = fabsf(x);
  if (a >= 65520.0f) return (uint16_t)(sign | 0x7c00u); /* rounds past the largest finite */
  if (a < ldexpf(1.0f, -14)) {                           /* subnormal range: step 2^-24 */
    float q = nearbyintf(a * ldexpf(1.0f, 24));          /* default rounding mode is RNE */
    return (uint16_t)(sign | (uint16_t)q);
  }
  int e;
  float m = frexpf(a, &e); /* a = m * 2^e, m in [0.5, 1) */
  float q = nearbyintf(m * 2048.0f); /* 11 significant bits */
  if (q == 2048.0f) {
    q = 1024.0f;
    e += 1;
  }
  return (uint16_t)(sign | (uint16_t)((e + 14) << 10) | ((uint16_t)q & 0x3ffu));
}

uint8_t e4m3_from_f32(float x) {
  if (isnan(x)) return 0x7f;
  uint8_t sign = signbit(x) ? 0x80 : 0x00;
  float a = fabsf(x);
  if (a >= E4M3_MAX) return (uint8_t)(sign | 0x7e); /* saturate (also +-inf) */
  if (a < ldexpf(1.0f, -6)) {                         /* subnormal range: step 2^-9 */
    float q = nearbyintf(a * 512.0f);                  /* q <= 8; 8 is the smallest normal */
    return (uint8_t)(sign | (uint8_t)q);
  }
  int e;
  float m = frexpf(a, &e);        /* a = m * 2^e, m in [0.5, 1) */
  float q = nearbyintf(m * 16.0f); /* 4 significant bits: q in [8, 16] */
  if (q == 16.0f) {
    q = 8.0f;
    e += 1;
  }
  int biased = e - 1 + 7;
  if (biased > 15 || (biased == 15 && q > 14.0f)) return (uint8_t)(sign | 0x7e);
  return (uint8_t)(sign | (uint8_t)(biased << 3) | ((uint8_t)q & 0x7));
}

float e4m3_to_f32(uint8_t code) {
  int sign = code & 0x80;
  int exp = (code >> 3) & 0xf;
  int man = code & 0x7;
  float v;
  if (exp == 0xf && man == 0x7) return NAN;
  if (exp == 0)
    v = ldexpf((float)man, -9);
  else
    v = ldexpf((float)(8 + man), exp - 10);
  return sign ? -v : v;
}

float e4m3_round(float x) { return e4m3_to_f32(e4m3_from_f32(x)); }

float fp8_scale_from_amax(float amax) { return amax > 0.0f ? amax / E4M3_MAX : 1.0f; }

float e4m3_quantize(float x, float scale) {
  const float inverse = 1.0f / scale;
  return e4m3_round(x * inverse);
}
