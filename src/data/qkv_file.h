/* Recorded attention inputs (DESIGN.md's Data sources): a safetensors file holding one
   sequence's q [L, Hq, D], k [L, Hkv, D] and v [L, Hkv, D] in BF16, F16 or F32. */
#ifndef FP2_QKV_FILE_H
#define FP2_QKV_FILE_H

#include "tensor.h"

typedef struct qkv_host {
  int len, hq, hkv, dim;
  tensor_dtype file_dtype; /* the dtype the values were stored in */
  float *q; /* [len, hq, dim], exact conversions of the stored values */
  float *k; /* [len, hkv, dim] */
  float *v; /* [len, hkv, dim] */
} qkv_host;

/* Loads q, k and v (other tensors are ignored) and checks that their shapes agree and that
   every value is finite (a NaN or infinity is refused, naming its tensor and position). */
int qkv_load(const char *path, qkv_host *out, char *err);

void qkv_free(qkv_host *q);

#endif
