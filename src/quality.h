/* Quality of a sparse pass against full attention (DESIGN.md section 3): relative L2 error
   of the output with and without mean correction, attention-mass recall, needle recall. */
#ifndef FP2_QUALITY_H
#define FP2_QUALITY_H

#include "reference.h"
#include "sample.h"

typedef struct quality {
  int rows;
  double err_corrected;   /* ||o - o_full|| / ||o_full|| over the rows, correction on */
  double err_uncorrected; /* the same without correction */
  double mass_recall;     /* mean share of the full softmax mass inside the selected blocks */
} quality;

/* Full attention runs on the source values (what the model computed); the sparse outputs on
   the operands. `o` (optional, [total_q, hq, dim]) supplies the corrected outputs of a backend
   instead of the oracle's (its correction setting is then the problem's). */
void quality_measure(const problem *pb, const csr_index *idx, const pooled_view *pooled, const row_sample *rows,
                     const float *o, quality *out);

/* Share of synth:niah question rows (outside the always-dense tail tiles) whose tile selected
   every block of the needle they ask for; *rows receives how many rows were counted (0 when the
   problem has no needles, and the result is then NaN). */
double needle_recall(const problem *pb, const csr_index *idx, int *rows);

#endif
