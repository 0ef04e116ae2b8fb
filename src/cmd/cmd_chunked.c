/* fp2bench chunked: chunked prefill at operator level (the paper's Tab. 6 setting). The
   prompt is split into query chunks of C tokens; chunk c attends to all keys before its end,
   with the index re-run for it (the tail rule applied to the chunk's own last tiles, as a
   serving engine would). Total time and density against the same prompt in one pass. */
#include <stdio.h>
#include <stdlib.h>

#include "commands.h"
#include "density.h"
#include "error.h"
#include "experiment.h"
#include "report.h"

typedef struct chunked_args {
  fp2_opts o;
  size_list chunks;
} chunked_args;

typedef struct pass_total {
  const char *kernel; /* pipeline_result.kernel of its passes */
  double index_ms, attend_ms;
  double computed, causal; /* pairs */
} pass_total;

static int one_pass(const experiment_run *x, problem *pb, pass_total *t, char *err) {
  pipeline_config cfg = {.density = x->o->input.density, .seed = (uint64_t)x->o->input.seed, .attend = 1};
  pipeline_result r;
  if (backend_pipeline(x->backend, pb, &cfg, x->o->run.trials, &r, err) != 0) return -1;
  density_stats d;
  density_measure(pb, &r.index, pb->p.correction, &d);
  t->kernel = r.kernel;
  t->index_ms += stage_index_ms(&r.times);
  t->attend_ms += r.times.ms_attend;
  t->computed += d.computed;
  t->causal += d.causal;
  density_free(&d);
  pipeline_result_free(&r);
  return 0;
}

/* The prompt in chunks of `chunk` queries (the last one shorter when chunk does not divide it). */
static int chunked_pass(const experiment_run *x, const problem *full, int chunk, pass_total *t, char *err) {
  const int len = full->lq[0];
  for (int first = 0; first < len; first += chunk) {
    problem c;
    problem_chunk(full, first, first + chunk < len ? chunk : len - first, &c);
    problem_prepare(&c, x->backend == BACKEND_GPU);
    int rc = one_pass(x, &c, t, err);
    problem_free(&c);
    if (rc != 0) return -1;
  }
  return 0;
}

static void emit(FILE *txt, report *rep, int64_t len, const char *mode, int64_t chunk, const pass_total *t,
                 const pass_total *whole) {
  double total = t->index_ms + t->attend_ms, whole_total = whole->index_ms + whole->attend_ms;
  fprintf(txt, "%7lld %-9s %7lld %8.2f%% %10.3f %10.3f %10.3f %9.2fx\n", (long long)len, mode, (long long)chunk,
          100 * t->computed / t->causal, t->index_ms, t->attend_ms, total, total / whole_total);
  if (!rep) return;
  cJSON *row = report_add_row(rep);
  report_put_number(row, "len", (double)len);
  report_put_string(row, "mode", mode);
  report_put_number(row, "chunk", (double)chunk);
  report_put_string(row, "kernel", t->kernel);
  report_put_number(row, "density", t->computed / t->causal);
  report_put_number(row, "index_ms", t->index_ms);
  report_put_number(row, "attend_ms", t->attend_ms);
  report_put_number(row, "total_ms", total);
  report_put_number(row, "time_vs_one_pass", total / whole_total);
}

/* The prompt in one pass, then in chunks of each size. */
static int row(void *args, const experiment_run *x, problem *full) {
  const chunked_args *a = args;
  const int64_t len = full->lq[0];
  char err[ERR_LEN];
  int rc = EXIT_OK;
  pass_total whole = {0, 0, 0, 0};
  fprintf(stderr, "fp2bench: chunked: one pass\n");
  if (one_pass(x, full, &whole, err) != 0) {
    fail("chunked: %s", err);
    rc = EXIT_RUNTIME;
  } else {
    emit(x->txt, x->rep, len, "one-pass", len, &whole, &whole);
  }
  for (int i = 0; i < a->chunks.n && rc == EXIT_OK; i++) {
    pass_total t = {0, 0, 0, 0};
    fprintf(stderr, "fp2bench: chunked: chunks of %lld\n", (long long)a->chunks.v[i]);
    if (chunked_pass(x, full, (int)a->chunks.v[i], &t, err) != 0) {
      fail("chunked: %s", err);
      rc = EXIT_RUNTIME;
      break;
    }
    emit(x->txt, x->rep, len, "chunked", a->chunks.v[i], &t, &whole);
  }
  return rc;
}

static void begin(void *args, const experiment_run *x) {
  const chunked_args *a = args;
  experiment_config_set(x->rep, "chunk", experiment_sizes_json(&a->chunks)); /* what it swept */
  fprintf(x->txt, "%7s %-9s %7s %9s %10s %10s %10s %10s\n", "len", "mode", "chunk", "density", "index ms",
          "attend ms", "total ms", "vs 1 pass");
}

static int check_args(void *args, const data_source *src) {
  const chunked_args *a = args;
  (void)src;
  for (int i = 0; i < a->chunks.n; i++)
    if (a->chunks.v[i] <= 0 || a->chunks.v[i] > (1 << 24)) {
      fail("chunked: --chunk: %lld is outside 1..16m", (long long)a->chunks.v[i]);
      return EXIT_USAGE;
    }
  if (a->o.shape.batch != 1) {
    fail("chunked: --batch must be 1");
    return EXIT_USAGE;
  }
  return 0;
}

static const experiment_cmd chunked_cmd = {
    .name = "chunked",
    .usage = "chunked [options]",
    .summary = "Chunked prefill: the prompt in query chunks, each attending to every key before its\n"
               "end with the index re-run per chunk; total time and density against one pass.",
    .check = check_args,
    .one_len = 1,
    .begin = begin,
    .row = row,
};

int cmd_chunked(int argc, char **argv) {
  chunked_args a = {.chunks = {2, {8192, 16384}}};
  opts_defaults(&a.o);
  a.o.run.trials = 3; /* each pass is timed; the chunked mode runs several */
  a.o.shape.lens.v[0] = 65536;
  const opt_spec specs[] = {
      OPTS_EXPERIMENT(&a.o),
      {"--chunk", OPT_SIZE_LIST, &a.chunks, "C[,C...]", "query chunk sizes"},
      OPT_TRIALS(&a.o),
  };
  return experiment_main(&chunked_cmd, argc, argv, specs, NOPTS(specs), &a.o, &a, NULL);
}
