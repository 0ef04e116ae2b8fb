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

static int build_from_file(const data_source *src, fp2_opts *o, problem *pb, char *err) {
  qkv_host f;
  if (qkv_load(src->path, &f, err) != 0) return -1;
  int rc = -1;
  if (o->len_given && (o->lens.n != 1 || o->lens.v[0] != f.len))
    err_set(err, "'%s' holds %d positions but --len asks for %lld", src->path, f.len, (long long)o->lens.v[0]);
  else if (o->heads_given && (o->hq != f.hq || o->hkv != f.hkv))
    err_set(err, "'%s' holds %d:%d heads but --heads asks for %d:%d", src->path, f.hq, f.hkv, o->hq, o->hkv);
  else if (o->dim_given && o->dim != f.dim)
    err_set(err, "'%s' holds head dim %d but --dim asks for %d", src->path, f.dim, o->dim);
  else if (o->batch != 1)
    err_set(err, "'%s' holds one sequence: --batch must be 1", src->path);
  else
    rc = 0;
  if (rc == 0) {
    o->hq = f.hq;
    o->hkv = f.hkv;
    o->dim = f.dim;
    if (opts_validate(o, err) != 0) rc = -1;
  }
  if (rc == 0) {
    fp2_params p = opts_params(o);
    problem_init(pb, &p, 1, &f.len, &f.len);
    pb->kernel_auto = o->kernel == KERNEL_AUTO;
    memcpy(pb->q, f.q, sizeof(float) * (size_t)f.len * f.hq * f.dim);
    memcpy(pb->k, f.k, sizeof(float) * (size_t)f.len * f.hkv * f.dim);
    memcpy(pb->v, f.v, sizeof(float) * (size_t)f.len * f.hkv * f.dim);
  }
  qkv_free(&f);
  return rc;
}

void source_shape(const fp2_opts *o, int64_t len, problem *pb) {
  fp2_params p = opts_params(o);
  int *lens = xmalloc(sizeof(int) * (size_t)o->batch);
  for (int b = 0; b < o->batch; b++) lens[b] = (int)len;
  problem_init(pb, &p, o->batch, lens, lens);
  pb->kernel_auto = o->kernel == KERNEL_AUTO;
  free(lens);
}

int source_build(const data_source *src, fp2_opts *o, int64_t len, uint64_t seed, problem *pb, char *err) {
  if (src->is_file) return build_from_file(src, o, pb, err);
  source_shape(o, len, pb);
  if (synth_fill(pb, src->synth, seed, err) != 0) {
    problem_free(pb);
    return -1;
  }
  return 0;
}
