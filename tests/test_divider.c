/* fp2_divider (kernels/divider.h) against the plain division: every divisor up to 4096 on
   dividends at each multiple of it and one either side, near 2^31, and random ones. */
#include <stdint.h>

#include "divider.h"
#include "rng.h"
#include "testing.h"

static int wrong; /* quotients that differ; the first ten are printed */

static void expect_div(fp2_divider v, int n) {
  const int got = fp2_div(v, n), want = n / v.d;
  if (got == want) return;
  if (wrong++ < 10) fprintf(stderr, "%d / %d = %d, want %d\n", n, v.d, got, want);
}

int main(void) {
  const int top = 0x7fffffff;
  for (int d = 1; d <= 4096; d++) {
    const fp2_divider v = fp2_divider_of(d);
    for (int n = 0; n < 4 * d + 2; n++) expect_div(v, n);
    for (int k = 1; k < 64; k++) {
      const int64_t m = (int64_t)(top / d) - k * 3000;
      if (m <= 0) continue;
      for (int64_t n = m * d - 1; n <= m * d + 1; n++) expect_div(v, (int)n);
    }
    for (int n = top; n > top - 2 * d - 2; n--) expect_div(v, n);
    for (uint64_t i = 0; i < 256; i++) expect_div(v, (int)(rng_uniform(7, (uint64_t)d, i) * top));
  }
  const int big[] = {4097, 65535, 65536, 99991, 1 << 20, 123456789, 1 << 30, top};
  for (size_t i = 0; i < sizeof big / sizeof big[0]; i++) {
    const fp2_divider v = fp2_divider_of(big[i]);
    for (uint64_t j = 0; j < 4096; j++) expect_div(v, (int)(rng_uniform(9, (uint64_t)big[i], j) * top));
    expect_div(v, top);
    expect_div(v, big[i] - 1);
    expect_div(v, big[i]);
  }
  EXPECT_MSG(wrong == 0, "%d quotients differ from the division", wrong);
  return test_result("test_divider");
}
