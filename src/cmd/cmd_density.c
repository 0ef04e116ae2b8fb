/* fp2bench density: the density the selection gives per length (overall and per KV head)
   for a source and alpha, with the FLOP model of the three stages (paper Eq. 19-20), and the
   calibration view of synth:llm: mass recall, error and sink-dominated heads beside the
   targets the generator is calibrated to (synth.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "commands.h"
#include "density.h"
#include "error.h"
#include "experiment.h"
#include "quality.h"
#include "report.h"
#include "result_rows.h"
#include "text_format.h"

typedef struct density_args {
  fp2_opts o;
  int tiles, rows;
} density_args;

/* What one length measured beside the index's density. */
typedef struct density_row {
  double needle;
  int needle_rows;
  quality q;        /* the oracle's selection on the sampled rows */
  int sink_heads;   /* KV heads whose sampled rows put most of their mass on the sink blocks */
  synth_target target;
} density_row;

/* Attention-mass recall and error of the oracle's selection on the sampled rows: what the
   data gives at this alpha, whichever backend ran the pass (a GPU index differs from it only
   by near-threshold flips). Also counts the sink-dominated KV heads. */
static void measure_rows(const problem *pb, const fp2_opts *o, int max_rows, density_row *out) {
  row_sample rows;
  sample_rows(pb, max_rows, (uint64_t)o->input.seed, &rows);
  unsigned char *want = row_sample_segments(pb, &rows);
  pipeline_config cfg = {.density = o->input.density, .seed = (uint64_t)o->input.seed, .want = want,
                         .pooled = POOLED_EXACT, .prob = PROB_EXACT};
  pipeline_result r;
  cpu_pipeline(pb, &cfg, &r); /* the index; the sampled rows alone are attended below */
  float *row_outputs = xmalloc(sizeof(float) * (size_t)(rows.n ? rows.n : 1) * (size_t)pb->p.dim);
  cpu_attend_rows(pb, &r, PROB_EXACT, &rows, row_outputs);
  full_reference ref;
  full_reference_compute(pb, &rows, &ref);
  quality_measure_rows(pb, &r.index, &rows, &ref, row_outputs, &out->q);
  free(row_outputs);
  double *sink = xcalloc((size_t)pb->p.hkv, sizeof(double));
  int *count = xcalloc((size_t)pb->p.hkv, sizeof(int));
  for (int k = 0; k < rows.n; k++) {
    int h = rows.head[k] / fp2_group(&pb->p);
    for (int j = 0; j < pb->p.sink && j < ref.max_blocks; j++) sink[h] += ref.block_mass[(size_t)k * ref.max_blocks + j];
    count[h]++;
  }
  out->sink_heads = 0;
  for (int h = 0; h < pb->p.hkv; h++) out->sink_heads += count[h] > 0 && sink[h] > 0.5 * count[h];
  free(sink);
  free(count);
  full_reference_free(&ref);
  pipeline_result_free(&r);
  free(want);
  row_sample_free(&rows);
}

static void print_header(FILE *f) {
  fprintf(f, "%8s %9s %7s %17s %11s %7s %9s %6s %6s %9s %9s %9s %8s %9s\n", "len", "density", "target",
          "KV heads min..max", "blocks/seg", "mass", "target", "err", "sinks", "index", "corr", "aux", "needles",
          "tiles");
}

static void print_row(FILE *f, const problem *pb, const csr_index *idx, const density_stats *d, const density_row *m) {
  double lo = 1, hi = 0;
  for (int h = 0; h < d->hkv; h++) {
    double x = density_of_head(d, h);
    if (x < lo) lo = x;
    if (x > hi) hi = x;
  }
  char needles[16], target[16], recall[24] = "-", sinks[16];
  if (!isnan(m->target.recall_min))
    snprintf(recall, sizeof recall, "%.0f-%.0f%%", 100 * m->target.recall_min, 100 * m->target.recall_max);
  snprintf(sinks, sizeof sinks, "%d/%d", m->sink_heads, d->hkv);
  double sparse = flops_sparse(d);
  fprintf(f, "%8d %8.2f%% %7s %8.1f..%5.1f%% %11.1f %6.1f%% %9s %6.3f %6s %8.2f%% %8.2f%% %8.2f%% %8s %4d/%-4d\n",
          pb->lq[0], 100 * density_overall(d), format_percent(target, sizeof target, m->target.density, 0), 100 * lo, 100 * hi,
          (double)idx->nnz / d->segments_evaluated, 100 * m->q.mass_recall, recall, m->q.err, sinks,
          100 * flops_index(d) / sparse, 100 * flops_correction(d) / sparse, 100 * flops_aux_ratio(d),
          format_percent(needles, sizeof needles, m->needle_rows ? m->needle : NAN, 0), d->segments_evaluated, d->segments);
}

