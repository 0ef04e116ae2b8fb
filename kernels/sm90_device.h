/* Internal: what every Hopper kernel's launch needs first: a shape it takes
   (fp2_sm90_shape_check) and a compute-capability 9 GPU, with the limits the launch is sized
   by. */
#ifndef FP2_SM90_DEVICE_H
#define FP2_SM90_DEVICE_H

#include "fp2.h"

#ifdef __cplusplus
extern "C" {
#endif

/* FP2_OK with the current GPU's SM count and opt-in shared memory per block (either pointer
   may be NULL), or the failure, named after `what` (the library call, e.g. "fp2_select"). */
fp2_status fp2_sm90_device(const fp2_params *p, const char *what, int *sms, int *smem_max);

#ifdef __cplusplus
}
#endif

#endif
