/* The cpu backend: the oracle (reference.h) run stage by stage over a whole problem, timed
   by the wall clock. */
#ifndef FP2_CPU_BACKEND_H
#define FP2_CPU_BACKEND_H

#include "pipeline_result.h"

/* Never fails (out of memory exits). */
void cpu_pipeline(const problem *pb, const pipeline_config *cfg, pipeline_result *out);

#endif
