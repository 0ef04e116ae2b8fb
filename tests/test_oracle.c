/* Properties of the CPU oracle (DESIGN.md's Definitions) that must hold on any input. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "pipeline.h"
#include "quality.h"
#include "rng.h"
#include "synth.h"
#include "numeric.h"
#include "testing.h"

static fp2_params params(int hq, int hkv, int dim, float alpha) {
  fp2_params p = {.hq = hq, .hkv = hkv, .dim = dim, .block = 128, .qtile = 128, .alpha = alpha,
                  .sink = 2, .window = 4, .recent = 2, .correction = 1, .dtype = FP2_BF16};
  return p;
}

static void make(problem *pb, const fp2_params *p, int len, synth_kind kind, uint64_t seed) {
  char err[320];
  problem_init(pb, p, 1, &len, &len);
  if (synth_fill(pb, kind, seed, err) != 0) fprintf(stderr, "synth: %s\n", err);
  problem_prepare(pb, 0);
}

/* ref_pool's means of a one-sequence problem into *km and *vm (the caller frees them); their count. */
static size_t pool(const problem *pb, float **km, float **vm) {
  size_t n = (size_t)pb->p.hkv * pb->cu_blocks[1] * pb->p.dim;
  *km = malloc(sizeof(float) * n);
  *vm = malloc(sizeof(float) * n);
  ref_pool(pb, *km, *vm);
  return n;
}

static void run(const problem *pb, pipeline_result *r, double density) {
  pipeline_config cfg = {.density = density, .seed = 7, .attend = 1, .pooled = POOLED_EXACT, .prob = PROB_EXACT};
  cpu_pipeline(pb, &cfg, r);
}

/* The geometry of DESIGN.md's Definitions on a hand-computed case. */
static void tile_geometry(void) {
  fp2_params p = params(12, 3, 8, 0.1f); /* g = 4 */
  fp2_tile t = fp2_tile_at(&p, 1000, 1000, 3);
  EXPECT(t.row_begin == 384 && t.row_end == 512);
  EXPECT(t.p_first == 96 && t.p_last == 127);
  EXPECT(t.first_k == 0 && t.last_k == 0 && t.nscored == 1 && t.nfull == 0);
  t = fp2_tile_at(&p, 1000, 1000, fp2_num_tiles(&p, 1000) - 1); /* the partial last tile */
  EXPECT(t.row_end == 4000 && t.p_last == 999 && t.last_k == 7 && t.nscored == 7);
  p.hq = 9; /* g = 3 does not divide the tile: tile 1 starts inside position 42 */
  t = fp2_tile_at(&p, 1000, 1000, 1);
  EXPECT(t.p_first == 42 && t.p_last == 85);
  t = fp2_tile_at(&p, 100, 1000, 0); /* a chunk: queries are the last 100 of 1000 keys */
  EXPECT(t.p_first == 900 && t.last_k == 7 && t.nfull == 7);
}

/* Alpha = 0 keeps every causal block, and the sparse pass is then the dense one. */
static void alpha_zero_is_dense(void) {
  fp2_params p = params(8, 2, 32, 0.0f);
  problem pb;
  make(&pb, &p, 1000, SYNTH_LLM, 11);
  pipeline_result r;
  run(&pb, &r, -1);
  csr_index dense;
  ref_dense_index(&pb, &dense);
  EXPECT(csr_same(&r.index, &dense));
  /* Full attention row by row equals the alpha = 0 output. */
  double full[32];
  for (int i = 0; i < 1000; i += 97)
    for (int head = 0; head < 8; head += 3) {
      ref_full_row(&pb, problem_operands(&pb), 0, i, head, full, NULL);
      const float *o = r.output + ((size_t)i * 8 + head) * 32;
      for (int d = 0; d < 32; d++) EXPECT_NEAR(o[d], full[d], 1e-6);
    }
  csr_free(&dense);
  pipeline_result_free(&r);
  problem_free(&pb);
}

