/* The pooled means kept across the chunks of a prefill (fp2_pooled_cache): what a pass
   accepts of them. */
#include "fp2.h"
#include "status.h"

fp2_status fp2_check_pooled_cache(const fp2_params *p, const fp2_plan *plan, const fp2_pooled_cache *cache) {
  if (!cache) return FP2_OK;
  if (p->dtype != FP2_BF16)
    return fp2_fail(FP2_ERR_UNSUPPORTED,
                    "a pooled cache takes BF16 only: FP8 converts the whole prefix again under each chunk's "
                    "per-tensor scales, and pools those codes");
  if (fp2_pages_copied(p))
    return fp2_fail(FP2_ERR_UNSUPPORTED,
                    "a pooled cache takes K and V contiguous or in pages of %d keys or more: pages of %d the pool "
                    "copies whole for the attention, the prefix's keys included",
                    FP2_ATTEND_PAGE_MIN, p->page_size);
  if (!cache->k_mean || !cache->v_mean || !cache->table)
    return fp2_fail(FP2_ERR_ARG, "a pooled cache needs k_mean, v_mean and its block table");
  if (cache->max_blocks < plan->max_blocks)
    return fp2_fail(FP2_ERR_ARG, "the pooled cache's table has %d columns; a request of this plan has %d key blocks",
                    cache->max_blocks, plan->max_blocks);
  return FP2_OK;
}
