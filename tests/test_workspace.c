/* fp2_forward's workspace layout (forward.c), on the host: for BF16 and FP8 and both attention
   kernels, every region fp2_workspace_map gives starts on a 256-byte boundary, holds what
   fp2.h says it holds, overlaps no other and ends inside fp2_workspace_bytes; the FP8-only
   regions are NULL for BF16, the BF16 copies of K and V only for pages the pool copies (fewer
   than FP2_ATTEND_PAGE_MIN keys), which pages of more keys take no room for; a workspace too
   small or misaligned is refused; fp2_check_pages takes the page sizes and page counts fp2.h
   names, and fp2_check_pooled_cache a cache where fp2.h says it may be used, and nowhere else.
   The plan is filled by hand (sizes only: the layout reads no device memory), so no GPU is
   needed. */
#include <stdint.h>
#include <string.h>

#include "fp2.h"
#include "testing.h"

typedef struct region {
  const char *name;
  uintptr_t at;
  size_t bytes;
} region;

static void one_case(fp2_dtype dt, fp2_kernel kernel, int page_size) {
  const fp2_params p = {.hq = 24, .hkv = 8, .dim = 128, .block = 128, .qtile = 128, .dtype = dt, .kernel = kernel,
                        .page_size = page_size};
  /* Two requests, 1101 queries against 1101 keys and 300 against 2053 (a chunk). */
  const fp2_plan plan = {.batch = 2, .total_q = 1401, .total_k = 3154, .total_tiles = 26 + 8, .total_blocks = 9 + 17,
                         .nseg = 8 * 34, .max_blocks = 17, .capacity = 5000, .total_chunks = 2};
  const int fp8 = dt == FP2_FP8;
  const size_t nq = (size_t)plan.total_q * p.hq * p.dim, nk = (size_t)plan.total_k * p.hkv * p.dim;
  const size_t np = (size_t)p.hkv * plan.total_blocks * p.dim;
  const size_t total = fp2_workspace_bytes(&p, &plan);
  fp2_params contiguous = p;
  contiguous.page_size = 0;
  const size_t copies = !fp8 && page_size && page_size < FP2_ATTEND_PAGE_MIN ? 2 * nk : 0;
  EXPECT_MSG(total == fp2_workspace_bytes(&contiguous, &plan) + 2 * copies,
             "pages of %d keys: %zu bytes of workspace (%zu contiguous)", page_size, total,
             fp2_workspace_bytes(&contiguous, &plan));
  const uintptr_t base = 1 << 20; /* never dereferenced */
  fp2_workspace w;
  memset(&w, 0, sizeof w);
  EXPECT(fp2_workspace_map(&p, &plan, (void *)base, total, &w) == FP2_OK);
  const region r[] = {
      {"q8", (uintptr_t)w.q8, fp8 ? nq : 0},
      {"k8", (uintptr_t)w.k8, fp8 ? nk : 0},
      {"v8", (uintptr_t)w.v8, fp8 && kernel != FP2_KERNEL_SM90 ? nk : 0}, /* sm90: V^T in attend_ws */
      {"scales", (uintptr_t)w.scales, fp8 ? 3 * sizeof(float) : 0},
      {"amax", (uintptr_t)w.amax, fp8 ? sizeof(unsigned) : 0},
      {"k_mean", (uintptr_t)w.k_mean, np * 4},
      {"v_mean", (uintptr_t)w.v_mean, np * 4},
      {"kbar", (uintptr_t)w.kbar, np * (fp8 ? 1 : 2)},
      {"vbar", (uintptr_t)w.vbar, np * (fp8 ? 1 : 2)},
      {"index.scratch", (uintptr_t)w.index.scratch, 4 * (size_t)plan.capacity},
      {"index.counts", (uintptr_t)w.index.counts, 4 * (size_t)plan.nseg},
      {"index.offsets", (uintptr_t)w.index.offsets, 4 * ((size_t)plan.nseg + 1)},
      {"index.indices", (uintptr_t)w.index.indices, 4 * (size_t)plan.capacity},
      {"select_ws", (uintptr_t)w.select_ws, fp2_select_workspace_bytes(&plan)},
      {"attend_ws", (uintptr_t)w.attend_ws, fp2_attend_workspace_bytes(&p, &plan)},
      {"k16", (uintptr_t)w.k16, copies},
      {"v16", (uintptr_t)w.v16, copies},
  };
  const int n = (int)(sizeof r / sizeof r[0]);
  EXPECT(w.select_ws_bytes == r[13].bytes); /* warp_max and the groups' counts (select_csr.cu) */
  EXPECT(w.attend_ws_bytes == r[14].bytes);
  EXPECT_MSG((w.attend_ws_bytes > 0) == (fp8 && kernel == FP2_KERNEL_SM90), "attend workspace of %zu bytes",
             w.attend_ws_bytes);
  for (int i = 0; i < n; i++) {
    if (r[i].bytes == 0) {
      EXPECT_MSG(r[i].at == 0, "%s: %s holds nothing but is not NULL", dt == FP2_FP8 ? "fp8" : "bf16", r[i].name);
      continue;
    }
    EXPECT_MSG(r[i].at % 256 == 0 && r[i].at >= base && r[i].at + r[i].bytes <= base + total,
               "%s: %s at +%lld (%zu bytes) in a workspace of %zu", dt == FP2_FP8 ? "fp8" : "bf16", r[i].name,
               (long long)(r[i].at - base), r[i].bytes, total);
    for (int j = 0; j < i; j++)
      EXPECT_MSG(r[j].bytes == 0 || r[j].at + r[j].bytes <= r[i].at || r[i].at + r[i].bytes <= r[j].at,
                 "%s overlaps %s", r[i].name, r[j].name);
  }
  EXPECT(fp2_workspace_map(&p, &plan, (void *)base, total - 1, &w) == FP2_ERR_ARG);
  EXPECT(fp2_workspace_map(&p, &plan, (void *)(base + 16), total, &w) == FP2_ERR_ARG);
  EXPECT(fp2_workspace_map(&p, &plan, NULL, total, &w) == FP2_ERR_ARG);
}

