/* fp2bench check: a backend against the fp64 oracle on fresh random inputs over a grid of
   shapes. The cpu backend is the oracle in the kernels' precision (bf16/e4m3 pooled keys,
   rounded probabilities): it shows the precision budget the gpu kernels are held to. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "commands.h"
#include "error.h"
#include "experiment.h"
#include "report.h"

typedef struct check_opts {
  fp2_opts o;
  int rows;
  double flip_tol;
  int show;
} check_opts;

/* One point of the grid: one length (of --batch equal sequences), or the batch of --requests. */
typedef struct check_case {
  int64_t len;
  const request_list *requests; /* NULL: len */
  int hq, hkv;
  const char *data;
  fp2_dtype dtype;
  int correction;
  uint64_t seed; /* its inputs': --seed, then a step per case (with its axes given, --seed this reruns it) */
} check_case;

static const char *const grid_sources[] = {"synth:random", "synth:llm"};
static const int grid_groups[] = {1, 4, 8};
#define GRID_SOURCES ((int)(sizeof grid_sources / sizeof grid_sources[0]))
#define GRID_GROUPS ((int)(sizeof grid_groups / sizeof grid_groups[0]))

/* KV heads of the grid's cases without --heads: 8 on a gpu, as in a model; 1 on the cpu, to
   keep the fp64 oracle's run short. */
static int grid_hkv(int backend) { return backend == BACKEND_GPU ? 8 : 1; }

/* Default relative distance to the threshold within which a differing block is a flip:
   the gpu's (gpu_flip_tolerance); the cpu backend rounds the pooled keys (bf16: 2^-9
   relative, e4m3: 2^-4) before scoring, which moves energies by up to a few percent (bf16)
   or tens of percent (e4m3). */
static double default_flip_tol(int backend, fp2_dtype dt) {
  if (backend == BACKEND_GPU) return gpu_flip_tolerance(dt);
  return dt == FP2_FP8 ? 0.5 : 0.05;
}

typedef struct case_result {
  index_diff index;
  output_diff out;
  int64_t operand_mismatches; /* gpu FP8: quantised operands differing from the host's */
  double pooled_error;        /* gpu: pooled means against the oracle's, relative */
  const char *kernel;         /* pipeline_result.kernel: what attended */
  int ok;
} case_result;

/* Quantised operands and scales of the gpu against the host's quantisation of the same bf16
   values: they must agree bit for bit. Returns the number of differing values. */
static int64_t compare_operands(const problem *pb, const gpu_operands *gpu) {
  if (pb->p.dtype != FP2_FP8) return 0;
  size_t nq = (size_t)pb->total_q * pb->p.hq * pb->p.dim, nk = (size_t)pb->total_k * pb->p.hkv * pb->p.dim;
  return (gpu->scales[0] != pb->sq) + (gpu->scales[1] != pb->sk) + (gpu->scales[2] != pb->sv) +
         check_codes(gpu->q_op, pb->q_op, nq, NULL) + check_codes(gpu->k_op, pb->k_op, nk, NULL) +
         check_codes(gpu->v_op, pb->v_op, nk, NULL);
}

