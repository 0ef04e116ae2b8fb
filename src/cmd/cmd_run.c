/* fp2bench run: one forward pass (pool -> select -> attend) on one source, with its
   density, stage times and quality against full attention on sampled rows. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "commands.h"
#include "density.h"
#include "error.h"
#include "experiment.h"
#include "outfile.h"
#include "pass_dump.h"
#include "quality.h"
#include "report.h"
#include "result_rows.h"

/* Score[T,J] is dumped when it has at most this many elements (256 MB of f32). */
#define SCORE_DUMP_MAX ((int64_t)1 << 26)

typedef struct run_args {
  fp2_opts o;
  const char *dump;
  int rows;
} run_args;

static void print_summary(FILE *f, int gpu, const pipeline_result *r, const density_stats *d, const quality *q,
                          double needle, int needle_rows) {
  fprintf(f, "density      %.2f%% of causal pairs   per KV head:", 100 * density_overall(d));
  for (int h = 0; h < d->hkv; h++) fprintf(f, " %.1f", 100 * density_of_head(d, h));
  fprintf(f, "\n");
  fprintf(f, "index        %lld blocks in %d segments (%.1f per segment)\n", (long long)r->index.nnz, r->index.nseg,
         r->index.nseg ? (double)r->index.nnz / r->index.nseg : 0.0);
  fprintf(f, "flops        sparse %.3g, index %.3g, correction %.3g, auxiliary/sparse %.1f%%\n", flops_sparse(d),
         flops_index(d), flops_correction(d), 100 * flops_aux_ratio(d));
  if (gpu) {
    fprintf(f, "time (gpu)   quantise %.3f ms, pool %.3f ms, select %.3f ms, attend %.3f ms (%s kernel, median of %d)\n",
            r->times.ms_quant, r->times.ms_pool, r->times.ms_select, r->times.ms_attend, r->kernel, r->times.trials);
    fprintf(f, "rate         attend %.1f TFLOP/s over the computed pairs\n", flops_sparse(d) / r->times.ms_attend / 1e9);
  } else {
    fprintf(f, "time (cpu)   pool %.1f ms, select %.1f ms, attend %.1f ms\n", r->times.ms_pool, r->times.ms_select, r->times.ms_attend);
  }
  if (q->rows == 0)
    fprintf(f, "quality      not measured (--rows 0)\n");
  else
    fprintf(f, "quality      rel. L2 error vs full attention %.3g; attention-mass recall %.2f%% (%d rows)\n", q->err,
            100 * q->mass_recall, q->rows);
  if (needle_rows) fprintf(f, "needles      recall %.2f%% over %d question rows\n", 100 * needle, needle_rows);
}

static void add_row(report *rep, const problem *pb, const pipeline_result *r, const density_stats *d,
                    const quality *q, double needle, int needle_rows) {
  cJSON *row = report_add_row(rep);
  report_put_number(row, "len", pb->lq[0]);
  report_put_string(row, "kernel", r->kernel);
  rows_put_density(row, d);
  report_put_number(row, "blocks_kept", (double)r->index.nnz);
  report_put_number(row, "segments", r->index.nseg);
  rows_put_flops(row, d);
  rows_put_stage_times(row, r);
  report_put_number(row, "attend_tflops", flops_sparse(d) / r->times.ms_attend / 1e9);
  rows_put_quality(row, q);
  rows_put_needles(row, needle, needle_rows);
}

static int check_args(void *args, const data_source *src) {
  const run_args *a = args;
  const named_file others[] = {{"--data", src->is_file ? src->path : NULL}, {"--out", a->o.run.out}};
  char err[ERR_LEN];
  if (outfile_check_option("--dump", a->dump, others, NOPTS(others), err) != 0) {
    fail("run: %s", err);
    return EXIT_USAGE;
  }
  if (a->rows < 0) {
    fail("run: --rows: %d is negative", a->rows);
    return EXIT_USAGE;
  }
  return 0;
}

/* The one pass. */
static int row(void *args, const experiment_run *x, problem *pb) {
  const run_args *a = args;
  const fp2_opts *o = x->o;
  const int gpu = x->backend == BACKEND_GPU;
  fprintf(stderr, "fp2bench: run: %s, len %d, batch %d, heads %d:%d, dim %d, %s, %s\n", source_name(x->src),
          pb->lq[0], pb->batch, pb->p.hq, pb->p.hkv, pb->p.dim, dtype_name(o->shape.dtype),
          gpu ? "gpu backend" : "cpu backend (fp64 oracle)");
  int64_t score_elems = (int64_t)pb->p.hkv * pb->cu_tiles[1] * pb->cu_blocks[1];
  pipeline_config cfg = {.density = o->input.density,
                         .seed = (uint64_t)o->input.seed,
                         .want = NULL,
                         .want_score = a->dump && pb->batch == 1 && score_elems <= SCORE_DUMP_MAX,
                         .attend = 1,
                         .keep_outputs = 1,
                         .pooled = POOLED_EXACT,
                         .prob = PROB_EXACT};
  pipeline_result r;
  char err[ERR_LEN];
  if (backend_pipeline(x->backend, pb, &cfg, o->run.trials, &r, err) != 0) {
    fail("run: gpu: %s", err);
    return EXIT_RUNTIME;
  }

  density_stats d;
  density_measure(pb, &r.index, pb->p.correction, &d);
  row_sample rows;
  sample_rows(pb, a->rows, (uint64_t)o->input.seed, &rows);
  full_reference ref;
  full_reference_compute(pb, &rows, &ref);
  quality q;
  quality_measure(pb, &r.index, &rows, &ref, r.output, &q);
  full_reference_free(&ref);
  int needle_rows;
  double needle = needle_recall(pb, &r.index, &needle_rows);
  print_summary(x->txt, gpu, &r, &d, &q, needle, needle_rows);

  int rc = EXIT_OK;
  if (a->dump && pass_dump(a->dump, pb, &r, err) != 0) {
    fail("run: %s", err);
    rc = EXIT_RUNTIME;
  }
  if (rc == EXIT_OK && x->rep) add_row(x->rep, pb, &r, &d, &q, needle, needle_rows);
  row_sample_free(&rows);
  density_free(&d);
  pipeline_result_free(&r);
  return rc;
}

static const experiment_cmd run_cmd = {
    .name = "run",
    .usage = "run [options]",
    .summary = "One forward pass (pool, select, attend) on one source: density, stage times,\n"
               "and quality against full attention on sampled rows.",
    .check = check_args,
    .one_len = 1,
    .cpu_small = 1,
    .row = row,
};

int cmd_run(int argc, char **argv) {
  run_args a = {.dump = NULL, .rows = 64};
  opts_defaults(&a.o);
  const opt_spec specs[] = {
      OPTS_EXPERIMENT(&a.o),
      {"--dump", OPT_STRING, &a.dump, "OUT.safetensors", "write o, k_mean, v_mean, csr_offsets, csr_indices, score"},
      {"--rows", OPT_INT, &a.rows, "N", "query rows sampled for the quality metrics"},
      OPT_TRIALS(&a.o),
  };
  return experiment_main(&run_cmd, argc, argv, specs, NOPTS(specs), &a.o, &a, NULL);
}
