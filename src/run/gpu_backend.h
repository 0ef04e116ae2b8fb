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

#endif
