/* Internal: the Hopper (sm_90a) attention kernel behind fp2_attend when p->kernel is
   FP2_KERNEL_SM90. Same arguments and result as the portable kernel; refuses (with
   FP2_ERR_UNSUPPORTED and the reason) shapes and GPUs it does not cover. */
#ifndef FP2_ATTEND_SM90_H
#define FP2_ATTEND_SM90_H

#include "fp2.h"

size_t fp2_attend_sm90_workspace_bytes(const fp2_params *p, const fp2_plan *plan);

fp2_status fp2_attend_sm90(const fp2_params *p, const fp2_plan *plan, const void *q, const void *k, const void *v,
                           const fp2_kv_pages *pages, const void *kbar, const void *vbar, const float *scales,
                           const int *offsets, const int *indices, void *o, void *workspace, size_t workspace_bytes,
                           cudaStream_t stream);

#endif
