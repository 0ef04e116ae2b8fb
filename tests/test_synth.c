/* The statistics of synth:llm and synth:niah pinned at small sizes and at 16K, so that a change to the
   generator cannot pass unnoticed: the selected density, the attention-mass recall of the
   selection and the needle recall, measured by the oracle at the default selection. A change
   that moves them is a new generator: bump SYNTH_VERSION (synth.h), re-measure the
   calibration (fp2bench density) and pin the new values here. */
#include <math.h>
#include <stdlib.h>

#include "density.h"
#include "pipeline.h"
#include "quality.h"
#include "synth.h"
#include "testing.h"

typedef struct pinned {
  int len;
  uint64_t seed;
  double density, mass_recall;
} pinned;

/* The oracle's selection on synth data at heads hq:hkv: density over `tiles` sampled tiles per
   KV head (0: all of them; needle recall needs all), mass recall on 128 sampled rows. */
static double head_lo, head_hi; /* the last measure()'s sparsest and densest KV head */

static void measure(synth_kind kind, int hq, int hkv, int len, uint64_t seed, int tiles, double *density, double *mass,
                    double *needle) {
  fp2_params p = {.hq = hq, .hkv = hkv, .dim = 128, .block = 128, .qtile = 128, .alpha = 0.1f,
                  .sink = 2, .window = 4, .recent = 2, .correction = 1, .dtype = FP2_BF16};
  problem pb;
  char err[320];
  problem_init(&pb, &p, 1, &len, &len);
  if (synth_fill(&pb, kind, seed, err) != 0) fprintf(stderr, "synth: %s\n", err);
  problem_prepare(&pb, 0);
  row_sample rows;
  sample_rows(&pb, 128, seed, &rows);
  unsigned char *want = tiles > 0 ? sample_tiles(&pb, tiles, seed) : NULL;
  pipeline_config cfg = {.density = -1, .want = want, .pooled = POOLED_EXACT, .prob = PROB_EXACT};
  pipeline_result r;
  cpu_pipeline(&pb, &cfg, &r);
  density_stats d;
  density_measure(&pb, &r.index, 1, &d);
  *density = density_overall(&d);
  head_lo = 1;
  head_hi = 0;
  for (int h = 0; h < hkv; h++) {
    double x = density_of_head(&d, h);
    if (x < head_lo) head_lo = x;
    if (x > head_hi) head_hi = x;
  }
  int needle_rows;
  *needle = needle_recall(&pb, &r.index, &needle_rows);
  EXPECT_MSG(kind != SYNTH_NIAH || needle_rows > 0, "synth:niah at %d holds no question rows to measure", len);
  density_free(&d);
  pipeline_result_free(&r);
  free(want);
  /* Recall on the sampled rows' own tiles (a tile sample may have missed them). */
  want = row_sample_segments(&pb, &rows);
  cfg.want = want;
  cfg.attend = 1;
  cfg.rows = &rows;
  cpu_pipeline(&pb, &cfg, &r);
  full_reference ref;
  full_reference_compute(&pb, &rows, &ref);
  quality q;
  quality_measure(&pb, &r.index, &rows, &ref, r.output, &q);
  *mass = q.mass_recall;
  full_reference_free(&ref);
  pipeline_result_free(&r);
  free(want);
  row_sample_free(&rows);
  problem_free(&pb);
}

