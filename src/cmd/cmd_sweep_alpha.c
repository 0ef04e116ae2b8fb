/* fp2bench sweep-alpha: the paper's Tab. 9 at operator level. For each threshold alpha, on
   one input per dtype: the selected density, the sparse pass's time, its relative L2 error
   against full attention with and without mean correction, the attention-mass recall, and
   the needle recall of the same alpha on synth:niah. The paper reports RULER scores of a
   model; these are the operator-level quantities behind them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "density.h"
#include "error.h"
#include "experiment.h"
#include "quality.h"
#include "report.h"
#include "result_rows.h"
#include "text_format.h"

typedef struct sweep_args {
  fp2_opts o;
  double_list alphas;
  int dtypes; /* an fp2_dtype or DTYPES_BOTH */
  int rows;
} sweep_args;

typedef struct sweep_point {
  double density, needle;
  int needle_rows;
  quality with, without;
  pipeline_result r; /* the corrected pass: times */
} sweep_point;

/* The sparse pass at the problem's alpha, with and without correction, and its quality. */
static int measure(const experiment_run *x, const problem *pb, const row_sample *rows, const full_reference *ref,
                   sweep_point *out, char *err) {
  pipeline_config cfg = {.density = -1, .seed = (uint64_t)x->o->input.seed, .attend = 1, .rows = rows,
                         .keep_outputs = 1, .pooled = POOLED_EXACT, .prob = PROB_EXACT};
  pipeline_result off;
  if (backend_pipeline_correction(x->backend, pb, 1, &cfg, x->o->run.trials, &out->r, err) != 0) return -1;
  if (backend_pipeline_correction(x->backend, pb, 0, &cfg, 1, &off, err) != 0) {
    pipeline_result_free(&out->r);
    return -1;
  }
  density_stats d;
  density_measure(pb, &out->r.index, 1, &d);
  out->density = density_overall(&d);
  density_free(&d);
  quality_measure(pb, &out->r.index, rows, ref, out->r.output, &out->with);
  quality_measure(pb, &off.index, rows, ref, off.output, &out->without);
  pipeline_result_free(&off);
  return 0;
}

/* Needle recall of the index alone on synth:niah (same shape, seed and alpha). */
static int needles(const experiment_run *x, problem *niah, sweep_point *out, char *err) {
  pipeline_config cfg = {.density = -1, .seed = (uint64_t)x->o->input.seed, .pooled = POOLED_EXACT};
  pipeline_result r;
  if (backend_pipeline(x->backend, niah, &cfg, 1, &r, err) != 0) return -1;
  out->needle = needle_recall(niah, &r.index, &out->needle_rows);
  pipeline_result_free(&r);
  return 0;
}

static void print_point(FILE *f, fp2_dtype dt, double alpha, const sweep_point *s) {
  char needle[16];
  format_percent(needle, sizeof needle, s->needle_rows ? s->needle : NAN, 0);
  fprintf(f, "%-5s %7.4f %8.2f%% %10.3f %12.4f %12.4f %9.2f%% %8s\n", dtype_name(dt), alpha,
          100 * s->density, stage_total_ms(&s->r.times), s->with.err,
          s->without.err, 100 * s->with.mass_recall, needle);
}

static void add_point(report *rep, int64_t len, fp2_dtype dt, double alpha, const sweep_point *s) {
  cJSON *row = report_add_row(rep);
  report_put_number(row, "len", (double)len);
  report_put_string(row, "dtype", dtype_name(dt));
  report_put_number(row, "alpha", alpha);
  report_put_string(row, "kernel", s->r.kernel);
  report_put_number(row, "density", s->density);
  rows_put_stage_times(row, &s->r);
  report_put_number(row, "rel_error_corrected", s->with.err);
  report_put_number(row, "rel_error_uncorrected", s->without.err);
  report_put_number(row, "mass_recall", s->with.mass_recall);
  report_put_number(row, "quality_rows", s->with.rows);
  rows_put_needles(row, s->needle, s->needle_rows);
}

