/* Host wall time in milliseconds on a monotonic clock. */
#ifndef FP2_WALLCLOCK_H
#define FP2_WALLCLOCK_H

#include <time.h>

static inline double wall_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

#endif
