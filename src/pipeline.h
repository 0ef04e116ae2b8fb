/* One forward pass — pool, select, attend — and what it produced, whichever backend ran
   it. The cpu backend is the oracle itself (reference.h); the gpu backend runs the kernels. */
#ifndef FP2_PIPELINE_H
#define FP2_PIPELINE_H

#include <stdint.h>

#include "reference.h"
#include "sample.h"

typedef struct pipeline_config {
  double density;        /* forced mask density, < 0: select by scores */
  uint64_t seed;         /* for the forced mask */
  const csr_index *index; /* this index instead of selecting or forcing one (NULL: none) */
  const unsigned char *want; /* segments to select (NULL: all); attention needs all */
  int want_score;        /* also produce Score[T,J] (small problems only) */
  int attend;            /* 1: compute output rows; 0: stop after the index */
  const row_sample *rows; /* with attend: only these rows (the others stay NaN); NULL: all */
  int keep_outputs;      /* gpu: bring back outputs, pooled vectors and operands (the index always) */
  pooled_mode pooled;    /* cpu backend: rounding of pooled vectors */
  prob_mode prob;        /* cpu backend: rounding of probabilities */
} pipeline_config;

typedef struct pipeline_result {
  float *k_mean, *v_mean;  /* [hkv, total blocks, dim] f32 means */
  float *kbar, *vbar;      /* pooled operands used by select and correction */
  double kbar_scale, vbar_scale;
  csr_index index;
  float *score;            /* [nseg, max_blocks] or NULL */
  int max_blocks;
  float *o;                /* [total_q, hq, dim] or NULL */
  double ms_quant, ms_pool, ms_select, ms_attend; /* median time of each stage */
  int on_gpu;              /* which backend produced it */
  const char *kernel;      /* what attended: "sm90" or "portable" (gpu), "oracle" (cpu) */
  int trials;              /* timed repetitions behind the medians (1 on the cpu) */
  double *t_quant, *t_pool, *t_select, *t_attend; /* [trials] per-trial times */
  float *qo, *ko, *vo;     /* gpu, FP8: the operands the kernels quantised (code values) */
  float scales[3];         /* gpu: dequantisation scales of q, k, v */
} pipeline_result;

/* The cpu backend. Never fails (out of memory exits). */
void cpu_pipeline(const problem *pb, const pipeline_config *cfg, pipeline_result *out);

/* The gpu backend: uploads bf16 Q/K/V, quantises them on the GPU for FP8, runs pool, select
   (or uploads the given or forced index) and attend once as warm-up and then `trials` times, timing
   every stage with CUDA events; outputs are poisoned (NaN) before each run. The result holds
   the medians and per-trial times, and, with cfg->attend, everything the kernels produced.
   0, or -1 with err (a CUDA or library error, or a size that does not fit). */
int gpu_pipeline(const problem *pb, const pipeline_config *cfg, int trials, pipeline_result *out, char *err);

/* The backend given (BACKEND_CPU or BACKEND_GPU; the cpu runs once whatever `trials`). */
int backend_pipeline(int backend, const problem *pb, const pipeline_config *cfg, int trials, pipeline_result *out,
                     char *err);

void pipeline_result_free(pipeline_result *r);

/* The pooled view of a result for ref_attend_row (NULL when correction is off). */
pooled_view pipeline_pooled(const pipeline_result *r);

/* Largest key-block count of any sequence. */
int problem_max_blocks(const problem *pb);

#endif
