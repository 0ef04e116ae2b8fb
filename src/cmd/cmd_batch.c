/* fp2bench batch: continuous batching at operator level. One serving batch — a mix of whole
   prompts of different lengths and chunks of longer prompts (chunked prefill: a chunk's queries
   attend to every key before them) — runs as one pass of fp2_forward through the backend that
   speedup times. Per batch: the index stage, the sparse attention, their total, prefill
   tokens/s, the density, our dense pass on the same batch, and the sum of each request run
   alone, whose ratio to the batch's time says whether the batch loses anything to its mix
   (issue 13's target: the batch at >= 95% of the sum of its requests' single speeds). With
   --peers, each whole prompt alone is timed with the peers too (speedup's, on the same inputs
   and index); a chunk (L_q < L_k) is not, since every peer takes whole prompts only (its causal
   mask is aligned to the first key), so the peers' sums cover the whole prompts and are set
   against our single times of the same prompts. */
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
#include "result_rows.h"

/* A prefill mix over 4K-128K as in the paper's Tab. 5 setting: a few long prompts, several
   short ones, and 8K chunks (SGLang's chunked-prefill size) continuing long prompts. */
#define BATCH_DEFAULT_MIX "128k,64k,32k,16k,2x8k,2x4k,8k/128k,8k/96k,8k/40k"
/* The cpu backend's mix: the same kinds of request, small enough for the fp64 oracle. */
#define BATCH_CPU_MIX "1k,2x512,300,256/1k,128/700"

/* Said on stderr and recorded in config.note when the cpu backend runs. */
#define BATCH_CPU_NOTE                                                                             \
  "the times of the cpu backend are the fp64 oracle's wall clock: they mean nothing about the " \
  "kernels' speed (run on a GPU for timings)"

typedef struct batch_args {
  fp2_opts o;
  int dtypes; /* --dtype: an fp2_dtype or DTYPES_BOTH */
  int no_singles;
  const char *peers;
} batch_args;

/* What each request took when run alone, its density, and the peers timed on it (none for a
   chunk). */
typedef struct single_run {
  double total_ms, density;
  peer_timing peers[PEERS_MAX];
  int npeers;
  peer_skip skipped[PEERS_MAX];
  int nskipped;
} single_run;

/* Why no peer times a chunk. */
#define BATCH_CHUNK_SKIP "a chunk (L_q < L_k): the peers take whole prompts only"

static void singles_free(single_run *singles, int n) {
  for (int b = 0; singles && b < n; b++)
    for (int i = 0; i < singles[b].npeers; i++) free(singles[b].peers[i].trials_ms);
  free(singles);
}

/* Each request of the batch as a batch of one, on the same inputs, and the peers on each whole
   prompt (peers: a --peers list, "none" for none); singles[b]. */
static int run_singles(const experiment_run *x, const problem *pb, const pipeline_config *cfg, const char *peers,
                       single_run *singles, char *err) {
  for (int b = 0; b < pb->batch; b++) {
    fprintf(stderr, "fp2bench: batch: request %d of %d alone (%d/%d)\n", b + 1, pb->batch, pb->lq[b], pb->lk[b]);
    problem one;
    problem_request(pb, b, &one);
    problem_prepare(&one, x->backend == BACKEND_GPU);
    pipeline_result r;
    int rc = backend_pipeline(x->backend, &one, cfg, x->o->run.trials, &r, err);
    if (rc == 0) {
      density_stats d;
      density_measure(&one, &r.index, one.p.correction, &d);
      singles[b].total_ms = stage_total_ms(&r.times);
      singles[b].density = density_overall(&d);
      density_free(&d);
      if (strcmp(peers, "none") != 0 && x->backend == BACKEND_GPU) {
        if (one.lq[0] == one.lk[0])
          singles[b].npeers = peers_run(peers, &one, &r.index, x->o->run.trials, singles[b].peers, singles[b].skipped,
                                        &singles[b].nskipped);
        else
          peers_skip(singles[b].skipped, &singles[b].nskipped, peers, BATCH_CHUNK_SKIP);
      }
      pipeline_result_free(&r);
    }
    problem_free(&one);
    if (rc != 0) return -1;
  }
  return 0;
}

