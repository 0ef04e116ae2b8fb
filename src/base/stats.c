#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

/* Ascending, NaN last, so that qsort sees a consistent order. */
static int compare_doubles(const void *pa, const void *pb) {
  double a = *(const double *)pa, b = *(const double *)pb;
  if (isnan(a) || isnan(b)) return (isnan(a) != 0) - (isnan(b) != 0);
  return (a > b) - (a < b);
}

double stats_quantile(const double *x, int n, double q) {
  if (n <= 0) return NAN;
  double *sorted = xmalloc((size_t)n * sizeof *sorted);
  memcpy(sorted, x, (size_t)n * sizeof *sorted);
  qsort(sorted, (size_t)n, sizeof *sorted, compare_doubles);
  double h = (n - 1) * q;
  int lo = (int)floor(h);
  double v = lo + 1 < n ? sorted[lo] + (h - lo) * (sorted[lo + 1] - sorted[lo]) : sorted[lo];
  free(sorted);
  return v;
}

double stats_median(const double *x, int n) { return stats_quantile(x, n, 0.5); }

double stats_min(const double *x, int n) {
  if (n <= 0) return NAN;
  double m = x[0];
  for (int i = 1; i < n; i++)
    if (x[i] < m) m = x[i];
  return m;
}

double stats_max(const double *x, int n) {
  if (n <= 0) return NAN;
  double m = x[0];
  for (int i = 1; i < n; i++)
    if (x[i] > m) m = x[i];
  return m;
}
