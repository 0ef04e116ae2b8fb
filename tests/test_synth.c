/* The statistics of synth:llm and synth:niah pinned at small sizes, so that a change to the
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

static void measure(synth_kind kind, int len, uint64_t seed, double *density, double *mass, double *needle) {
  fp2_params p = {.hq = 8, .hkv = 2, .dim = 128, .block = 128, .qtile = 128, .alpha = 0.1f,
                  .sink = 2, .window = 4, .recent = 2, .correction = 1, .dtype = FP2_BF16};
  problem pb;
  char err[320];
  problem_init(&pb, &p, 1, &len, &len);
  if (synth_fill(&pb, kind, seed, err) != 0) fprintf(stderr, "synth: %s\n", err);
  problem_prepare(&pb, 0);
  row_sample rows;
  sample_rows(&pb, 128, seed, &rows);
  pipeline_config cfg = {.density = -1, .attend = 1, .rows = &rows, .pooled = POOLED_EXACT, .prob = PROB_EXACT};
  pipeline_result r;
  cpu_pipeline(&pb, &cfg, &r);
  density_stats d;
  density_measure(&pb, &r.index, 1, &d);
  *density = density_overall(&d);
  full_reference ref;
  full_reference_compute(&pb, &rows, &ref);
  quality q;
  quality_measure(&pb, &r.index, &rows, &ref, r.o, &q);
  *mass = q.mass_recall;
  int needle_rows;
  *needle = needle_recall(&pb, &r.index, &needle_rows);
  EXPECT_MSG(kind != SYNTH_NIAH || needle_rows > 0, "synth:niah at %d holds no question rows to measure", len);
  full_reference_free(&ref);
  density_free(&d);
  pipeline_result_free(&r);
  row_sample_free(&rows);
  problem_free(&pb);
}

int main(void) {
  /* Measured with SYNTH_VERSION 2 (8:2 heads, d = 128, alpha 0.1, 128 sampled rows). */
  static const pinned llm[] = {
      {2048, 1, 0.776476, 0.983342}, {8192, 1, 0.440742, 0.944515}, {8192, 2, 0.481997, 0.935039},
  };
  for (size_t i = 0; i < sizeof llm / sizeof llm[0]; i++) {
    double density, mass, needle;
    measure(SYNTH_LLM, llm[i].len, llm[i].seed, &density, &mass, &needle);
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
  measure(SYNTH_NIAH, 8192, 1, &density, &mass, &needle);
  EXPECT_MSG(fabs(needle - 1.0) <= 1e-9, "synth:niah at 8192: needle recall %.6f, pinned %.6f", needle, 1.0);
  EXPECT_MSG(fabs(density - 0.464909) <= 1e-3 * 0.464909, "synth:niah at 8192: density %.6f, pinned %.6f", density,
             0.464909);
  return test_result("test_synth");
}
