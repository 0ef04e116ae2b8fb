/* CUDA runtime calls in host code: a failure sets `err` (in scope at the call) to the call and
   the runtime's message, and jumps to `label`, where the caller releases what it holds. */
#ifndef FP2_CUDA_HOST_H
#define FP2_CUDA_HOST_H

#include <cuda_runtime_api.h>

#include "error.h"

#define CUDA_GOTO(call, label)                                              \
  do {                                                                      \
    cudaError_t cuda_host_e_ = (call);                                      \
    if (cuda_host_e_ != cudaSuccess) {                                      \
      err_set(err, "%s failed: %s", #call, cudaGetErrorString(cuda_host_e_)); \
      goto label;                                                           \
    }                                                                       \
  } while (0)

#endif