static void run_case(const check_opts *a, int backend, const check_case *c, case_result *res) {
  fp2_opts o = a->o;
  o.shape.lens.n = 1;
  o.shape.lens.v[0] = c->len;
  if (!c->requests) o.shape.requests.n = 0;
  o.shape.hq = c->hq;
  o.shape.hkv = c->hkv;
  o.shape.dtype = c->dtype;
  o.select.no_correction = !c->correction;
  o.input.data = c->data;
  o.input.seed = (int64_t)c->seed;
  data_source src;
  char err[ERR_LEN];
  problem pb;
  memset(res, 0, sizeof *res);
  if (source_parse(c->data, &src, err) != 0) {
    fail("check: %s", err);
    return;
  }
  if (experiment_problem("check", &src, &o, c->len, 1, &pb) != EXIT_OK) return;
  /* A long case, or a batch of many queries, is compared on sampled rows and tiles. */
  const int64_t size = c->requests ? pb.total_q : c->len;
  int max_rows = a->rows > 0 ? a->rows : (size <= 8192 ? (int)(pb.total_q * pb.p.hq) : 4096);
  row_sample rows;
  sample_rows(&pb, max_rows, c->seed, &rows);
  /* --density: the attention over a forced random mask, which the pass takes as a given
     index (fp2_forward's path for a caller's index): there is no selection to compare. */
  const int forced = a->o.input.density >= 0;
  pipeline_config cfg = {.density = a->o.input.density, .seed = c->seed, .attend = 1, .rows = &rows,
                         .keep_outputs = 1, .pooled = POOLED_ROUNDED, .prob = PROB_EMULATED};
  pipeline_result r;
  const float *kbar_ref;
  double kbar_ref_scale;
  float *exact_kbar = NULL;
  if (backend == BACKEND_GPU) {
    if (gpu_pipeline(&pb, &cfg, 1, &r, err) != 0) {
      fail("check: gpu: %s", err);
      row_sample_free(&rows);
      problem_free(&pb);
      return;
    }
    /* The index is checked against the oracle's selection from the gpu's own pooled keys. */
    kbar_ref = r.kbar;
    kbar_ref_scale = r.kbar_scale;
    res->operand_mismatches = compare_operands(&pb, &r.gpu);
    res->pooled_error = check_pooled(&pb, r.k_mean, r.v_mean);
    if (size > 8192) {
      free(r.index.evaluated);
      r.index.evaluated = sample_tiles(&pb, 64, c->seed);
    }
  } else {
    cpu_pipeline(&pb, &cfg, &r);
    /* The cpu backend's rounding against the exact definition. */
    size_t n = (size_t)pb.p.hkv * pb.cu_blocks[pb.batch] * pb.p.dim;
    exact_kbar = xmalloc(sizeof(float) * (n ? n : 1));
    kbar_ref_scale = ref_pooled_operands(pb.p.dtype, POOLED_EXACT, pb.sk, r.k_mean, exact_kbar, n);
    kbar_ref = exact_kbar;
  }
  res->kernel = r.kernel;
  double tol = a->flip_tol > 0 ? a->flip_tol : default_flip_tol(backend, c->dtype);
  if (forced)
    res->index.blocks = r.index.nnz;
  else
    check_index(&pb, kbar_ref, kbar_ref_scale, &r.index, tol, a->show, &res->index);
  const pooled_view pooled = pipeline_pooled(&r);
  check_outputs(&pb, &r.index, &pooled, &rows, r.output, a->show, &res->out);
  res->ok = res->index.mismatches == 0 && res->out.bad_rows == 0 && res->operand_mismatches == 0 &&
            res->pooled_error <= CHECK_POOLED_TOL;
  if (res->operand_mismatches) fprintf(stderr, "  %lld quantised operands differ from the host's\n",
                                       (long long)res->operand_mismatches);
  if (!(res->pooled_error <= CHECK_POOLED_TOL)) fprintf(stderr, "  pooled means differ by %.3g (relative)\n", res->pooled_error);
  free(exact_kbar);
  row_sample_free(&rows);
  pipeline_result_free(&r);
  problem_free(&pb);
}

static void print_case(FILE *f, const check_case *c, const case_result *r) {
  char len[24];
  if (c->requests)
    snprintf(len, sizeof len, "batch");
  else
    snprintf(len, sizeof len, "%lld", (long long)c->len);
  fprintf(f, "%7s %5d:%-2d %-12s %-4s %-4s %8lld %6lld %9.2g %5lld %7d %9.3g %9.3g %9.3g  %s\n", len, c->hq, c->hkv,
          c->data, dtype_name(c->dtype), c->correction ? "on" : "off",
          (long long)r->index.blocks, (long long)r->index.flips, r->index.worst_flip, (long long)r->index.mismatches,
          r->out.rows, r->out.err, r->out.bound, r->out.rel_l2, r->ok ? "ok" : "FAIL");
}

