/* FP8 quantisation with per-tensor scales (DESIGN.md section 3, e4m3.cuh), v4: the scales of
   Q, K and V from an amax pass over each tensor, and a convert pass for Q where the select
   does not convert it (the pool writes the codes of K and V as it reads them: pool.cu). Both
   passes bandwidth-bound, 16-byte loads (four of a thread in flight) and 8-byte stores. At
   128K on the H200: v1's 2-byte loads 2.68 ms, v2's amax-and-convert per tensor 0.98 ms for
   all three, v3's amax 0.381 ms with one load of a thread in flight, v4's 0.375 (ncu: Q's
   238 us at 94 % of DRAM's peak, K's and V's 61 and 63 us; kernels/NOTES.md). */
#include "cuda_check.h"
#include "e4m3.cuh"
#include "fp2.h"

namespace fp2 {
namespace {

constexpr int kThreads = 256;
constexpr int kVec = 8; /* bf16 values per 16-byte load */

/* Calls f(i, raw) for the 16-byte loads raw = x[i .. i + 8) and then tail(i) for each of the
   last n % 8 values, over a grid-stride loop that has kInFlight loads of a thread in flight
   at once: one at a time leaves too few bytes in flight for the copy rate. kFromEnd walks the
   loads from the last, so that the first ones are the last read. */
template <bool kFromEnd = false, typename F, typename T>
__device__ __forceinline__ void for_each_vec(const __nv_bfloat16 *x, size_t n, F f, T tail) {
  constexpr int kInFlight = 4;
  const uint4 *vec = reinterpret_cast<const uint4 *>(x);
  const size_t nvec = n / kVec, stride = (size_t)gridDim.x * kThreads;
  auto at = [&](size_t v) { return kFromEnd ? nvec - 1 - v : v; };
  size_t v = blockIdx.x * (size_t)kThreads + threadIdx.x;
  for (; v + (kInFlight - 1) * stride < nvec; v += kInFlight * stride) {
    uint4 raw[kInFlight];
#pragma unroll
    for (int u = 0; u < kInFlight; u++) raw[u] = vec[at(v + u * stride)];
#pragma unroll
    for (int u = 0; u < kInFlight; u++) f(at(v + u * stride) * kVec, raw[u]);
  }
  for (; v < nvec; v += stride) f(at(v) * kVec, vec[at(v)]);
  for (size_t i = nvec * kVec + blockIdx.x * (size_t)kThreads + threadIdx.x; i < n; i += stride) tail(i);
}

/* The amax of x, as float bits in *amax; kFromEnd: x read from its end (for_each_vec). */
template <bool kFromEnd>
__global__ void amax_kernel(const __nv_bfloat16 *x, size_t n, unsigned *amax) {
  float m = 0.0f; /* fmaxf drops NaN */
  for_each_vec<kFromEnd>(
      x, n,
      [&](size_t, uint4 raw) {
        const __nv_bfloat16 *b = reinterpret_cast<const __nv_bfloat16 *>(&raw);
#pragma unroll
        for (int e = 0; e < kVec; e++) m = fmaxf(m, fabsf(__bfloat162float(b[e])));
      },
      [&](size_t i) { m = fmaxf(m, fabsf(__bfloat162float(x[i]))); });
  for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
  __shared__ float warp_max[kThreads / 32];
  if (threadIdx.x % 32 == 0) warp_max[threadIdx.x / 32] = m;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < kThreads / 32; w++) m = fmaxf(m, warp_max[w]);
    atomicMax(amax, __float_as_uint(m)); /* non-negative floats order as their bits */
  }
}

__global__ void scales_kernel(const unsigned *amax, float *scales) {
  if (threadIdx.x < 3) scales[threadIdx.x] = e4m3_scale(__uint_as_float(amax[threadIdx.x]));
}

__global__ void convert_kernel(const __nv_bfloat16 *x, size_t n, const float *scale, uint8_t *out) {
  const float inverse = e4m3_inverse(*scale);
  for_each_vec(
      x, n, [&](size_t i, uint4 raw) { *reinterpret_cast<uint2 *>(out + i) = e4m3_codes8(raw, inverse); },
      [&](size_t i) { out[i] = e4m3_code(__bfloat162float(x[i]), inverse); });
}

int grid_for(size_t n) {
  size_t blocks = (n / kVec + kThreads - 1) / kThreads;
  return blocks > 8192 ? 8192 : (int)(blocks ? blocks : 1);
}

}  // namespace
}  // namespace fp2

extern "C" fp2_status fp2_scales_e4m3(const void *q, size_t nq, const void *k, const void *v, size_t nk, float *scales,
                                      unsigned *amax_scratch, cudaStream_t stream) {
  using namespace fp2;
  if ((uintptr_t)q % 16 != 0 || (uintptr_t)k % 16 != 0 || (uintptr_t)v % 16 != 0)
    return fp2_fail(FP2_ERR_ARG, "fp2_scales_e4m3: q, k and v must be 16-byte aligned");
  const void *x[3] = {q, k, v};
  const size_t n[3] = {nq, nk, nk};
  FP2_CUDA("fp2_scales_e4m3", cudaMemsetAsync(amax_scratch, 0, 3 * sizeof(unsigned), stream));
  /* One launch per tensor, each with its own grid: one grid over the three (a row each) took
     440 us at 128K on the H200 against 361 us for three. K and V are read from their ends:
     the pool, next, starts with their first blocks, the last read, which are then in L2. */
  for (int t = 0; t < 3; t++) {
    const __nv_bfloat16 *xt = static_cast<const __nv_bfloat16 *>(x[t]);
    if (t == 0)
      amax_kernel<false><<<grid_for(n[t]), kThreads, 0, stream>>>(xt, n[t], amax_scratch + t);
    else
      amax_kernel<true><<<grid_for(n[t]), kThreads, 0, stream>>>(xt, n[t], amax_scratch + t);
    FP2_LAUNCHED("fp2_scales_e4m3: amax");
  }
  scales_kernel<<<1, 32, 0, stream>>>(amax_scratch, scales);
  FP2_LAUNCHED("fp2_scales_e4m3: scales");
  return FP2_OK;
}

extern "C" fp2_status fp2_convert_e4m3(const void *x, size_t n, const float *scale, uint8_t *out,
                                       cudaStream_t stream) {
  using namespace fp2;
  if ((uintptr_t)x % 16 != 0 || (uintptr_t)out % 8 != 0)
    return fp2_fail(FP2_ERR_ARG, "fp2_convert_e4m3: x must be 16-byte aligned and out 8-byte aligned");
  convert_kernel<<<grid_for(n), kThreads, 0, stream>>>(static_cast<const __nv_bfloat16 *>(x), n, scale, out);
  FP2_LAUNCHED("fp2_convert_e4m3");
  return FP2_OK;
}
