/* The gpu backend: the library's kernels over a whole problem, timed with CUDA events. */
#ifndef FP2_GPU_BACKEND_H
#define FP2_GPU_BACKEND_H

#include "pipeline_result.h"

/* Uploads bf16 Q/K/V, quantises them on the GPU for FP8, runs pool, select (or uploads the
   given or forced index) and attend once as warm-up and then `trials` times, timing every
   stage with CUDA events; outputs are poisoned (NaN) before each run. The result holds the
   medians and per-trial times, and, with cfg->attend, everything the kernels produced.
   0, or -1 with err (a CUDA or library error, or a size that does not fit). */
int gpu_pipeline(const problem *pb, const pipeline_config *cfg, int trials, pipeline_result *out, char *err);

#endif
