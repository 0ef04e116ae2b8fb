#include "tensor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "numeric.h"

size_t tensor_dtype_size(tensor_dtype dt) {
  switch (dt) {
    case TENSOR_F32:
    case TENSOR_I32: return 4;
    case TENSOR_F16:
    case TENSOR_BF16: return 2;
    case TENSOR_U8: return 1;
  }
  return 0;
}

const char *tensor_dtype_name(tensor_dtype dt) {
  switch (dt) {
    case TENSOR_F32: return "F32";
    case TENSOR_F16: return "F16";
    case TENSOR_BF16: return "BF16";
    case TENSOR_I32: return "I32";
    case TENSOR_U8: return "U8";
  }
  return "?";
}

size_t tensor_numel(const tensor *t) {
  size_t n = 1;
  for (int i = 0; i < t->ndim; i++) n *= (size_t)t->shape[i];
  return n;
}

size_t tensor_bytes(const tensor *t) { return tensor_numel(t) * tensor_dtype_size(t->dtype); }

void tensor_init(tensor *t, const char *name, tensor_dtype dt, int ndim, const int64_t *shape) {
  memset(t, 0, sizeof *t);
  snprintf(t->name, sizeof t->name, "%s", name);
  t->dtype = dt;
  t->ndim = ndim;
  for (int i = 0; i < ndim; i++) t->shape[i] = shape[i];
  t->data = xcalloc(tensor_numel(t), tensor_dtype_size(dt));
}

void tensor_free(tensor *t) {
  free(t->data);
  t->data = NULL;
}

float tensor_get_f32(const tensor *t, size_t i) {
  switch (t->dtype) {
    case TENSOR_F32: return ((const float *)t->data)[i];
    case TENSOR_F16: return f16_to_f32(((const uint16_t *)t->data)[i]);
    case TENSOR_BF16: return bf16_to_f32(((const uint16_t *)t->data)[i]);
    case TENSOR_I32: return (float)((const int32_t *)t->data)[i];
    case TENSOR_U8: return (float)((const uint8_t *)t->data)[i];
  }
  return 0.0f;
}
