/* kv_pages (src/data/kv_pages.c), the paged layout of the tests and of --paged: for each page
   size the library takes, requests whose last page is partial, whole, and a single key; the
   table names distinct pages of the pool, each request's keys sit where the table says, every
   other row holds the poison, and the spare pages belong to no request. */
#include <stdlib.h>
#include <string.h>

#include "kv_pages.h"
#include "testing.h"

enum { BATCH = 4, ROW = 3, SPARE = 5 };

static void one_size(int page_size) {
  const int lk[BATCH] = {1024 + 77, 256, 1, 2048};
  int cu_k[BATCH + 1] = {0};
  for (int b = 0; b < BATCH; b++) cu_k[b + 1] = cu_k[b] + lk[b];
  kv_pages kp;
  char err[320];
  EXPECT(kv_pages_plan(&kp, BATCH, lk, page_size, SPARE, 7, err) == 0);
  int need = 0;
  for (int b = 0; b < BATCH; b++) need += (lk[b] + page_size - 1) / page_size;
  EXPECT_MSG(kp.num_pages == need + SPARE, "page size %d: %d pages, %d needed", page_size, kp.num_pages, need);
  char *used = calloc((size_t)kp.num_pages, 1);
  for (int b = 0; b < BATCH; b++)
    for (int j = 0; j < kp.max_pages; j++) {
      const int page = kp.table[b * kp.max_pages + j], mine = j < (lk[b] + page_size - 1) / page_size;
      EXPECT_MSG(mine ? page >= 0 && page < kp.num_pages && !used[page]++ : page == -1,
                 "page size %d: request %d's page %d is %d", page_size, b, j, page);
    }
  free(used);
  const size_t total = (size_t)cu_k[BATCH] * ROW, slots = (size_t)kp.num_pages * page_size * ROW;
  float *x = malloc(sizeof(float) * total), *pages = malloc(sizeof(float) * slots);
  for (size_t i = 0; i < total; i++) x[i] = (float)i;
  const float poison = -3072.0f;
  kv_pages_fill(&kp, lk, x, ROW, poison, pages);
  size_t found = 0, poisoned = 0;
  for (int b = 0; b < BATCH; b++)
    for (int t = 0; t < lk[b]; t++) {
      const size_t at = (size_t)kp.table[b * kp.max_pages + t / page_size] * page_size + t % page_size;
      found += memcmp(pages + at * ROW, x + ((size_t)cu_k[b] + t) * ROW, sizeof(float) * ROW) == 0;
    }
  for (size_t i = 0; i < slots; i++) poisoned += pages[i] == poison;
  EXPECT_MSG(found == (size_t)cu_k[BATCH], "page size %d: %zu of %d keys where the table says", page_size, found,
             cu_k[BATCH]);
  EXPECT_MSG(poisoned == slots - total, "page size %d: %zu poisoned values, %zu rows' worth unnamed", page_size,
             poisoned, slots - total);
  free(x);
  free(pages);
  kv_pages_free(&kp);
}

int main(void) {
  static const int sizes[] = {16, 64, 128, 256};
  for (int i = 0; i < 4; i++) one_size(sizes[i]);
  kv_pages kp;
  char err[320];
  const int lk[1] = {100};
  EXPECT(kv_pages_plan(&kp, 1, lk, 0, 0, 1, err) == -1);
  EXPECT(kv_pages_plan(&kp, 1, lk, 16, -1, 1, err) == -1);
  EXPECT(kv_pages_plan(&kp, 0, lk, 16, 0, 1, err) == -1);
  return test_result("test_kv_pages");
}
