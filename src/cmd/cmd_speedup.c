/* fp2bench speedup: the paper's operator speedup table (Tab. 1, right). For each length and
   dtype, on the same inputs in the same run: the index stage (quantise + pool + select),
   the sparse attention, their total, our dense pass (the same kernel over the full causal
   index), each peer's attention, the speedup of the total over every baseline, and TFLOP/s
   over the pairs each kernel computes. A sparse peer (Flex over our index, no correction) is
   also set against our sparse attention without correction on the identical index: the
   kernel-for-kernel ratio beside the total's. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "density.h"
#include "error.h"
#include "experiment.h"
#include "peers.h"
#include "report.h"
#include "result_rows.h"
#include "stats.h"

typedef struct speedup_args {
  fp2_opts o;
  int dtypes; /* --dtype: an fp2_dtype or DTYPES_BOTH */
  const char *peers;
} speedup_args;

static void print_header(FILE *f) {
  fprintf(f, "%7s %-5s %8s %9s %9s %9s %9s %10s  %s\n", "len", "dtype", "density", "index ms", "sparse ms",
          "no-corr", "total ms", "sparse TF", "baselines: ms (TF) speedup of the total [of no-corr]");
}

/* r: the sparse pass; nc: the same index without correction. A ratio in brackets is against nc. */
static void print_row(FILE *f, int64_t len, fp2_dtype dt, const density_stats *d, const pipeline_result *r,
                      const pipeline_result *nc, const peer_timing *b, int nb) {
  const double index_ms = stage_index_ms(&r->times), total = stage_total_ms(&r->times);
  fprintf(f, "%7lld %-5s %7.2f%% %9.3f %9.3f %9.3f %9.3f %10.1f ", (long long)len, dtype_name(dt),
          100 * density_overall(d), index_ms, r->times.ms_attend, nc->times.ms_attend, total, flops_sparse(d) / r->times.ms_attend / 1e9);
  for (int i = 0; i < nb; i++) {
    const double ms = stats_median(b[i].trials_ms, b[i].trials);
    fprintf(f, " %s %.3f (%.0f)", b[i].name, ms, peer_flops(&b[i], d) / ms / 1e9);
    double vs_total, vs_nocorr;
    const int apply = peer_ratios(&b[i], total, nc->times.ms_attend, &vs_total, &vs_nocorr);
    if (apply & RATIO_TOTAL) fprintf(f, " %.1fx", vs_total);
    if (apply & RATIO_NOCORR) fprintf(f, " [%.2fx]", vs_nocorr);
  }
  fprintf(f, "\n");
}

static void add_row(report *rep, int64_t len, fp2_dtype dt, const density_stats *d, const pipeline_result *r,
                    const pipeline_result *nc, const peer_timing *b, int nb, const peer_skip *skipped, int nskipped) {
  cJSON *row = report_add_row(rep);
  const double index_ms = stage_index_ms(&r->times), total = stage_total_ms(&r->times);
  report_put_number(row, "len", (double)len);
  report_put_string(row, "dtype", dtype_name(dt));
  report_put_string(row, "kernel", r->kernel);
  report_put_number(row, "density", density_overall(d));
  rows_put_stage_times(row, r);
  report_add_times(row, "attend_nocorr", nc->times.t_attend, nc->times.trials);
  report_put_number(row, "index_ms", index_ms);
  report_put_number(row, "total_ms", total);
  report_put_number(row, "attend_tflops", flops_sparse(d) / r->times.ms_attend / 1e9);
  report_put_number(row, "attend_nocorr_tflops", flops_sparse(d) / nc->times.ms_attend / 1e9);
  report_put_number(row, "flops_dense", flops_dense(d));
  report_put_number(row, "flops_sparse", flops_sparse(d));
  for (int i = 0; i < nb; i++) peer_put(row, &b[i], d, total, nc->times.ms_attend);
  peers_put_skipped(row, skipped, nskipped);
}

/* Our dense pass: the same kernels over every causal block. */
static int own_dense(int backend, const problem *pb, int trials, peer_timing *out, char *err) {
  pipeline_config cfg = {.density = 1.0, .attend = 1};
  pipeline_result r;
  if (backend_pipeline(backend, pb, &cfg, trials, &r, err) != 0) return -1;
  *out = (peer_timing){.pairs = PAIRS_CAUSAL, .versus = VERSUS_TOTAL, .trials = r.times.trials};
  snprintf(out->name, sizeof out->name, "dense");
  out->trials_ms = xmalloc(sizeof(double) * (size_t)r.times.trials);
  memcpy(out->trials_ms, r.times.t_attend, sizeof(double) * (size_t)r.times.trials);
  pipeline_result_free(&r);
  return 0;
}

/* The cpu backend times nothing worth a ratio (the oracle's wall time says nothing about the
   kernels): its rows give the density and the FLOP counts only, without attending. */
static int density_only(const experiment_run *x, problem *pb) {
  const fp2_opts *o = x->o;
  const int64_t len = pb->lq[0];
  char err[ERR_LEN];
  pipeline_config cfg = {.density = o->input.density, .seed = (uint64_t)o->input.seed, .attend = 0};
  pipeline_result r;
  if (backend_pipeline(BACKEND_CPU, pb, &cfg, 1, &r, err) != 0) {
    fail("speedup: %s", err);
    return EXIT_RUNTIME;
  }
  density_stats d;
  density_measure(pb, &r.index, pb->p.correction, &d);
  fprintf(x->txt, "%7lld %-5s %7.2f%%\n", (long long)len, dtype_name(o->shape.dtype), 100 * density_overall(&d));
  fflush(x->txt);
  if (x->rep) {
    cJSON *row = report_add_row(x->rep);
    report_put_number(row, "len", (double)len);
    report_put_string(row, "dtype", dtype_name(o->shape.dtype));
    report_put_string(row, "kernel", r.kernel);
    report_put_number(row, "density", density_overall(&d));
    report_put_number(row, "flops_dense", flops_dense(&d));
    report_put_number(row, "flops_sparse", flops_sparse(&d));
  }
  density_free(&d);
  pipeline_result_free(&r);
  return EXIT_OK;
}

