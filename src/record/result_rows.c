#include "result_rows.h"

#include "report.h"

void rows_put_density(cJSON *row, const density_stats *d) {
  report_put_number(row, "density", density_overall(d));
  cJSON *heads = cJSON_CreateArray();
  for (int h = 0; h < d->hkv; h++) cJSON_AddItemToArray(heads, cJSON_CreateNumber(density_of_head(d, h)));
  report_put(row, "density_per_head", heads);
}

void rows_put_flops(cJSON *row, const density_stats *d) {
  report_put_number(row, "flops_dense", flops_dense(d));
  report_put_number(row, "flops_sparse", flops_sparse(d));
  report_put_number(row, "flops_index", flops_index(d));
  report_put_number(row, "flops_correction", flops_correction(d));
  report_put_number(row, "aux_ratio", flops_aux_ratio(d));
}

void rows_put_quality(cJSON *row, const quality *q) {
  report_put_number(row, "quality_rows", q->rows);
  report_put_number(row, "rel_error", q->err);
  report_put_number(row, "mass_recall", q->mass_recall);
}

void rows_put_needles(cJSON *row, double needle, int needle_rows) {
  if (!needle_rows) return;
  report_put_number(row, "needle_recall", needle);
  report_put_number(row, "needle_rows", needle_rows);
}

void rows_put_index_times(cJSON *row, const pipeline_result *r) {
  report_add_times(row, "quantise", r->times.t_quant, r->times.trials);
  report_add_times(row, "pool", r->times.t_pool, r->times.trials);
  report_add_times(row, "select", r->times.t_select, r->times.trials);
}

void rows_put_stage_times(cJSON *row, const pipeline_result *r) {
  rows_put_index_times(row, r);
  report_add_times(row, "attend", r->times.t_attend, r->times.trials);
}
