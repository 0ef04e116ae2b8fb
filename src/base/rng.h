/* Counter-based random numbers: value i of stream s under a seed is a pure function of
   (seed, s, i), so tensors can be generated in parallel, in any order, and any single
   element regenerated. */
#ifndef FP2_RNG_H
#define FP2_RNG_H

#include <math.h>
#include <stdint.h>

static inline uint64_t rng_mix(uint64_t x) { /* splitmix64's finalizer */
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

static inline uint64_t rng_bits(uint64_t seed, uint64_t stream, uint64_t i) {
  return rng_mix(rng_mix(seed ^ rng_mix(stream)) + i);
}

/* Uniform in (0, 1). */
static inline double rng_uniform(uint64_t seed, uint64_t stream, uint64_t i) {
  return ((double)(rng_bits(seed, stream, i) >> 11) + 0.5) * 0x1.0p-53;
}

/* Standard normal (Box-Muller on two uniforms of the stream). */
static inline double rng_normal(uint64_t seed, uint64_t stream, uint64_t i) {
  double u1 = rng_uniform(seed, stream, 2 * i), u2 = rng_uniform(seed, stream, 2 * i + 1);
  return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

#endif
