/* Measured ceilings of the current GPU (see ceilings.h): cuBLASLt GEMMs in BF16 and FP8,
   and device-to-device copy bandwidth, each timed with CUDA events after a warm-up. */
#include "ceilings.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_host.h"
#include "event_timing.h"
#include "numeric.h"
#include "report.h"
#include "rng.h"
#include "stats.h"

#define WARMUP 2
#define GEMM_WORKSPACE ((size_t)32 << 20) /* what cuBLAS suggests for Hopper */

#define LT_OR_FAIL(call)                                                                  \
  do {                                                                                    \
    cublasStatus_t s_ = (call);                                                           \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                                    \
      err_set(err, "ceilings: %s failed: %s (%s)", #call, cublasLtGetStatusName(s_),      \
              cublasLtGetStatusString(s_));                                               \
      goto done;                                                                          \
    }                                                                                     \
  } while (0)

/* ---- random non-zero inputs ---- */

/* bf16 values of random sign and magnitude in [0.5, 2): never zero, never large. */
static uint16_t *random_bf16(size_t n, uint64_t seed) {
  uint16_t *h = xmalloc(n * sizeof *h);
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < n; i++) {
    uint64_t r = rng_bits(seed, 1, i);
    float mag = 0.5f + 1.5f * (float)((r >> 11) & 0xffffff) / 16777216.0f;
    h[i] = bf16_from_f32((r & 1) ? -mag : mag);
  }
  return h;
}

/* e4m3 codes of random sign, exponent field 5..8 (0.25 to 3.75 in magnitude) and
   mantissa: never zero, never NaN (exponent field 15). */
static uint8_t *random_e4m3(size_t n, uint64_t seed) {
  uint8_t *h = xmalloc(n);
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < n; i++) {
    uint64_t r = rng_bits(seed, 2, i);
    unsigned sign = (unsigned)(r & 1), exp = 5 + (unsigned)((r >> 1) & 3), mant = (unsigned)((r >> 3) & 7);
    h[i] = (uint8_t)(sign << 7 | exp << 3 | mant);
  }
  return h;
}

static int upload(void *dev, const void *host, size_t bytes, char *err) {
  cudaError_t e = cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice);
  if (e != cudaSuccess) {
    err_set(err, "ceilings: uploading %zu bytes failed: %s", bytes, cudaGetErrorString(e));
    return -1;
  }
  return 0;
}

/* ---- GEMM ---- */

typedef struct gemm {
  cublasLtHandle_t lt;
  cublasLtMatmulDesc_t desc;
  cublasLtMatrixLayout_t la, lb, ld;
  cublasLtMatmulAlgo_t algo;
  void *a, *b, *d, *workspace;
  float *scales; /* FP8: device scale of A and of B, 16 bytes apart */
  float alpha, beta;
} gemm;

static int gemm_run(void *ctx, cudaStream_t stream, char *err) {
  gemm *g = ctx;
  cublasStatus_t s = cublasLtMatmul(g->lt, g->desc, &g->alpha, g->a, g->la, g->b, g->lb, &g->beta, g->d, g->ld, g->d,
                                    g->ld, &g->algo, g->workspace, GEMM_WORKSPACE, stream);
  if (s != CUBLAS_STATUS_SUCCESS) {
    err_set(err, "ceilings: cublasLtMatmul failed: %s (%s)", cublasLtGetStatusName(s), cublasLtGetStatusString(s));
    return -1;
  }
  return 0;
}

static void gemm_free(gemm *g) {
  if (g->desc) cublasLtMatmulDescDestroy(g->desc);
  if (g->la) cublasLtMatrixLayoutDestroy(g->la);
  if (g->lb) cublasLtMatrixLayoutDestroy(g->lb);
  if (g->ld) cublasLtMatrixLayoutDestroy(g->ld);
  cudaFree(g->a);
  cudaFree(g->b);
  cudaFree(g->d);
  cudaFree(g->workspace);
  cudaFree(g->scales);
}

