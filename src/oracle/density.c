#include "density.h"

#include <math.h>
#include <stdlib.h>

#include "error.h"

void density_measure(const problem *pb, const csr_index *idx, int correction, density_stats *out) {
  const int hkv = pb->p.hkv;
  out->hkv = hkv;
  out->dim = pb->p.dim;
  out->causal = out->computed = out->scored = out->corrected = 0;
  out->head_causal = xcalloc((size_t)hkv, sizeof(double));
  out->head_computed = xcalloc((size_t)hkv, sizeof(double));
  out->segments = idx->nseg;
  out->segments_evaluated = 0;
  for (int b = 0; b < pb->batch; b++) {
    int ntiles = pb->cu_tiles[b + 1] - pb->cu_tiles[b];
    for (int h = 0; h < hkv; h++)
      for (int t = 0; t < ntiles; t++) {
        int seg = problem_segment(pb, b, h, t);
        if (!idx->evaluated[seg]) continue;
        tile_counts c;
        const int *blocks = idx->indices + idx->offsets[seg];
        ref_tile_counts(pb, b, t, blocks, idx->offsets[seg + 1] - idx->offsets[seg], &c);
        out->causal += c.causal;
        out->computed += c.computed;
        out->scored += c.scored;
        out->corrected += correction ? c.corrected : 0;
        out->head_causal[h] += c.causal;
        out->head_computed[h] += c.computed;
        out->segments_evaluated++;
      }
  }
}

void density_free(density_stats *d) {
  free(d->head_causal);
  free(d->head_computed);
  d->head_causal = d->head_computed = NULL;
}

double density_overall(const density_stats *d) { return d->causal > 0 ? d->computed / d->causal : NAN; }

double density_of_head(const density_stats *d, int h) {
  return d->head_causal[h] > 0 ? d->head_computed[h] / d->head_causal[h] : NAN;
}

double flops_dense(const density_stats *d) { return 4.0 * d->dim * d->causal; }
double flops_sparse(const density_stats *d) { return 4.0 * d->dim * d->computed; }
double flops_index(const density_stats *d) { return 2.0 * d->dim * d->scored; }
double flops_correction(const density_stats *d) { return 4.0 * d->dim * d->corrected; }

double flops_aux_ratio(const density_stats *d) {
  double s = flops_sparse(d);
  return s > 0 ? (flops_index(d) + flops_correction(d)) / s : NAN;
}