/* A peer over the whole prompts of the batch: the sum of its medians, and of ours alone on the
   prompts it ran on. */
typedef struct peer_sum {
  char name[32];
  peer_pairs pairs;
  int prompts;
  double ms, ours_ms;
} peer_sum;

static int peer_sums(const problem *pb, const single_run *singles, peer_sum *sums) {
  int n = 0;
  for (int b = 0; singles && b < pb->batch; b++)
    for (int i = 0; i < singles[b].npeers; i++) {
      const peer_timing *t = &singles[b].peers[i];
      int j = 0;
      while (j < n && strcmp(sums[j].name, t->name) != 0) j++;
      if (j == n) {
        if (n == PEERS_MAX) continue;
        sums[n] = (peer_sum){.pairs = t->pairs};
        snprintf(sums[n].name, sizeof sums[n].name, "%s", t->name);
        n++;
      }
      sums[j].prompts++;
      sums[j].ms += stats_median(t->trials_ms, t->trials);
      sums[j].ours_ms += singles[b].total_ms;
    }
  return n;
}

static int whole_prompts(const problem *pb) {
  int n = 0;
  for (int b = 0; b < pb->batch; b++) n += pb->lq[b] == pb->lk[b];
  return n;
}

static void print_peers(FILE *f, const problem *pb, const peer_sum *sums, int n) {
  for (int j = 0; j < n; j++)
    fprintf(f, "  peer %-10s on %d of %d whole prompts alone: %10.3f ms, ours alone %10.3f ms: %7.2fx\n",
            sums[j].name, sums[j].prompts, whole_prompts(pb), sums[j].ms, sums[j].ours_ms,
            sums[j].ms / sums[j].ours_ms);
}

static void print_row(FILE *f, const problem *pb, fp2_dtype dt, const density_stats *d, const pipeline_result *r,
                      const pipeline_result *dense, double singles_ms) {
  const double total = stage_total_ms(&r->times);
  fprintf(f, "%-5s %5d %8lld %8lld %7.2f%% %10.3f %10.3f %10.3f %11.0f %10.3f %8.2fx", dtype_name(dt), pb->batch,
          (long long)pb->total_q, (long long)pb->total_k, 100 * density_overall(d), stage_index_ms(&r->times), r->times.ms_attend,
          total, (double)pb->total_q / total * 1e3, dense->times.ms_attend, dense->times.ms_attend / total);
  if (singles_ms > 0)
    fprintf(f, " %10.3f %8.3f\n", singles_ms, singles_ms / total);
  else
    fprintf(f, " %10s %8s\n", "-", "-");
}

