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
#include "stats.h"

typedef struct speedup_args {
  fp2_opts o;
  int backend;
  int dtypes; /* --dtype: an fp2_dtype or DTYPES_BOTH */
  const char *peers;
} speedup_args;

/* One baseline's times for a length and dtype. */
typedef struct baseline {
  char name[32];
  double *trials_ms;
  int trials;
  int sparse; /* computes our index without correction (peer_timing.sparse) */
  double median_ms, tflops;
} baseline;

static void print_header(FILE *f) {
  fprintf(f, "%7s %-5s %8s %9s %9s %9s %9s %10s  %s\n", "len", "dtype", "density", "index ms", "sparse ms",
          "no-corr", "total ms", "sparse TF", "baselines: ms (TF) speedup of the total [of no-corr]");
}

/* r: the sparse pass; nc: the same index without correction. */
static void print_row(FILE *f, int64_t len, fp2_dtype dt, const density_stats *d, const pipeline_result *r,
                      const pipeline_result *nc, const baseline *b, int nb) {
  const double index_ms = r->ms_quant + r->ms_pool + r->ms_select, total = index_ms + r->ms_attend;
  fprintf(f, "%7lld %-5s %7.2f%% %9.3f %9.3f %9.3f %9.3f %10.1f ", (long long)len, dtype_name(dt),
          100 * density_overall(d), index_ms, r->ms_attend, nc->ms_attend, total, flops_sparse(d) / r->ms_attend / 1e9);
  for (int i = 0; i < nb; i++) {
    fprintf(f, " %s %.3f (%.0f) %.1fx", b[i].name, b[i].median_ms, b[i].tflops, b[i].median_ms / total);
    if (b[i].sparse) fprintf(f, " [%.2fx]", b[i].median_ms / nc->ms_attend);
  }
  fprintf(f, "\n");
}

static void add_row(report *rep, int64_t len, fp2_dtype dt, const density_stats *d, const pipeline_result *r,
                    const pipeline_result *nc, const baseline *b, int nb, const peer_skip *skipped, int nskipped) {
  cJSON *row = report_add_row(rep);
  const double index_ms = r->ms_quant + r->ms_pool + r->ms_select, total = index_ms + r->ms_attend;
  report_put_number(row, "len", (double)len);
  report_put_string(row, "dtype", dtype_name(dt));
  report_put_string(row, "kernel", r->kernel);
  report_put_number(row, "density", density_overall(d));
  report_add_times(row, "quantise", r->t_quant, r->trials);
  report_add_times(row, "pool", r->t_pool, r->trials);
  report_add_times(row, "select", r->t_select, r->trials);
  report_add_times(row, "attend", r->t_attend, r->trials);
  report_add_times(row, "attend_nocorr", nc->t_attend, nc->trials);
  report_put_number(row, "index_ms", index_ms);
  report_put_number(row, "total_ms", total);
  report_put_number(row, "attend_tflops", flops_sparse(d) / r->ms_attend / 1e9);
  report_put_number(row, "attend_nocorr_tflops", flops_sparse(d) / nc->ms_attend / 1e9);
  report_put_number(row, "flops_dense", flops_dense(d));
  report_put_number(row, "flops_sparse", flops_sparse(d));
  for (int i = 0; i < nb; i++) {
    char key[64];
    report_add_times(row, b[i].name, b[i].trials_ms, b[i].trials);
    snprintf(key, sizeof key, "%.31s_tflops", b[i].name);
    report_put_number(row, key, b[i].tflops);
    snprintf(key, sizeof key, "speedup_%.31s", b[i].name);
    report_put_number(row, key, b[i].median_ms / total);
    if (b[i].sparse) {
      snprintf(key, sizeof key, "speedup_%.31s_kernel", b[i].name);
      report_put_number(row, key, b[i].median_ms / nc->ms_attend);
    }
  }
  cJSON *skips = cJSON_CreateArray();
  for (int i = 0; i < nskipped; i++) {
    cJSON *s = cJSON_CreateObject();
    report_put_string(s, "peer", skipped[i].name);
    report_put_string(s, "why", skipped[i].why);
    cJSON_AddItemToArray(skips, s);
  }
  report_put(row, "peers_skipped", skips);
}

