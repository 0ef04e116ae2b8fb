/* K or V in pages (kv_pages.h). */
#include "kv_pages.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"

int kv_pages_plan(kv_pages *kp, int batch, const int *lk, int page_size, int spare, uint64_t seed, char *err) {
  memset(kp, 0, sizeof *kp);
  if (page_size < 1 || spare < 0 || batch < 1) {
    snprintf(err, 320, "kv_pages_plan: page size %d, %d spare pages, batch %d", page_size, spare, batch);
    return -1;
  }
  long long need = 0;
  int max_pages = 1;
  for (int b = 0; b < batch; b++) {
    const int n = (lk[b] + page_size - 1) / page_size;
    need += n;
    if (n > max_pages) max_pages = n;
  }
  if (need + spare > 0x7fffffff / page_size) {
    snprintf(err, 320, "kv_pages_plan: %lld pages of %d keys do not fit 32-bit rows", need + spare, page_size);
    return -1;
  }
  const int num_pages = (int)need + spare;
  int *order = malloc(sizeof(int) * (size_t)num_pages), *table = malloc(sizeof(int) * (size_t)batch * max_pages);
  if (!order || !table) {
    free(order);
    free(table);
    snprintf(err, 320, "kv_pages_plan: out of memory for %d pages", num_pages);
    return -1;
  }
  for (int i = 0; i < num_pages; i++) order[i] = i;
  for (int i = num_pages - 1; i > 0; i--) { /* Fisher-Yates */
    const int j = (int)(rng_bits(seed, 0x7061676573ull /* "pages" */, (uint64_t)i) % (uint64_t)(i + 1));
    const int t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  int next = 0;
  for (int b = 0; b < batch; b++) {
    const int n = (lk[b] + page_size - 1) / page_size;
    for (int j = 0; j < max_pages; j++) table[(size_t)b * max_pages + j] = j < n ? order[next++] : -1;
  }
  free(order);
  *kp = (kv_pages){.batch = batch, .page_size = page_size, .max_pages = max_pages, .num_pages = num_pages,
                   .table = table};
  return 0;
}

void kv_pages_fill(const kv_pages *kp, const int *lk, const float *x, size_t row, float poison, float *pages) {
  const size_t total = (size_t)kp->num_pages * kp->page_size * row;
  for (size_t i = 0; i < total; i++) pages[i] = poison;
  size_t first = 0; /* request b's first key in x */
  for (int b = 0; b < kp->batch; first += (size_t)lk[b], b++)
    for (int t = 0; t < lk[b]; t++) {
      const size_t at = (size_t)kp->table[(size_t)b * kp->max_pages + t / kp->page_size] * kp->page_size +
                        (size_t)(t % kp->page_size);
      memcpy(pages + at * row, x + (first + t) * row, sizeof(float) * row);
    }
}

void kv_pages_free(kv_pages *kp) {
  free(kp->table);
  memset(kp, 0, sizeof *kp);
}