/* Keys identical inside each block make the mean correction exact: the sparse output with
   correction equals full attention whatever is selected; without it, it does not. */
static void correction_exact_for_constant_blocks(void) {
  fp2_params p = params(4, 1, 16, 0.9f);
  p.window = 1;
  p.sink = 0;
  p.recent = 0;
  problem pb;
  make(&pb, &p, 1500, SYNTH_RANDOM, 5);
  for (int j = 0; j < 1500; j++)
    for (int d = 0; d < 16; d++) pb.k[(size_t)j * 16 + d] = pb.k[(size_t)(j / 128 * 128) * 16 + d];
  problem_prepare(&pb, 0);
  pipeline_result r;
  run(&pb, &r, -1);
  csr_index dense;
  ref_dense_index(&pb, &dense);
  EXPECT(r.index.nnz < dense.nnz); /* something was dropped */
  double full[16], unc[16], lse, worst_c = 0, worst_u = 0;
  for (int i = 0; i < 1500; i += 7)
    for (int head = 0; head < 4; head++) {
      ref_full_row(&pb, problem_operands(&pb), 0, i, head, full, NULL);
      int seg = problem_segment(&pb, 0, 0, (i * 4 + head) / 128);
      const int *blocks = r.index.indices + r.index.offsets[seg];
      int n = r.index.offsets[seg + 1] - r.index.offsets[seg];
      ref_attend_row(&pb, problem_operands(&pb), 0, i, head, blocks, n, NULL, PROB_EXACT, unc, &lse);
      const float *o = r.output + ((size_t)i * 4 + head) * 16;
      for (int d = 0; d < 16; d++) {
        worst_c = fmax(worst_c, fabs(o[d] - full[d]));
        worst_u = fmax(worst_u, fabs(unc[d] - full[d]));
      }
    }
  EXPECT_MSG(worst_c < 1e-6, "corrected output differs from full attention by %g", worst_c);
  EXPECT_MSG(worst_u > 1e-3, "uncorrected output equals full attention (%g): nothing was dropped", worst_u);
  csr_free(&dense);
  pipeline_result_free(&r);
  problem_free(&pb);
}

/* CSR invariants: ascending, causal, always-kept blocks present, offsets consistent. */
static void csr_invariants(const problem *pb, const csr_index *c) {
  EXPECT(c->offsets[0] == 0 && c->offsets[c->nseg] == c->nnz);
  for (int t = 0; t < pb->cu_tiles[1]; t++)
    for (int h = 0; h < pb->p.hkv; h++) {
      int seg = problem_segment(pb, 0, h, t), n = c->offsets[seg + 1] - c->offsets[seg];
      const int *blk = c->indices + c->offsets[seg];
      fp2_tile tl = fp2_tile_at(&pb->p, pb->lq[0], pb->lk[0], t);
      for (int k = 0; k < n; k++) {
        EXPECT(blk[k] >= 0 && blk[k] <= tl.last_k);
        if (k) EXPECT(blk[k] > blk[k - 1]);
      }
      for (int j = 0, k = 0; j <= tl.last_k; j++) {
        while (k < n && blk[k] < j) k++;
        if (fp2_always_kept(&pb->p, &tl, pb->cu_tiles[1], t, j)) EXPECT_MSG(k < n && blk[k] == j, "tile %d block %d", t, j);
      }
    }
}

