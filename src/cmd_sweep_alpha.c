/* fp2bench sweep-alpha: the paper's Tab. 9 at operator level. For each threshold alpha, on
   one input per dtype: the selected density, the sparse pass's time, its relative L2 error
   against full attention with and without mean correction, the attention-mass recall, and
   the needle recall of the same alpha on synth:niah. The paper reports RULER scores of a
   model; these are the operator-level quantities behind them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "density.h"
#include "error.h"
#include "experiment.h"
#include "quality.h"
#include "report.h"

typedef struct sweep_args {
  fp2_opts o;
  double_list alphas;
  int dtypes; /* an fp2_dtype or DTYPES_BOTH */
  int rows, backend;
} sweep_args;

typedef struct sweep_point {
  double density, needle;
  int needle_rows;
  quality with, without;
  pipeline_result r; /* the corrected pass: times */
} sweep_point;

/* The sparse pass at the problem's alpha, with and without correction, and its quality. */
static int measure(const sweep_args *a, problem *pb, const row_sample *rows, const full_reference *ref,
                   sweep_point *out, char *err) {
  pipeline_config cfg = {.density = -1, .seed = (uint64_t)a->o.seed, .attend = 1, .rows = rows, .keep_outputs = 1,
                         .pooled = POOLED_EXACT, .prob = PROB_EXACT};
  pipeline_result off;
  pb->p.correction = 1;
  if (backend_pipeline(a->backend, pb, &cfg, a->o.trials, &out->r, err) != 0) return -1;
  pb->p.correction = 0;
  int rc = backend_pipeline(a->backend, pb, &cfg, 1, &off, err);
  pb->p.correction = 1;
  if (rc != 0) {
    pipeline_result_free(&out->r);
    return -1;
  }
  density_stats d;
  density_measure(pb, &out->r.index, 1, &d);
  out->density = density_overall(&d);
  density_free(&d);
  quality_measure(pb, &out->r.index, rows, ref, out->r.o, &out->with);
  quality_measure(pb, &off.index, rows, ref, off.o, &out->without);
  pipeline_result_free(&off);
  return 0;
}

/* Needle recall of the index alone on synth:niah (same shape, seed and alpha). */
static int needles(const sweep_args *a, problem *niah, sweep_point *out, char *err) {
  pipeline_config cfg = {.density = -1, .seed = (uint64_t)a->o.seed, .pooled = POOLED_EXACT};
  pipeline_result r;
  if (backend_pipeline(a->backend, niah, &cfg, 1, &r, err) != 0) return -1;
  out->needle = needle_recall(niah, &r.index, &out->needle_rows);
  pipeline_result_free(&r);
  return 0;
}

static void print_point(FILE *f, fp2_dtype dt, double alpha, const sweep_point *s) {
  char needle[16] = "-";
  if (s->needle_rows) snprintf(needle, sizeof needle, "%.1f%%", 100 * s->needle);
  fprintf(f, "%-5s %7.4f %8.2f%% %10.3f %12.4f %12.4f %9.2f%% %8s\n", dtype_name(dt), alpha,
          100 * s->density, s->r.ms_quant + s->r.ms_pool + s->r.ms_select + s->r.ms_attend, s->with.err,
          s->without.err, 100 * s->with.mass_recall, needle);
}

static void add_point(report *rep, int64_t len, fp2_dtype dt, double alpha, const sweep_point *s) {
  cJSON *row = report_add_row(rep);
  report_put_number(row, "len", (double)len);
  report_put_string(row, "dtype", dtype_name(dt));
  report_put_number(row, "alpha", alpha);
  report_put_string(row, "kernel", s->r.kernel);
  report_put_number(row, "density", s->density);
  report_add_times(row, "quantise", s->r.t_quant, s->r.trials);
  report_add_times(row, "pool", s->r.t_pool, s->r.trials);
  report_add_times(row, "select", s->r.t_select, s->r.trials);
  report_add_times(row, "attend", s->r.t_attend, s->r.trials);
  report_put_number(row, "rel_error_corrected", s->with.err);
  report_put_number(row, "rel_error_uncorrected", s->without.err);
  report_put_number(row, "mass_recall", s->with.mass_recall);
  report_put_number(row, "quality_rows", s->with.rows);
  if (s->needle_rows) {
    report_put_number(row, "needle_recall", s->needle);
    report_put_number(row, "needle_rows", s->needle_rows);
  }
}

