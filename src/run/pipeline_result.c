#include "pipeline_result.h"

#include <stdlib.h>
#include <string.h>

pooled_view pipeline_pooled(const pipeline_result *r) {
  pooled_view v = {r->kbar, r->vbar, r->kbar_scale, r->vbar_scale};
  return v;
}

void pipeline_result_free(pipeline_result *r) {
  free(r->k_mean);
  free(r->v_mean);
  free(r->kbar);
  free(r->vbar);
  csr_free(&r->index);
  free(r->score);
  free(r->output);
  free(r->times.t_quant);
  free(r->times.t_pool);
  free(r->times.t_select);
  free(r->times.t_attend);
  free(r->times.t_submit);
  free(r->times.t_index_whole);
  free(r->gpu.q_op);
  free(r->gpu.k_op);
  free(r->gpu.v_op);
  memset(r, 0, sizeof *r);
}
