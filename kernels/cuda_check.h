/* Internal: wrap every CUDA runtime call and launch; a failure becomes FP2_ERR_CUDA with
   the call, the runtime's message and the operation named in fp2_error_message(). */
#ifndef FP2_CUDA_CHECK_H
#define FP2_CUDA_CHECK_H

#include <cuda_runtime_api.h>

#include "status.h"

#define FP2_CUDA(op, call)                                                                       \
  do {                                                                                           \
    cudaError_t fp2_err_ = (call);                                                               \
    if (fp2_err_ != cudaSuccess)                                                                 \
      return fp2_fail(FP2_ERR_CUDA, "%s: %s failed: %s (%s:%d)", (op), #call,                    \
                      cudaGetErrorString(fp2_err_), __FILE__, __LINE__);                         \
  } while (0)

/* After a kernel launch: launch-configuration errors surface here. */
#define FP2_LAUNCHED(op) FP2_CUDA(op, cudaGetLastError())

#endif
