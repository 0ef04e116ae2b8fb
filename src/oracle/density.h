/* Density of a block index and the FLOP model of the three stages (paper Eq. 19-20),
   counted exactly from the tiles an index holds rather than from a closed form:
     dense      4 D per causal (query row, key) pair     (QK and PV)
     sparse     4 D per computed pair                     (the selected blocks)
     index      2 D per scored (row, pooled key) pair     (QK against the pooled keys)
     correction 4 D per (row, virtual key) pair           (QK and PV on pooled vectors)
   The auxiliary ratio is (index + correction) / sparse. */
#ifndef FP2_DENSITY_H
#define FP2_DENSITY_H

#include "reference.h"

typedef struct density_stats {
  int hkv;
  double causal, computed, scored, corrected; /* pairs over the evaluated segments */
  double *head_causal, *head_computed;        /* [hkv] */
  int segments, segments_evaluated;
  int dim;
} density_stats;

/* Sums the tile counts of every evaluated segment of idx; correction pairs only when
   correction is on. */
void density_measure(const problem *pb, const csr_index *idx, int correction, density_stats *out);
void density_free(density_stats *d);

double density_overall(const density_stats *d);
double density_of_head(const density_stats *d, int h);

/* FLOPs over the evaluated segments. */
double flops_dense(const density_stats *d);
double flops_sparse(const density_stats *d);
double flops_index(const density_stats *d);
double flops_correction(const density_stats *d);
double flops_aux_ratio(const density_stats *d);

#endif
