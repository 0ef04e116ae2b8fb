#include "peers.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdlib.h>

#include "device_operands.h"
#include "numeric.h"
#include "peer_cudnn.h"
#include "peer_torch.h"
#include "report.h"
#include "sample.h"
#include "stats.h"

#include <stdio.h>
#include <string.h>

static const char *const known[] = {"cudnn", "torch", "fpv2", "hpc"};

/* Calls fn(name, ctx) for each name of the list; stops at the first non-zero. */
static int each_peer(const char *list, int (*fn)(const char *name, void *ctx), void *ctx) {
  if (strcmp(list, "none") == 0) return 0;
  const char *p = list;
  for (;;) {
    char name[32];
    size_t n = strcspn(p, ",");
    snprintf(name, sizeof name, "%.*s", (int)(n < sizeof name ? n : sizeof name - 1), p);
    int rc = fn(name, ctx);
    if (rc) return rc;
    if (!p[n]) return 0;
    p += n + 1;
  }
}

static int check_name(const char *name, void *err) {
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
    if (strcmp(name, known[i]) == 0) return 0;
  err_set(err, "unknown peer '%s' (%s, or none)", name, PEERS_CHOICES);
  return -1;
}

int peers_parse(const char *list, char *err) { return each_peer(list, check_name, err); }

typedef struct run_ctx {
  const problem *pb;
  const csr_index *idx;
  int trials;
  peer_timing *out;
  int *nout;
  peer_skip *skipped;
  int *nskipped;
  char groups[64];        /* the list's names that peers.py runs: torch, fpv2, hpc */
  char script_peers[128]; /* their peers in peers.py's names */
} run_ctx;

double peer_flops(const peer_timing *t, const density_stats *d) {
  switch (t->pairs) {
  case PAIRS_INDEX: return flops_sparse(d);
  case PAIRS_COUNTED: return 4.0 * d->dim * t->pairs_count;
  default: return flops_dense(d);
  }
}

void peer_put(cJSON *row, const peer_timing *t, const density_stats *d, double total_ms, double nocorr_ms) {
  char key[64];
  const double ms = stats_median(t->trials_ms, t->trials);
  report_add_times(row, t->name, t->trials_ms, t->trials);
  snprintf(key, sizeof key, "%.31s_tflops", t->name);
  report_put_number(row, key, peer_flops(t, d) / ms / 1e9);
  snprintf(key, sizeof key, "speedup_%.31s", t->name);
  report_put_number(row, key, ms / (t->versus == VERSUS_NOCORR ? nocorr_ms : total_ms));
  if (t->pairs == PAIRS_INDEX && t->versus == VERSUS_TOTAL) {
    snprintf(key, sizeof key, "speedup_%.31s_kernel", t->name);
    report_put_number(row, key, ms / nocorr_ms);
  }
  if (t->pairs == PAIRS_COUNTED) {
    snprintf(key, sizeof key, "%.31s_density", t->name);
    report_put_number(row, key, t->density);
  }
}

void peers_put_skipped(cJSON *row, const peer_skip *skipped, int nskipped) {
  cJSON *skips = cJSON_CreateArray();
  for (int i = 0; i < nskipped; i++) {
    cJSON *s = cJSON_CreateObject();
    report_put_string(s, "peer", skipped[i].name);
    report_put_string(s, "why", skipped[i].why);
    cJSON_AddItemToArray(skips, s);
  }
  report_put(row, "peers_skipped", skips);
}

void peers_skip(peer_skip *skipped, int *nskipped, const char *name, const char *why) {
  if (*nskipped >= PEERS_MAX) return;
  peer_skip *s = &skipped[(*nskipped)++];
  snprintf(s->name, sizeof s->name, "%s", name);
  snprintf(s->why, sizeof s->why, "%.300s", why);
  fprintf(stderr, "fp2bench: peer %s skipped: %s\n", name, s->why);
}

static void skip(run_ctx *c, const char *name, const char *why) { peers_skip(c->skipped, c->nskipped, name, why); }

/* Relative L2 error of o (values, [len, hq, dim]) against dense causal attention on the
   problem's operands, over sampled rows. */
static double dense_error(const problem *pb, const float *o) {
  const int dim = pb->p.dim;
  row_sample rows;
  sample_rows(pb, 256, 17, &rows);
  double diff = 0, norm = 0;
  double *ref = xmalloc(sizeof(double) * (size_t)dim);
  for (int k = 0; k < rows.n; k++) {
    ref_full_row(pb, problem_operands(pb), rows.b[k], rows.i[k], rows.head[k], ref, NULL);
    const float *got = o + ((size_t)rows.i[k] * pb->p.hq + rows.head[k]) * dim;
    for (int d = 0; d < dim; d++) {
      diff += (got[d] - ref[d]) * (got[d] - ref[d]);
      norm += ref[d] * ref[d];
    }
  }
  free(ref);
  row_sample_free(&rows);
  return norm > 0 ? sqrt(diff / norm) : NAN;
}