int main(void) {
  /* Measured with SYNTH_VERSION 4 (8:2 heads, d = 128, alpha 0.1, 128 sampled rows). */
  static const pinned llm[] = {
      {2048, 1, 0.900439, 0.987118}, {8192, 1, 0.520933, 0.937040}, {8192, 2, 0.483400, 0.900453},
  };
  for (size_t i = 0; i < sizeof llm / sizeof llm[0]; i++) {
    double density, mass, needle;
    measure(SYNTH_LLM, 8, 2, llm[i].len, llm[i].seed, 0, &density, &mass, &needle);
    EXPECT_MSG(fabs(density - llm[i].density) <= 1e-3 * llm[i].density,
               "synth:llm at %d, seed %llu: density %.6f, pinned %.6f", llm[i].len,
               (unsigned long long)llm[i].seed, density, llm[i].density);
    EXPECT_MSG(fabs(mass - llm[i].mass_recall) <= 1e-3 * llm[i].mass_recall,
               "synth:llm at %d, seed %llu: mass recall %.6f, pinned %.6f", llm[i].len,
               (unsigned long long)llm[i].seed, mass, llm[i].mass_recall);
  }
  /* synth:niah is synth:llm with needles: a haystack of about its density, question rows to
     measure, and their needle recall. */
  double density, mass, needle;
  measure(SYNTH_NIAH, 8, 2, 8192, 1, 0, &density, &mass, &needle);
  EXPECT_MSG(fabs(needle - 1.0) <= 1e-9, "synth:niah at 8192: needle recall %.6f, pinned %.6f", needle, 1.0);
  EXPECT_MSG(fabs(density - 0.547846) <= 1e-3 * 0.547846, "synth:niah at 8192: density %.6f, pinned %.6f", density,
             0.547846);
  /* The calibration itself at the default shape (32:8 heads), 16K, one seed and 16 tiles per KV
     head: pinned like the rest, and within what one seed can be held to (15% on the density,
     0.07 on the recall: seeds 1-4 give 0.83-0.90 at 16K) of synth_llm_target; the means over
     four seeds are in the README. */
  static const pinned cal = {16384, 1, 0.336728, 0.891945};
  fp2_params dp = {.hq = 32, .hkv = 8, .dim = 128, .block = 128, .qtile = 128, .alpha = 0.1f,
                   .sink = 2, .window = 4, .recent = 2};
  synth_target t = synth_llm_target(&dp, 16384);
  measure(SYNTH_LLM, 32, 8, cal.len, cal.seed, 16, &density, &mass, &needle);
  EXPECT_MSG(fabs(density - cal.density) <= 1e-3 * cal.density &&
                 fabs(mass - cal.mass_recall) <= 1e-3 * cal.mass_recall,
             "synth:llm at 16384, 32:8 heads: density %.6f and mass recall %.6f, pinned %.6f and %.6f", density, mass,
             cal.density, cal.mass_recall);
  EXPECT_MSG(fabs(density - t.density) <= 0.15 * t.density && mass >= t.recall_min - 0.07 &&
                 mass <= t.recall_max + 0.07,
             "synth:llm at 16384, 32:8 heads: density %.4f (target %.4f) and mass recall %.4f (target %.2f-%.2f)",
             density, t.density, mass, t.recall_min, t.recall_max);
  /* The curve's shape at the default shape over seeds 1-4 (4K: every tile; 16K and 32K: 16
     tiles per KV head), whose means are pinned and held to bands that the earlier models fail:
     version 3's 4K was 7.6% low and its 16K 6% high over eight seeds, version 1's recall fell
     to 0.72 at 32K. Bands: 6% on the density (the generator's target is 5% over more tiles and
     seeds), the recall target widened by 0.03 for four seeds' spread; and the per-head spread:
     the densest KV head at least twice the sparsest at 16K and 32K (MInference's A-shape to
     block-sparse heads). */
  static const struct {
    int len, tiles;
    double density, mass;
  } curve[] = {{4096, 0, 0.701138, 0.948320}, {16384, 16, 0.316364, 0.837908}, {32768, 16, 0.178908, 0.833550}};
  for (size_t i = 0; i < sizeof curve / sizeof curve[0]; i++) {
    double dsum = 0, msum = 0, spread = INFINITY;
    for (uint64_t seed = 1; seed <= 4; seed++) {
      measure(SYNTH_LLM, 32, 8, curve[i].len, seed, curve[i].tiles, &density, &mass, &needle);
      dsum += density / 4;
      msum += mass / 4;
      if (head_hi / head_lo < spread) spread = head_hi / head_lo;
    }
    synth_target ct = synth_llm_target(&dp, curve[i].len);
    EXPECT_MSG(fabs(dsum - curve[i].density) <= 1e-3 * curve[i].density &&
                   fabs(msum - curve[i].mass) <= 1e-3 * curve[i].mass,
               "synth:llm at %d, 32:8 heads, seeds 1-4: mean density %.6f and mass recall %.6f, pinned %.6f and %.6f",
               curve[i].len, dsum, msum, curve[i].density, curve[i].mass);
    EXPECT_MSG(fabs(dsum - ct.density) <= 0.06 * ct.density,
               "synth:llm at %d, 32:8 heads, seeds 1-4: mean density %.4f, target %.4f (6%%)", curve[i].len, dsum,
               ct.density);
    if (!isnan(ct.recall_min))
      EXPECT_MSG(msum >= ct.recall_min - 0.03 && msum <= ct.recall_max + 0.03,
                 "synth:llm at %d, 32:8 heads, seeds 1-4: mean mass recall %.4f, target %.2f-%.2f (+-0.03)",
                 curve[i].len, msum, ct.recall_min, ct.recall_max);
    if (curve[i].len >= 16384)
      EXPECT_MSG(spread >= 2.0, "synth:llm at %d, 32:8 heads: densest KV head only %.2fx the sparsest", curve[i].len,
                 spread);
  }
  return test_result("test_synth");
}
