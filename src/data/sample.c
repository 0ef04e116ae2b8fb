#include "sample.h"

#include <stdlib.h>

#include "error.h"
#include "rng.h"

unsigned char *sample_tiles(const problem *pb, int per_head, uint64_t seed) {
  int nseg = problem_num_segments(pb);
  unsigned char *want = xcalloc((size_t)(nseg > 0 ? nseg : 1), 1);
  for (int b = 0; b < pb->batch; b++) {
    int ntiles = pb->cu_tiles[b + 1] - pb->cu_tiles[b];
    for (int h = 0; h < pb->p.hkv; h++) {
      if (ntiles <= per_head) {
        for (int t = 0; t < ntiles; t++) want[problem_segment(pb, b, h, t)] = 1;
        continue;
      }
      double phase = rng_uniform(seed, 0x74696c65ull + (uint64_t)b * 1031 + (uint64_t)h, 0);
      for (int k = 0; k < per_head; k++) {
        int t = (int)((k + phase) * ntiles / per_head);
        want[problem_segment(pb, b, h, t < ntiles ? t : ntiles - 1)] = 1;
      }
    }
  }
  return want;
}

void sample_rows(const problem *pb, int max_rows, uint64_t seed, row_sample *out) {
  const int hq = pb->p.hq;
  int64_t all = pb->total_q * hq;
  int n = all <= max_rows ? (int)all : max_rows;
  out->n = 0;
  out->b = xmalloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
  out->i = xmalloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
  out->head = xmalloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
  if (all <= max_rows) {
    for (int b = 0; b < pb->batch; b++)
      for (int i = 0; i < pb->lq[b]; i++)
        for (int h = 0; h < hq; h++) {
          out->b[out->n] = b;
          out->i[out->n] = i;
          out->head[out->n] = h;
          out->n++;
        }
    return;
  }
  for (int b = 0; b < pb->batch; b++) {
    /* This sequence's share of the rows, at least 2 (first and last position). */
    int share = (int)((int64_t)max_rows * (b + 1) / pb->batch - (int64_t)max_rows * b / pb->batch);
    if (share < 2) share = 2;
    for (int k = 0; k < share && out->n < n; k++) {
      int i = (int)((int64_t)k * (pb->lq[b] - 1) / (share - 1));
      if (k > 0 && k < share - 1) i += (int)(rng_uniform(seed, 0x726f77ull + (uint64_t)b, (uint64_t)k) *
                                             ((double)(pb->lq[b] - 1) / (share - 1)));
      if (i >= pb->lq[b]) i = pb->lq[b] - 1;
      out->b[out->n] = b;
      out->i[out->n] = i;
      out->head[out->n] = (int)(rng_uniform(seed, 0x68656164ull + (uint64_t)b, (uint64_t)k) * hq);
      out->n++;
    }
  }
}

void row_sample_free(row_sample *r) {
  free(r->b);
  free(r->i);
  free(r->head);
  r->b = r->i = r->head = NULL;
  r->n = 0;
}

unsigned char *row_sample_segments(const problem *pb, const row_sample *rows) {
  unsigned char *want = xcalloc((size_t)problem_num_segments(pb) + 1, 1);
  for (int r = 0; r < rows->n; r++) want[problem_row_segment(pb, rows->b[r], rows->i[r], rows->head[r])] = 1;
  return want;
}