/* Operands of the problem as the device holds them: bf16, or e4m3 codes for FP8. */
static void *upload(const float *x, size_t n, int fp8, char *err) {
  void *dev = NULL;
  cudaError_t e = cudaMalloc(&dev, n * (fp8 ? 1 : 2) + 1);
  if (e != cudaSuccess) {
    err_set(err, "uploading the inputs: %s", cudaGetErrorString(e));
    return NULL;
  }
  if (operands_upload(dev, x, n, fp8, err) != 0) {
    cudaFree(dev);
    return NULL;
  }
  return dev;
}

/* cuDNN's fused SDPA on the same operands, checked against the oracle before it is timed. */
static void run_cudnn(run_ctx *c) {
  const problem *pb = c->pb;
  const int fp8 = pb->p.dtype == FP2_FP8, len = pb->lq[0];
  const size_t nq = (size_t)len * pb->p.hq * pb->p.dim, nk = (size_t)len * pb->p.hkv * pb->p.dim;
  char err[ERR_LEN];
  if (pb->batch != 1) {
    skip(c, "cudnn", "the cuDNN peer takes one sequence (--batch 1)");
    return;
  }
  if (!peer_cudnn_available(err)) {
    skip(c, "cudnn", err);
    return;
  }
  void *q = upload(pb->qo, nq, fp8, err), *k = q ? upload(pb->ko, nk, fp8, err) : NULL;
  void *v = k ? upload(pb->vo, nk, fp8, err) : NULL, *o = NULL;
  float *scales = NULL;
  double *ms = xmalloc(sizeof(double) * (size_t)c->trials);
  const float host_scales[3] = {pb->sq, pb->sk, pb->sv};
  int rc = -1;
  if (v && cudaMalloc(&o, nq * (fp8 ? 1 : 2)) == cudaSuccess && cudaMalloc((void **)&scales, sizeof host_scales) ==
                                                                       cudaSuccess &&
      cudaMemcpy(scales, host_scales, sizeof host_scales, cudaMemcpyHostToDevice) == cudaSuccess)
    rc = fp8 ? peer_cudnn_attention_fp8(&pb->p, len, q, k, v, scales, o, c->trials, ms, err)
             : peer_cudnn_attention(&pb->p, len, q, k, v, o, c->trials, ms, err);
  else if (v)
    err_set(err, "allocating the cuDNN peer's output failed");
  if (rc == 0) {
    float *got = operands_download(o, nq, fp8, err);
    if (!got) {
      rc = -1;
    } else {
      double e = dense_error(pb, got), tol = fp8 ? 0.1 : 2e-2;
      if (!(e <= tol)) {
        err_set(err, "output check failed: relative error %.3g over %.3g against the oracle", e, tol);
        rc = -1;
      }
    }
    free(got);
  }
  if (rc == 0 && *c->nout < PEERS_MAX) {
    peer_timing *t = &c->out[(*c->nout)++];
    *t = (peer_timing){.pairs = PAIRS_CAUSAL, .versus = VERSUS_TOTAL};
    snprintf(t->name, sizeof t->name, "cudnn");
    t->trials_ms = ms;
    t->trials = c->trials;
    ms = NULL;
  } else if (rc != 0) {
    skip(c, "cudnn", err);
  }
  free(ms);
  cudaFree(q);
  cudaFree(k);
  cudaFree(v);
  cudaFree(o);
  cudaFree(scales);
}

static void append(char *list, size_t size, const char *item) {
  size_t n = strlen(list);
  snprintf(list + n, size - n, "%s%s", n ? "," : "", item);
}

/* cudnn runs here; the others are gathered for one run of peers.py (one export of the inputs).
   fpv2 is its whole pass and its attention alone on our index. */
static int run_peer(const char *name, void *ctx) {
  static const char *const script[][2] = {
      {"torch", "fa2,sdpa_cudnn,flex"}, {"fpv2", "fpv2,fpv2_kernel"}, {"hpc", "hpc"}};
  run_ctx *c = ctx;
  if (strcmp(name, "cudnn") == 0) {
    run_cudnn(c);
    return 0;
  }
  for (size_t i = 0; i < sizeof script / sizeof script[0]; i++)
    if (strcmp(name, script[i][0]) == 0) {
      append(c->groups, sizeof c->groups, name);
      append(c->script_peers, sizeof c->script_peers, script[i][1]);
    }
  return 0;
}

int peers_run(const char *list, const problem *pb, const csr_index *idx, int trials, peer_timing *out,
              peer_skip *skipped, int *nskipped) {
  int nout = 0;
  run_ctx c = {pb, idx, trials, out, &nout, skipped, nskipped, "", ""};
  *nskipped = 0;
  each_peer(list, run_peer, &c);
  if (c.groups[0]) peer_torch_run(pb, idx, trials, c.script_peers, c.groups, out, &nout, skipped, nskipped);
  return nout;
}
