/* The gpu backend: fp2_forward over a whole problem, each stage timed with CUDA events. */
#ifndef FP2_GPU_BACKEND_H
#define FP2_GPU_BACKEND_H

#include "pipeline_result.h"

/* Uploads bf16 Q/K/V and runs fp2_forward — quantise on the GPU for FP8, pool, select (or
   the given or forced index, uploaded into its workspace) and attend — once as warm-up and
   then `trials` times, timing every stage with CUDA events; outputs are poisoned (NaN) before each run. The result holds the
   medians and per-trial times, and, with cfg->attend, everything the kernels produced.
   0, or -1 with err (a CUDA or library error, or a size that does not fit). */
int gpu_pipeline(const problem *pb, const pipeline_config *cfg, int trials, pipeline_result *out, char *err);

/* A pooled cache (fp2_pooled_cache) for the chunks of one prompt of len keys with p's shape:
   block j at row j, every row NaN until a pass pools it, so that a pass reading a row no
   earlier chunk wrote gives NaN. 0, or -1 with err. */
int gpu_pooled_cache_create(const fp2_params *p, int len, fp2_pooled_cache *cache, char *err);
void gpu_pooled_cache_free(fp2_pooled_cache *cache);

#endif