/* Our dense pass: the same kernels over every causal block. */
static int own_dense(int backend, const problem *pb, int trials, baseline *out, char *err) {
  pipeline_config cfg = {.density = 1.0, .attend = 1};
  pipeline_result r;
  if (backend_pipeline(backend, pb, &cfg, trials, &r, err) != 0) return -1;
  density_stats d;
  density_measure(pb, &r.index, 0, &d);
  snprintf(out->name, sizeof out->name, "dense");
  out->sparse = 0;
  out->trials = r.trials;
  out->trials_ms = xmalloc(sizeof(double) * (size_t)r.trials);
  memcpy(out->trials_ms, r.t_attend, sizeof(double) * (size_t)r.trials);
  out->median_ms = r.ms_attend;
  out->tflops = flops_dense(&d) / r.ms_attend / 1e9;
  density_free(&d);
  pipeline_result_free(&r);
  return 0;
}

/* The cpu backend times nothing worth a ratio (the oracle's wall time says nothing about the
   kernels): its rows give the density and the FLOP counts only, without attending. */
static int density_only(const speedup_args *a, const data_source *src, int64_t len, fp2_dtype dt, report *rep,
                        FILE *txt) {
  fp2_opts o = a->o;
  o.dtype = dt;
  problem pb;
  int rc = experiment_problem("speedup", src, &o, len, 0, &pb);
  if (rc) return rc;
  char err[ERR_LEN];
  pipeline_config cfg = {.density = o.density, .seed = (uint64_t)o.seed, .attend = 0};
  pipeline_result r;
  if (backend_pipeline(BACKEND_CPU, &pb, &cfg, 1, &r, err) != 0) {
    fail("speedup: %s", err);
    problem_free(&pb);
    return EXIT_RUNTIME;
  }
  density_stats d;
  density_measure(&pb, &r.index, pb.p.correction, &d);
  fprintf(txt, "%7lld %-5s %7.2f%%\n", (long long)len, dtype_name(dt), 100 * density_overall(&d));
  fflush(txt);
  if (rep) {
    cJSON *row = report_add_row(rep);
    report_put_number(row, "len", (double)len);
    report_put_string(row, "dtype", dtype_name(dt));
    report_put_string(row, "kernel", r.kernel);
    report_put_number(row, "density", density_overall(&d));
    report_put_number(row, "flops_dense", flops_dense(&d));
    report_put_number(row, "flops_sparse", flops_sparse(&d));
  }
  density_free(&d);
  pipeline_result_free(&r);
  problem_free(&pb);
  return EXIT_OK;
}

static int run_length(const speedup_args *a, const data_source *src, int64_t len, fp2_dtype dt, report *rep,
                      FILE *txt) {
  fp2_opts o = a->o;
  o.dtype = dt;
  problem pb;
  int rc = experiment_problem("speedup", src, &o, len, a->backend == BACKEND_GPU, &pb);
  if (rc) return rc;
  char err[ERR_LEN];
  pipeline_config cfg = {.density = o.density, .seed = (uint64_t)o.seed, .attend = 1};
  pipeline_result r;
  baseline b[1 + PEERS_MAX];
  peer_skip skipped[PEERS_MAX];
  int nb = 0, nskipped = 0;
  if (backend_pipeline(a->backend, &pb, &cfg, a->o.trials, &r, err) != 0) {
    fail("speedup: %s", err);
    problem_free(&pb);
    return EXIT_RUNTIME;
  }
  density_stats d;
  density_measure(&pb, &r.index, pb.p.correction, &d);
  /* Our sparse attention without correction on the identical index: what a sparse peer computes. */
  pipeline_config nc_cfg = {.density = -1, .index = &r.index, .attend = 1};
  pipeline_result nc;
  const int correction = pb.p.correction;
  pb.p.correction = 0;
  rc = backend_pipeline(a->backend, &pb, &nc_cfg, a->o.trials, &nc, err);
  pb.p.correction = correction;
  if (rc != 0) {
    fail("speedup: without correction: %s", err);
    density_free(&d);
    pipeline_result_free(&r);
    problem_free(&pb);
    return EXIT_RUNTIME;
  }
  rc = EXIT_OK;
  if (own_dense(a->backend, &pb, a->o.trials, &b[nb], err) != 0) {
    fail("speedup: dense: %s", err);
    rc = EXIT_RUNTIME;
  } else {
    nb++;
  }
  peer_timing pt[PEERS_MAX];
  int npt = rc == EXIT_OK && a->backend == BACKEND_GPU
                ? peers_run(a->peers, &pb, &r.index, a->o.trials, pt, skipped, &nskipped)
                : 0;
  for (int i = 0; i < npt; i++) {
    memcpy(b[nb].name, pt[i].name, sizeof b[nb].name);
    b[nb].sparse = pt[i].sparse;
    b[nb].trials = pt[i].trials;
    b[nb].trials_ms = pt[i].trials_ms;
    b[nb].median_ms = stats_median(pt[i].trials_ms, pt[i].trials);
    b[nb].tflops = peer_flops(&pt[i], &d) / b[nb].median_ms / 1e9;
    nb++;
  }
  if (rc == EXIT_OK) {
    print_row(txt, len, dt, &d, &r, &nc, b, nb);
    fflush(txt);
    if (rep) add_row(rep, len, dt, &d, &r, &nc, b, nb, skipped, nskipped);
  }
  for (int i = 0; i < nb; i++) free(b[i].trials_ms);
  density_free(&d);
  pipeline_result_free(&nc);
  pipeline_result_free(&r);
  problem_free(&pb);
  return rc;
}

