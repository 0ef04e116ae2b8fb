#include "quality.h"

#include <math.h>
#include <stdlib.h>

#include "error.h"

static const int *segment_blocks(const problem *pb, const csr_index *idx, int b, int i, int head, int *n) {
  int seg = problem_row_segment(pb, b, i, head);
  *n = idx->offsets[seg + 1] - idx->offsets[seg];
  return idx->indices + idx->offsets[seg];
}

void full_reference_compute(const problem *pb, const row_sample *rows, full_reference *out) {
  int max_blocks = 0;
  for (int b = 0; b < pb->batch; b++)
    if (pb->cu_blocks[b + 1] - pb->cu_blocks[b] > max_blocks) max_blocks = pb->cu_blocks[b + 1] - pb->cu_blocks[b];
  out->max_blocks = max_blocks;
  out->out = xmalloc(sizeof(double) * (size_t)(rows->n > 0 ? rows->n : 1) * (size_t)pb->p.dim);
  out->block_mass = xcalloc((size_t)(rows->n > 0 ? rows->n : 1) * (size_t)max_blocks, sizeof(double));
  const qkv_view src = problem_source(pb);
#pragma omp parallel for schedule(dynamic, 1)
  for (int r = 0; r < rows->n; r++)
    ref_full_row(pb, src, rows->b[r], rows->i[r], rows->head[r], out->out + (size_t)r * pb->p.dim,
                 out->block_mass + (size_t)r * max_blocks);
}

void full_reference_free(full_reference *r) {
  free(r->out);
  free(r->block_mass);
  r->out = r->block_mass = NULL;
}

/* o_rows: the sampled rows alone ([rows, dim]), else o is [total_q, hq, dim]. */
static void measure(const problem *pb, const csr_index *idx, const row_sample *rows, const full_reference *ref,
                    const float *o, int o_rows, quality *out) {
  const int dim = pb->p.dim;
  double diff = 0, norm = 0, mass = 0;
  for (int r = 0; r < rows->n; r++) {
    int b = rows->b[r], i = rows->i[r], head = rows->head[r], n;
    const int *blocks = segment_blocks(pb, idx, b, i, head, &n);
    double row_mass = 0;
    for (int k = 0; k < n; k++) row_mass += ref->block_mass[(size_t)r * ref->max_blocks + blocks[k]];
    mass += fmin(row_mass, 1.0); /* a share: block sums can exceed 1 by rounding alone */
    const double *full = ref->out + (size_t)r * dim;
    const float *row = o_rows ? o + (size_t)r * dim : o + ((size_t)(pb->cu_q[b] + i) * pb->p.hq + head) * dim;
    for (int d = 0; d < dim; d++) {
      diff += (row[d] - full[d]) * (row[d] - full[d]);
      norm += full[d] * full[d];
    }
  }
  out->rows = rows->n;
  out->err = norm > 0 ? sqrt(diff / norm) : NAN;
  out->mass_recall = rows->n > 0 ? mass / rows->n : NAN;
}

void quality_measure(const problem *pb, const csr_index *idx, const row_sample *rows, const full_reference *ref,
                     const float *o, quality *out) {
  measure(pb, idx, rows, ref, o, 0, out);
}

void quality_measure_rows(const problem *pb, const csr_index *idx, const row_sample *rows, const full_reference *ref,
                          const float *o_rows, quality *out) {
  measure(pb, idx, rows, ref, o_rows, 1, out);
}

static int has_block(const int *blocks, int n, int j) {
  for (int k = 0; k < n; k++)
    if (blocks[k] == j) return 1;
  return 0;
}

double needle_recall(const problem *pb, const csr_index *idx, int *rows) {
  const int g = fp2_group(&pb->p), B = pb->p.block;
  int counted = 0, found = 0;
  for (int b = 0; pb->niah && b < pb->batch; b++) {
    const niah_info *ni = &pb->niah[b];
    int ntiles = pb->cu_tiles[b + 1] - pb->cu_tiles[b], offset = pb->lk[b] - pb->lq[b];
    for (int pos = ni->question_begin; pos < ni->question_begin + ni->question_len; pos++) {
      int k = niah_needle_of(ni, pos);
      for (int head = 0; head < pb->p.hq; head++) {
        int i = pos - offset, t = problem_row_tile(pb, i, head);
        if (k < 0 || t >= ntiles - pb->p.recent) continue;
        if (!idx->evaluated[problem_segment(pb, b, head / g, t)]) continue;
        int n;
        const int *blocks = segment_blocks(pb, idx, b, i, head, &n);
        int ok = 1;
        for (int j = ni->start[k] / B; j <= (ni->start[k] + ni->len[k] - 1) / B; j++) ok &= has_block(blocks, n, j);
        counted++;
        found += ok;
      }
    }
  }
  *rows = counted;
  return counted ? (double)found / counted : NAN;
}

unsigned char *needle_segments(const problem *pb) {
  if (!pb->niah) return NULL;
  unsigned char *want = xcalloc((size_t)problem_num_segments(pb) + 1, 1);
  for (int b = 0; b < pb->batch; b++) {
    const niah_info *ni = &pb->niah[b];
    for (int pos = ni->question_begin; pos < ni->question_begin + ni->question_len; pos++)
      for (int head = 0; head < pb->p.hq; head++) {
        int i = pos - (pb->lk[b] - pb->lq[b]);
        want[problem_row_segment(pb, b, i, head)] = 1;
      }
  }
  return want;
}
