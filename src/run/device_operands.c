#include "device_operands.h"

#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdlib.h>

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
