/* Comparison of a backend's forward pass with the oracle (fp2bench check): the block index
   segment by segment, with near-threshold flips told apart from real mismatches, and output
   rows against the fp64 oracle on the same operands, index and pooled vectors, under FA3's
   rule: error <= 2 x (error of the oracle emulating the kernels' rounding) + a floor. */
#ifndef FP2_CHECK_H
#define FP2_CHECK_H

#include "reference.h"
#include "sample.h"

typedef struct index_diff {
  int64_t blocks;      /* blocks in the reference index (evaluated segments) */
  int64_t flips;       /* differing blocks within tol of the threshold */
  int64_t mismatches;  /* differing blocks farther from it */
  double worst_flip;   /* largest relative distance among the flips */
} index_diff;

/* Compares `got` with the index the oracle selects from the same pooled key operands
   (kbar, kbar_scale). tol: relative distance |E - thr| / thr that still counts as a flip.
   Prints up to `show` mismatches to stderr. */
void check_index(const problem *pb, const float *kbar, double kbar_scale, const csr_index *got, double tol,
                 int show, index_diff *out);

/* The flip tolerance of the gpu kernels' index. BF16: 1e-4, as the scores are exact products
   summed in f32 and the energies sums of ex2.approx. FP8: 5e-3, as the sm90 select scores
   with e4m3 wgmma, whose accumulator keeps fewer bits than f32 (about 14, as DeepSeek-V3
   reports for FP8 GEMMs on Hopper; DeepGEMM promotes to f32 every 128 of k, our whole
   reduction): energies move by up to about 1e-3 of themselves on the check grid (1.3e-3,
   the largest seen on the H200, at 64K). */
double gpu_flip_tolerance(fp2_dtype dtype);

typedef struct output_diff {
  int rows;
  double err;        /* max |o - o_exact| over the compared rows */
  double err_emul;   /* max |o_emulated - o_exact| */
  double bound;      /* 2 err_emul + floor */
  double rel_l2;     /* ||o - o_exact|| / ||o_exact|| */
  int bad_rows;      /* rows over the bound, or with a NaN where the oracle has none */
} output_diff;

/* Compares output rows `o` ([total_q, hq, dim]; only the sampled rows are read) with the
   oracle given the same index and pooled vectors (the backend's; used when correction is on).
   Prints up to `show` bad rows. */
void check_outputs(const problem *pb, const csr_index *idx, const pooled_view *pooled, const row_sample *rows,
                   const float *o, int show, output_diff *out);

/* Quantised operands against the host's (problem_prepare's e4m3 codes): how many of the n
   values differ bit for bit; *first (when not NULL) the lowest such index. */
int64_t check_codes(const float *got, const float *want, size_t n, size_t *first);

/* Pooled means k_mean, v_mean ([hkv, total blocks, dim]) against ref_pool's: the largest
   difference relative to the largest of ref_pool's means. They agree within CHECK_POOLED_TOL. */
double check_pooled(const problem *pb, const float *k_mean, const float *v_mean);
#define CHECK_POOLED_TOL 1e-5 /* f32 sums of at most a block of values */

#endif