/* One dtype: every alpha on its problem and on synth:niah of the same shape. */
static int row(void *args, const experiment_run *x, problem *pb) {
  const sweep_args *a = args;
  const fp2_opts *o = x->o;
  const fp2_dtype dt = (fp2_dtype)o->shape.dtype;
  const int64_t len = pb->lq[0];
  problem niah;
  const data_source niah_src = {.synth = SYNTH_NIAH};
  int rc = experiment_problem("sweep-alpha", &niah_src, o, len, x->backend == BACKEND_GPU, &niah);
  if (rc) return rc;
  row_sample rows;
  sample_rows(pb, a->rows, (uint64_t)o->input.seed, &rows);
  full_reference ref; /* the same for every alpha */
  full_reference_compute(pb, &rows, &ref);
  char err[ERR_LEN];
  for (int i = 0; i < a->alphas.n && rc == EXIT_OK; i++) {
    pb->p.alpha = niah.p.alpha = (float)a->alphas.v[i];
    fprintf(stderr, "fp2bench: sweep-alpha: %s, alpha %g\n", dtype_name(dt), a->alphas.v[i]);
    sweep_point s;
    if (measure(x, pb, &rows, &ref, &s, err) != 0 || needles(x, &niah, &s, err) != 0) {
      fail("sweep-alpha: %s", err);
      rc = EXIT_RUNTIME;
      break;
    }
    print_point(x->txt, dt, a->alphas.v[i], &s);
    fflush(x->txt);
    if (x->rep) add_point(x->rep, len, dt, a->alphas.v[i], &s);
    pipeline_result_free(&s.r);
  }
  full_reference_free(&ref);
  row_sample_free(&rows);
  problem_free(&niah);
  return rc;
}

static void begin(void *args, const experiment_run *x) {
  const sweep_args *a = args;
  experiment_config_set(x->rep, "alpha", cJSON_CreateDoubleArray(a->alphas.v, a->alphas.n)); /* what it swept */
  experiment_config_corrections(x->rep);
  fprintf(x->txt, "%-5s %7s %9s %10s %12s %12s %10s %8s\n", "dtype", "alpha", "density", "total ms", "err (corr)",
          "err (none)", "mass", "needles");
}

static int in_unit_range(double v) { return v >= 0 && v <= 1; }

static int check_args(void *args, const data_source *src) {
  const sweep_args *a = args;
  (void)src;
  if (experiment_check_list("sweep-alpha", "--alpha", &a->alphas, in_unit_range, "[0,1]")) return EXIT_USAGE;
  if (a->rows < 1) {
    fail("sweep-alpha: --rows: %d is not positive", a->rows);
    return EXIT_USAGE;
  }
  return 0;
}
static const experiment_cmd sweep_cmd = {
    .name = "sweep-alpha",
    .usage = "sweep-alpha [options]",
    .summary = "Sweep the threshold alpha (paper Tab. 9): density, time, relative L2 error against\n"
               "full attention with and without mean correction, attention-mass recall, and\n"
               "needle recall on synth:niah, for each alpha and dtype.",
    .check = check_args,
    .one_len = 1,
    .cpu_small = 1,
    .begin = begin,
    .row = row,
};

int cmd_sweep_alpha(int argc, char **argv) {
  sweep_args a = {.alphas = {5, {0.2, 0.1, 0.05, 0.025, 0.0125}}, .dtypes = DTYPES_BOTH, .rows = 256};
  opts_defaults(&a.o);
  a.o.shape.lens.v[0] = 65536;
  const opt_spec specs[] = {
      OPTS_SIZES(&a.o),
      OPT_DTYPES(&a.dtypes),
      {"--alpha", OPT_DOUBLE_LIST, &a.alphas, "A[,A...]", "thresholds to sweep, each in [0,1]"},
      OPTS_BLOCKS(&a.o),
      OPTS_DATA(&a.o),
      OPTS_RUN(&a.o),
      {"--rows", OPT_INT, &a.rows, "N", "query rows sampled for the quality metrics"},
      OPT_TRIALS(&a.o),
  };
  return experiment_main(&sweep_cmd, argc, argv, specs, NOPTS(specs), &a.o, &a, &a.dtypes);
}
