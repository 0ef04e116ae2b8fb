#include "check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

/* Output rounding floor: the bf16 spacing of values of magnitude ~1 (outputs are bf16). */
#define OUTPUT_FLOOR (1.0 / 256.0)

static int contains(const int *a, int n, int j) {
  for (int k = 0; k < n; k++)
    if (a[k] == j) return 1;
  return 0;
}

double gpu_flip_tolerance(fp2_dtype dtype) { return dtype == FP2_FP8 ? 5e-3 : 1e-4; }

void check_index(const problem *pb, const float *kbar, double kbar_scale, const csr_index *got, double tol,
                 int show, index_diff *out) {
  int64_t blocks = 0, flips = 0, mismatches = 0;
  double worst_flip = 0;
  for (int b = 0; b < pb->batch; b++) {
    int ntiles = pb->cu_tiles[b + 1] - pb->cu_tiles[b];
    for (int h = 0; h < pb->p.hkv; h++)
#pragma omp parallel for schedule(dynamic, 4) reduction(+ : blocks, flips, mismatches) reduction(max : worst_flip)
      for (int t = 0; t < ntiles; t++) {
        int seg = problem_segment(pb, b, h, t);
        if (!got->evaluated[seg]) continue;
        tile_selection ref;
        ref_select_tile(pb, kbar, kbar_scale, b, h, t, &ref);
        const int *g = got->indices + got->offsets[seg];
        int ng = got->offsets[seg + 1] - got->offsets[seg];
        const double thr = ref.threshold; /* the oracle's own rule, not a second copy */
        blocks += ref.nkept;
        for (int j = 0; j <= ref.tile.last_k; j++) {
          int in_ref = contains(ref.kept, ref.nkept, j), in_got = contains(g, ng, j);
          if (in_ref == in_got) continue;
          double dist = j < ref.tile.nscored && thr > 0 ? fabs(ref.energy[j] - thr) / thr : INFINITY;
          if (dist <= tol) {
            flips++;
            if (dist > worst_flip) worst_flip = dist;
            continue;
          }
          mismatches++;
#pragma omp critical(fp2_check_print)
          if (show-- > 0)
            fprintf(stderr, "  index mismatch: seq %d kv head %d tile %d block %d: %s by the backend, %s by the oracle "
                    "(distance to threshold %.3g)\n", b, h, t, j, in_got ? "kept" : "dropped",
                    in_ref ? "kept" : "dropped", dist);
        }
        tile_selection_free(&ref);
      }
  }
  out->blocks = blocks;
  out->flips = flips;
  out->mismatches = mismatches;
  out->worst_flip = worst_flip;
}

void check_outputs(const problem *pb, const csr_index *idx, const pooled_view *pooled, const row_sample *rows,
                   const float *o, int show, output_diff *out) {
  const int dim = pb->p.dim;
  const qkv_view x = problem_operands(pb);
  double err = 0, err_emul = 0, diff2 = 0, norm2 = 0;
  double *dev = xmalloc(sizeof(double) * (size_t)(rows->n > 0 ? rows->n : 1));
  int *nan_bad = xcalloc((size_t)(rows->n > 0 ? rows->n : 1), sizeof(int));
#pragma omp parallel reduction(max : err, err_emul) reduction(+ : diff2, norm2)
  {
    double *exact = xmalloc(sizeof(double) * (size_t)dim), *emul = xmalloc(sizeof(double) * (size_t)dim);
#pragma omp for schedule(dynamic, 4)
    for (int k = 0; k < rows->n; k++) {
      int b = rows->b[k], i = rows->i[k], head = rows->head[k];
      int seg = problem_row_segment(pb, b, i, head);
      const int *blocks = idx->indices + idx->offsets[seg];
      int n = idx->offsets[seg + 1] - idx->offsets[seg];
      double lse;
      const pooled_view *pv = pb->p.correction ? pooled : NULL;
      ref_attend_row(pb, x, b, i, head, blocks, n, pv, PROB_EXACT, exact, &lse);
      ref_attend_row(pb, x, b, i, head, blocks, n, pv, PROB_EMULATED, emul, &lse);
      const float *row = o + ((size_t)(pb->cu_q[b] + i) * pb->p.hq + head) * dim;
      double worst = 0;
      for (int d = 0; d < dim; d++) {
        double e = fabs((double)row[d] - exact[d]);
        if (isnan(e) && !isnan(exact[d])) nan_bad[k] = 1;
        if (e > worst) worst = e;
        if (fabs(emul[d] - exact[d]) > err_emul) err_emul = fabs(emul[d] - exact[d]);
        diff2 += e * e;
        norm2 += exact[d] * exact[d];
      }
      dev[k] = worst;
      if (worst > err) err = worst;
    }
    free(exact);
    free(emul);
  }
  out->rows = rows->n;
  out->err = err;
  out->err_emul = err_emul;
  out->bound = 2 * err_emul + OUTPUT_FLOOR;
  out->rel_l2 = norm2 > 0 ? sqrt(diff2 / norm2) : 0;
  out->bad_rows = 0;
  for (int k = 0; k < rows->n; k++) {
    if (!(dev[k] <= out->bound) || nan_bad[k]) {
      if (out->bad_rows++ < show)
        fprintf(stderr, "  output mismatch: seq %d query %d head %d: max error %.3g over the bound %.3g%s\n",
                rows->b[k], rows->i[k], rows->head[k], dev[k], out->bound, nan_bad[k] ? " (NaN)" : "");
    }
  }
  free(dev);
  free(nan_bad);
}

int64_t check_codes(const float *got, const float *want, size_t n, size_t *first) {
  int64_t differ = 0;
  for (size_t i = n; i-- > 0;)
    if (memcmp(&got[i], &want[i], sizeof(float)) != 0) {
      differ++;
      if (first) *first = i;
    }
  return differ;
}

double check_pooled(const problem *pb, const float *k_mean, const float *v_mean) {
  size_t n = (size_t)pb->p.hkv * pb->cu_blocks[pb->batch] * pb->p.dim;
  float *km = xmalloc(sizeof(float) * (n ? n : 1)), *vm = xmalloc(sizeof(float) * (n ? n : 1));
  ref_pool(pb, km, vm);
  double diff = 0, top = 0;
  for (size_t i = 0; i < n; i++) {
    double d = fmax(fabs((double)k_mean[i] - km[i]), fabs((double)v_mean[i] - vm[i]));
    if (!(d <= diff)) diff = d; /* a NaN is the largest difference */
    top = fmax(top, fmax(fabs(km[i]), fabs(vm[i])));
  }
  free(km);
  free(vm);
  return top > 0 ? diff / top : diff;
}