static void pages_accepted(void) {
  fp2_params p = {.hq = 24, .hkv = 8, .dim = 128, .block = 128, .qtile = 128};
  const int table[1] = {0};
  const fp2_kv_pages pages = {table, 1, 1}, no_columns = {table, 0, 1}, no_table = {NULL, 1, 1},
                     no_pages = {table, 1, 0}, too_many_rows = {table, 1, 1 << 26};
  EXPECT(fp2_check_pages(&p, NULL) == FP2_OK);
  EXPECT(fp2_check_pages(&p, &pages) == FP2_ERR_ARG); /* pages without a page size */
  static const int sizes[] = {16, 64, 128, 256};
  for (int i = 0; i < 4; i++) {
    p.page_size = sizes[i];
    EXPECT(fp2_check_pages(&p, &pages) == FP2_OK);
    EXPECT(fp2_check_pages(&p, NULL) == FP2_ERR_ARG);
    EXPECT(fp2_check_pages(&p, &no_columns) == FP2_ERR_ARG);
    EXPECT(fp2_check_pages(&p, &no_table) == FP2_ERR_ARG);
    EXPECT(fp2_check_pages(&p, &no_pages) == FP2_ERR_ARG);
    EXPECT_MSG((fp2_check_pages(&p, &too_many_rows) == FP2_OK) == (sizes[i] == 16),
               "2^26 pages of %d keys: their rows are %s 2^31", sizes[i], sizes[i] == 16 ? "under" : "not under");
  }
  static const int refused[] = {-16, 1, 8, 32, 100, 512};
  for (int i = 0; i < 6; i++) {
    p.page_size = refused[i];
    EXPECT_MSG(fp2_check_pages(&p, &pages) == FP2_ERR_ARG, "page size %d accepted", refused[i]);
  }
}

static void pooled_cache_accepted(void) {
  fp2_params p = {.hq = 24, .hkv = 8, .dim = 128, .block = 128, .qtile = 128};
  const fp2_plan plan = {.batch = 2, .max_blocks = 17};
  const int table[1] = {0};
  float mean[1];
  const fp2_pooled_cache cache = {mean, mean, table, 17}, narrow = {mean, mean, table, 16},
                         no_table = {mean, mean, NULL, 17}, no_means = {NULL, mean, table, 17};
  EXPECT(fp2_check_pooled_cache(&p, &plan, NULL) == FP2_OK);
  EXPECT(fp2_check_pooled_cache(&p, &plan, &cache) == FP2_OK);
  EXPECT(fp2_check_pooled_cache(&p, &plan, &narrow) == FP2_ERR_ARG); /* a request has 17 blocks */
  EXPECT(fp2_check_pooled_cache(&p, &plan, &no_table) == FP2_ERR_ARG);
  EXPECT(fp2_check_pooled_cache(&p, &plan, &no_means) == FP2_ERR_ARG);
  p.page_size = 64; /* pages the attention reads */
  EXPECT(fp2_check_pooled_cache(&p, &plan, &cache) == FP2_OK);
  p.page_size = 16; /* pages the pool copies, the prefix included */
  EXPECT(fp2_check_pooled_cache(&p, &plan, &cache) == FP2_ERR_UNSUPPORTED);
  EXPECT(fp2_check_pooled_cache(&p, &plan, NULL) == FP2_OK);
  p.page_size = 64;
  p.dtype = FP2_FP8;
  EXPECT(fp2_check_pooled_cache(&p, &plan, &cache) == FP2_ERR_UNSUPPORTED);
  EXPECT(fp2_check_pooled_cache(&p, &plan, NULL) == FP2_OK);
}

int main(void) {
  static const int page_sizes[] = {0, 16, 64}; /* contiguous, pages the pool copies, pages the attention reads */
  for (int dt = FP2_BF16; dt <= FP2_FP8; dt++)
    for (int i = 0; i < 3; i++) {
      one_case((fp2_dtype)dt, FP2_KERNEL_PORTABLE, page_sizes[i]);
      one_case((fp2_dtype)dt, FP2_KERNEL_SM90, page_sizes[i]);
    }
  pages_accepted();
  pooled_cache_accepted();
  return test_result("test_workspace");
}