static int sweep_dtype(const sweep_args *a, const data_source *src, fp2_dtype dt, report *rep, FILE *txt) {
  fp2_opts o = a->o;
  o.dtype = dt;
  problem pb, niah;
  data_source niah_src = {.synth = SYNTH_NIAH};
  const int64_t len = o.lens.v[0];
  int rc = experiment_problem("sweep-alpha", src, &o, len, a->backend == BACKEND_GPU, &pb);
  if (rc) return rc;
  if ((rc = experiment_problem("sweep-alpha", &niah_src, &o, len, a->backend == BACKEND_GPU, &niah))) {
    problem_free(&pb);
    return rc;
  }
  row_sample rows;
  sample_rows(&pb, a->rows, (uint64_t)o.seed, &rows);
  full_reference ref; /* the same for every alpha */
  full_reference_compute(&pb, &rows, &ref);
  char err[ERR_LEN];
  for (int i = 0; i < a->alphas.n && rc == EXIT_OK; i++) {
    pb.p.alpha = niah.p.alpha = (float)a->alphas.v[i];
    fprintf(stderr, "fp2bench: sweep-alpha: %s, alpha %g\n", dtype_name(dt), a->alphas.v[i]);
    sweep_point s;
    if (measure(a, &pb, &rows, &ref, &s, err) != 0 || needles(a, &niah, &s, err) != 0) {
      fail("sweep-alpha: %s", err);
      rc = EXIT_RUNTIME;
      break;
    }
    print_point(txt, dt, a->alphas.v[i], &s);
    fflush(txt);
    if (rep) add_point(rep, len, dt, a->alphas.v[i], &s);
    pipeline_result_free(&s.r);
  }
  full_reference_free(&ref);
  row_sample_free(&rows);
  problem_free(&niah);
  problem_free(&pb);
  return rc;
}

static int check_args(void *args, const data_source *src) {
  const sweep_args *a = args;
  (void)src;
  for (int i = 0; i < a->alphas.n; i++)
    if (!(a->alphas.v[i] >= 0 && a->alphas.v[i] <= 1)) {
      fail("sweep-alpha: --alpha: %g is outside [0,1]", a->alphas.v[i]);
      return EXIT_USAGE;
    }
  if (a->o.lens.n != 1 || a->rows < 1) {
    fail("sweep-alpha: --len takes one length; --rows must be positive");
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
    .cpu_small = 1,
};

int cmd_sweep_alpha(int argc, char **argv) {
  sweep_args a = {.alphas = {5, {0.2, 0.1, 0.05, 0.025, 0.0125}}, .dtypes = DTYPES_BOTH, .rows = 256};
  opts_defaults(&a.o);
  a.o.lens.v[0] = 65536;
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
  data_source src;
  int rc = experiment_start(&sweep_cmd, argc, argv, specs, NOPTS(specs), &a.o, &a, &src, &a.backend);
  if (rc != EXPERIMENT_GO) return rc;
  rc = EXIT_OK;
  FILE *txt = experiment_text(&a.o);
  report *rep = experiment_report("sweep-alpha", argc, argv, &a.o, &src, a.backend);
  experiment_config_set(rep, "dtype", cJSON_CreateString(dtypes_name(a.dtypes)));
  experiment_config_set(rep, "alpha", cJSON_CreateDoubleArray(a.alphas.v, a.alphas.n)); /* what it swept */
  experiment_config_corrections(rep);
  fprintf(txt, "%-5s %7s %9s %10s %12s %12s %10s %8s\n", "dtype", "alpha", "density", "total ms", "err (corr)",
          "err (none)", "mass", "needles");
  for (int di = 0; di < 2 && rc == EXIT_OK; di++)
    if (a.dtypes == DTYPES_BOTH || a.dtypes == di) rc = sweep_dtype(&a, &src, (fp2_dtype)di, rep, txt);
  return experiment_write("sweep-alpha", rep, &a.o, rc);
}