static void add_row(report *rep, const problem *pb, const csr_index *idx, const density_stats *d, const density_row *m) {
  cJSON *row = report_add_row(rep);
  report_put_number(row, "len", pb->lq[0]);
  rows_put_density(row, d);
  report_put_number(row, "blocks_per_segment", (double)idx->nnz / d->segments_evaluated);
  report_put_number(row, "segments_evaluated", d->segments_evaluated);
  report_put_number(row, "segments", d->segments);
  rows_put_flops(row, d);
  rows_put_quality(row, &m->q);
  report_put_number(row, "sink_dominated_kv_heads", m->sink_heads);
  if (!isnan(m->target.density)) report_put_number(row, "target_density", m->target.density);
  if (!isnan(m->target.recall_min)) {
    report_put_number(row, "target_mass_recall_min", m->target.recall_min);
    report_put_number(row, "target_mass_recall_max", m->target.recall_max);
  }
  rows_put_needles(row, m->needle, m->needle_rows);
}

static int check_args(void *args, const data_source *src) {
  const density_args *a = args;
  (void)src;
  if (a->tiles <= 0 || a->rows <= 0) {
    fail("density: --tiles and --rows must be positive (got %d and %d)", a->tiles, a->rows);
    return EXIT_USAGE;
  }
  return 0;
}

/* One length. */
static int row(void *args, const experiment_run *x, problem *pb) {
  const density_args *a = args;
  const fp2_opts *o = x->o;
  const int gpu = x->backend == BACKEND_GPU;
  /* The gpu selects every tile; the cpu oracle scores a sample of them at long lengths. */
  unsigned char *want = gpu ? NULL : sample_tiles(pb, a->tiles, (uint64_t)o->input.seed);
  pipeline_config cfg = {.density = o->input.density, .seed = (uint64_t)o->input.seed, .want = want,
                         .pooled = POOLED_EXACT, .prob = PROB_EXACT};
  pipeline_result r;
  char err[ERR_LEN];
  if (backend_pipeline(x->backend, pb, &cfg, 1, &r, err) != 0) {
    fail("density: gpu: %s", err);
    free(want);
    return EXIT_RUNTIME;
  }
  density_stats d;
  density_measure(pb, &r.index, pb->p.correction, &d);
  /* Needle recall over the question tiles, which a tile sample may have missed. */
  density_row m = {.needle = NAN};
  unsigned char *question = gpu ? NULL : needle_segments(pb);
  if (gpu || !question) {
    m.needle = needle_recall(pb, &r.index, &m.needle_rows);
  } else {
    csr_index qidx;
    ref_select(pb, r.kbar, r.kbar_scale, question, &qidx, NULL, 0);
    m.needle = needle_recall(pb, &qidx, &m.needle_rows);
    csr_free(&qidx);
  }
  free(question);
  measure_rows(pb, o, a->rows, &m);
  const data_source *src = x->src;
  m.target = src->is_file || src->synth == SYNTH_RANDOM ? (synth_target){NAN, NAN, NAN}
                                                        : synth_llm_target(&pb->p, pb->lq[0]);
  print_row(x->txt, pb, &r.index, &d, &m);
  fflush(x->txt);
  if (x->rep) add_row(x->rep, pb, &r.index, &d, &m);
  density_free(&d);
  pipeline_result_free(&r);
  free(want);
  return EXIT_OK;
}

static void begin(void *args, const experiment_run *x) {
  (void)args;
  print_header(x->txt);
}

static const experiment_cmd density_cmd = {
    .name = "density",
    .usage = "density [options]",
    .summary = "Density of the selected blocks per length (computed pairs over causal pairs),\n"
               "overall and per KV head, and the FLOPs of the index, sparse and correction stages;\n"
               "the oracle's attention-mass recall and relative L2 error on --rows sampled rows and\n"
               "the KV heads whose sink blocks hold most of the mass; beside them, the statistics\n"
               "synth:llm is calibrated to (at the default shape and selection).",
    .check = check_args,
    .cpu_small = 1,
    .progress = PROGRESS_LEN,
    .begin = begin,
    .row = row,
};

int cmd_density(int argc, char **argv) {
  density_args a = {.tiles = 96, .rows = 256};
  opts_defaults(&a.o);
  a.o.shape.lens.n = 6;
  for (int i = 0; i < 6; i++) a.o.shape.lens.v[i] = (int64_t)4096 << i;
  const opt_spec specs[] = {
      OPTS_EXPERIMENT(&a.o),
      {"--tiles", OPT_INT, &a.tiles, "N", "cpu: query tiles scored per KV head (all when fewer)"},
      {"--rows", OPT_INT, &a.rows, "N", "query rows sampled for mass recall and error"},
  };
  return experiment_main(&density_cmd, argc, argv, specs, NOPTS(specs), &a.o, &a, NULL);
}
