#include "sm90_device.h"

#include <stdio.h>

#include "cuda_check.h"
#include "sm90_shape.h"

fp2_status fp2_sm90_device(const fp2_params *p, const char *what, int *sms, int *smem_max) {
  char prefix[64], op[64];
  snprintf(prefix, sizeof prefix, "%s: ", what);
  snprintf(op, sizeof op, "%s (sm90)", what);
  fp2_status st = fp2_sm90_shape_check(p, prefix);
  if (st != FP2_OK) return st;
  int dev = 0, major = 0, n = 0, smem = 0;
  FP2_CUDA(op, cudaGetDevice(&dev));
  FP2_CUDA(op, cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  if (major != 9)
    return fp2_fail(FP2_ERR_UNSUPPORTED, "%s: the sm90 kernel needs a Hopper GPU (this one is sm_%d*)", what, major);
  FP2_CUDA(op, cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev));
  FP2_CUDA(op, cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  if (sms) *sms = n;
  if (smem_max) *smem_max = smem;
  return FP2_OK;
}
