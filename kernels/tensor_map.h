/* Internal: TMA tensor maps (CUtensorMap) for the Hopper kernels, encoded through the CUDA
   runtime's driver entry point so that nothing links libcuda directly. */
#ifndef FP2_TENSOR_MAP_H
#define FP2_TENSOR_MAP_H

#include <cuda.h>

#include "fp2.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A tiled map over a tensor of bf16 (elem_bytes 2) or 8-bit codes (1) of `rank` dimensions
   (innermost first: dims[0] elements contiguous), strides_bytes[rank - 1] between
   consecutive indices of dims[1..], a box of box[] elements, 128-byte swizzle (box[0] *
   elem_bytes must be 128), zero fill out of bounds. */
fp2_status fp2_tensor_map_sw128(CUtensorMap *map, int elem_bytes, const void *base, int rank, const cuuint64_t *dims,
                                const cuuint64_t *strides_bytes, const cuuint32_t *box);

/* The map of Q's tiles of 128 packed rows (positions x the g heads of a KV head) when g
   divides 128: Q [total_q, hq, dim] of elem_bytes elements (dim * elem_bytes = 128 or 256),
   a box of 128 / g positions x g heads x 128 bytes, read at (column, h * g, position). */
fp2_status fp2_tensor_map_q_tiles(CUtensorMap *map, int elem_bytes, const void *q, const fp2_params *p, int total_q);

#ifdef __cplusplus
}
#endif

#endif
