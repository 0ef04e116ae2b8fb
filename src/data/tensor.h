/* Host tensors: a named, typed, row-major array of up to 4 dimensions that owns its data. */
#ifndef FP2_TENSOR_H
#define FP2_TENSOR_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
  TENSOR_F32,
  TENSOR_F16,
  TENSOR_BF16,
  TENSOR_I32,
  TENSOR_U8 /* raw bytes, e.g. e4m3 codes */
} tensor_dtype;

#define TENSOR_MAX_DIMS 4
#define TENSOR_NAME_LEN 64

typedef struct tensor {
  char name[TENSOR_NAME_LEN];
  tensor_dtype dtype;
  int ndim;
  int64_t shape[TENSOR_MAX_DIMS];
  void *data; /* owned; tensor_numel * tensor_dtype_size bytes */
} tensor;

size_t tensor_dtype_size(tensor_dtype dt);
const char *tensor_dtype_name(tensor_dtype dt); /* "F32", "F16", "BF16", "I32", "U8" */
size_t tensor_numel(const tensor *t);
size_t tensor_bytes(const tensor *t);

/* Allocates zeroed storage for the given shape; exits on out-of-memory. */
void tensor_init(tensor *t, const char *name, tensor_dtype dt, int ndim, const int64_t *shape);
void tensor_free(tensor *t);

/* Copies element i converted to float (F32, F16, BF16, I32 only). */
float tensor_get_f32(const tensor *t, size_t i);

#endif
