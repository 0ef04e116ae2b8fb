/* A batch of requests as a serving engine holds them: request b has lq(b) queries, the last
   lq(b) of its lk(b) positions. lq == lk is a whole prompt; lq < lk is a chunk of a prefill
   (chunked prefill) attending to the keys before it as well. The option --requests spells
   one (cli.h); source_build turns it into a problem, which every backend and the oracle take. */
#ifndef FP2_REQUESTS_H
#define FP2_REQUESTS_H

#include <stddef.h>
#include <stdint.h>

#define REQUESTS_MAX 256

typedef struct request_list {
  int n; /* 0: none given */
  int64_t lq[REQUESTS_MAX], lk[REQUESTS_MAX];
} request_list;

/* The list as --requests takes it, runs of equal requests as NxR ("1k,2x512/2k,300");
   snprintf's return value. */
int requests_format(char *buf, size_t len, const request_list *r);

/* Queries and keys summed over the requests. */
int64_t requests_total_q(const request_list *r);
int64_t requests_total_k(const request_list *r);

#endif
