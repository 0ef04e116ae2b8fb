/* K and V in pages (fp2_kv_pages): what a pass accepts of them. The page sizes are those of
   vLLM's and FlashInfer's caches that this library takes: powers of two, so that the pool
   finds a key's page with a shift. The rows of all pages must have int coordinates, as the
   sm90 kernel's TMA boxes take them. */
#include <limits.h>

#include "fp2.h"
#include "status.h"

fp2_status fp2_check_pages(const fp2_params *p, const fp2_kv_pages *pages) {
  const int ps = p->page_size;
  if (ps == 0)
    return pages ? fp2_fail(FP2_ERR_ARG, "pages given with page_size 0 (contiguous K/V): set the page size")
                 : FP2_OK;
  if (ps != 16 && ps != 64 && ps != 128 && ps != 256)
    return fp2_fail(FP2_ERR_ARG, "page_size %d: the pages hold 16, 64, 128 or 256 keys", ps);
  if (!pages || !pages->table)
    return fp2_fail(FP2_ERR_ARG, "page_size %d needs the page table (fp2_kv_pages)", ps);
  if (pages->max_pages < 1)
    return fp2_fail(FP2_ERR_ARG, "max_pages %d: a page table has at least one column", pages->max_pages);
  if (pages->num_pages < 1 || (long long)pages->num_pages * ps > INT_MAX)
    return fp2_fail(FP2_ERR_ARG, "num_pages %d: K and V hold at least one page, and at most 2^31 rows of keys",
                    pages->num_pages);
  return FP2_OK;
}
