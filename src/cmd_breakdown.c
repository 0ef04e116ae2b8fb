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

typedef struct breakdown_args {
  fp2_opts o;
  int backend;
} breakdown_args;

static int run_length(const breakdown_args *a, const data_source *src, int64_t len, report *rep, FILE *txt) {
  problem pb;
  fp2_opts o = a->o;
  int rc = experiment_problem("breakdown", src, &o, len, a->backend == BACKEND_GPU, &pb);
  if (rc) return rc;
  char err[ERR_LEN];
  pipeline_config cfg = {.density = o.density, .seed = (uint64_t)o.seed, .attend = 1};
  pipeline_result on, off;
  pb.p.correction = 1;
  if (backend_pipeline(a->backend, &pb, &cfg, a->o.trials, &on, err) != 0) {
    fail("breakdown: %s", err);
    problem_free(&pb);
    return EXIT_RUNTIME;
  }
  pb.p.correction = 0;
  if (backend_pipeline(a->backend, &pb, &cfg, a->o.trials, &off, err) != 0) {
    fail("breakdown: %s", err);
    pipeline_result_free(&on);
    problem_free(&pb);
    return EXIT_RUNTIME;
  }
  density_stats d;
  density_measure(&pb, &on.index, 1, &d);
  const double corr = on.ms_attend - off.ms_attend;
  const double total = on.ms_quant + on.ms_pool + on.ms_select + on.ms_attend;
  fprintf(txt, "%7lld %8.2f%% %9.3f %9.3f %9.3f %10.3f %10.3f %10.3f  index %.1f%%, correction %.1f%%\n",
          (long long)len, 100 * density_overall(&d), on.ms_quant, on.ms_pool, on.ms_select, off.ms_attend, corr, total,
          100 * (on.ms_quant + on.ms_pool + on.ms_select) / total, 100 * corr / total);
  fflush(txt);
  if (rep) {
    cJSON *row = report_add_row(rep);
    report_put_number(row, "len", (double)len);
    report_put_string(row, "kernel", on.kernel);
    report_put_number(row, "density", density_overall(&d));
    report_add_times(row, "quantise", on.t_quant, on.trials);
    report_add_times(row, "pool", on.t_pool, on.trials);
    report_add_times(row, "select", on.t_select, on.trials);
    report_add_times(row, "attend_uncorrected", off.t_attend, off.trials);
    report_add_times(row, "attend_corrected", on.t_attend, on.trials);
    report_put_number(row, "correction_ms", corr);
    report_put_number(row, "total_ms", total);
    report_put_number(row, "flops_index", flops_index(&d));
    report_put_number(row, "flops_sparse", flops_sparse(&d));
    report_put_number(row, "flops_correction", flops_correction(&d));
  }
  density_free(&d);
  pipeline_result_free(&on);
  pipeline_result_free(&off);
  problem_free(&pb);
  return EXIT_OK;
}

static const experiment_cmd breakdown_cmd = {
    .name = "breakdown",
    .usage = "breakdown [options]",
    .summary = "Time of each stage of the sparse pass per length: quantisation (FP8), pooling,\n"
               "selection (fused scoring and thresholding), attention without correction, and the\n"
               "correction's extra time.",
};

int cmd_breakdown(int argc, char **argv) {
  breakdown_args a = {0};
  opts_defaults(&a.o);
  a.o.lens.n = 6;
  for (int i = 0; i < 6; i++) a.o.lens.v[i] = (int64_t)4096 << i;
  const opt_spec specs[] = {
      OPTS_SHAPE(&a.o),
      OPTS_SELECT(&a.o),
      OPTS_DATA(&a.o),
      OPTS_RUN(&a.o),
      OPT_TRIALS(&a.o),
  };
  data_source src;
  int rc = experiment_start(&breakdown_cmd, argc, argv, specs, NOPTS(specs), &a.o, &a, &src, &a.backend);
  if (rc != EXPERIMENT_GO) return rc;
  rc = EXIT_OK;
  FILE *txt = experiment_text(&a.o);
  report *rep = experiment_report("breakdown", argc, argv, &a.o, &src, a.backend);
  experiment_config_corrections(rep); /* every length runs both */
  fprintf(txt, "%7s %9s %9s %9s %9s %10s %10s %10s  shares of the total\n", "len", "density", "quant ms", "pool ms",
          "select ms", "attend ms", "corr. ms", "total ms");
  for (int li = 0; li < a.o.lens.n && rc == EXIT_OK; li++) {
    fprintf(stderr, "fp2bench: breakdown: len %lld\n", (long long)a.o.lens.v[li]);
    rc = run_length(&a, &src, a.o.lens.v[li], rep, txt);
  }
  return experiment_write("breakdown", rep, &a.o, rc);
}
