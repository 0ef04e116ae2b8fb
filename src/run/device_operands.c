#include "device_operands.h"

#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "numeric.h"

int operands_upload(void *dev, const float *x, size_t n, int fp8, char *err) {
  const size_t bytes = n * (fp8 ? 1 : 2);
  void *host = xmalloc(bytes ? bytes : 1);
  if (fp8) {
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++) ((uint8_t *)host)[i] = e4m3_from_f32(x[i]);
  } else {
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++) ((uint16_t *)host)[i] = bf16_from_f32(x[i]);
  }
  cudaError_t e = cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice);
  free(host);
  if (e != cudaSuccess) {
    err_set(err, "uploading %zu operands failed: %s", n, cudaGetErrorString(e));
    return -1;
  }
  return 0;
}

float *operands_download(const void *dev, size_t n, int fp8, char *err) {
  const size_t bytes = n * (fp8 ? 1 : 2);
  void *host = xmalloc(bytes ? bytes : 1);
  float *out = NULL;
  cudaError_t e = cudaMemcpy(host, dev, bytes, cudaMemcpyDeviceToHost);
  if (e != cudaSuccess) {
    err_set(err, "copying results back failed: %s", cudaGetErrorString(e));
  } else {
    out = xmalloc(sizeof(float) * (n ? n : 1));
    if (fp8) {
#pragma omp parallel for schedule(static)
      for (size_t i = 0; i < n; i++) out[i] = e4m3_to_f32(((const uint8_t *)host)[i]);
    } else {
#pragma omp parallel for schedule(static)
      for (size_t i = 0; i < n; i++) out[i] = bf16_to_f32(((const uint16_t *)host)[i]);
    }
  }
  free(host);
  return out;
}

int index_download(const fp2_plan *plan, const fp2_index *dev, csr_index *c, char *err) {
  memset(c, 0, sizeof *c);
  c->nseg = plan->nseg;
  c->offsets = xmalloc(sizeof(int) * ((size_t)plan->nseg + 1));
  c->evaluated = xmalloc((size_t)(plan->nseg ? plan->nseg : 1));
  memset(c->evaluated, 1, (size_t)(plan->nseg ? plan->nseg : 1));
  cudaError_t e = cudaMemcpy(c->offsets, dev->offsets, sizeof(int) * ((size_t)plan->nseg + 1), cudaMemcpyDeviceToHost);
  if (e != cudaSuccess) {
    err_set(err, "copying the index back failed: %s", cudaGetErrorString(e));
    return -1;
  }
  c->nnz = c->offsets[plan->nseg];
  if (c->nnz < 0 || c->nnz > plan->capacity) {
    err_set(err, "the gpu index holds %lld blocks, beyond its capacity %d", (long long)c->nnz, plan->capacity);
    return -1;
  }
  c->indices = xmalloc(sizeof(int) * (size_t)(c->nnz ? c->nnz : 1));
  e = cudaMemcpy(c->indices, dev->indices, sizeof(int) * (size_t)c->nnz, cudaMemcpyDeviceToHost);
  if (e != cudaSuccess) {
    err_set(err, "copying the index back failed: %s", cudaGetErrorString(e));
    return -1;
  }
  return 0;
}
