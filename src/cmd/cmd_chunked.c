/* fp2bench chunked: chunked prefill at operator level (the paper's Tab. 6 setting). The prompt
   is split into query chunks of C tokens; chunk c attends to all keys before its end, with the
   index re-run for it (the tail rule applied to the chunk's own last tiles, as a serving
   engine would). Total time and density against the same prompt in one pass. On the gpu in
   BF16 (K and V contiguous, or in pages the attention reads: FP2_ATTEND_PAGE_MIN keys or
   more), each chunk is also run with a pooled cache (fp2_pooled_cache: the means of the blocks
   earlier chunks pooled are read, not pooled again), right after the same chunk without it;
   its index must be the same. The gpu times the index stage twice: as one range (index_ms),
   and stage by stage in passes of their own (an event between two kernels may keep the second
   from starting early). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
  int index_whole;    /* index_ms timed as one range (the gpu), not as its stages' sum */
  double index_ms, attend_ms;
  double index_staged_ms, pool_ms, select_ms; /* the index's stages timed apart, and two of them */
  double computed, causal; /* pairs */
  cJSON *per_chunk;        /* with --out, chunked: each chunk's stage times (an array); else NULL */
} pass_total;

/* One pass, its times and pairs added to t; cache: the pooled cache it runs with (NULL: none);
   index: where its index is kept (NULL: not kept). */
static int one_pass(const experiment_run *x, problem *pb, const fp2_pooled_cache *cache, pass_total *t,
                    csr_index *index, char *err) {
  pipeline_config cfg = {.density = x->o->input.density,
                         .seed = (uint64_t)x->o->input.seed,
                         .attend = 1,
                         .pooled_cache = cache,
                         .index_whole = 1};
  pipeline_result r;
  if (backend_pipeline(x->backend, pb, &cfg, x->o->run.trials, &r, err) != 0) return -1;
  if (index) csr_copy(&r.index, index);
  density_stats d;
  density_measure(pb, &r.index, pb->p.correction, &d);
  t->kernel = r.kernel;
  t->index_whole = r.times.t_index_whole != NULL;
  t->index_ms += stage_index_whole_ms(&r.times);
  t->index_staged_ms += stage_index_ms(&r.times);
  t->pool_ms += r.times.ms_pool;
  t->select_ms += r.times.ms_select;
  t->attend_ms += r.times.ms_attend;
  if (t->per_chunk) {
    cJSON *c = cJSON_CreateObject();
    cJSON_AddNumberToObject(c, "first", pb->lk[0] - pb->lq[0]);
    cJSON_AddNumberToObject(c, "queries", pb->lq[0]);
    cJSON_AddNumberToObject(c, "index_ms", stage_index_whole_ms(&r.times));
    cJSON_AddNumberToObject(c, "pool_ms", r.times.ms_pool);
    cJSON_AddNumberToObject(c, "select_ms", r.times.ms_select);
    cJSON_AddNumberToObject(c, "attend_ms", r.times.ms_attend);
    cJSON_AddNumberToObject(c, "submit_ms", r.times.ms_submit); /* the host's time enqueuing the pass */
    cJSON_AddItemToArray(t->per_chunk, c);
  }
  t->computed += d.computed;
  t->causal += d.causal;
  density_free(&d);
  pipeline_result_free(&r);
  return 0;
}

/* The prompt in chunks of `chunk` queries (the last one shorter when chunk does not divide it);
   with cache (fresh: every row NaN), each chunk again with it, into cached. */
static int chunked_pass(const experiment_run *x, const problem *full, int chunk, const fp2_pooled_cache *cache,
                        pass_total *t, pass_total *cached, char *err) {
  const int len = full->lq[0];
  for (int first = 0; first < len; first += chunk) {
    problem c;
    csr_index without = {0}, with = {0};
    problem_chunk(full, first, first + chunk < len ? chunk : len - first, &c);
    problem_prepare(&c, x->backend == BACKEND_GPU);
    int rc = one_pass(x, &c, NULL, t, cache ? &without : NULL, err);
    if (rc == 0 && cache) {
      rc = one_pass(x, &c, cache, cached, &with, err);
      if (rc == 0 && !csr_same(&without, &with)) {
        err_set(err, "the pooled cache changed the index of the chunk at %d (a bug: it must not)", first);
        rc = -1;
      }
    }
    csr_free(&without);
    csr_free(&with);
    problem_free(&c);
    if (rc != 0) return -1;
  }
  return 0;
}

/* A row; uncached: for a pooled cache's row, the same chunks without it (else NULL). The row
   takes t->per_chunk. */