int cmd_speedup(int argc, char **argv) {
  speedup_args a = {.dtypes = FP2_BF16, .peers = PEERS_DEFAULT};
  opts_defaults(&a.o);
  a.o.lens.n = 6;
  for (int i = 0; i < 6; i++) a.o.lens.v[i] = (int64_t)4096 << i;
  const opt_spec specs[] = {
      OPTS_SIZES(&a.o),
      OPT_DTYPES(&a.dtypes),
      OPTS_SELECT(&a.o),
      OPTS_DATA(&a.o),
      OPTS_RUN(&a.o),
      {"--peers", OPT_STRING, &a.peers, "LIST", "dense peers to time beside ours: " PEERS_CHOICES " or none"},
      OPT_TRIALS(&a.o),
  };
  int rc = cli_parse(argc, argv, "speedup [options]",
                     "Operator speedup of the sparse pass (index stage + sparse attention) over dense\n"
                     "attention, ours and the peers', per length and dtype, all measured in this run\n"
                     "on the same inputs; TFLOP/s over the pairs each kernel computes (FlexAttention,\n"
                     "run on our index without correction: the index's pairs). Kernel for kernel, our\n"
                     "sparse attention without correction on the identical index is timed too\n"
                     "(attend_nocorr) and set against Flex (speedup_flex_kernel) beside the total's\n"
                     "ratio (speedup_flex). Without a GPU the cpu backend times nothing: it gives the\n"
                     "density alone (at 1K unless --len is given).",
                     specs, NOPTS(specs));
  if (rc) return rc == 1 ? EXIT_OK : rc;
  data_source src;
  if ((rc = experiment_setup("speedup", &a.o, &src))) return rc;
  char err[ERR_LEN];
  if (peers_parse(a.peers, err) != 0) {
    fail("speedup: --peers: %s", err);
    return EXIT_USAGE;
  }
  a.backend = experiment_backend("speedup", &a.o);
  if (a.backend < 0) return -a.backend;
  if (a.backend == BACKEND_CPU)
    fprintf(stderr, "fp2bench: speedup: the cpu backend times nothing (the speedups need a GPU): it gives the density\n");
  experiment_cpu_size("speedup", &a.o, a.backend);
  FILE *txt = experiment_text(&a.o);
  report *rep = experiment_report("speedup", argc, argv, &a.o, &src, a.backend);
  experiment_config_set(rep, "dtype", cJSON_CreateString(dtypes_name(a.dtypes)));
  const int timed = a.backend == BACKEND_GPU;
  if (timed)
    print_header(txt);
  else
    fprintf(txt, "%7s %-5s %8s\n", "len", "dtype", "density");
  for (int di = 0; di < 2 && rc == EXIT_OK; di++) {
    if (a.dtypes != DTYPES_BOTH && a.dtypes != di) continue;
    for (int li = 0; li < a.o.lens.n && rc == EXIT_OK; li++) {
      fprintf(stderr, "fp2bench: speedup: %s, len %lld\n", dtype_name(di), (long long)a.o.lens.v[li]);
      rc = (timed ? run_length : density_only)(&a, &src, a.o.lens.v[li], (fp2_dtype)di, rep, txt);
    }
  }
  return experiment_write("speedup", rep, &a.o, rc);
}