static void add_row(report *rep, const problem *pb, fp2_dtype dt, const density_stats *d, const pipeline_result *r,
                    const pipeline_result *dense, const single_run *singles, double singles_ms, const peer_sum *sums,
                    int n) {
  cJSON *row = report_add_row(rep);
  const double total = stage_total_ms(&r->times);
  report_put_string(row, "dtype", dtype_name(dt));
  report_put_string(row, "kernel", r->kernel);
  report_put_number(row, "requests", pb->batch);
  report_put_number(row, "total_q", (double)pb->total_q);
  report_put_number(row, "total_k", (double)pb->total_k);
  rows_put_density(row, d);
  rows_put_stage_times(row, r);
  report_put_number(row, "index_ms", stage_index_ms(&r->times));
  report_put_number(row, "total_ms", total);
  report_put_number(row, "tokens_per_s", (double)pb->total_q / total * 1e3);
  report_put_number(row, "attend_tflops", flops_sparse(d) / r->times.ms_attend / 1e9);
  report_add_times(row, "dense", dense->times.t_attend, dense->times.trials);
  report_put_number(row, "dense_tflops", flops_dense(d) / dense->times.ms_attend / 1e9);
  report_put_number(row, "speedup_dense", dense->times.ms_attend / total);
  rows_put_flops(row, d);
  cJSON *each = cJSON_CreateArray();
  for (int b = 0; b < pb->batch; b++) {
    cJSON *item = cJSON_CreateObject();
    report_put_number(item, "lq", pb->lq[b]);
    report_put_number(item, "lk", pb->lk[b]);
    if (singles) {
      report_put_number(item, "alone_total_ms", singles[b].total_ms);
      report_put_number(item, "alone_density", singles[b].density);
      for (int i = 0; i < singles[b].npeers; i++)
        report_add_times(item, singles[b].peers[i].name, singles[b].peers[i].trials_ms, singles[b].peers[i].trials);
      if (singles[b].nskipped) peers_put_skipped(item, singles[b].skipped, singles[b].nskipped);
    }
    cJSON_AddItemToArray(each, item);
  }
  report_put(row, "per_request", each);
  if (singles) {
    report_put_number(row, "singles_total_ms", singles_ms);
    report_put_number(row, "batch_vs_singles", singles_ms / total);
  }
  if (n) report_put_number(row, "whole_prompts", whole_prompts(pb));
  for (int j = 0; j < n; j++) {
    char key[64];
    snprintf(key, sizeof key, "%.31s_prompts", sums[j].name);
    report_put_number(row, key, sums[j].prompts);
    snprintf(key, sizeof key, "%.31s_prompts_ms", sums[j].name);
    report_put_number(row, key, sums[j].ms);
    snprintf(key, sizeof key, "ours_alone_%.31s_prompts_ms", sums[j].name);
    report_put_number(row, key, sums[j].ours_ms);
    snprintf(key, sizeof key, "speedup_%.31s_prompts", sums[j].name);
    report_put_number(row, key, sums[j].ms / sums[j].ours_ms);
    snprintf(key, sizeof key, "%.31s_computes", sums[j].name);
    report_put_string(row, key, sums[j].pairs == PAIRS_CAUSAL ? "every causal pair" : "our index's pairs or fewer");
  }
}

/* One dtype: the batch, our dense pass on it, and (unless --no-singles) each request alone. */
static int row(void *args, const experiment_run *x, problem *pb) {
  const batch_args *a = args;
  const fp2_opts *o = x->o;
  const fp2_dtype dt = (fp2_dtype)o->shape.dtype;
  char err[ERR_LEN];
  const pipeline_config cfg = {.density = o->input.density, .seed = (uint64_t)o->input.seed, .attend = 1};
  const pipeline_config dense_cfg = {.density = 1.0, .attend = 1};
  pipeline_result r, dense;
  fprintf(stderr, "fp2bench: batch: %s, the batch of %d requests\n", dtype_name(dt), pb->batch);
  if (backend_pipeline(x->backend, pb, &cfg, o->run.trials, &r, err) != 0) {
    fail("batch: %s", err);
    return EXIT_RUNTIME;
  }
  fprintf(stderr, "fp2bench: batch: %s, our dense pass on the batch\n", dtype_name(dt));
  if (backend_pipeline(x->backend, pb, &dense_cfg, o->run.trials, &dense, err) != 0) {
    fail("batch: dense: %s", err);
    pipeline_result_free(&r);
    return EXIT_RUNTIME;
  }
  int rc = EXIT_OK;
  single_run *singles = a->no_singles ? NULL : xcalloc((size_t)pb->batch, sizeof *singles);
  double singles_ms = 0;
  if (singles && run_singles(x, pb, &cfg, a->peers, singles, err) != 0) {
    fail("batch: alone: %s", err);
    rc = EXIT_RUNTIME;
  }
  if (rc == EXIT_OK) {
    for (int b = 0; singles && b < pb->batch; b++) singles_ms += singles[b].total_ms;
    density_stats d;
    density_measure(pb, &r.index, pb->p.correction, &d);
    print_row(x->txt, pb, dt, &d, &r, &dense, singles_ms);
    peer_sum sums[PEERS_MAX];
    const int nsums = peer_sums(pb, singles, sums);
    print_peers(x->txt, pb, sums, nsums);
    fflush(x->txt);
    if (x->rep) add_row(x->rep, pb, dt, &d, &r, &dense, singles, singles_ms, sums, nsums);
    density_free(&d);
  }
  singles_free(singles, pb->batch);
  pipeline_result_free(&dense);
  pipeline_result_free(&r);
  return rc;
}

