/* Oracle, stage 1: mean-pooled keys and values per key block (DESIGN.md's Definitions). */
#include <math.h>
#include <stdlib.h>

#include "numeric.h"
#include "reference.h"

void ref_pool(const problem *pb, float *k_mean, float *v_mean) {
  const fp2_params *p = &pb->p;
  const int dim = p->dim, hkv = p->hkv, nblk_all = pb->cu_blocks[pb->batch];
  for (int b = 0; b < pb->batch; b++) {
    int nblk = pb->cu_blocks[b + 1] - pb->cu_blocks[b];
#pragma omp parallel for collapse(2) schedule(static)
    for (int h = 0; h < hkv; h++)
      for (int j = 0; j < nblk; j++) {
        int first = j * p->block, last = (j + 1) * p->block < pb->lk[b] ? (j + 1) * p->block : pb->lk[b];
        size_t out = ((size_t)h * nblk_all + (size_t)(pb->cu_blocks[b] + j)) * dim;
        for (int d = 0; d < dim; d++) {
          double sk = 0, sv = 0;
          for (int t = first; t < last; t++) {
            size_t at = ((size_t)(pb->cu_k[b] + t) * hkv + h) * dim + d;
            sk += pb->k_op[at];
            sv += pb->v_op[at];
          }
          k_mean[out + d] = (float)(sk * pb->sk / (last - first));
          v_mean[out + d] = (float)(sv * pb->sv / (last - first));
        }
      }
  }
}

double ref_pooled_operands(fp2_dtype dt, pooled_mode mode, float scale, const float *mean, float *out, size_t n) {
  if (mode == POOLED_EXACT) {
    for (size_t i = 0; i < n; i++) out[i] = mean[i];
    return 1.0;
  }
  if (dt == FP2_FP8) {
    for (size_t i = 0; i < n; i++) out[i] = e4m3_quantize(mean[i], scale);
    return scale;
  }
  for (size_t i = 0; i < n; i++) out[i] = bf16_round(mean[i]);
  return 1.0;
}
