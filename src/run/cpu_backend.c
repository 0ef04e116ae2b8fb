/* The cpu backend: the oracle run stage by stage over a whole problem, timed. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_backend.h"
#include "error.h"
#include "progress.h"
#include "run_choices.h"
#include "wallclock.h"

/* Where output row (b, i, head) goes in o [total_q, hq, dim]. */
static float *output_row(const problem *pb, float *o, int b, int i, int head) {
  return o + ((size_t)(pb->cu_q[b] + i) * pb->p.hq + head) * pb->p.dim;
}

/* One output row from the oracle into dst [dim]. */
static void attend_row(const problem *pb, const pipeline_result *r, prob_mode mode, int b, int i, int head,
                       double *scratch, float *dst) {
  const fp2_params *p = &pb->p;
  const int dim = p->dim;
  const pooled_view pooled = pipeline_pooled(r);
  int seg = problem_row_segment(pb, b, i, head);
  const int *blocks = r->index.indices + r->index.offsets[seg];
  int n = r->index.offsets[seg + 1] - r->index.offsets[seg];
  double lse;
  ref_attend_row(pb, problem_operands(pb), b, i, head, blocks, n, p->correction ? &pooled : NULL, mode, scratch, &lse);
  for (int d = 0; d < dim; d++) dst[d] = (float)scratch[d];
}

static void attend_all(const problem *pb, const pipeline_result *r, prob_mode mode, float *o) {
  progress pr;
  progress_begin(&pr, "attend", (double)pb->total_q);
  for (int b = 0; b < pb->batch; b++) {
#pragma omp parallel
    {
      double *row = xmalloc(sizeof(double) * (size_t)pb->p.dim);
#pragma omp for schedule(dynamic, 16)
      for (int i = 0; i < pb->lq[b]; i++) {
        for (int head = 0; head < pb->p.hq; head++) attend_row(pb, r, mode, b, i, head, row, output_row(pb, o, b, i, head));
        progress_add(&pr, 1);
      }
      free(row);
    }
  }
  progress_end(&pr);
}

/* The sampled rows into o [total_q, hq, dim] (o_rows 0) or into o [rows->n, dim] (o_rows 1). */
static void attend_sampled(const problem *pb, const pipeline_result *r, prob_mode mode, const row_sample *rows,
                           float *o, int o_rows) {
#pragma omp parallel
  {
    double *row = xmalloc(sizeof(double) * (size_t)pb->p.dim);
#pragma omp for schedule(dynamic, 4)
    for (int k = 0; k < rows->n; k++) {
      const int b = rows->b[k], i = rows->i[k], head = rows->head[k];
      attend_row(pb, r, mode, b, i, head, row, o_rows ? o + (size_t)k * pb->p.dim : output_row(pb, o, b, i, head));
    }
    free(row);
  }
}

void cpu_attend_rows(const problem *pb, const pipeline_result *r, prob_mode mode, const row_sample *rows,
                     float *o_rows) {
  attend_sampled(pb, r, mode, rows, o_rows, 1);
}

void cpu_pipeline(const problem *pb, const pipeline_config *cfg, pipeline_result *out) {
  const fp2_params *p = &pb->p;
  memset(out, 0, sizeof *out);
  size_t npooled = (size_t)p->hkv * (size_t)pb->cu_blocks[pb->batch] * (size_t)p->dim;
  double t0 = wall_ms();
  out->k_mean = xmalloc(sizeof(float) * (npooled > 0 ? npooled : 1));
  out->v_mean = xmalloc(sizeof(float) * (npooled > 0 ? npooled : 1));
  out->kbar = xmalloc(sizeof(float) * (npooled > 0 ? npooled : 1));
  out->vbar = xmalloc(sizeof(float) * (npooled > 0 ? npooled : 1));
  ref_pool(pb, out->k_mean, out->v_mean);
  out->kbar_scale = ref_pooled_operands(p->dtype, cfg->pooled, pb->sk, out->k_mean, out->kbar, npooled);
  out->vbar_scale = ref_pooled_operands(p->dtype, cfg->pooled, pb->sv, out->v_mean, out->vbar, npooled);
  double t1 = wall_ms();
  out->max_blocks = problem_max_blocks(pb);
  if (cfg->index) {
    csr_copy(cfg->index, &out->index);
  } else if (cfg->density >= 0) {
    ref_forced_index(pb, cfg->density, cfg->seed, &out->index);
  } else {
    if (cfg->want_score)
      out->score = xcalloc((size_t)problem_num_segments(pb) * (size_t)out->max_blocks + 1, sizeof(float));
    ref_select(pb, out->kbar, out->kbar_scale, cfg->want, &out->index, out->score, out->max_blocks);
  }
  double t2 = wall_ms();
  if (cfg->attend) {
    size_t n = (size_t)pb->total_q * (size_t)p->hq * (size_t)p->dim;
    out->output = xmalloc(sizeof(float) * n);
    if (cfg->rows) {
      for (size_t i = 0; i < n; i++) out->output[i] = NAN;
      attend_sampled(pb, out, cfg->prob, cfg->rows, out->output, 0);
    } else {
      attend_all(pb, out, cfg->prob, out->output);
    }
  }
  double t3 = wall_ms();
  out->kernel = KERNEL_NAME_ORACLE;
  out->times.trials = 1;
  out->times.t_quant = xcalloc(1, sizeof(double));
  out->times.t_pool = xmalloc(sizeof(double));
  out->times.t_select = xmalloc(sizeof(double));
  out->times.t_attend = xmalloc(sizeof(double));
  out->times.ms_pool = out->times.t_pool[0] = t1 - t0;
  out->times.ms_select = out->times.t_select[0] = t2 - t1;
  out->times.ms_attend = out->times.t_attend[0] = t3 - t2;
}
