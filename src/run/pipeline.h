/* One forward pass — pool, select, attend — on the backend asked for: the cpu backend is the
   oracle itself (cpu_backend.h), the gpu backend runs the kernels (gpu_backend.h). */
#ifndef FP2_PIPELINE_H
#define FP2_PIPELINE_H

#include "cpu_backend.h"
#include "gpu_backend.h"
#include "pipeline_result.h"
#include "run_choices.h"

/* The backend given (BACKEND_CPU or BACKEND_GPU; the cpu runs once whatever `trials`). */
int backend_pipeline(int backend, const problem *pb, const pipeline_config *cfg, int trials, pipeline_result *out,
                     char *err);

/* backend_pipeline with the mean correction on (1) or off (0) for this pass whatever pb->p
   says, pb left as it is: for the commands that set a pass without correction beside one with
   it on the same problem. */
int backend_pipeline_correction(int backend, const problem *pb, int correction, const pipeline_config *cfg, int trials,
                                pipeline_result *out, char *err);

#endif
