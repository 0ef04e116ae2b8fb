/* bf16, f16 and e4m3 conversions against known encodings, and exhaustive round trips. */
#include <math.h>
#include <stdint.h>

#include "numeric.h"
#include "testing.h"

static void e4m3_known_values(void) {
  static const struct {
    float x;
    uint8_t code;
  } table[] = {
      {0.0f, 0x00},     {1.0f, 0x38},      {-1.0f, 0xb8},     {0.5f, 0x30},      {3.0f, 0x44},
      {240.0f, 0x77},   {448.0f, 0x7e},    {-448.0f, 0xfe},   {500.0f, 0x7e},    {1e30f, 0x7e},
      {-INFINITY, 0xfe}, {0x1p-9f, 0x01},   {0x1p-6f, 0x08},   {0x1p-10f, 0x00},  {0x3p-10f, 0x02},
      {1.0625f, 0x38},  {1.1875f, 0x3a},   {464.0f, 0x7e},    {0.1f, 0x1d},      {-0x1.cp-8f, 0x84},
  };
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
    uint8_t c = e4m3_from_f32(table[i].x);
    EXPECT_MSG(c == table[i].code, "e4m3(%g) = 0x%02x, want 0x%02x", table[i].x, c, table[i].code);
  }
  EXPECT(e4m3_from_f32(NAN) == 0x7f);
  EXPECT(isnan(e4m3_to_f32(0x7f)) && isnan(e4m3_to_f32(0xff)));
  EXPECT(e4m3_to_f32(0x7e) == 448.0f);
  EXPECT(e4m3_to_f32(0x01) == 0x1p-9f);
}

static void e4m3_round_trip(void) {
  for (int c = 0; c < 256; c++) {
    if ((c & 0x7f) == 0x7f) continue; /* NaN */
    float v = e4m3_to_f32((uint8_t)c);
    uint8_t back = e4m3_from_f32(v);
    int same = back == c || (v == 0.0f && (back & 0x7f) == 0);
    EXPECT_MSG(same, "code 0x%02x -> %g -> 0x%02x", c, v, back);
  }
  /* Midpoints between neighbours round to the even code. */
  for (int c = 0x01; c < 0x7e; c++) {
    float lo = e4m3_to_f32((uint8_t)c), hi = e4m3_to_f32((uint8_t)(c + 1));
    uint8_t mid = e4m3_from_f32(0.5f * (lo + hi));
    EXPECT_MSG(mid == ((c & 1) ? c + 1 : c), "midpoint of 0x%02x and 0x%02x -> 0x%02x", c, c + 1, mid);
  }
}

static void bf16_values(void) {
  EXPECT(bf16_from_f32(1.0f) == 0x3f80);
  EXPECT(bf16_from_f32(1.0f + 0x1p-8f) == 0x3f80);      /* tie to even: down */
  EXPECT(bf16_from_f32(1.0f + 0x3p-8f) == 0x3f82);      /* tie to even: up */
  EXPECT(bf16_from_f32(1.0f + 0x1.8p-8f) == 0x3f81);    /* above the tie */
  EXPECT(bf16_from_f32(INFINITY) == 0x7f80);
  EXPECT(bf16_from_f32(3.4028235e38f) == 0x7f80);       /* rounds past the largest finite */
  EXPECT(isnan(bf16_to_f32(bf16_from_f32(NAN))));
  EXPECT(bf16_to_f32(0xc040) == -3.0f);
  for (uint32_t h = 0; h < 0x10000; h++) {
    float v = bf16_to_f32((uint16_t)h);
    if (isnan(v)) continue;
    EXPECT_MSG(bf16_from_f32(v) == h, "bf16 0x%04x does not round trip", h);
  }
}

static void f16_values(void) {
  EXPECT(f16_to_f32(0x3c00) == 1.0f);
  EXPECT(f16_to_f32(0x7bff) == 65504.0f);
  EXPECT(f16_to_f32(0x0001) == 0x1p-24f);
  EXPECT(f16_to_f32(0xc000) == -2.0f);
  EXPECT(isinf(f16_to_f32(0x7c00)));
  EXPECT(f16_from_f32(65520.0f) == 0x7c00);
  EXPECT(f16_from_f32(1.0f + 0x1p-11f) == 0x3c00); /* tie to even */
  for (uint32_t h = 0; h < 0x10000; h++) {
    float v = f16_to_f32((uint16_t)h);
    if (isnan(v)) continue;
    EXPECT_MSG(f16_from_f32(v) == h, "f16 0x%04x does not round trip", h);
  }
}

int main(void) {
  e4m3_known_values();
  e4m3_round_trip();
  bf16_values();
  f16_values();
  EXPECT(fp8_scale_from_amax(448.0f) == 1.0f);
  EXPECT(fp8_scale_from_amax(0.0f) == 1.0f);
  return test_result("test_numeric");
}
