/* Operand arrays between host f32 values and their device form: bf16, or e4m3 codes for FP8
   (the values are expected to be representable: bf16-rounded or e4m3 code values). */
#ifndef FP2_DEVICE_OPERANDS_H
#define FP2_DEVICE_OPERANDS_H

#include <stddef.h>

#include "fp2.h"
#include "kv_pages.h"
#include "reference.h"

/* Converts n values and copies them into the device array dev. 0, or -1 with err. */
int operands_upload(void *dev, const float *x, size_t n, int fp8, char *err);

/* x [total keys, row] (the requests' lk[b] keys back to back) laid out in kp's pages
   (kv_pages_fill, every row the table does not name set to poison) and uploaded as bf16 to
   dev, [num_pages, page_size, row]. 0, or -1 with err. */
int operands_upload_pages(void *dev, const kv_pages *kp, const int *lk, const float *x, size_t row, float poison,
                          char *err);

/* Copies n device operands back as f32 values (the caller frees them); NULL with err. */
float *operands_download(const void *dev, size_t n, int fp8, char *err);

/* V's codes (FP8, head dim and key block 128) as f32 values in v's own order [total_k, hkv,
   128], read back from the transposed values vt that fp2_pool wrote for the sm90 kernel
   (transpose_values.h), for pb's sequences (its host prefixes of rows and blocks). NULL with
   err. */
float *values_download_transposed(const void *vt, const problem *pb, char *err);

/* The CSR index of dev ([plan->nseg + 1] offsets, then block ids) copied back into c, every
   segment marked evaluated (the caller frees it with csr_free). 0, or -1 with err: a copy
   failed, or the offsets claim more blocks than plan->capacity. */
int index_download(const fp2_plan *plan, const fp2_index *dev, csr_index *c, char *err);

#endif
