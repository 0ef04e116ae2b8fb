/* What one forward pass — pool, select, attend — is asked to do and what it produced,
   whichever backend ran it (cpu_backend.h, gpu_backend.h; pipeline.h chooses). */
#ifndef FP2_PIPELINE_RESULT_H
#define FP2_PIPELINE_RESULT_H

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
  const fp2_pooled_cache *pooled_cache; /* gpu: means kept across the chunks of a prompt
                                           (gpu_pooled_cache_create); NULL: none */
  pooled_mode pooled;    /* cpu backend: rounding of pooled vectors */
  prob_mode prob;        /* cpu backend: rounding of probabilities */
  int index_whole;       /* gpu: also time the index stage as one range, in as many passes
                            again that stop after the index, with no event between its kernels
                            (stage_times.ms_index_whole) */
} pipeline_config;

/* What each stage of a pass took. */
typedef struct stage_times {
  int trials;              /* timed repetitions behind the medians (1 on the cpu) */
  double ms_quant, ms_pool, ms_select, ms_attend; /* median time of each stage */
  double *t_quant, *t_pool, *t_select, *t_attend; /* [trials] per-trial times */
  double ms_submit, *t_submit; /* gpu: the host's time in fp2_forward, which only enqueues the
                                  pass (a pass shorter than it waits on the host); cpu: 0, NULL */
  double ms_index_whole, *t_index_whole; /* with pipeline_config.index_whole on the gpu: the index
                                            stage as one range; else 0, NULL */
} stage_times;

/* The index stage (quantise + pool + select) and the whole pass, from the medians. */
static inline double stage_index_ms(const stage_times *t) { return t->ms_quant + t->ms_pool + t->ms_select; }
static inline double stage_total_ms(const stage_times *t) { return stage_index_ms(t) + t->ms_attend; }

/* The index stage timed as one range where the pass timed it so, else the sum of its stages. */
static inline double stage_index_whole_ms(const stage_times *t) {
  return t->t_index_whole ? t->ms_index_whole : stage_index_ms(t);
}

/* The gpu's operands as its kernels computed on them, for comparing with the host's. */
typedef struct gpu_operands {
  float *q_op, *k_op, *v_op; /* FP8, with keep_outputs: the e4m3 code values the kernels quantised */
  float scales[3];           /* dequantisation scales of q, k, v (1 for BF16) */
} gpu_operands;

/* What a pass produced, which kernel produced it, and how long each stage took. */
typedef struct pipeline_result {
  float *k_mean, *v_mean;  /* [hkv, total blocks, dim] f32 means */
  float *kbar, *vbar;      /* pooled operands used by select and correction */
  double kbar_scale, vbar_scale;
  csr_index index;
  float *score;            /* [nseg, max_blocks] or NULL */
  int max_blocks;
  float *output;           /* [total_q, hq, dim] attention output, or NULL */
  gpu_operands gpu;        /* gpu backend only (zero on the cpu) */
  const char *kernel;      /* what attended, as run_choices.h spells it (KERNEL_NAME_*) */
  stage_times times;
} pipeline_result;

void pipeline_result_free(pipeline_result *r);

/* The pooled view of a result for ref_attend_row (NULL when correction is off). */
pooled_view pipeline_pooled(const pipeline_result *r);

#endif