/* D (bf16, n x n) = op(A) B with A and B of `type` (bf16 or e4m3), f32 accumulation, in
   the TN layout cuBLASLt's FP8 kernels require (A transposed: both operands K-major).
   Times `trials` runs into ms. 0; 1 when cuBLASLt offers no algorithm for it (FP8 on an
   older GPU), with the reason in `unsupported`; -1 on an error. */
static int measure_gemm(cublasLtHandle_t lt, cudaDataType_t type, int n, int fast_accum, cudaStream_t stream,
                        int trials, double *ms, char *unsupported, char *err) {
  int rc = -1;
  gemm g;
  memset(&g, 0, sizeof g);
  g.lt = lt;
  g.alpha = 1.0f;
  g.beta = 0.0f;
  const int fp8 = type == CUDA_R_8F_E4M3;
  const size_t elems = (size_t)n * (size_t)n, in_bytes = elems * (fp8 ? 1 : 2);
  void *host = NULL;
  cublasLtMatmulPreference_t pref = NULL;

  CUDA_GOTO(cudaMalloc(&g.a, in_bytes), done);
  CUDA_GOTO(cudaMalloc(&g.b, in_bytes), done);
  CUDA_GOTO(cudaMalloc(&g.d, elems * 2), done);
  CUDA_GOTO(cudaMalloc(&g.workspace, GEMM_WORKSPACE), done);
  host = fp8 ? (void *)random_e4m3(elems, 11) : (void *)random_bf16(elems, 11);
  if (upload(g.a, host, in_bytes, err) != 0) goto done;
  free(host);
  host = fp8 ? (void *)random_e4m3(elems, 12) : (void *)random_bf16(elems, 12);
  if (upload(g.b, host, in_bytes, err) != 0) goto done;
  free(host);
  host = NULL;
  CUDA_GOTO(cudaMemset(g.d, 0xff, elems * 2), done); /* NaN: a GEMM that wrote nothing shows */

  LT_OR_FAIL(cublasLtMatmulDescCreate(&g.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  LT_OR_FAIL(cublasLtMatmulDescSetAttribute(g.desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
  LT_OR_FAIL(cublasLtMatmulDescSetAttribute(g.desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
  if (fp8) {
    const float one[8] = {1, 0, 0, 0, 1, 0, 0, 0};
    CUDA_GOTO(cudaMalloc((void **)&g.scales, sizeof one), done);
    CUDA_GOTO(cudaMemcpy(g.scales, one, sizeof one, cudaMemcpyHostToDevice), done);
    const void *sa = g.scales, *sb = g.scales + 4;
    LT_OR_FAIL(cublasLtMatmulDescSetAttribute(g.desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &sa, sizeof sa));
    LT_OR_FAIL(cublasLtMatmulDescSetAttribute(g.desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &sb, sizeof sb));
    const int8_t fast = (int8_t)(fast_accum != 0);
    LT_OR_FAIL(cublasLtMatmulDescSetAttribute(g.desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast));
  }
  /* Column-major: A stored k x m (op(A) = Aᵀ is m x k), B k x n, D m x n. */
  LT_OR_FAIL(cublasLtMatrixLayoutCreate(&g.la, type, n, n, n));
  LT_OR_FAIL(cublasLtMatrixLayoutCreate(&g.lb, type, n, n, n));
  LT_OR_FAIL(cublasLtMatrixLayoutCreate(&g.ld, CUDA_R_16BF, n, n, n));

  LT_OR_FAIL(cublasLtMatmulPreferenceCreate(&pref));
  const size_t ws = GEMM_WORKSPACE;
  LT_OR_FAIL(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
  cublasLtMatmulHeuristicResult_t result;
  int found = 0;
  cublasStatus_t hs = cublasLtMatmulAlgoGetHeuristic(lt, g.desc, g.la, g.lb, g.ld, g.ld, pref, 1, &result, &found);
  if (hs == CUBLAS_STATUS_NOT_SUPPORTED || (hs == CUBLAS_STATUS_SUCCESS && found == 0)) {
    err_set(unsupported, "cuBLASLt offers no %s GEMM on this GPU (%s)", fp8 ? "fp8 e4m3" : "bf16",
            hs == CUBLAS_STATUS_SUCCESS ? "no algorithm" : cublasLtGetStatusString(hs));
    rc = 1;
    goto done;
  }
  LT_OR_FAIL(hs);
  g.algo = result.algo;

  if (gpu_time_runs(gemm_run, &g, stream, WARMUP, trials, NULL, ms, err) != 0) goto done;
  /* The output must be finite: a GEMM that failed silently would time nothing real. */
  uint16_t probe[4];
  CUDA_GOTO(cudaMemcpy(probe, g.d, sizeof probe, cudaMemcpyDeviceToHost), done);
  for (int i = 0; i < 4; i++) {
    if (!isfinite(bf16_to_f32(probe[i]))) {
      err_set(err, "ceilings: the %s GEMM left a non-finite output (%g at %d)", fp8 ? "fp8" : "bf16",
              (double)bf16_to_f32(probe[i]), i);
      goto done;
    }
  }
  rc = 0;
done:
  free(host);
  if (pref) cublasLtMatmulPreferenceDestroy(pref);
  gemm_free(&g);
  return rc;
}

/* ---- copy ---- */

typedef struct copy_job {
  void *src, *dst;
  size_t bytes;
} copy_job;

static int copy_run(void *ctx, cudaStream_t stream, char *err) {
  copy_job *c = ctx;
  cudaError_t e = cudaMemcpyAsync(c->dst, c->src, c->bytes, cudaMemcpyDeviceToDevice, stream);
  if (e != cudaSuccess) {
    err_set(err, "ceilings: cudaMemcpyAsync of %zu bytes failed: %s", c->bytes, cudaGetErrorString(e));
    return -1;
  }
  return 0;
}

/* Source filled with random non-zero bytes: a random 64 MiB tile uploaded, then repeated. */
static int measure_copy(size_t bytes, cudaStream_t stream, int trials, double *ms, char *err) {
  int rc = -1;
  copy_job c = {NULL, NULL, bytes};
  const size_t tile = bytes < ((size_t)64 << 20) ? bytes : ((size_t)64 << 20);
  uint8_t *host = NULL;
  CUDA_GOTO(cudaMalloc(&c.src, bytes), done);
  CUDA_GOTO(cudaMalloc(&c.dst, bytes), done);
  host = xmalloc(tile);
  for (size_t i = 0; i < tile; i++) host[i] = (uint8_t)(1 + rng_bits(13, 3, i) % 255);
  if (upload(c.src, host, tile, err) != 0) goto done;
  for (size_t off = tile; off < bytes; off += tile)
    CUDA_GOTO(cudaMemcpy((uint8_t *)c.src + off, c.src, bytes - off < tile ? bytes - off : tile,
                            cudaMemcpyDeviceToDevice), done);
  CUDA_GOTO(cudaMemset(c.dst, 0, bytes), done);
  if (gpu_time_runs(copy_run, &c, stream, WARMUP, trials, NULL, ms, err) != 0) goto done;
  /* The last bytes arrived. */
  uint8_t probe[2][16];
  CUDA_GOTO(cudaMemcpy(probe[0], (uint8_t *)c.src + bytes - 16, 16, cudaMemcpyDeviceToHost), done);
  CUDA_GOTO(cudaMemcpy(probe[1], (uint8_t *)c.dst + bytes - 16, 16, cudaMemcpyDeviceToHost), done);
  if (memcmp(probe[0], probe[1], 16) != 0) {
    err_set(err, "ceilings: the device-to-device copy did not copy");
    goto done;
  }
  rc = 0;
done:
  free(host);
  cudaFree(c.src);
  cudaFree(c.dst);
  return rc;
}

/* ---- all three ---- */

int ceilings_measure_sized(ceilings *out, int trials, int gemm_n, size_t copy_bytes, char *err) {
  memset(out, 0, sizeof *out);
  out->fp8_tflops = NAN;
  if (trials < 1 || trials > CEILINGS_MAX_TRIALS || gemm_n < 16 || gemm_n % 16 != 0 || copy_bytes < 4096 ||
      copy_bytes % 4096 != 0) {
    err_set(err, "ceilings: bad sizes (%d trials, gemm %d, copy %zu bytes)", trials, gemm_n, copy_bytes);
    return -1;
  }
  out->trials = trials;
  out->gemm_n = gemm_n;
  out->copy_bytes = (double)copy_bytes;
  out->cublaslt_version = (long)cublasLtGetVersion();
  int rc = -1;
  cublasLtHandle_t lt = NULL;
  cudaStream_t stream = NULL;
  struct cudaDeviceProp prop;
  CUDA_GOTO(cudaGetDevice(&out->device), done);
  CUDA_GOTO(cudaGetDeviceProperties(&prop, out->device), done);
  CUDA_GOTO(cudaStreamCreate(&stream), done);
  LT_OR_FAIL(cublasLtCreate(&lt));

  const double flops = 2.0 * gemm_n * (double)gemm_n * (double)gemm_n;
  char unsupported[ERR_LEN] = "";
  int g = measure_gemm(lt, CUDA_R_16BF, gemm_n, 0, stream, trials, out->bf16_ms, unsupported, err);
  if (g == 1) err_set(err, "ceilings: %s", unsupported);
  if (g != 0) goto done;
  out->bf16_tflops = flops / (stats_median(out->bf16_ms, trials) * 1e-3) / 1e12;

  if (prop.major * 10 + prop.minor < 89) {
    err_set(out->fp8_note, "fp8 gemm needs compute capability 8.9 or later (this gpu is %d.%d)", prop.major,
            prop.minor);
  } else {
    out->fp8_fast_accum = 1;
    g = measure_gemm(lt, CUDA_R_8F_E4M3, gemm_n, 1, stream, trials, out->fp8_ms, out->fp8_note, err);
    if (g < 0) goto done;
    if (g == 0) out->fp8_tflops = flops / (stats_median(out->fp8_ms, trials) * 1e-3) / 1e12;
  }

  if (measure_copy(copy_bytes, stream, trials, out->copy_ms, err) != 0) goto done;
  out->copy_tbps = 2.0 * (double)copy_bytes / (stats_median(out->copy_ms, trials) * 1e-3) / 1e12;
  rc = 0;
done:
  if (lt) cublasLtDestroy(lt);
  if (stream) cudaStreamDestroy(stream);
  if (rc != 0) {
    cudaGetLastError(); /* leave no error behind for later checks */
    if (strncmp(err, "ceilings:", 9) != 0) {
      char inner[ERR_LEN];
      snprintf(inner, sizeof inner, "%s", err);
      err_set(err, "ceilings: %s", inner);
    }
  }
  return rc;
}

int ceilings_measure(ceilings *out, char *err) {
  return ceilings_measure_sized(out, CEILINGS_TRIALS, CEILINGS_GEMM_N, CEILINGS_COPY_BYTES, err);
}

void ceilings_to_json(cJSON *obj, const ceilings *c) {
  report_put_number(obj, "device", c->device);
  const int mnk[3] = {c->gemm_n, c->gemm_n, c->gemm_n};
  report_put(obj, "gemm_mnk", cJSON_CreateIntArray(mnk, 3));
  report_put_number(obj, "bf16_gemm_tflops", c->bf16_tflops);
  report_put_number(obj, "fp8_gemm_tflops", c->fp8_tflops); /* null when NaN */
  report_put_number(obj, "copy_tbps", c->copy_tbps);
  report_put_number(obj, "copy_bytes", c->copy_bytes);
  report_put_string(obj, "copy_rate", "bytes read + bytes written per second, 1e12");
  report_put_string(obj, "gemm_layout", "TN, f32 accumulation, bf16 output, cuBLASLt heuristic's first algorithm");
  report_put(obj, "fp8_fast_accum", cJSON_CreateBool(c->fp8_fast_accum));
  report_put_string(obj, "fp8_note", c->fp8_note[0] ? c->fp8_note : NULL);
  report_put_number(obj, "cublaslt_version", (double)c->cublaslt_version);
  report_add_times(obj, "bf16_gemm", c->bf16_ms, c->trials);
  report_add_times(obj, "fp8_gemm", c->fp8_ms, isnan(c->fp8_tflops) ? 0 : c->trials);
  report_add_times(obj, "copy", c->copy_ms, c->trials);
}
