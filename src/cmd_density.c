/* fp2bench density: the density the selection gives per length (overall and per KV head)
   for a source and alpha, with the FLOP model of the three stages (paper Eq. 19-20). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "commands.h"
#include "density.h"
#include "error.h"
#include "experiment.h"
#include "quality.h"
#include "report.h"

typedef struct density_args {
  fp2_opts o;
  int tiles;
} density_args;

static void print_header(FILE *f) {
  fprintf(f, "%8s %9s %17s %11s %9s %9s %9s %8s %9s\n", "len", "density", "KV heads min..max", "blocks/seg",
          "index", "corr", "aux", "needles", "tiles");
}

static void print_row(FILE *f, const problem *pb, const csr_index *idx, const density_stats *d, double needle,
                      int needle_rows) {
  double lo = 1, hi = 0;
  for (int h = 0; h < d->hkv; h++) {
    double x = density_of_head(d, h);
    if (x < lo) lo = x;
    if (x > hi) hi = x;
  }
  char needles[16] = "-";
  if (needle_rows) snprintf(needles, sizeof needles, "%.1f%%", 100 * needle);
  double sparse = flops_sparse(d);
  fprintf(f, "%8d %8.2f%% %8.1f..%5.1f%% %11.1f %8.2f%% %8.2f%% %8.2f%% %8s %4d/%-4d\n", pb->lq[0],
          100 * density_overall(d), 100 * lo, 100 * hi, (double)idx->nnz / d->segments_evaluated,
          100 * flops_index(d) / sparse, 100 * flops_correction(d) / sparse, 100 * flops_aux_ratio(d), needles,
          d->segments_evaluated, d->segments);
}

static void add_row(report *rep, const problem *pb, const csr_index *idx, const density_stats *d, double needle,
                    int needle_rows) {
  cJSON *row = report_add_row(rep);
  report_put_number(row, "len", pb->lq[0]);
  report_put_number(row, "density", density_overall(d));
  cJSON *heads = cJSON_CreateArray();
  for (int h = 0; h < d->hkv; h++) cJSON_AddItemToArray(heads, cJSON_CreateNumber(density_of_head(d, h)));
  report_put(row, "density_per_head", heads);
  report_put_number(row, "blocks_per_segment", (double)idx->nnz / d->segments_evaluated);
  report_put_number(row, "segments_evaluated", d->segments_evaluated);
  report_put_number(row, "segments", d->segments);
  report_put_number(row, "flops_dense", flops_dense(d));
  report_put_number(row, "flops_sparse", flops_sparse(d));
  report_put_number(row, "flops_index", flops_index(d));
  report_put_number(row, "flops_correction", flops_correction(d));
  report_put_number(row, "aux_ratio", flops_aux_ratio(d));
  if (needle_rows) {
    report_put_number(row, "needle_recall", needle);
    report_put_number(row, "needle_rows", needle_rows);
  }
}

int cmd_density(int argc, char **argv) {
  density_args a = {.tiles = 96};
  opts_defaults(&a.o);
  a.o.lens.n = 6;
  for (int i = 0; i < 6; i++) a.o.lens.v[i] = (int64_t)4096 << i;
  const opt_spec specs[] = {
      OPTS_EXPERIMENT(&a.o),
      {"--tiles", OPT_INT, &a.tiles, "N", "cpu: query tiles scored per KV head (all when fewer)"},
  };
  int rc = cli_parse(argc, argv, "density [options]",
                     "Density of the selected blocks per length (computed pairs over causal pairs),\n"
                     "overall and per KV head, and the FLOPs of the index, sparse and correction stages.",
                     specs, NOPTS(specs));
  if (rc) return rc == 1 ? EXIT_OK : rc;
  data_source src;
  if ((rc = experiment_setup("density", &a.o, &src))) return rc;
  if (a.tiles <= 0) {
    fail("density: --tiles: %d is not positive", a.tiles);
    return EXIT_USAGE;
  }
  int backend = experiment_backend("density", &a.o);
  if (backend < 0) return -backend;
  experiment_cpu_size("density", &a.o, backend);
  FILE *txt = experiment_text(&a.o);
  const int gpu = backend == BACKEND_GPU;
  report *rep = experiment_report("density", argc, argv, &a.o, &src, backend);
  print_header(txt);
  for (int li = 0; li < a.o.lens.n && rc == EXIT_OK; li++) {
    fprintf(stderr, "fp2bench: density: len %lld\n", (long long)a.o.lens.v[li]);
    problem pb;
    if ((rc = experiment_problem("density", &src, &a.o, a.o.lens.v[li], gpu, &pb))) break;
    /* The gpu selects every tile; the cpu oracle scores a sample of them at long lengths. */
    unsigned char *want = gpu ? NULL : sample_tiles(&pb, a.tiles, (uint64_t)a.o.seed);
    pipeline_config cfg = {.density = a.o.density, .seed = (uint64_t)a.o.seed, .want = want,
                           .pooled = POOLED_EXACT, .prob = PROB_EXACT};
    pipeline_result r;
    char err[ERR_LEN];
    if (backend_pipeline(backend, &pb, &cfg, 1, &r, err) != 0) {
      fail("density: gpu: %s", err);
      problem_free(&pb);
      rc = EXIT_RUNTIME;
      break;
    }
    density_stats d;
    density_measure(&pb, &r.index, pb.p.correction, &d);
    /* Needle recall over the question tiles, which a tile sample may have missed. */
    int needle_rows = 0;
    double needle = NAN;
    unsigned char *question = gpu ? NULL : needle_segments(&pb);
    if (gpu || !question) {
      needle = needle_recall(&pb, &r.index, &needle_rows);
    } else {
      csr_index qidx;
      ref_select(&pb, r.kbar, r.kbar_scale, question, &qidx, NULL, 0);
      needle = needle_recall(&pb, &qidx, &needle_rows);
      csr_free(&qidx);
    }
    free(question);
    print_row(txt, &pb, &r.index, &d, needle, needle_rows);
    fflush(txt);
    if (rep) add_row(rep, &pb, &r.index, &d, needle, needle_rows);
    density_free(&d);
    pipeline_result_free(&r);
    free(want);
    problem_free(&pb);
  }
  return experiment_write("density", rep, &a.o, rc);
}
