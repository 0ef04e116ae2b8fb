#include "device_operands.h"

#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "numeric.h"
#include "transpose_values.h"

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

int operands_upload_pages(void *dev, const kv_pages *kp, const int *lk, const float *x, size_t row, float poison,
                          char *err) {
  const size_t n = (size_t)kp->num_pages * kp->page_size * row;
  float *h = xmalloc(sizeof(float) * (n ? n : 1));
  kv_pages_fill(kp, lk, x, row, poison, h);
  const int rc = operands_upload(dev, h, n, 0, err);
  free(h);
  return rc;
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

float *values_download_transposed(const void *vt, const problem *pb, char *err) {
  const int hkv = pb->p.hkv;
  const size_t pitch = (size_t)128 * pb->cu_blocks[pb->batch], bytes = (size_t)hkv * 128 * pitch;
  uint8_t *host = xmalloc(bytes ? bytes : 1);
  cudaError_t e = cudaMemcpy(host, vt, bytes, cudaMemcpyDeviceToHost);
  if (e != cudaSuccess) {
    err_set(err, "copying the transposed values back failed: %s", cudaGetErrorString(e));
    free(host);
    return NULL;
  }
  float *out = xmalloc(sizeof(float) * ((size_t)pb->total_k * hkv * 128 + 1));
  for (int s = 0; s < pb->batch; s++)
    for (int64_t key = 0; key < pb->cu_k[s + 1] - pb->cu_k[s]; key++) {
      const int in_block = (int)(key % 128);
      const size_t row = (size_t)(pb->cu_k[s] + key);
      const size_t column = 128 * ((size_t)pb->cu_blocks[s] + (size_t)key / 128) + 32 * (in_block / 32) +
                            FP2_FP8_KEY_SLOT(in_block % 32);
      for (int h = 0; h < hkv; h++)
        for (int d = 0; d < 128; d++)
          out[(row * hkv + h) * 128 + d] = e4m3_to_f32(host[((size_t)h * 128 + d) * pitch + column]);
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
