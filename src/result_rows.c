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

void rows_put_stage_times(cJSON *row, const pipeline_result *r) {
  report_add_times(row, "quantise", r->t_quant, r->trials);
  report_add_times(row, "pool", r->t_pool, r->trials);
  report_add_times(row, "select", r->t_select, r->trials);
  report_add_times(row, "attend", r->t_attend, r->trials);
}