static void add_row(report *rep, const check_case *c, const case_result *r) {
  cJSON *row = report_add_row(rep);
  if (c->requests)
    report_put(row, "requests", experiment_requests_json(c->requests));
  else
    report_put_number(row, "len", (double)c->len);
  report_put_number(row, "hq", c->hq);
  report_put_number(row, "hkv", c->hkv);
  report_put_string(row, "data", c->data);
  report_put_string(row, "dtype", dtype_name(c->dtype));
  report_put(row, "correction", cJSON_CreateBool(c->correction));
  report_put_number(row, "seed", (double)c->seed);
  report_put_string(row, "kernel", r->kernel);
  report_put_number(row, "index_blocks", (double)r->index.blocks);
  report_put_number(row, "index_flips", (double)r->index.flips);
  report_put_number(row, "index_worst_flip", r->index.worst_flip);
  report_put_number(row, "index_mismatches", (double)r->index.mismatches);
  report_put_number(row, "rows", r->out.rows);
  report_put_number(row, "max_error", r->out.err);
  report_put_number(row, "max_error_emulated", r->out.err_emul);
  report_put_number(row, "bound", r->out.bound);
  report_put_number(row, "rel_l2", r->out.rel_l2);
  report_put_number(row, "bad_rows", r->out.bad_rows);
  report_put_number(row, "operand_mismatches", (double)r->operand_mismatches);
  report_put_number(row, "pooled_error", r->pooled_error);
  report_put(row, "ok", cJSON_CreateBool(r->ok));
}

/* The axes the grid sweeps (those not given) as the config records them. */
static void config_grid(report *rep, const fp2_opts *o, int backend) {
  const int hkv = grid_hkv(backend);
  if (!o->given.heads) {
    cJSON *hq = cJSON_CreateArray();
    for (int gi = 0; gi < GRID_GROUPS; gi++) cJSON_AddItemToArray(hq, cJSON_CreateNumber(grid_groups[gi] * hkv));
    experiment_config_set(rep, "hq", hq);
    experiment_config_set(rep, "hkv", cJSON_CreateNumber(hkv));
  }
  if (!o->given.data) experiment_config_set(rep, "data", cJSON_CreateStringArray(grid_sources, GRID_SOURCES));
  if (!o->given.dtype) experiment_config_set(rep, "dtype", cJSON_CreateString(dtypes_name(DTYPES_BOTH)));
  if (!o->given.correction) experiment_config_corrections(rep);
}

static int check_args(void *args, const data_source *src) {
  const check_opts *a = args;
  if (src->is_file) {
    fail("check: --data: check draws fresh random inputs; give synth:random, synth:llm or synth:niah");
    return EXIT_USAGE;
  }
  if (a->rows < 0 || a->flip_tol < 0 || a->show < 0) {
    fail("check: --rows, --flip-tol and --show must not be negative");
    return EXIT_USAGE;
  }
  return 0;
}

static const experiment_cmd check_cmd = {
    .name = "check",
    .usage = "check [options]",
    .summary = "Compare a backend with the fp64 oracle on fresh random inputs over a grid:\n"
               "lengths (--len) and a batch of mixed lengths and chunked requests (--requests),\n"
               "groups g = 1, 4, 8 (or --heads), synth:random and synth:llm (or --data), bf16\n"
               "and fp8 (or --dtype), correction on and off (or --no-correction). The index\n"
               "must match but for near-threshold flips (with --density the mask is forced and\n"
               "given to the pass: no index to compare); outputs must stay within 2x the error\n"
               "of the oracle emulating the kernels' rounding plus 1/256. Exit 1 on any mismatch.",
    .check = check_args,
};