/* Lower alpha keeps a superset; alpha = 1 keeps only the best block beyond the forced ones. */
static void alpha_monotone(void) {
  fp2_params p = params(8, 2, 32, 0.1f);
  problem pb;
  make(&pb, &p, 3000, SYNTH_LLM, 3);
  float *km, *vm;
  pool(&pb, &km, &vm);
  const float alphas[] = {1.0f, 0.3f, 0.1f, 0.01f, 0.0f};
  csr_index prev = {0};
  for (int a = 0; a < 5; a++) {
    pb.p.alpha = alphas[a];
    csr_index c;
    ref_select(&pb, km, 1.0, NULL, &c, NULL, 0);
    csr_invariants(&pb, &c);
    if (a > 0) {
      EXPECT(c.nnz >= prev.nnz);
      for (int s = 0; s < c.nseg; s++)
        for (int k = prev.offsets[s]; k < prev.offsets[s + 1]; k++) {
          int found = 0;
          for (int m = c.offsets[s]; m < c.offsets[s + 1]; m++) found |= c.indices[m] == prev.indices[k];
          EXPECT_MSG(found, "alpha %g lost block %d of segment %d", alphas[a], prev.indices[k], s);
        }
      csr_free(&prev);
    } else {
      /* alpha = 1: at most one scored block beyond the always-kept ones (ties aside). */
      for (int t = 0; t < pb.cu_tiles[1]; t++) {
        int seg = problem_segment(&pb, 0, 0, t), extra = 0;
        fp2_tile tl = fp2_tile_at(&pb.p, 3000, 3000, t);
        for (int k = c.offsets[seg]; k < c.offsets[seg + 1]; k++)
          extra += !fp2_always_kept(&pb.p, &tl, pb.cu_tiles[1], t, c.indices[k]);
        EXPECT(extra <= 1);
      }
    }
    prev = c;
  }
  csr_free(&prev);
  free(km);
  free(vm);
  problem_free(&pb);
}

/* Pooled means of a partial last block average only its real keys. */
static void pooled_partial_block(void) {
  fp2_params p = params(2, 1, 4, 0.1f);
  problem pb;
  make(&pb, &p, 200, SYNTH_RANDOM, 9);
  float km[2 * 4], vm[2 * 4];
  ref_pool(&pb, km, vm);
  for (int d = 0; d < 4; d++) {
    double s0 = 0, s1 = 0;
    for (int j = 0; j < 128; j++) s0 += pb.k[j * 4 + d];
    for (int j = 128; j < 200; j++) s1 += pb.k[j * 4 + d];
    EXPECT_NEAR(km[d], s0 / 128, 1e-6);
    EXPECT_NEAR(km[4 + d], s1 / 72, 1e-6);
  }
  problem_free(&pb);
}

/* Corner cases: one block, odd length, g = 3 with a tile it does not divide, a batch of two
   lengths, forced density; no window, sink or recent with alpha = 1 leaves rows with no key,
   whose output is zero. Every output is finite and every index satisfies the invariants. */
static void corner_cases(void) {
  const int lens[][2] = {{1, 1}, {77, 77}, {129, 129}, {1000, 1000}};
  for (int c = 0; c < 4; c++) {
    fp2_params p = params(9, 3, 8, 0.5f);
    problem pb;
    make(&pb, &p, lens[c][0], SYNTH_RANDOM, 100 + c);
    pipeline_result r;
    run(&pb, &r, -1);
    csr_invariants(&pb, &r.index);
    size_t n = (size_t)lens[c][0] * 9 * 8;
    for (size_t i = 0; i < n; i++) EXPECT(isfinite(r.output[i]));
    pipeline_result_free(&r);
    problem_free(&pb);
  }
  fp2_params p = params(4, 1, 8, 1.0f);
  p.window = 0;
  p.sink = 0;
  p.recent = 0;
  problem pb;
  make(&pb, &p, 600, SYNTH_RANDOM, 1);
  pipeline_result r;
  run(&pb, &r, -1);
  int zero_rows = 0;
  for (int i = 0; i < 600 * 4; i++) {
    int zero = 1;
    for (int d = 0; d < 8; d++) zero &= r.output[(size_t)i * 8 + d] == 0.0f;
    zero_rows += zero;
  }
  EXPECT_MSG(zero_rows > 0, "no row was left without keys");
  pipeline_result_free(&r);
  problem_free(&pb);
  /* Batch of two sequences, and the forced-density mask. */
  fp2_params q = params(8, 2, 16, 0.1f);
  int lq[2] = {300, 700};
  problem_init(&pb, &q, 2, lq, lq);
  char err[320];
  EXPECT(synth_fill(&pb, SYNTH_LLM, 4, err) == 0);
  problem_prepare(&pb, 0);
  run(&pb, &r, 0.5);
  EXPECT(r.index.nseg == 2 * (fp2_num_tiles(&q, 300) + fp2_num_tiles(&q, 700)));
  for (size_t i = 0; i < (size_t)1000 * 8 * 16; i++) EXPECT(isfinite(r.output[i]));
  pipeline_result_free(&r);
  problem_free(&pb);
}

