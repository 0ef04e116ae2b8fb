/* Where Q/K/V come from: --data synth:random | synth:llm | synth:niah | FILE.safetensors. */
#ifndef FP2_SOURCE_H
#define FP2_SOURCE_H

#include <stdint.h>

#include "problem.h"
#include "requests.h"
#include "synth.h"

typedef struct data_source {
  int is_file;
  synth_kind synth;
  const char *path;
} data_source;

int source_parse(const char *spec, data_source *out, char *err);

/* The name of a source as results record it ("synth:llm" or the file path). */
const char *source_name(const data_source *src);

/* What a source is asked for: the shape and parameters of a synthetic problem; a file brings
   its own length, heads and dim. */
typedef struct source_request {
  fp2_params p;     /* shape, tiling, selection, precision and kernel */
  int kernel_auto;  /* --kernel auto: the gpu backend picks p.kernel for its GPU */
  int batch;        /* sequences of a synthetic source (a file holds one) */
  int64_t len;      /* queries and keys of each synthetic sequence */
  const request_list *requests; /* a synthetic batch of these requests instead (NULL: none) */
  uint64_t seed;
} source_request;

/* A problem of rq's shape, its tensors allocated but not filled (enough for anything that
   needs only the geometry). */
void source_shape(const source_request *rq, problem *pb);

/* Builds the problem of one length: rq->batch sequences of rq->len queries and keys (or the
   batch of rq->requests) from a synthetic source, or the one sequence of a file at the file's
   length, heads and dim, which pb->lq[0] and pb->p then give (the caller compares them with
   what it asked for). Fills the source values; the caller then calls problem_prepare. */
int source_build(const data_source *src, const source_request *rq, problem *pb, char *err);

#endif
