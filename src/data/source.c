#include "source.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "qkv_file.h"

int source_parse(const char *spec, data_source *out, char *err) {
  memset(out, 0, sizeof *out);
  if (strcmp(spec, "synth:random") == 0) {
    out->synth = SYNTH_RANDOM;
    return 0;
  }
  if (strcmp(spec, "synth:llm") == 0) {
    out->synth = SYNTH_LLM;
    return 0;
  }
  if (strcmp(spec, "synth:niah") == 0) {
    out->synth = SYNTH_NIAH;
    return 0;
  }
  if (strncmp(spec, "synth:", 6) == 0) {
    err_set(err, "--data: unknown synthetic source '%s' (synth:random, synth:llm, synth:niah)", spec);
    return -1;
  }
  out->is_file = 1;
  out->path = spec;
  return 0;
}

const char *source_name(const data_source *src) {
  if (src->is_file) return src->path;
  switch (src->synth) {
    case SYNTH_RANDOM: return "synth:random";
    case SYNTH_LLM: return "synth:llm";
    case SYNTH_NIAH: return "synth:niah";
  }
  return "?";
}

/* The one place a problem takes the request's kernel choice. */
static void init_problem(const source_request *rq, const fp2_params *p, int batch, const int *lq, const int *lk,
                         problem *pb) {
  problem_init(pb, p, batch, lq, lk);
  pb->kernel_auto = rq->kernel_auto;
}

static int build_from_file(const data_source *src, const source_request *rq, problem *pb, char *err) {
  qkv_host f;
  if (qkv_load(src->path, &f, err) != 0) return -1;
  fp2_params p = rq->p;
  p.hq = f.hq;
  p.hkv = f.hkv;
  p.dim = f.dim;
  init_problem(rq, &p, 1, &f.len, &f.len, pb);
  memcpy(pb->q, f.q, sizeof(float) * (size_t)f.len * f.hq * f.dim);
  memcpy(pb->k, f.k, sizeof(float) * (size_t)f.len * f.hkv * f.dim);
  memcpy(pb->v, f.v, sizeof(float) * (size_t)f.len * f.hkv * f.dim);
  qkv_free(&f);
  return 0;
}

void source_shape(const source_request *rq, problem *pb) {
  const int batch = rq->requests ? rq->requests->n : rq->batch;
  int *lq = xmalloc(sizeof(int) * (size_t)batch), *lk = xmalloc(sizeof(int) * (size_t)batch);
  for (int b = 0; b < batch; b++) {
    lq[b] = (int)(rq->requests ? rq->requests->lq[b] : rq->len);
    lk[b] = (int)(rq->requests ? rq->requests->lk[b] : rq->len);
  }
  init_problem(rq, &rq->p, batch, lq, lk, pb);
  free(lq);
  free(lk);
}

int source_build(const data_source *src, const source_request *rq, problem *pb, char *err) {
  if (src->is_file) return build_from_file(src, rq, pb, err);
  source_shape(rq, pb);
  if (synth_fill(pb, src->synth, rq->seed, err) != 0) {
    problem_free(pb);
    return -1;
  }
  return 0;
}
