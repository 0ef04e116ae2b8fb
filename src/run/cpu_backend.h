/* The cpu backend: the oracle (reference.h) run stage by stage over a whole problem, timed
   by the wall clock. */
#ifndef FP2_CPU_BACKEND_H
#define FP2_CPU_BACKEND_H

#include "pipeline_result.h"

/* Never fails (out of memory exits). */
void cpu_pipeline(const problem *pb, const pipeline_config *cfg, pipeline_result *out);

/* The oracle's output of the sampled rows alone, o_rows [rows->n, dim] in the sample's order,
   from the index and pooled vectors of r (a pass run without attending): what a quality
   measure needs without the whole [total_q, hq, dim] output. */
void cpu_attend_rows(const problem *pb, const pipeline_result *r, prob_mode mode, const row_sample *rows,
                     float *o_rows);

#endif
