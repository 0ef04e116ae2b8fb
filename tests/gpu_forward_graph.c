/* fp2_forward eagerly and replayed from a CUDA graph, against the oracle in src/oracle/.
   A batch of four requests of mixed lengths, two of them chunks of a prefill (fewer queries
   than keys; one chunk starts inside a key block, one on a block boundary), at g = 3 (which
   does not divide the 128-row tile: the sm90 kernel loads Q by cp.async) with correction and
   g = 4 (Q by TMA) without. fp2_forward runs once on a stream (synth:llm inputs), then is
   captured in a graph (cudaStreamCaptureModeGlobal, under which an allocation or a
   synchronising call fails the capture) and the graph replayed on new inputs (synth:random)
   copied into the same buffers. Before each run the output and the whole workspace are
   poisoned (every byte 0xff), so that what was not written in this run shows as NaN or -1.
   Each run's results are read from the workspace (fp2_workspace_map) and held to the oracle
   as check does: the pooled means (check_pooled), the FP8 scales bit for bit against the
   host's quantisation, the index against ref_select on the pass's own pooled keys
   (check_index: near-threshold flips only), sampled output rows on that index and those pooled
   vectors (check_outputs), and every output value finite. BF16 and FP8, the portable kernel
   and, on sm_90, the sm90 one. Exits 77 without a GPU. */
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "device_operands.h"
#include "synth.h"
#include "testing.h"

enum { BATCH = 4 };
static const int lq[BATCH] = {1024 + 77, 300, 77, 640};
static const int lk[BATCH] = {1024 + 77, 2048 + 5, 77, 1024 + 640};

/* The device side of one case: bf16 inputs, the output and fp2_forward's workspace. */
typedef struct device_pass {
  fp2_params p;
  fp2_plan plan;
  void *q, *k, *v, *o, *ws;
  size_t nq, nk, ws_bytes;
  fp2_workspace w;
} device_pass;

static void problem_make(problem *pb, const fp2_params *p, synth_kind kind, uint64_t seed) {
  char err[320];
  problem_init(pb, p, BATCH, lq, lk);
  if (synth_fill(pb, kind, seed, err) != 0) {
    fprintf(stderr, "synth: %s\n", err);
    exit(3);
  }
  problem_prepare(pb, 1);
}

/* New inputs into the same buffers, the output and the workspace poisoned. */
static void stage_inputs(const device_pass *d, const problem *pb) {
  char err[320];
  if (operands_upload(d->q, pb->q, d->nq, 0, err) != 0 || operands_upload(d->k, pb->k, d->nk, 0, err) != 0 ||
      operands_upload(d->v, pb->v, d->nk, 0, err) != 0) {
    fprintf(stderr, "upload: %s\n", err);
    exit(3);
  }
  CHECK_CUDA(cudaMemset(d->o, 0xff, d->nq * 2));
  CHECK_CUDA(cudaMemset(d->ws, 0xff, d->ws_bytes));
  CHECK_CUDA(cudaDeviceSynchronize());
}

