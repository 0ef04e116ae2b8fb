/* Noise-aware comparison of two results of the same benchmark (fp2bench regress): every
   timed quantity of every row, baseline against candidate, with a verdict.

   For a timing with per-trial times b (baseline) and c (candidate):
     change = median(c) / median(b) - 1
     noise  = the larger relative interquartile range, IQR / median, of b and c
   verdict:
     UNCLEAR  fewer than REGRESS_MIN_TRIALS trials on either side
     SAME     |change| <= max(floor, noise), or the medians differ by at most
              REGRESS_ABS_FLOOR_MS (a kernel of a few microseconds moves by more than 3 % with
              the event timer's resolution and the launch's jitter alone)
     SLOWER   change beyond both, and even the candidate's best trial is slower than the
              baseline's upper quartile (min c > Q3 b)
     FASTER   the mirror image (max c < Q1 b)
     UNCLEAR  beyond floor and noise, but the trials overlap */
#ifndef FP2_REGRESS_H
#define FP2_REGRESS_H

#include <cjson/cJSON.h>

#define REGRESS_MIN_TRIALS 5
#define REGRESS_ABS_FLOOR_MS 0.002 /* timings are in milliseconds */

typedef enum { VERDICT_SAME, VERDICT_FASTER, VERDICT_SLOWER, VERDICT_UNCLEAR } verdict;

const char *verdict_name(verdict v);

typedef struct timing_diff {
  double base_median, cand_median;
  double change, noise;
  int base_trials, cand_trials;
  verdict v;
} timing_diff;

/* The verdict on two sets of per-trial times. */
timing_diff regress_timing(const double *base, int nb, const double *cand, int nc, double floor);

/* Whether two result documents can be compared: the same experiment, GPU (name and SM
   count), driver, synthetic data generator (config.synth_version, 1 when absent) and config
   (CPU model when neither ran on a GPU). 0, or -1 with why. */
int regress_compatible(const cJSON *base, const cJSON *cand, char *err);

/* One compared timing of the documents. */
typedef struct regress_item {
  char row[160];  /* the row's identity, e.g. "len=32768 dtype=bf16" */
  char key[64];   /* the timing's key, e.g. "attend" */
  timing_diff d;
} regress_item;

/* Compares every timing (an object with "trials_ms") of every baseline row with the
   candidate row of the same identity. *items is allocated (caller frees). Returns the number
   of items, or -1 with err when a row or a timing of the baseline has no counterpart. */
int regress_compare(const cJSON *base, const cJSON *cand, double floor, regress_item **items, char *err);

#endif
