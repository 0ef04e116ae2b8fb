/* K or V laid out as a serving engine's page cache (fp2_kv_pages), from the batch's
   contiguous rows: for the paged runs of the tests and of `--paged`. */
#ifndef FP2_KV_PAGES_H
#define FP2_KV_PAGES_H

#include <stddef.h>
#include <stdint.h>

/* Where each request's keys go: request b's page j is table[b * max_pages + j] (-1 past its
   pages), the pages drawn in a shuffled order from a pool of num_pages, `spare` more than the
   batch needs, so that some pages belong to no request. */
typedef struct kv_pages {
  int batch, page_size, max_pages, num_pages;
  int *table; /* [batch, max_pages] */
} kv_pages;

/* The table for requests of lk[b] keys; 0, or -1 with the reason in err (320 bytes). */
int kv_pages_plan(kv_pages *kp, int batch, const int *lk, int page_size, int spare, uint64_t seed, char *err);

/* pages [num_pages, page_size, row] from x [total keys, row] (the requests' lk[b] keys back
   to back): every row the table names holds its key's values, every other row (a request's
   last page past its keys, the spare pages) holds `poison`. */
void kv_pages_fill(const kv_pages *kp, const int *lk, const float *x, size_t row, float poison, float *pages);

void kv_pages_free(kv_pages *kp);

#endif
