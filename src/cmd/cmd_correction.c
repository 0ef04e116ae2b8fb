/* fp2bench correction: the cost of the mean correction (paper Fig. 6). At one length and a
   forced block mask per sparsity level (sparsity = 1 - density of the mask), the sparse
   attention's time with and without correction, the absolute and the relative overhead. */
#include <stdio.h>
#include <stdlib.h>

#include "commands.h"
#include "density.h"
#include "error.h"
#include "experiment.h"
#include "report.h"

typedef struct correction_args {
  fp2_opts o;
  double_list sparsity;
  int dtypes;
} correction_args;

static int attend_times(const experiment_run *x, const problem *pb, double density, int correction,
                        pipeline_result *r, char *err) {
  pipeline_config cfg = {.density = density, .seed = (uint64_t)x->o->input.seed, .attend = 1};
  return backend_pipeline_correction(x->backend, pb, correction, &cfg, x->o->run.trials, r, err);
}

/* One dtype: every sparsity on its problem. */
static int row(void *args, const experiment_run *x, problem *pb) {
  const correction_args *a = args;
  const fp2_dtype dt = (fp2_dtype)x->o->shape.dtype;
  const int64_t len = pb->lq[0];
  char err[ERR_LEN];
  int rc = EXIT_OK;
  for (int i = 0; i < a->sparsity.n && rc == EXIT_OK; i++) {
    const double density = 1.0 - a->sparsity.v[i];
    fprintf(stderr, "fp2bench: correction: %s, sparsity %g\n", dtype_name(dt), a->sparsity.v[i]);
    pipeline_result on, off;
    if (attend_times(x, pb, density, 1, &on, err) != 0) {
      fail("correction: %s", err);
      rc = EXIT_RUNTIME;
      break;
    }
    if (attend_times(x, pb, density, 0, &off, err) != 0) {
      fail("correction: %s", err);
      pipeline_result_free(&on);
      rc = EXIT_RUNTIME;
      break;
    }
    density_stats d;
    density_measure(pb, &on.index, 1, &d);
    const double extra = on.times.ms_attend - off.times.ms_attend;
    fprintf(x->txt, "%-5s %8.0f%% %9.2f%% %12.3f %12.3f %10.3f %9.1f%%\n", dtype_name(dt),
            100 * a->sparsity.v[i], 100 * density_overall(&d), on.times.ms_attend, off.times.ms_attend, extra,
            100 * extra / off.times.ms_attend);
    fflush(x->txt);
    if (x->rep) {
      cJSON *row = report_add_row(x->rep);
      report_put_number(row, "len", (double)len);
      report_put_string(row, "dtype", dtype_name(dt));
      report_put_number(row, "sparsity", a->sparsity.v[i]);
      report_put_string(row, "kernel", on.kernel);
      report_put_number(row, "density", density_overall(&d));
      report_add_times(row, "attend_corrected", on.times.t_attend, on.times.trials);
      report_add_times(row, "attend_uncorrected", off.times.t_attend, off.times.trials);
      report_put_number(row, "overhead_ms", extra);
      report_put_number(row, "overhead", extra / off.times.ms_attend);
      report_put_number(row, "flops_correction", flops_correction(&d));
    }
    density_free(&d);
    pipeline_result_free(&on);
    pipeline_result_free(&off);
  }
  return rc;
}

static void begin(void *args, const experiment_run *x) {
  const correction_args *a = args;
  experiment_config_set(x->rep, "sparsity", cJSON_CreateDoubleArray(a->sparsity.v, a->sparsity.n)); /* swept */
  /* Every row runs a forced mask of density 1 - sparsity, not the scored selection. */
  cJSON *forced = cJSON_CreateArray();
  for (int i = 0; i < a->sparsity.n; i++) cJSON_AddItemToArray(forced, cJSON_CreateNumber(1.0 - a->sparsity.v[i]));
  experiment_config_set(x->rep, "forced_density", forced);
  experiment_config_corrections(x->rep);
  fprintf(x->txt, "%-5s %9s %10s %12s %12s %10s %10s\n", "dtype", "sparsity", "density", "corr. ms", "no corr. ms",
          "extra ms", "overhead");
}

static int in_sparsity_range(double v) { return v >= 0 && v < 1; }

static int check_args(void *args, const data_source *src) {
  const correction_args *a = args;
  (void)src;
  if (experiment_check_list("correction", "--sparsity", &a->sparsity, in_sparsity_range, "[0,1)")) return EXIT_USAGE;
  return 0;
}

static const experiment_cmd correction_cmd = {
    .name = "correction",
    .usage = "correction [options]",
    .summary = "The cost of the mean correction (paper Fig. 6): sparse attention with and without it\n"
               "over forced block masks from dense (sparsity 0) to 90% sparsity.",
    .check = check_args,
    .one_len = 1,
    .cpu_small = 1,
    .begin = begin,
    .row = row,
};

int cmd_correction(int argc, char **argv) {
  correction_args a = {.sparsity = {10, {0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9}}, .dtypes = DTYPES_BOTH};
  opts_defaults(&a.o);
  a.o.shape.lens.v[0] = 65536;
  const opt_spec specs[] = {
      OPTS_SIZES(&a.o),
      OPT_DTYPES(&a.dtypes),
      {"--sparsity", OPT_DOUBLE_LIST, &a.sparsity, "S[,S...]", "share of causal blocks dropped, each in [0,1)"},
      OPTS_BLOCKS(&a.o),
      OPTS_MASKED_DATA(&a.o),
      OPTS_RUN(&a.o),
      OPT_TRIALS(&a.o),
  };
  return experiment_main(&correction_cmd, argc, argv, specs, NOPTS(specs), &a.o, &a, &a.dtypes);
}