int cmd_check(int argc, char **argv) {
  check_opts a = {.rows = 0, .flip_tol = 0, .show = 10};
  opts_defaults(&a.o);
  opt_spec specs[] = {
      OPTS_EXPERIMENT(&a.o),
      OPT_REQUESTS(&a.o, "also check this batch (alone unless --len is given)"),
      {"--rows", OPT_INT, &a.rows, "N", "output rows compared per case (0: all up to 8K, else 4096 sampled)"},
      {"--flip-tol", OPT_DOUBLE, &a.flip_tol, "X", "relative distance to the threshold of a tolerated flip (0: default)"},
      {"--show", OPT_INT, &a.show, "N", "mismatches printed per case"},
  };
  /* check sweeps a grid: its own lengths, and both precisions unless one is given. */
  cli_set_help(specs, NOPTS(specs), "--len",
               "sequence length(s): 1000, 4k, 128k (default: 1k,2k+77 on the cpu; 1k,4k,4k+77,16k,64k,128k on a gpu)");
  cli_set_help(specs, NOPTS(specs), "--dtype", "operand precision (default: bf16, then fp8)");
  data_source src;
  int backend;
  int rc = experiment_start(&check_cmd, argc, argv, specs, NOPTS(specs), &a.o, &a, &src, &backend);
  if (rc != EXPERIMENT_GO) return rc;
  if (!a.o.given.len && a.o.shape.requests.n) {
    a.o.shape.lens.n = 0; /* the batch alone */
  } else if (!a.o.given.len && backend == BACKEND_GPU) {
    static const int64_t gpu_lens[] = {1024, 4096, 4096 + 77, 16384, 65536, 131072};
    a.o.shape.lens.n = 6;
    memcpy(a.o.shape.lens.v, gpu_lens, sizeof gpu_lens);
  } else if (!a.o.given.len) {
    a.o.shape.lens.n = 2;
    a.o.shape.lens.v[0] = 1024;
    a.o.shape.lens.v[1] = 2048 + 77;
  }

  FILE *txt = experiment_text(a.o.run.out);
  report *rep = a.o.run.out ? report_new("check", argc, argv) : NULL;
  if (rep) {
    experiment_config(report_config(rep), &a.o, &src, backend == BACKEND_GPU ? "gpu" : "cpu");
    config_grid(rep, &a.o, backend);
  }
  if (a.o.shape.requests.n) {
    char spec[4096];
    requests_format(spec, sizeof spec, &a.o.shape.requests);
    fprintf(txt, "batch: %d requests, %lld queries, %lld keys: %s\n", a.o.shape.requests.n,
            (long long)requests_total_q(&a.o.shape.requests), (long long)requests_total_k(&a.o.shape.requests), spec);
  }
  fprintf(txt, "%7s %8s %-12s %-4s %-4s %8s %6s %9s %5s %7s %9s %9s %9s  %s\n", "len", "heads", "data", "type",
          "corr", "blocks", "flips", "worst", "mism", "rows", "max err", "bound", "rel L2", "verdict");
  int ncases = 0, nfailed = 0;
  const int nlens = a.o.shape.lens.n + (a.o.shape.requests.n > 0); /* the batch comes last */
  for (int li = 0; li < nlens; li++)
    for (int gi = 0; gi < (a.o.given.heads ? 1 : GRID_GROUPS); gi++)
      for (int si = 0; si < (a.o.given.data ? 1 : GRID_SOURCES); si++)
        for (int di = 0; di < (a.o.given.dtype ? 1 : 2); di++)
          for (int ci = 0; ci < (a.o.given.correction ? 1 : 2); ci++) {
            const int is_batch = li == a.o.shape.lens.n;
            check_case c = {.len = is_batch ? 0 : a.o.shape.lens.v[li],
                            .requests = is_batch ? &a.o.shape.requests : NULL,
                            .hq = a.o.given.heads ? a.o.shape.hq : grid_groups[gi] * grid_hkv(backend),
                            .hkv = a.o.given.heads ? a.o.shape.hkv : grid_hkv(backend),
                            .data = a.o.given.data ? a.o.input.data : grid_sources[si],
                            .dtype = a.o.given.dtype ? (fp2_dtype)a.o.shape.dtype : (fp2_dtype)di,
                            .correction = a.o.given.correction ? 0 : ci == 0,
                            .seed = (uint64_t)a.o.input.seed + 7919u * (uint64_t)ncases};
            case_result r;
            run_case(&a, backend, &c, &r);
            print_case(txt, &c, &r);
            fflush(txt);
            if (rep) add_row(rep, &c, &r);
            ncases++;
            nfailed += !r.ok;
          }
  fprintf(txt, "%d of %d cases passed\n", ncases - nfailed, ncases);
  rc = experiment_write("check", rep, a.o.run.out, EXIT_OK); /* failed cases are recorded too */
  return nfailed ? EXIT_FAILED : rc;
}
