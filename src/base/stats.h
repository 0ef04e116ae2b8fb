/* Summaries of repeated measurements (per-trial times): median, quantiles, min and max. */
#ifndef FP2_STATS_H
#define FP2_STATS_H

/* NaN when n <= 0. The median of an even count is the mean of the two middle values.
   NaN trials are not expected (a timer gives finite times); they sort last. */
double stats_median(const double *x, int n);
/* The q-quantile (0 <= q <= 1) with linear interpolation between order statistics
   (Hyndman and Fan's type 7, numpy's default). */
double stats_quantile(const double *x, int n, double q);
double stats_min(const double *x, int n);
double stats_max(const double *x, int n);

#endif