static void begin(void *args, const experiment_run *x) {
  const batch_args *a = args;
  char spec[4096];
  if (x->backend == BACKEND_CPU && strcmp(a->peers, "none") != 0)
    fprintf(stderr, "fp2bench: batch: the peers (--peers %s) run on a GPU only: not timed here\n", a->peers);
  requests_format(spec, sizeof spec, &x->o->shape.requests);
  if (x->backend == BACKEND_CPU)
    experiment_config_set(x->rep, "note", cJSON_CreateString(BATCH_CPU_NOTE));
  fprintf(x->txt, "requests: %s\n", spec);
  fprintf(x->txt, "%-5s %5s %8s %8s %8s %10s %10s %10s %11s %10s %9s %10s %8s\n", "dtype", "reqs", "queries", "keys",
          "density", "index ms", "attend ms", "total ms", "tokens/s", "dense ms", "vs dense", "alone ms",
          "alone/b");
}

static int check_args(void *args, const data_source *src) {
  const batch_args *a = args;
  (void)src;
  if (peers_check_option("batch", a->peers) != 0) return EXIT_USAGE;
  if (a->no_singles && strcmp(a->peers, "none") != 0) {
    fail("batch: --peers times each whole prompt alone, which --no-singles turns off");
    return EXIT_USAGE;
  }
  return 0;
}

static const experiment_cmd batch_cmd = {
    .name = "batch",
    .usage = "batch [options]",
    .summary = "Continuous batching at operator level: one batch of requests of different lengths,\n"
               "whole prompts and chunks of longer ones (--requests), in one pass of fp2_forward\n"
               "through the backend speedup times. Per dtype: the index stage, the sparse attention,\n"
               "their total, prefill tokens/s (queries over the total), the density, our dense pass\n"
               "on the same batch, and the sum of each request run alone beside the batch's time\n"
               "(alone/b >= 0.95: the batch keeps 95% of its requests' single speeds). --peers times\n"
               "each whole prompt alone with speedup's peers too (chunks: none takes them), set\n"
               "against our single times of the same prompts. On the cpu\n"
               "backend every time is the fp64 oracle's wall clock and means nothing; without\n"
               "--requests it runs the small mix " BATCH_CPU_MIX ".",
    .check = check_args,
    .cpu_note = BATCH_CPU_NOTE,
    .cpu_small = 1,
    .cpu_small_requests = BATCH_CPU_MIX,
    .begin = begin,
    .row = row,
};

int cmd_batch(int argc, char **argv) {
  batch_args a = {.dtypes = FP2_BF16, .peers = "none"};
  char err[ERR_LEN];
  opts_defaults(&a.o);
  if (parse_request_list(BATCH_DEFAULT_MIX, &a.o.shape.requests, err) != 0) {
    fail("batch: the default mix: %s", err);
    return EXIT_RUNTIME;
  }
  const opt_spec specs[] = {
      OPT_REQUESTS(&a.o, "the batch"),
      OPTS_HEAD_SHAPE(&a.o),
      OPT_DTYPES(&a.dtypes),
      OPTS_SELECT(&a.o),
      OPTS_DATA(&a.o),
      OPTS_RUN(&a.o),
      OPT_TRIALS(&a.o),
      {"--no-singles", OPT_FLAG, &a.no_singles, NULL, "do not run each request alone"},
      {"--peers", OPT_STRING, &a.peers, "LIST", "peers to time on each whole prompt alone: " PEERS_CHOICES " or none"},
  };
  return experiment_main(&batch_cmd, argc, argv, specs, NOPTS(specs), &a.o, &a, &a.dtypes);
}
