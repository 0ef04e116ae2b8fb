/* The cudnn peer over a problem: its operands uploaded as the kernels read them, cuDNN's fused
   SDPA (peer_cudnn.h) checked against the oracle, then timed. */
#include "peer_cudnn_run.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "device_operands.h"
#include "peer_cudnn.h"
#include "sample.h"

/* Relative L2 error of o (values, [len, hq, dim]) against dense causal attention on the
   problem's operands, over sampled rows. */
static double dense_error(const problem *pb, const float *o) {
  const int dim = pb->p.dim;
  row_sample rows;
  sample_rows(pb, 256, 17, &rows);
  double diff = 0, norm = 0;
  double *ref = xmalloc(sizeof(double) * (size_t)dim);
  for (int k = 0; k < rows.n; k++) {
    ref_full_row(pb, problem_operands(pb), rows.b[k], rows.i[k], rows.head[k], ref, NULL);
    const float *got = o + ((size_t)rows.i[k] * pb->p.hq + rows.head[k]) * dim;
    for (int d = 0; d < dim; d++) {
      diff += (got[d] - ref[d]) * (got[d] - ref[d]);
      norm += ref[d] * ref[d];
    }
  }
  free(ref);
  row_sample_free(&rows);
  return norm > 0 ? sqrt(diff / norm) : NAN;
}

/* Operands of the problem as the device holds them: bf16, or e4m3 codes for FP8. */
static void *upload(const float *x, size_t n, int fp8, char *err) {
  void *dev = NULL;
  cudaError_t e = cudaMalloc(&dev, n * (fp8 ? 1 : 2) + 1);
  if (e != cudaSuccess) {
    err_set(err, "uploading the inputs: %s", cudaGetErrorString(e));
    return NULL;
  }
  if (operands_upload(dev, x, n, fp8, err) != 0) {
    cudaFree(dev);
    return NULL;
  }
  return dev;
}

/* cuDNN's fused SDPA on the same operands, checked against the oracle before it is timed. */
void peer_cudnn_run(const problem *pb, int trials, peer_timing *out, int *nout, peer_skip *skipped, int *nskipped) {
  const int fp8 = pb->p.dtype == FP2_FP8, len = pb->lq[0];
  const size_t nq = (size_t)len * pb->p.hq * pb->p.dim, nk = (size_t)len * pb->p.hkv * pb->p.dim;
  char err[ERR_LEN];
  if (pb->batch != 1) {
    peers_skip(skipped, nskipped, "cudnn", "the cuDNN peer takes one sequence (--batch 1)");
    return;
  }
  if (!peer_cudnn_available(err)) {
    peers_skip(skipped, nskipped, "cudnn", err);
    return;
  }
  void *q = upload(pb->q_op, nq, fp8, err), *k = q ? upload(pb->k_op, nk, fp8, err) : NULL;
  void *v = k ? upload(pb->v_op, nk, fp8, err) : NULL, *o = NULL;
  float *scales = NULL;
  double *ms = xmalloc(sizeof(double) * (size_t)trials);
  const float host_scales[3] = {pb->sq, pb->sk, pb->sv};
  int rc = -1;
  if (v && cudaMalloc(&o, nq * (fp8 ? 1 : 2)) == cudaSuccess && cudaMalloc((void **)&scales, sizeof host_scales) ==
                                                                       cudaSuccess &&
      cudaMemcpy(scales, host_scales, sizeof host_scales, cudaMemcpyHostToDevice) == cudaSuccess)
    rc = fp8 ? peer_cudnn_attention_fp8(&pb->p, len, q, k, v, scales, o, trials, ms, err)
             : peer_cudnn_attention(&pb->p, len, q, k, v, o, trials, ms, err);
  else if (v)
    err_set(err, "allocating the cuDNN peer's output failed");
  if (rc == 0) {
    float *got = operands_download(o, nq, fp8, err);
    if (!got) {
      rc = -1;
    } else {
      double e = dense_error(pb, got), tol = fp8 ? 0.1 : 2e-2;
      if (!(e <= tol)) {
        err_set(err, "output check failed: relative error %.3g over %.3g against the oracle", e, tol);
        rc = -1;
      }
    }
    free(got);
  }
  if (rc == 0 && *nout < PEERS_MAX) {
    peer_timing *t = &out[(*nout)++];
    *t = (peer_timing){.pairs = PAIRS_CAUSAL, .versus = VERSUS_TOTAL};
    snprintf(t->name, sizeof t->name, "cudnn");
    t->trials_ms = ms;
    t->trials = trials;
    ms = NULL;
  } else if (rc != 0) {
    peers_skip(skipped, nskipped, "cudnn", err);
  }
  free(ms);
  cudaFree(q);
  cudaFree(k);
  cudaFree(v);
  cudaFree(o);
  cudaFree(scales);
}
