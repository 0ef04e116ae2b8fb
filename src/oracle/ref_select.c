/* Oracle, stage 2: block scoring, max-based thresholding and the CSR block index
   (DESIGN.md's Definitions), plus the forced-density and dense indexes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "reference.h"
#include "rng.h"

void csr_free(csr_index *c) {
  free(c->offsets);
  free(c->indices);
  free(c->evaluated);
  memset(c, 0, sizeof *c);
}

void csr_copy(const csr_index *src, csr_index *out) {
  const size_t nseg = (size_t)src->nseg, nnz = (size_t)src->nnz;
  out->nseg = src->nseg;
  out->nnz = src->nnz;
  out->offsets = xmalloc(sizeof(int) * (nseg + 1));
  out->indices = xmalloc(sizeof(int) * (nnz ? nnz : 1));
  out->evaluated = xmalloc(nseg ? nseg : 1);
  memcpy(out->offsets, src->offsets, sizeof(int) * (nseg + 1));
  memcpy(out->indices, src->indices, sizeof(int) * nnz);
  memcpy(out->evaluated, src->evaluated, nseg);
}

int csr_same(const csr_index *a, const csr_index *b) {
  return a->nseg == b->nseg && a->nnz == b->nnz &&
         memcmp(a->offsets, b->offsets, sizeof(int) * ((size_t)a->nseg + 1)) == 0 &&
         memcmp(a->indices, b->indices, sizeof(int) * (size_t)a->nnz) == 0;
}

static double dot_f64(const float *a, const float *b, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += (double)a[i] * (double)b[i];
  return s;
}

void tile_selection_free(tile_selection *s) {
  free(s->energy);
  free(s->kept);
  s->energy = NULL;
  s->kept = NULL;
}

void ref_select_tile(const problem *pb, const float *kbar, double kbar_scale, int b, int h, int t,
                     tile_selection *out) {
  const fp2_params *p = &pb->p;
  const int g = fp2_group(p), dim = p->dim, lq = pb->lq[b], lk = pb->lk[b];
  const int ntiles = pb->cu_tiles[b + 1] - pb->cu_tiles[b], nblk_all = pb->cu_blocks[pb->batch];
  const fp2_tile tl = fp2_tile_at(p, lq, lk, t);
  const int nrows = tl.row_end - tl.row_begin, ns = tl.nscored;
  const double scale = (double)pb->sq * kbar_scale / sqrt((double)dim);

  out->tile = tl;
  out->energy = xcalloc((size_t)(ns > 0 ? ns : 1), sizeof(double));
  out->kept = xmalloc(sizeof(int) * (size_t)(tl.last_k + 1));

  /* Logits of every counted (row, block) pair; -inf where the row does not reach the block. */
  double *s = xmalloc(sizeof(double) * (size_t)nrows * (size_t)(ns > 0 ? ns : 1));
  double m = -INFINITY;
  for (int r = 0; r < nrows; r++) {
    int row = tl.row_begin + r, pos = (lk - lq) + row / g, head = h * g + row % g;
    const float *q = pb->q_op + ((size_t)(pb->cu_q[b] + row / g) * p->hq + head) * dim;
    for (int j = 0; j < ns; j++) {
      double v = -INFINITY;
      if (pos >= j * p->block) {
        const float *kb = kbar + ((size_t)h * nblk_all + (size_t)(pb->cu_blocks[b] + j)) * dim;
        v = dot_f64(q, kb, dim) * scale;
        if (v > m) m = v;
      }
      s[(size_t)r * ns + j] = v;
    }
  }
  double e_max = 0;
  for (int j = 0; j < ns; j++) {
    double e = 0;
    for (int r = 0; r < nrows; r++) e += exp(s[(size_t)r * ns + j] - m);
    out->energy[j] = e;
    if (e > e_max) e_max = e;
  }
  free(s);
  out->m_tile = m;
  out->e_max = e_max;

  out->threshold = (double)p->alpha * e_max;
  int n = 0;
  for (int j = 0; j <= tl.last_k; j++)
    if (fp2_always_kept(p, &tl, ntiles, t, j) || (j < ns && out->energy[j] >= out->threshold)) out->kept[n++] = j;
  out->nkept = n;
}

/* Builds a CSR over the wanted segments from a per-segment block lister. */
typedef int (*segment_lister)(const problem *pb, int b, int h, int t, int *blocks, void *ctx);