/* The last pass's results against the oracle on pb's inputs. */
static void compare(const device_pass *d, const problem *pb, const char *what) {
  const int fp8 = d->p.dtype == FP2_FP8;
  const size_t npooled = (size_t)d->p.hkv * d->plan.total_blocks * d->p.dim;
  float scales[3] = {1, 1, 1};
  if (fp8) {
    CHECK_CUDA(cudaMemcpy(scales, d->w.scales, sizeof scales, cudaMemcpyDeviceToHost));
    EXPECT_MSG(scales[0] == pb->sq && scales[1] == pb->sk && scales[2] == pb->sv,
               "%s: scales %.9g %.9g %.9g, host %.9g %.9g %.9g", what, scales[0], scales[1], scales[2], pb->sq,
               pb->sk, pb->sv);
  }
  float *k_mean = malloc(sizeof(float) * npooled), *v_mean = malloc(sizeof(float) * npooled);
  CHECK_CUDA(cudaMemcpy(k_mean, d->w.k_mean, npooled * 4, cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(v_mean, d->w.v_mean, npooled * 4, cudaMemcpyDeviceToHost));
  const double pooled_error = check_pooled(pb, k_mean, v_mean);
  EXPECT_MSG(pooled_error <= CHECK_POOLED_TOL, "%s: pooled means differ by %.3g (relative)", what, pooled_error);
  float *kbar = test_download(d->w.kbar, npooled, fp8), *vbar = test_download(d->w.vbar, npooled, fp8);
  float *o = test_download(d->o, d->nq, 0);
  size_t nonfinite = 0;
  for (size_t i = 0; i < d->nq; i++) nonfinite += !isfinite(o[i]);
  EXPECT_MSG(nonfinite == 0, "%s: %zu of %zu output values not written or not finite", what, nonfinite, d->nq);
  csr_index idx;
  char err[320];
  if (index_download(&d->plan, &d->w.index, &idx, err) != 0 || idx.offsets[0] != 0) {
    EXPECT_MSG(0, "%s: the index's offsets are broken (offsets[0] = %d, %lld blocks, capacity %d)", what,
               idx.offsets[0], (long long)idx.nnz, d->plan.capacity);
  } else {
    index_diff id;
    check_index(pb, kbar, scales[1], &idx, gpu_flip_tolerance(pb->p.dtype), 10, &id);
    EXPECT_MSG(id.mismatches == 0, "%s: %lld of %lld blocks differ from ref_select (%lld flips)", what,
               (long long)id.mismatches, (long long)id.blocks, (long long)id.flips);
    row_sample rows;
    sample_rows(pb, 2048, 11, &rows);
    const pooled_view pooled = {kbar, vbar, scales[1], scales[2]};
    output_diff od;
    check_outputs(pb, &idx, &pooled, &rows, o, 10, &od);
    EXPECT_MSG(od.bad_rows == 0, "%s: %d of %d rows beyond the bound (max error %.3g, bound %.3g)", what,
               od.bad_rows, od.rows, od.err, od.bound);
    row_sample_free(&rows);
  }
  csr_free(&idx);
  free(k_mean);
  free(v_mean);
  free(kbar);
  free(vbar);
  free(o);
}

static void one_case(fp2_dtype dt, int hq, int hkv, int correction, fp2_kernel kernel, uint64_t seed) {
  device_pass d;
  memset(&d, 0, sizeof d);
  d.p = (fp2_params){.hq = hq, .hkv = hkv, .dim = 128, .block = 128, .qtile = 128, .alpha = 0.1f, .sink = 2,
                     .window = 4, .recent = 2, .correction = correction, .dtype = dt, .kernel = kernel};
  char what[128];
  snprintf(what, sizeof what, "%s %s g=%d correction=%d", dt == FP2_FP8 ? "fp8" : "bf16",
           kernel == FP2_KERNEL_SM90 ? "sm90" : "portable", hq / hkv, correction);
  fprintf(stderr, "gpu_forward_graph: %s\n", what);
  check_fp2(fp2_plan_create(&d.p, BATCH, lq, lk, &d.plan), "fp2_plan_create");
  d.nq = (size_t)d.plan.total_q * hq * d.p.dim;
  d.nk = (size_t)d.plan.total_k * hkv * d.p.dim;
  d.ws_bytes = fp2_workspace_bytes(&d.p, &d.plan);
  CHECK_CUDA(cudaMalloc(&d.q, d.nq * 2));
  CHECK_CUDA(cudaMalloc(&d.k, d.nk * 2));
  CHECK_CUDA(cudaMalloc(&d.v, d.nk * 2));
  CHECK_CUDA(cudaMalloc(&d.o, d.nq * 2));
  CHECK_CUDA(cudaMalloc(&d.ws, d.ws_bytes));
  check_fp2(fp2_workspace_map(&d.p, &d.plan, d.ws, d.ws_bytes, &d.w), "fp2_workspace_map");
  const fp2_inputs in = {.q = d.q, .k = d.k, .v = d.v, .o = d.o};
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreate(&stream));

  problem eager;
  char label[160];
  problem_make(&eager, &d.p, SYNTH_LLM, seed);
  stage_inputs(&d, &eager);
  check_fp2(fp2_forward(&d.p, &d.plan, &in, d.ws, d.ws_bytes, stream), "fp2_forward");
  CHECK_CUDA(cudaStreamSynchronize(stream));
  snprintf(label, sizeof label, "%s eager", what);
  compare(&d, &eager, label);
  problem_free(&eager);

  /* The capture ends whatever fp2_forward returned, so that the stream is usable again. */
  cudaGraph_t graph = NULL;
  CHECK_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  const fp2_status captured = fp2_forward(&d.p, &d.plan, &in, d.ws, d.ws_bytes, stream);
  const cudaError_t ended = cudaStreamEndCapture(stream, &graph);
  EXPECT_MSG(captured == FP2_OK && ended == cudaSuccess, "%s: capture: fp2_forward says '%s', the capture '%s'", what,
             captured == FP2_OK ? "ok" : fp2_error_message(), cudaGetErrorString(ended));
  if (captured == FP2_OK && ended == cudaSuccess) {
    cudaGraphExec_t exec;
    problem replay;
    CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
    problem_make(&replay, &d.p, SYNTH_RANDOM, seed + 1000);
    stage_inputs(&d, &replay);
    CHECK_CUDA(cudaGraphLaunch(exec, stream));
    CHECK_CUDA(cudaStreamSynchronize(stream));
    snprintf(label, sizeof label, "%s graph replay", what);
    compare(&d, &replay, label);
    problem_free(&replay);
    CHECK_CUDA(cudaGraphExecDestroy(exec));
  }
  if (graph) CHECK_CUDA(cudaGraphDestroy(graph));
  CHECK_CUDA(cudaStreamDestroy(stream));
  void *all[] = {d.q, d.k, d.v, d.o, d.ws};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) cudaFree(all[i]);
  fp2_plan_destroy(&d.plan);
}

int main(void) {
  const int major = test_gpu_major("gpu_forward_graph");
  const fp2_kernel kernels[2] = {FP2_KERNEL_PORTABLE, FP2_KERNEL_SM90};
  uint64_t seed = 1;
  for (int dt = FP2_BF16; dt <= FP2_FP8; dt++)
    for (int k = 0; k < (major == 9 ? 2 : 1); k++) {
      one_case((fp2_dtype)dt, 24, 8, 1, kernels[k], seed++);
      one_case((fp2_dtype)dt, 32, 8, 0, kernels[k], seed++);
    }
  return test_result("gpu_forward_graph");
}
