#include "tensor_map.h"

#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include "status.h"

fp2_status fp2_tensor_map_sw128(CUtensorMap *map, int elem_bytes, const void *base, int rank, const cuuint64_t *dims,
                                const cuuint64_t *strides_bytes, const cuuint32_t *box) {
  static PFN_cuTensorMapEncodeTiled_v12000 encode = NULL;
  if (rank < 1 || rank > 5 || (elem_bytes != 1 && elem_bytes != 2) || box[0] * elem_bytes != 128)
    return fp2_fail(FP2_ERR_ARG,
                    "fp2_tensor_map_sw128: rank %d, %d-byte elements, inner box %u (need 128 bytes for the swizzle)",
                    rank, elem_bytes, box[0]);
  if (!encode) {
    enum cudaDriverEntryPointQueryResult found;
    void *fn = NULL;
    cudaError_t e = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found);
    if (e != cudaSuccess)
      return fp2_fail(FP2_ERR_CUDA, "fp2_tensor_map_sw128: cudaGetDriverEntryPointByVersion failed: %s",
                      cudaGetErrorString(e));
    if (found != cudaDriverEntryPointSuccess || !fn)
      return fp2_fail(FP2_ERR_UNSUPPORTED, "fp2_tensor_map_sw128: the driver has no cuTensorMapEncodeTiled");
    encode = (PFN_cuTensorMapEncodeTiled_v12000)fn;
  }
  const cuuint32_t unit[5] = {1, 1, 1, 1, 1};
  CUresult r = encode(map, elem_bytes == 2 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_UINT8, (cuuint32_t)rank, (void *)base, dims, strides_bytes, box,
                      unit, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    return fp2_fail(FP2_ERR_CUDA, "fp2_tensor_map_sw128: cuTensorMapEncodeTiled failed (CUresult %d, rank %d)", (int)r,
                    rank);
  return FP2_OK;
}

fp2_status fp2_tensor_map_q_tiles(CUtensorMap *map, int elem_bytes, const void *q, const fp2_params *p, int total_q) {
  const int g = fp2_group(p);
  if (128 % g != 0) return fp2_fail(FP2_ERR_ARG, "fp2_tensor_map_q_tiles: g = %d does not divide 128", g);
  const cuuint64_t row = (cuuint64_t)p->dim * elem_bytes;
  const cuuint64_t dims[3] = {(cuuint64_t)p->dim, (cuuint64_t)p->hq, (cuuint64_t)total_q};
  const cuuint64_t strides[2] = {row, row * p->hq};
  const cuuint32_t box[3] = {(cuuint32_t)(128 / elem_bytes), (cuuint32_t)g, (cuuint32_t)(128 / g)};
  return fp2_tensor_map_sw128(map, elem_bytes, q, 3, dims, strides, box);
}