/* FP8 operands are e4m3 code values, the largest magnitude maps to 448. */
static void fp8_operands(void) {
  fp2_params p = params(4, 2, 16, 0.1f);
  p.dtype = FP2_FP8;
  problem pb;
  make(&pb, &p, 300, SYNTH_LLM, 2);
  double amax = 0, omax = 0;
  for (size_t i = 0; i < (size_t)300 * 2 * 16; i++) {
    amax = fmax(amax, fabs(pb.k[i]));
    omax = fmax(omax, fabs(pb.k_op[i]));
    EXPECT(e4m3_round(pb.k_op[i]) == pb.k_op[i]);
  }
  EXPECT(omax == 448.0);
  EXPECT_NEAR(pb.sk, amax / 448.0, 1e-9 * amax);
  problem_free(&pb);
}

/* Score rows are normalised energies. */
static void score_rows(void) {
  fp2_params p = params(4, 1, 16, 0.1f);
  problem pb;
  make(&pb, &p, 1024, SYNTH_LLM, 8);
  pipeline_config cfg = {.density = -1, .want_score = 1, .pooled = POOLED_EXACT};
  pipeline_result r;
  cpu_pipeline(&pb, &cfg, &r);
  for (int t = 0; t < pb.cu_tiles[1]; t++) {
    fp2_tile tl = fp2_tile_at(&p, 1024, 1024, t);
    double sum = 0;
    for (int j = 0; j < r.max_blocks; j++) sum += r.score[(size_t)t * r.max_blocks + j];
    if (tl.nscored > 0) EXPECT_NEAR(sum, 1.0, 1e-5);
  }
  pipeline_result_free(&r);
  problem_free(&pb);
}

/* check_pooled and check_codes, the comparisons check and tests/gpu_kernels make: zero on the
   oracle's own values, the relative size of a change, a NaN as a failure, the first code. */
static void pooled_and_codes(void) {
  fp2_params p = params(8, 2, 32, 0.1f);
  problem pb;
  make(&pb, &p, 1000, SYNTH_RANDOM, 5);
  float *km, *vm;
  const size_t n = pool(&pb, &km, &vm);
  EXPECT(check_pooled(&pb, km, vm) == 0);
  double top = 0;
  for (size_t i = 0; i < n; i++) top = fmax(top, fmax(fabs(km[i]), fabs(vm[i])));
  vm[n / 2] += (float)(1e-3 * top);
  const double d = check_pooled(&pb, km, vm);
  EXPECT_MSG(d > 0.9e-3 && d < 1.1e-3 && d > CHECK_POOLED_TOL, "a change of 1e-3 of the largest mean reads %g", d);
  km[3] = NAN;
  EXPECT(!(check_pooled(&pb, km, vm) <= CHECK_POOLED_TOL));
  const float want[4] = {1, 2, 3, -0.0f};
  float got[4] = {1, 2, 3, 0.0f};
  size_t first = 99;
  EXPECT(check_codes(want, want, 4, &first) == 0 && first == 99);
  got[1] = 2.5f;
  EXPECT(check_codes(got, want, 4, &first) == 2 && first == 1); /* -0 and +0 differ bit for bit */
  free(km);
  free(vm);
  problem_free(&pb);
}

int main(void) {
  tile_geometry();
  alpha_zero_is_dense();
  correction_exact_for_constant_blocks();
  alpha_monotone();
  pooled_partial_block();
  corner_cases();
  fp8_operands();
  score_rows();
  pooled_and_codes();
  return test_result("test_oracle");
}
