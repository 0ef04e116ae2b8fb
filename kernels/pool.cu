/* Pooled keys and values, v1: the mean of each key block per KV head (the last block of a
   sequence may be partial), and the pooled operands the scoring and the correction use:
   bf16 of the mean, or for FP8 the e4m3 code of mean / scale with the tensor's own scale.
   One thread per head dimension, keys summed in order in f32. Bandwidth-bound: reads K and
   V once. */
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include "cuda_check.h"
#include "fp2.h"

namespace {

template <bool kFp8>
__device__ __forceinline__ float load_value(const void *x, size_t i) {
  if constexpr (kFp8) {
    __half_raw h = __nv_cvt_fp8_to_halfraw(static_cast<const __nv_fp8_storage_t *>(x)[i], __NV_E4M3);
    return __half2float(__half(h));
  } else {
    return __bfloat162float(static_cast<const __nv_bfloat16 *>(x)[i]);
  }
}

template <bool kFp8>
__device__ __forceinline__ void store_operand(void *out, size_t i, float mean, float scale) {
  if constexpr (kFp8)
    static_cast<uint8_t *>(out)[i] = __nv_cvt_float_to_fp8(__fdiv_rn(mean, scale), __NV_SATFINITE, __NV_E4M3);
  else
    static_cast<__nv_bfloat16 *>(out)[i] = __float2bfloat16_rn(mean);
}

/* grid: (key blocks of the batch, hkv); block: dim threads. */
template <bool kFp8>
__global__ void pool_kernel(fp2_params p, const int *cu_k, const int *cu_blocks, int batch, const void *k,
                            const void *v, const float *scales, float *k_mean, float *v_mean, void *kbar,
                            void *vbar) {
  const int gblock = blockIdx.x, h = blockIdx.y, d = threadIdx.x, total_blocks = cu_blocks[batch];
  int s = 0;
  while (cu_blocks[s + 1] <= gblock) s++;
  const int j = gblock - cu_blocks[s], lk = cu_k[s + 1] - cu_k[s];
  const int first = j * p.block, last = min(first + p.block, lk);
  float sk = 0.0f, sv = 0.0f;
  for (int t = first; t < last; t++) {
    size_t at = ((size_t)(cu_k[s] + t) * p.hkv + h) * p.dim + d;
    sk += load_value<kFp8>(k, at);
    sv += load_value<kFp8>(v, at);
  }
  const float ck = kFp8 ? scales[1] : 1.0f, cv = kFp8 ? scales[2] : 1.0f;
  const float mk = sk * ck / (float)(last - first), mv = sv * cv / (float)(last - first);
  size_t out = ((size_t)h * total_blocks + gblock) * p.dim + d;
  k_mean[out] = mk;
  v_mean[out] = mv;
  store_operand<kFp8>(kbar, out, mk, ck);
  store_operand<kFp8>(vbar, out, mv, cv);
}

}  // namespace

extern "C" fp2_status fp2_pool(const fp2_params *p, const fp2_plan *plan, const void *k, const void *v,
                               const float *scales, float *k_mean, float *v_mean, void *kbar, void *vbar,
                               cudaStream_t stream) {
  if (p->dim > 1024) return fp2_fail(FP2_ERR_UNSUPPORTED, "fp2_pool: head dim %d above 1024", p->dim);
  if (p->dtype == FP2_FP8 && !scales) return fp2_fail(FP2_ERR_ARG, "fp2_pool: FP8 needs the scales");
  dim3 grid(plan->total_blocks, p->hkv);
  if (p->dtype == FP2_FP8)
    pool_kernel<true><<<grid, p->dim, 0, stream>>>(*p, plan->cu_k, plan->cu_blocks, plan->batch, k, v, scales, k_mean,
                                                   v_mean, kbar, vbar);
  else
    pool_kernel<false><<<grid, p->dim, 0, stream>>>(*p, plan->cu_k, plan->cu_blocks, plan->batch, k, v, scales,
                                                    k_mean, v_mean, kbar, vbar);
  FP2_LAUNCHED("fp2_pool");
  return FP2_OK;
}
