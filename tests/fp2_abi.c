/* The ABI of fp2.h as this compiler lays it out, for test_binding.py to hold kernels/fp2.py's
   ctypes mirrors to: one line per struct ("size NAME BYTES"), per field ("field NAME.FIELD
   OFFSET BYTES") and per enum constant ("enum NAME VALUE"). Needs no GPU. */
#include <stddef.h>
#include <stdio.h>

#include "fp2.h"

#define SIZE(type) printf("size %s %zu\n", #type, sizeof(type))
#define FIELD(type, field) \
  printf("field %s.%s %zu %zu\n", #type, #field, offsetof(type, field), sizeof(((type *)0)->field))
#define ENUM(name) printf("enum %s %d\n", #name, (int)(name))

int main(void) {
  SIZE(fp2_params);
  FIELD(fp2_params, hq);
  FIELD(fp2_params, hkv);
  FIELD(fp2_params, dim);
  FIELD(fp2_params, block);
  FIELD(fp2_params, qtile);
  FIELD(fp2_params, alpha);
  FIELD(fp2_params, sink);
  FIELD(fp2_params, window);
  FIELD(fp2_params, recent);
  FIELD(fp2_params, correction);
  FIELD(fp2_params, dtype);
  FIELD(fp2_params, kernel);
  FIELD(fp2_params, page_size);

  SIZE(fp2_plan);
  FIELD(fp2_plan, batch);
  FIELD(fp2_plan, total_q);
  FIELD(fp2_plan, total_k);
  FIELD(fp2_plan, total_tiles);
  FIELD(fp2_plan, total_blocks);
  FIELD(fp2_plan, nseg);
  FIELD(fp2_plan, max_blocks);
  FIELD(fp2_plan, capacity);
  FIELD(fp2_plan, total_chunks);
  FIELD(fp2_plan, prefix_blocks);
  FIELD(fp2_plan, cu_q);
  FIELD(fp2_plan, cu_k);
  FIELD(fp2_plan, cu_tiles);
  FIELD(fp2_plan, cu_blocks);
  FIELD(fp2_plan, cu_chunks);
  FIELD(fp2_plan, tile_seq);
  FIELD(fp2_plan, seg_base);

  SIZE(fp2_stage_events);
  FIELD(fp2_stage_events, at);

  SIZE(fp2_kv_pages);
  FIELD(fp2_kv_pages, table);
  FIELD(fp2_kv_pages, max_pages);
  FIELD(fp2_kv_pages, num_pages);

  SIZE(fp2_pooled_cache);
  FIELD(fp2_pooled_cache, k_mean);
  FIELD(fp2_pooled_cache, v_mean);
  FIELD(fp2_pooled_cache, table);
  FIELD(fp2_pooled_cache, max_blocks);

  SIZE(fp2_inputs);
  FIELD(fp2_inputs, q);
  FIELD(fp2_inputs, k);
  FIELD(fp2_inputs, v);
  FIELD(fp2_inputs, o);
  FIELD(fp2_inputs, offsets);
  FIELD(fp2_inputs, indices);
  FIELD(fp2_inputs, events);
  FIELD(fp2_inputs, pages);
  FIELD(fp2_inputs, pooled);

  ENUM(FP2_BF16);
  ENUM(FP2_FP8);
  ENUM(FP2_KERNEL_PORTABLE);
  ENUM(FP2_KERNEL_SM90);
  ENUM(FP2_OK);
  ENUM(FP2_ERR_ARG);
  ENUM(FP2_ERR_CUDA);
  ENUM(FP2_ERR_UNSUPPORTED);
  ENUM(FP2_STAGES);
  return fflush(stdout) == 0 ? 0 : 1;
}