static int run_length(const speedup_args *a, const experiment_run *x, problem *pb) {
  const fp2_opts *o = x->o;
  const int64_t len = pb->lq[0];
  const fp2_dtype dt = (fp2_dtype)o->shape.dtype;
  char err[ERR_LEN];
  int rc;
  pipeline_config cfg = {.density = o->input.density, .seed = (uint64_t)o->input.seed, .attend = 1};
  pipeline_result r;
  peer_timing b[1 + PEERS_MAX];
  peer_skip skipped[PEERS_MAX];
  int nb = 0, nskipped = 0;
  if (backend_pipeline(x->backend, pb, &cfg, o->run.trials, &r, err) != 0) {
    fail("speedup: %s", err);
    return EXIT_RUNTIME;
  }
  density_stats d;
  density_measure(pb, &r.index, pb->p.correction, &d);
  /* Our sparse attention without correction on the identical index: what a sparse peer computes;
     under --no-correction that is the pass just timed. */
  pipeline_config nc_cfg = {.density = -1, .index = &r.index, .attend = 1};
  pipeline_result nc_run, *nc = &r;
  const int correction = pb->p.correction;
  rc = correction ? backend_pipeline_correction(x->backend, pb, 0, &nc_cfg, o->run.trials, &nc_run, err) : 0;
  if (correction && rc == 0) nc = &nc_run;
  if (rc != 0) {
    fail("speedup: without correction: %s", err);
    density_free(&d);
    pipeline_result_free(&r);
    return EXIT_RUNTIME;
  }
  rc = EXIT_OK;
  if (own_dense(x->backend, pb, o->run.trials, &b[nb], err) != 0) {
    fail("speedup: dense: %s", err);
    rc = EXIT_RUNTIME;
  } else {
    nb++;
  }
  if (rc == EXIT_OK && x->backend == BACKEND_GPU)
    nb += peers_run(a->peers, pb, &r.index, o->run.trials, &b[nb], skipped, &nskipped);
  if (rc == EXIT_OK) {
    print_row(x->txt, len, dt, &d, &r, nc, b, nb);
    fflush(x->txt);
    if (x->rep) add_row(x->rep, len, dt, &d, &r, nc, b, nb, skipped, nskipped);
  }
  for (int i = 0; i < nb; i++) free(b[i].trials_ms);
  density_free(&d);
  if (nc != &r) pipeline_result_free(nc);
  pipeline_result_free(&r);
  return rc;
}

/* One (dtype, length): timed on the gpu, the density alone on the cpu. */
static int row(void *args, const experiment_run *x, problem *pb) {
  return x->backend == BACKEND_GPU ? run_length(args, x, pb) : density_only(x, pb);
}

static void begin(void *args, const experiment_run *x) {
  (void)args;
  if (x->backend == BACKEND_GPU)
    print_header(x->txt);
  else
    fprintf(x->txt, "%7s %-5s %8s\n", "len", "dtype", "density");
}

static int check_args(void *args, const data_source *src) {
  const speedup_args *a = args;
  (void)src;
  return peers_check_option("speedup", a->peers);
}

static const experiment_cmd speedup_cmd = {
    .name = "speedup",
    .usage = "speedup [options]",
    .summary = "Operator speedup of the sparse pass (index stage + sparse attention) over dense\n"
               "attention, ours and the peers', per length and dtype, all measured in this run\n"
               "on the same inputs; TFLOP/s over the pairs each kernel computes (FlexAttention,\n"
               "run on our index without correction: the index's pairs). Kernel for kernel, our\n"
               "sparse attention without correction on the identical index is timed too\n"
               "(attend_nocorr) and set against Flex (speedup_flex_kernel) beside the total's\n"
               "ratio (speedup_flex). fpv2: FlashPrefill V2's whole pass (its index builder and\n"
               "corrected attention) against our total (speedup_fpv2), and its attention alone on\n"
               "our index against attend_nocorr (speedup_fpv2_kernel); hpc (FP8): HPC-Ops' block-\n"
               "sparse kernel on our index as its coarser mask (hpc_density) against attend_nocorr\n"
               "(speedup_hpc). Without a GPU the cpu backend times nothing: it gives the\n"
               "density alone (at 1K unless --len is given).",
    .check = check_args,
    .cpu_note = "the cpu backend times nothing (the speedups need a GPU): it gives the density",
    .cpu_small = 1,
    .progress = PROGRESS_DTYPE_LEN,
    .begin = begin,
    .row = row,
};

int cmd_speedup(int argc, char **argv) {
  speedup_args a = {.dtypes = FP2_BF16, .peers = PEERS_DEFAULT};
  opts_defaults(&a.o);
  a.o.shape.lens.n = 6;
  for (int i = 0; i < 6; i++) a.o.shape.lens.v[i] = (int64_t)4096 << i;
  const opt_spec specs[] = {
      OPTS_SIZES(&a.o),
      OPT_DTYPES(&a.dtypes),
      OPTS_SELECT(&a.o),
      OPTS_DATA(&a.o),
      OPTS_RUN(&a.o),
      {"--peers", OPT_STRING, &a.peers, "LIST", "peers to time beside ours: " PEERS_CHOICES " or none"},
      OPT_TRIALS(&a.o),
  };
  return experiment_main(&speedup_cmd, argc, argv, specs, NOPTS(specs), &a.o, &a, &a.dtypes);
}
