/* Oracle, stage 3: causal attention rows over a block list, with and without the mean
   correction, in fp64 or emulating the kernels' rounding; full attention and the
   attention-mass recall for quality metrics; pair counts for density. */
#include <math.h>
#include <stdlib.h>

#include "error.h"
#include "numeric.h"
#include "reference.h"

static double dot_f64(const float *a, const float *b, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += (double)a[i] * (double)b[i];
  return s;
}

/* The logits of one row: keys of the listed blocks that the row sees, then (optionally) the
   virtual keys of unlisted fully visible blocks. vrow[k] points at each logit's value row. */
typedef struct row_logits {
  int n;
  double *s;          /* logits */
  const float **vrow; /* value row of each logit */
  double *vscale;     /* dequantisation scale of each value row */
} row_logits;

static int block_end(const problem *pb, int b, int j) {
  int end = (j + 1) * pb->p.block;
  return end < pb->lk[b] ? end : pb->lk[b];
}

static void gather_logits(const problem *pb, qkv_view x, int b, int i, int head, const int *blocks,
                          int nblocks, const pooled_view *pooled, row_logits *out) {
  const fp2_params *p = &pb->p;
  const int g = fp2_group(p), h = head / g, dim = p->dim, pos = pb->lk[b] - pb->lq[b] + i;
  const double scale = x.sq * x.sk / sqrt((double)dim);
  const float *q = x.q + ((size_t)(pb->cu_q[b] + i) * p->hq + head) * dim;
  const fp2_tile tl = fp2_tile_at(p, pb->lq[b], pb->lk[b], problem_row_tile(pb, i, head));
  const int cap = pos + 1 + (pooled ? tl.nfull : 0);
  out->s = xmalloc(sizeof(double) * (size_t)cap);
  out->vrow = xmalloc(sizeof(*out->vrow) * (size_t)cap);
  out->vscale = xmalloc(sizeof(double) * (size_t)cap);
  int n = 0;
  for (int k = 0; k < nblocks; k++) {
    int end = block_end(pb, b, blocks[k]);
    for (int j = blocks[k] * p->block; j < end && j <= pos; j++) {
      size_t at = ((size_t)(pb->cu_k[b] + j) * p->hkv + h) * dim;
      out->s[n] = dot_f64(q, x.k + at, dim) * scale;
      out->vrow[n] = x.v + at;
      out->vscale[n] = x.sv;
      n++;
    }
  }
  if (pooled) {
    const int nblk_all = pb->cu_blocks[pb->batch];
    const double pscale = x.sq * pooled->sk / sqrt((double)dim);
    int k = 0;
    for (int j = 0; j < tl.nfull; j++) {
      while (k < nblocks && blocks[k] < j) k++;
      if (k < nblocks && blocks[k] == j) continue; /* selected: attended exactly */
      size_t at = ((size_t)h * nblk_all + (size_t)(pb->cu_blocks[b] + j)) * dim;
      out->s[n] = dot_f64(q, pooled->k + at, dim) * pscale + log((double)(block_end(pb, b, j) - j * p->block));
      out->vrow[n] = pooled->v + at;
      out->vscale[n] = pooled->sv;
      n++;
    }
  }
  out->n = n;
}

static void row_logits_free(row_logits *r) {
  free(r->s);
  free(r->vrow);
  free(r->vscale);
}

static double rounded_probability(fp2_dtype dt, double prob) {
  if (dt == FP2_FP8) return (double)e4m3_round((float)(prob * 256.0)) / 256.0;
  return (double)bf16_round((float)prob);
}

/* Softmax-weighted sum of the value rows and the log-sum-exp of the logits. */
static void softmax_rows(const problem *pb, const row_logits *r, prob_mode mode, double *out, double *lse) {
  const int dim = pb->p.dim;
  double m = -INFINITY, l = 0;
  for (int d = 0; d < dim; d++) out[d] = 0;
  for (int k = 0; k < r->n; k++)
    if (r->s[k] > m) m = r->s[k];
  if (r->n == 0 || m == -INFINITY) {
    *lse = -INFINITY;
    return;
  }
  for (int k = 0; k < r->n; k++) {
    double prob = exp(r->s[k] - m);
    l += prob;
    double w = (mode == PROB_EMULATED ? rounded_probability(pb->p.dtype, prob) : prob) * r->vscale[k];
    for (int d = 0; d < dim; d++) out[d] += w * r->vrow[k][d];
  }
  for (int d = 0; d < dim; d++) {
    out[d] /= l;
    if (mode == PROB_EMULATED) out[d] = bf16_round((float)out[d]);
  }
  *lse = m + log(l);
}

void ref_attend_row(const problem *pb, qkv_view x, int b, int i, int head, const int *blocks, int nblocks,
                    const pooled_view *pooled, prob_mode mode, double *out, double *lse) {
  row_logits r;
  gather_logits(pb, x, b, i, head, blocks, nblocks, pooled, &r);
  softmax_rows(pb, &r, mode, out, lse);
  row_logits_free(&r);
}

void ref_full_row(const problem *pb, qkv_view x, int b, int i, int head, double *out, double *block_mass) {
  const int pos = pb->lk[b] - pb->lq[b] + i, nall = pos / pb->p.block + 1;
  int *all = xmalloc(sizeof(int) * (size_t)nall);
  for (int j = 0; j < nall; j++) all[j] = j;
  row_logits r;
  gather_logits(pb, x, b, i, head, all, nall, NULL, &r);
  double lse;
  softmax_rows(pb, &r, PROB_EXACT, out, &lse);
  /* Logits are gathered block by block in key order, so key j is logit j. */
  for (int k = 0; block_mass && k < nall; k++) {
    double mass = 0;
    for (int j = k * pb->p.block; j < block_end(pb, b, k) && j <= pos; j++) mass += exp(r.s[j] - lse);
    block_mass[k] = mass;
  }
  row_logits_free(&r);
  free(all);
}

void ref_tile_counts(const problem *pb, int b, int t, const int *blocks, int nblocks, tile_counts *out) {
  const fp2_params *p = &pb->p;
  const int g = fp2_group(p);
  const fp2_tile tl = fp2_tile_at(p, pb->lq[b], pb->lk[b], t);
  int unselected_full = tl.nfull;
  for (int k = 0; k < nblocks; k++) unselected_full -= blocks[k] < tl.nfull;
  tile_counts c = {0, 0, 0, 0};
  for (int row = tl.row_begin; row < tl.row_end; row++) {
    int pos = pb->lk[b] - pb->lq[b] + row / g;
    c.causal += pos + 1;
    int reached = pos / p->block + 1; /* blocks whose first key the row sees */
    c.scored += reached < tl.nscored ? reached : tl.nscored;
    c.corrected += unselected_full;
    for (int k = 0; k < nblocks; k++) {
      int first = blocks[k] * p->block, end = block_end(pb, b, blocks[k]);
      int last = end - 1 < pos ? end - 1 : pos;
      if (last >= first) c.computed += last - first + 1;
    }
  }
  *out = c;
}