static void emit(FILE *txt, report *rep, int64_t len, const char *mode, int64_t chunk, pass_total *t,
                 const pass_total *whole, const pass_total *uncached) {
  double total = t->index_ms + t->attend_ms, whole_total = whole->index_ms + whole->attend_ms;
  fprintf(txt, "%7lld %-13s %7lld %8.2f%% %10.3f %10.3f %10.3f %10.3f %9.2fx", (long long)len, mode,
          (long long)chunk, 100 * t->computed / t->causal, t->index_ms, t->index_staged_ms, t->attend_ms, total,
          total / whole_total);
  if (uncached) fprintf(txt, " %12.2f", t->index_ms / uncached->index_ms);
  fputc('\n', txt);
  if (!rep) {
    cJSON_Delete(t->per_chunk);
    t->per_chunk = NULL;
    return;
  }
  cJSON *row = report_add_row(rep);
  report_put_number(row, "len", (double)len);
  report_put_string(row, "mode", mode);
  report_put_number(row, "chunk", (double)chunk);
  report_put_string(row, "kernel", t->kernel);
  report_put_number(row, "density", t->computed / t->causal);
  report_put_number(row, "index_ms", t->index_ms);
  report_put_string(row, "index_timed", t->index_whole ? "as one range" : "as its stages' sum");
  report_put_number(row, "index_staged_ms", t->index_staged_ms);
  report_put_number(row, "pool_ms", t->pool_ms);
  report_put_number(row, "select_ms", t->select_ms);
  report_put_number(row, "attend_ms", t->attend_ms);
  report_put_number(row, "total_ms", total);
  report_put_number(row, "time_vs_one_pass", total / whole_total);
  if (uncached) report_put_number(row, "index_vs_uncached", t->index_ms / uncached->index_ms);
  if (t->per_chunk) cJSON_AddItemToObject(row, "per_chunk", t->per_chunk);
  t->per_chunk = NULL;
}

/* Why the chunks run without a pooled cache here (NULL: they run with one too): the library's
   own rules (fp2_check_pooled_cache), asked with stand-ins where only the dtype and the page
   size decide. */
static const char *no_cache_reason(const experiment_run *x, const problem *full) {
  if (x->backend != BACKEND_GPU) return "the cpu backend has no pooled cache";
  const int any_table[1] = {0};
  float any_mean[1];
  const fp2_pooled_cache cache = {any_mean, any_mean, any_table, 0};
  const fp2_plan plan = {0};
  if (fp2_check_pooled_cache(&full->p, &plan, &cache) != FP2_OK)
    return fp2_error_message();
  return NULL;
}

/* The prompt in one pass, then in chunks of each size. */
static int row(void *args, const experiment_run *x, problem *full) {
  const chunked_args *a = args;
  const int64_t len = full->lq[0];
  char err[ERR_LEN];
  int rc = EXIT_OK;
  pass_total whole = {0};
  const char *no_cache = no_cache_reason(x, full);
  if (no_cache) fprintf(stderr, "fp2bench: chunked: no pooled-cache rows: %s\n", no_cache);
  fprintf(stderr, "fp2bench: chunked: one pass\n");
  if (one_pass(x, full, NULL, &whole, NULL, err) != 0) {
    fail("chunked: %s", err);
    rc = EXIT_RUNTIME;
  } else {
    emit(x->txt, x->rep, len, "one-pass", len, &whole, &whole, NULL);
  }
  for (int i = 0; i < a->chunks.n && rc == EXIT_OK; i++) {
    pass_total t = {.per_chunk = x->rep ? cJSON_CreateArray() : NULL};
    pass_total cached = {.per_chunk = x->rep && !no_cache ? cJSON_CreateArray() : NULL};
    fp2_pooled_cache cache;
    fprintf(stderr, "fp2bench: chunked: chunks of %lld%s\n", (long long)a->chunks.v[i],
            no_cache ? "" : ", each without and with the pooled cache");
    if ((!no_cache && gpu_pooled_cache_create(&full->p, len, &cache, err) != 0) ||
        chunked_pass(x, full, (int)a->chunks.v[i], no_cache ? NULL : &cache, &t, &cached, err) != 0) {
      fail("chunked: %s", err);
      rc = EXIT_RUNTIME;
    }
    if (!no_cache) gpu_pooled_cache_free(&cache);
    if (rc != EXIT_OK) {
      cJSON_Delete(t.per_chunk);
      cJSON_Delete(cached.per_chunk);
      break;
    }
    emit(x->txt, x->rep, len, "chunked", a->chunks.v[i], &t, &whole, NULL);
    if (!no_cache) emit(x->txt, x->rep, len, "chunked+cache", a->chunks.v[i], &cached, &whole, &t);
  }
  return rc;
}

static void begin(void *args, const experiment_run *x) {
  const chunked_args *a = args;
  experiment_config_set(x->rep, "chunk", experiment_sizes_json(&a->chunks)); /* what it swept */
  fprintf(x->txt, "%7s %-13s %7s %9s %10s %10s %10s %10s %10s %12s\n", "len", "mode", "chunk", "density",
          "index ms", "(staged)", "attend ms", "total ms", "vs 1 pass", "idx/uncached");
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
               "end with the index re-run per chunk; total time and density against one pass. On the\n"
               "gpu in BF16 (K and V contiguous or --paged 64 and up), each chunk also runs with a\n"
               "pooled cache (the means of the key blocks earlier chunks pooled, read rather than\n"
               "pooled again: rows chunked+cache, index_vs_uncached), its index checked to be the\n"
               "same. On the gpu the index stage is timed as one range, in passes of their own\n"
               "beside the ones that time each stage (index_staged_ms: their sum), so that its\n"
               "kernels start early across the stages as they do untimed.",
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
