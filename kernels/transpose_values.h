/* Internal: the values (V and its pooled means, e4m3 codes) transposed for the Hopper FP8
   kernel, whose P V product reads B K-major (8-bit wgmma has no transposed B). */
#ifndef FP2_TRANSPOSE_VALUES_H
#define FP2_TRANSPOSE_VALUES_H

#include "fp2.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The slot (0 .. 31) of key (0 .. 31) within its group of 32 columns: the order of the
   probabilities in a thread's A registers (online_softmax.cuh's fp8_key_slot, and the host's
   reading of the transposed values). */
#define FP2_FP8_KEY_SLOT(key) (16 * ((key) / 16) + 4 * (((key) % 8) / 2) + 2 * (((key) % 16) / 8) + (key) % 2)

/* Bytes of the two transposed tensors for plan (head dim 128, key block 128). */
size_t fp2_transposed_values_bytes(const fp2_params *p, const fp2_plan *plan);

/* v [total_k, hkv, 128] -> vt [hkv, 128, 128 * total_blocks] and vbar [hkv * total_blocks,
   128] -> vbart [hkv, 128, 128 * total_chunks], vbart = vt + hkv * 128 * 128 * total_blocks.
   Sequence s starts at column 128 cu_blocks[s] (128 cu_chunks[s] for the means); its columns
   past its last key (or mean) are zero; within each group of 32 columns, column j holds key
   fp8_slot_key(j) of the group (online_softmax.cuh), the order of the probabilities in a
   thread's A registers. */
fp2_status fp2_transpose_values(const fp2_params *p, const fp2_plan *plan, const void *v, const void *vbar, void *vt,
                                cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