static void build_csr(const problem *pb, const unsigned char *want, segment_lister list, void *ctx,
                      csr_index *out) {
  const int nseg = problem_num_segments(pb), hkv = pb->p.hkv;
  int64_t *cap = xmalloc(sizeof(int64_t) * (size_t)(nseg + 1));
  int *count = xcalloc((size_t)nseg, sizeof(int));
  /* Capacity: every causal block of the segment's tile. */
  cap[0] = 0;
  for (int b = 0; b < pb->batch; b++) {
    int ntiles = pb->cu_tiles[b + 1] - pb->cu_tiles[b];
    for (int h = 0; h < hkv; h++)
      for (int t = 0; t < ntiles; t++) {
        int seg = problem_segment(pb, b, h, t);
        int n = (!want || want[seg]) ? fp2_tile_at(&pb->p, pb->lq[b], pb->lk[b], t).last_k + 1 : 0;
        cap[seg + 1] = n;
      }
  }
  for (int s = 0; s < nseg; s++) cap[s + 1] += cap[s];
  int *scratch = xmalloc(sizeof(int) * (size_t)(cap[nseg] > 0 ? cap[nseg] : 1));
  for (int b = 0; b < pb->batch; b++) {
    int ntiles = pb->cu_tiles[b + 1] - pb->cu_tiles[b];
#pragma omp parallel for collapse(2) schedule(dynamic, 4)
    for (int h = 0; h < hkv; h++)
      for (int t = 0; t < ntiles; t++) {
        int seg = problem_segment(pb, b, h, t);
        if (!want || want[seg]) count[seg] = list(pb, b, h, t, scratch + cap[seg], ctx);
      }
  }
  out->nseg = nseg;
  out->offsets = xmalloc(sizeof(int) * (size_t)(nseg + 1));
  out->evaluated = xmalloc((size_t)(nseg > 0 ? nseg : 1));
  out->offsets[0] = 0;
  for (int s = 0; s < nseg; s++) {
    out->offsets[s + 1] = out->offsets[s] + count[s];
    out->evaluated[s] = !want || want[s];
  }
  out->nnz = out->offsets[nseg];
  out->indices = xmalloc(sizeof(int) * (size_t)(out->nnz > 0 ? out->nnz : 1));
  for (int s = 0; s < nseg; s++) memcpy(out->indices + out->offsets[s], scratch + cap[s], sizeof(int) * (size_t)count[s]);
  free(scratch);
  free(cap);
  free(count);
}

typedef struct select_ctx {
  const float *kbar;
  double kbar_scale;
  float *score;
  int max_blocks;
} select_ctx;

static int list_selected(const problem *pb, int b, int h, int t, int *blocks, void *ctx) {
  const select_ctx *c = ctx;
  tile_selection sel;
  ref_select_tile(pb, c->kbar, c->kbar_scale, b, h, t, &sel);
  memcpy(blocks, sel.kept, sizeof(int) * (size_t)sel.nkept);
  if (c->score) {
    double sum = 0;
    for (int j = 0; j < sel.tile.nscored; j++) sum += sel.energy[j];
    float *row = c->score + (size_t)problem_segment(pb, b, h, t) * (size_t)c->max_blocks;
    for (int j = 0; j < c->max_blocks; j++) row[j] = j < sel.tile.nscored ? (float)(sel.energy[j] / (sum + 1e-6)) : 0.0f;
  }
  int n = sel.nkept;
  tile_selection_free(&sel);
  return n;
}

void ref_select(const problem *pb, const float *kbar, double kbar_scale, const unsigned char *want,
                csr_index *out, float *score, int max_blocks) {
  select_ctx c = {kbar, kbar_scale, score, max_blocks};
  build_csr(pb, want, list_selected, &c, out);
}

typedef struct forced_ctx {
  double density;
  uint64_t seed;
} forced_ctx;

/* Always-kept blocks, then each other causal block with the probability that brings the
   tile's expected kept fraction to the requested density. */
static int list_forced(const problem *pb, int b, int h, int t, int *blocks, void *ctx) {
  const forced_ctx *c = ctx;
  const int ntiles = pb->cu_tiles[b + 1] - pb->cu_tiles[b];
  const fp2_tile tl = fp2_tile_at(&pb->p, pb->lq[b], pb->lk[b], t);
  int ncausal = tl.last_k + 1, nforced = 0;
  for (int j = 0; j <= tl.last_k; j++) nforced += fp2_always_kept(&pb->p, &tl, ntiles, t, j);
  double extra = c->density * ncausal - nforced;
  double prob = ncausal > nforced ? extra / (ncausal - nforced) : 0.0;
  uint64_t stream = ((uint64_t)(unsigned)b << 40) ^ ((uint64_t)(unsigned)h << 24) ^ (uint64_t)(unsigned)t;
  int n = 0;
  for (int j = 0; j <= tl.last_k; j++)
    if (fp2_always_kept(&pb->p, &tl, ntiles, t, j) || rng_uniform(c->seed, stream, (uint64_t)j) < prob)
      blocks[n++] = j;
  return n;
}

void ref_forced_index(const problem *pb, double density, uint64_t seed, csr_index *out) {
  forced_ctx c = {density, seed ^ 0x6d61736bull};
  build_csr(pb, NULL, list_forced, &c, out);
}

static int list_dense(const problem *pb, int b, int h, int t, int *blocks, void *ctx) {
  (void)h;
  (void)ctx;
  const fp2_tile tl = fp2_tile_at(&pb->p, pb->lq[b], pb->lk[b], t);
  for (int j = 0; j <= tl.last_k; j++) blocks[j] = j;
  return tl.last_k + 1;
}

void ref_dense_index(const problem *pb, csr_index *out) { build_csr(pb, NULL, list_dense, NULL, out); }
