/* Which tiles and rows the oracle evaluates when a problem is too long to do all of them:
   stratified over positions, reproducible from the seed. */
#ifndef FP2_SAMPLE_H
#define FP2_SAMPLE_H

#include <stdint.h>

#include "problem.h"

/* want[seg] = 1 for up to `per_head` tiles of every (sequence, KV head), evenly spread over
   the sequence with a random phase (all tiles when there are fewer). Caller frees. */
unsigned char *sample_tiles(const problem *pb, int per_head, uint64_t seed);

/* A set of query rows: sequence, query index within it, query head. */
typedef struct row_sample {
  int n;
  int *b, *i, *head;
} row_sample;

/* Every row of every sequence when there are at most `max_rows` (positions x heads);
   else `max_rows` rows spread over positions of each sequence, always including the
   first and last position, each with a random query head. */
void sample_rows(const problem *pb, int max_rows, uint64_t seed, row_sample *out);
void row_sample_free(row_sample *r);

/* want[seg] = 1 for the segments holding the sampled rows, for an index that only needs
   those. Caller frees. */
unsigned char *row_sample_segments(const problem *pb, const row_sample *rows);

#endif
