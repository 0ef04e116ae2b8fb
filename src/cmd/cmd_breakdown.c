/* fp2bench breakdown: where the time of the sparse pass goes, per length (V1's time
   breakdown figure): FP8 quantisation, pooling, selection (scoring and max-based
   thresholding, fused in one kernel), sparse attention without correction, and the
   correction (the corrected attention's extra time), each timed with CUDA events inside
   NVTX ranges. */
#include <stdio.h>
#include <stdlib.h>

#include "commands.h"
#include "density.h"
#include "error.h"
#include "experiment.h"
#include "report.h"
#include "result_rows.h"

/* One length: the pass with and without correction. */
static int row(void *args, const experiment_run *x, problem *pb) {
  (void)args;
  const fp2_opts *o = x->o;
  const int64_t len = pb->lq[0];
  char err[ERR_LEN];
  pipeline_config cfg = {.density = o->input.density, .seed = (uint64_t)o->input.seed, .attend = 1};
  pipeline_result on, off;
  if (backend_pipeline_correction(x->backend, pb, 1, &cfg, o->run.trials, &on, err) != 0) {
    fail("breakdown: %s", err);
    return EXIT_RUNTIME;
  }
  if (backend_pipeline_correction(x->backend, pb, 0, &cfg, o->run.trials, &off, err) != 0) {
    fail("breakdown: %s", err);
    pipeline_result_free(&on);
    return EXIT_RUNTIME;
  }
  density_stats d;
  density_measure(pb, &on.index, 1, &d);
  const double corr = on.times.ms_attend - off.times.ms_attend;
  const double total = stage_total_ms(&on.times);
  fprintf(x->txt, "%7lld %8.2f%% %9.3f %9.3f %9.3f %10.3f %10.3f %10.3f  index %.1f%%, correction %.1f%%\n",
          (long long)len, 100 * density_overall(&d), on.times.ms_quant, on.times.ms_pool, on.times.ms_select, off.times.ms_attend, corr, total,
          100 * stage_index_ms(&on.times) / total, 100 * corr / total);
  fflush(x->txt);
  if (x->rep) {
    cJSON *row = report_add_row(x->rep);
    report_put_number(row, "len", (double)len);
    report_put_string(row, "kernel", on.kernel);
    report_put_number(row, "density", density_overall(&d));
    rows_put_index_times(row, &on);
    report_add_times(row, "attend_uncorrected", off.times.t_attend, off.times.trials);
    report_add_times(row, "attend_corrected", on.times.t_attend, on.times.trials);
    report_put_number(row, "correction_ms", corr);
    report_put_number(row, "total_ms", total);
    report_put_number(row, "flops_index", flops_index(&d));
    report_put_number(row, "flops_sparse", flops_sparse(&d));
    report_put_number(row, "flops_correction", flops_correction(&d));
  }
  density_free(&d);
  pipeline_result_free(&on);
  pipeline_result_free(&off);
  return EXIT_OK;
}

static void begin(void *args, const experiment_run *x) {
  (void)args;
  experiment_config_corrections(x->rep); /* every length runs both */
  fprintf(x->txt, "%7s %9s %9s %9s %9s %10s %10s %10s  shares of the total\n", "len", "density", "quant ms", "pool ms",
          "select ms", "attend ms", "corr. ms", "total ms");
}

static const experiment_cmd breakdown_cmd = {
    .name = "breakdown",
    .usage = "breakdown [options]",
    .summary = "Time of each stage of the sparse pass per length: quantisation (FP8), pooling,\n"
               "selection (fused scoring and thresholding), attention without correction, and the\n"
               "correction's extra time.",
    .progress = PROGRESS_LEN,
    .begin = begin,
    .row = row,
};

int cmd_breakdown(int argc, char **argv) {
  fp2_opts o;
  opts_defaults(&o);
  o.shape.lens.n = 6;
  for (int i = 0; i < 6; i++) o.shape.lens.v[i] = (int64_t)4096 << i;
  const opt_spec specs[] = {
      OPTS_SHAPE(&o),
      OPTS_SELECT(&o),
      OPTS_DATA(&o),
      OPTS_RUN(&o),
      OPT_TRIALS(&o),
  };
  return experiment_main(&breakdown_cmd, argc, argv, specs, NOPTS(specs), &o, NULL, NULL);
}
