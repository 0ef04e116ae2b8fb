/* Where Q/K/V come from: --data synth:random | synth:llm | synth:niah | FILE.safetensors. */
#ifndef FP2_SOURCE_H
#define FP2_SOURCE_H

#include <stdint.h>

#include "cli.h"
#include "problem.h"
#include "synth.h"

typedef struct data_source {
  int is_file;
  synth_kind synth;
  const char *path;
} data_source;

int source_parse(const char *spec, data_source *out, char *err);

/* The name of a source as results record it ("synth:llm" or the file path). */
const char *source_name(const data_source *src);

/* A problem of o->batch sequences of len tokens with the options' shape, its tensors
   allocated but not filled (enough for anything that needs only the geometry). */
void source_shape(const fp2_opts *o, int64_t len, problem *pb);

/* Builds the problem of one length: `batch` sequences of `len` queries and keys from a
   synthetic source, or the one sequence of a file (whose length, heads and dim must agree
   with the options the user gave; the ones not given are taken from the file). Fills the
   source values; the caller then calls problem_prepare. The params' hq/hkv/dim may be
   updated from the file. */
int source_build(const data_source *src, fp2_opts *o, int64_t len, uint64_t seed, problem *pb, char *err);

#endif
