#include "progress.h"

#include <stdio.h>

#include "wallclock.h"

#define PROGRESS_INTERVAL_MS 5000.0

void progress_begin(progress *p, const char *what, double total) {
  p->what = what;
  p->total = total;
  p->done = 0;
  p->start_ms = p->last_ms = wall_ms();
}

void progress_add(progress *p, double amount) {
  double now = 0;
  int print = 0;
#pragma omp critical(fp2_progress)
  {
    p->done += amount;
    now = wall_ms();
    if (now - p->last_ms >= PROGRESS_INTERVAL_MS) {
      p->last_ms = now;
      print = 1;
    }
    if (print && p->total > 0) {
      double frac = p->done / p->total, elapsed = (now - p->start_ms) / 1e3;
      fprintf(stderr, "fp2bench: %s %.0f%% (%.0f s, about %.0f s left)\n", p->what, 100 * frac, elapsed,
              frac > 0 ? elapsed * (1 - frac) / frac : 0.0);
    }
  }
}

void progress_end(progress *p) {
  double elapsed = (wall_ms() - p->start_ms) / 1e3;
  if (p->last_ms != p->start_ms) fprintf(stderr, "fp2bench: %s done in %.1f s\n", p->what, elapsed);
}
