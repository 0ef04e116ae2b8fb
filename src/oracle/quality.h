/* Quality of a sparse pass against full attention (DESIGN.md's Definitions): relative L2 error
   of the output with and without mean correction, attention-mass recall, needle recall. */
#ifndef FP2_QUALITY_H
#define FP2_QUALITY_H

#include "reference.h"
#include "sample.h"

typedef struct quality {
  int rows;
  double err;         /* ||o - o_full|| / ||o_full|| over the rows */
  double mass_recall; /* mean share of the full softmax mass inside the selected blocks */
} quality;

/* Full causal attention of the sampled rows on the source values (what the model computed):
   each row's output and the share of its softmax mass in each key block. It depends on the
   rows only, so one reference serves every index and backend output of a problem. */
typedef struct full_reference {
  int max_blocks;
  double *out;        /* [rows, dim] */
  double *block_mass; /* [rows, max_blocks] */
} full_reference;

void full_reference_compute(const problem *pb, const row_sample *rows, full_reference *out);
void full_reference_free(full_reference *r);

/* A backend's output rows o ([total_q, hq, dim]; only the sampled rows are read) against the
   reference, and the attention-mass recall of the index. */
void quality_measure(const problem *pb, const csr_index *idx, const row_sample *rows, const full_reference *ref,
                     const float *o, quality *out);

/* The same with the sampled rows' outputs alone, o_rows [rows, dim] in the sample's order. */
void quality_measure_rows(const problem *pb, const csr_index *idx, const row_sample *rows, const full_reference *ref,
                          const float *o_rows, quality *out);

/* Share of synth:niah question rows (outside the always-dense tail tiles) whose tile selected
   every block of the needle they ask for; rows whose segment idx did not evaluate are not
   counted. *rows receives how many were (0 without needles; the result is then NaN). */
double needle_recall(const problem *pb, const csr_index *idx, int *rows);

/* want[seg] = 1 for the segments holding question rows of synth:niah (NULL without needles),
   for an index that only needs those. Caller frees. */
unsigned char *needle_segments(const problem *pb);

#endif
