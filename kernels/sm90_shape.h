/* Internal: the shapes the Hopper attention kernel (attend_sm90.cu) is built for, in plain C so
   that the check runs without a GPU or a CUDA compiler (the CLI validates options with it). */
#ifndef FP2_SM90_SHAPE_H
#define FP2_SM90_SHAPE_H

#include "fp2.h"

#define FP2_SM90_DIM 128  /* head dim */
#define FP2_SM90_TILE 128 /* key block = query tile = rows of a shared-memory tile */

#ifdef __cplusplus
extern "C" {
#endif

/* FP2_OK, or FP2_ERR_UNSUPPORTED with the reason, which starts with prefix. */
fp2_status fp2_sm90_shape_check(const fp2_params *p, const char *prefix);

#ifdef __cplusplus
}
#endif

#endif
