/* Internal: division by a divisor known only at run time as one multiply-high, one addition
   and one shift (the round-up method of Granlund and Montgomery, 1994, with a 33-bit
   multiplier 2^32 + mul), exact for every dividend in [0, 2^31). The select kernels divide
   packed query rows by the group size g in their prologue: a plain division there costs an
   I2F, a MUFU.RCP and an F2I, which queue behind the other CTAs' exponentials on the SM's
   special-function unit (kernels/NOTES.md, select v9). Plain C with FP2_HD, so that the
   host makes a divider and a CPU test holds it to the division. */
#ifndef FP2_DIVIDER_H
#define FP2_DIVIDER_H

#include "fp2.h"

typedef struct fp2_divider {
  int d;              /* the divisor, >= 1 */
  unsigned mul, shr;  /* n / d = (n + umulhi(n, mul)) >> shr */
} fp2_divider;

/* shr = ceil(log2 d), mul = floor(2^32 (2^shr - d) / d) + 1. */
FP2_HD fp2_divider fp2_divider_of(int d) {
  fp2_divider v;
  unsigned shr = 0;
  while ((1ull << shr) < (unsigned long long)d) shr++;
  v.d = d;
  v.shr = shr;
  v.mul = (unsigned)((((1ull << shr) - (unsigned long long)d) << 32) / (unsigned long long)d + 1);
  return v;
}

/* n / v.d for 0 <= n < 2^31 (the sum below stays under 2^32). */
FP2_HD int fp2_div(fp2_divider v, int n) {
#ifdef __CUDA_ARCH__
  const unsigned hi = __umulhi((unsigned)n, v.mul);
#else
  const unsigned hi = (unsigned)(((unsigned long long)(unsigned)n * v.mul) >> 32);
#endif
  return (int)(((unsigned)n + hi) >> v.shr);
}

#endif
