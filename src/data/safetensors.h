/* The safetensors format (DESIGN.md's Data sources): an 8-byte little-endian header length N,
   N bytes of JSON header {"name": {"dtype", "shape", "data_offsets": [begin, end]}, ...,
   optional "__metadata__": {string: string}}, then the raw little-endian data. */
#ifndef FP2_SAFETENSORS_H
#define FP2_SAFETENSORS_H

#include "tensor.h"

typedef struct st_file {
  int n;
  tensor *tensors; /* [n], in header order, data in the file's dtype */
} st_file;

/* Loads every tensor of the file (dtypes F32, F16, BF16, I32, U8). Rejects a malformed
   file with a message naming it and the cause; on failure *out is empty. */
int st_load(const char *path, st_file *out, char *err);

/* The tensor with this name, or NULL. */
const tensor *st_find(const st_file *f, const char *name);

void st_free(st_file *f);

/* Writes the tensors in the given order; names must be unique. */
int st_save(const char *path, const tensor *const *tensors, int n, char *err);

/* The same with a __metadata__ map: key, value, key, value, ..., NULL. */
int st_save_with_metadata(const char *path, const tensor *const *tensors, int n, const char *const *metadata,
                          char *err);

#endif
