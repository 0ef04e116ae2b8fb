/* A sequence's output does not depend on its neighbours' data. A batch of two sequences
   whose lengths end inside a key block is run twice on the gpu backend, the second time
   with the second sequence's Q, K and V all NaN or all +Inf: the first sequence's output
   must come back bit for bit the same, and finite. The first sequence's partial last key
   block, its last query tile and its last chunk of pooled vectors all reach into the
   second sequence's rows, where a masked score still meets V in P V (0 * NaN is NaN).
   Every attention kernel this GPU has is tried, with and without correction, at g = 4 (Q by
   TMA on sm90) and g = 3 (Q loaded by the consumers). BF16 only: FP8's per-tensor scales
   are shared by the batch, so a NaN anywhere is everyone's. Exits 77 without a GPU. */
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline.h"
#include "synth.h"
#include "testing.h"

static fp2_params params(int hq, int hkv, int correction, fp2_kernel kernel) {
  fp2_params p = {.hq = hq, .hkv = hkv, .dim = 128, .block = 128, .qtile = 128, .alpha = 0.1f, .sink = 2,
                  .window = 4, .recent = 2, .correction = correction, .dtype = FP2_BF16, .kernel = kernel};
  return p;
}

/* Sets every source value of sequence 1 (rows cu[1] .. cu[2] of each tensor) to x. */
static void fill_second(problem *pb, float x) {
  const size_t qrow = (size_t)pb->p.hq * pb->p.dim, krow = (size_t)pb->p.hkv * pb->p.dim;
  for (size_t i = (size_t)pb->cu_q[1] * qrow; i < (size_t)pb->cu_q[2] * qrow; i++) pb->q[i] = x;
  for (size_t i = (size_t)pb->cu_k[1] * krow; i < (size_t)pb->cu_k[2] * krow; i++) pb->k[i] = pb->v[i] = x;
}

static float *first_output(const problem *pb, const char *what) {
  pipeline_config cfg = {.density = -1, .attend = 1, .keep_outputs = 1};
  pipeline_result r;
  char err[320] = "";
  if (gpu_pipeline(pb, &cfg, 1, &r, err) != 0) {
    fprintf(stderr, "%s: gpu pipeline failed: %s\n", what, err);
    exit(3);
  }
  const size_t n = (size_t)pb->cu_q[1] * pb->p.hq * pb->p.dim;
  float *o = malloc(n * sizeof *o);
  memcpy(o, r.output, n * sizeof *o);
  pipeline_result_free(&r);
  return o;
}

static void one_case(int hq, int hkv, int correction, fp2_kernel kernel, float poison) {
  const fp2_params p = params(hq, hkv, correction, kernel);
  const int lens[2] = {1000 + 77, 700 + 5};
  problem pb;
  char err[320] = "", what[160];
  snprintf(what, sizeof what, "%s g=%d correction=%d neighbour=%g", kernel == FP2_KERNEL_SM90 ? "sm90" : "portable",
           hq / hkv, correction, poison);
  problem_init(&pb, &p, 2, lens, lens);
  if (synth_fill(&pb, SYNTH_LLM, 5, err) != 0) {
    fprintf(stderr, "%s: synth: %s\n", what, err);
    exit(3);
  }
  float *clean = first_output(&pb, what);
  fill_second(&pb, poison);
  float *dirty = first_output(&pb, what);
  const size_t n = (size_t)pb.cu_q[1] * p.hq * p.dim;
  size_t differ = 0, nonfinite = 0;
  for (size_t i = 0; i < n; i++) {
    differ += memcmp(&clean[i], &dirty[i], sizeof(float)) != 0;
    nonfinite += !isfinite(dirty[i]);
  }
  EXPECT_MSG(differ == 0 && nonfinite == 0, "%s: %zu of %zu values differ, %zu not finite", what, differ, n,
             nonfinite);
  free(clean);
  free(dirty);
  problem_free(&pb);
}

int main(void) {
  const int major = test_gpu_major("gpu_neighbour_nan");
  const fp2_kernel kernels[2] = {FP2_KERNEL_PORTABLE, FP2_KERNEL_SM90};
  for (int k = 0; k < (major == 9 ? 2 : 1); k++)
    for (int correction = 0; correction < 2; correction++) {
      one_case(32, 8, correction, kernels[k], NAN);
      one_case(24, 8, correction, kernels[k], INFINITY);
    }
  return test_result("gpu_neighbour_nan");
}
