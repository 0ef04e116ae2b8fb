/* The pieces of result rows that several commands write alike (the README's result format). */
#ifndef FP2_RESULT_ROWS_H
#define FP2_RESULT_ROWS_H

#include <cjson/cJSON.h>

#include "density.h"
#include "pipeline_result.h"
#include "quality.h"

/* density and density_per_head [hkv]. */
void rows_put_density(cJSON *row, const density_stats *d);

/* The FLOP model of the three stages: flops_dense, flops_sparse, flops_index, flops_correction
   and aux_ratio. */
void rows_put_flops(cJSON *row, const density_stats *d);

/* The oracle's quality on the sampled rows: quality_rows, rel_error and mass_recall. */
void rows_put_quality(cJSON *row, const quality *q);

/* needle_recall and needle_rows, when there were question rows (synth:niah); nothing otherwise. */
void rows_put_needles(cJSON *row, double needle, int needle_rows);

/* The index stage's per-trial times (report_add_times): quantise, pool and select. */
void rows_put_index_times(cJSON *row, const pipeline_result *r);

/* Each stage's per-trial times: the index stage's, then attend. */
void rows_put_stage_times(cJSON *row, const pipeline_result *r);

#endif
