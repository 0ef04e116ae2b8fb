/* FP8 quantisation with per-tensor scales (DESIGN.md section 3, e4m3.cuh), v5: the scales of
   Q, K and V from one amax pass over the three, and a convert pass for Q where the select
   does not convert it (the pool writes the codes of K and V as it reads them: pool.cu). Both
   passes bandwidth-bound, 16-byte loads (four of a thread in flight) and 8-byte stores. At
   128K on the H200: v1's 2-byte loads 2.68 ms, v2's amax-and-convert per tensor 0.98 ms for
   all three, v3's amax 0.381 ms with one load of a thread in flight, v4's 0.375 (ncu: Q's
   238 us at 94 % of DRAM's peak, K's and V's 61 and 63 us), v5's one grid 0.373 -> 0.363
   (kernels/NOTES.md). */
#include "cuda_check.h"
#include "e4m3.cuh"
#include "fp2.h"
#include "page_row.cuh"

namespace fp2 {
namespace {

constexpr int kThreads = 256;
constexpr int kVec = 8; /* bf16 values per 16-byte load */

/* Calls f(v, load(v)) for the 16-byte loads v = 0 .. nvec - 1, over a grid-stride loop that
   has kInFlight loads of a thread in flight at once: one at a time leaves too few bytes in
   flight for the copy rate. kFromEnd walks the loads from the last, so that the first ones
   are the last read. */
template <bool kFromEnd, typename L, typename F>
__device__ __forceinline__ void for_each_vec(size_t nvec, L load, F f) {
  constexpr int kInFlight = 4;
  const size_t stride = (size_t)gridDim.x * kThreads;
  auto at = [&](size_t v) { return kFromEnd ? nvec - 1 - v : v; };
  size_t v = blockIdx.x * (size_t)kThreads + threadIdx.x;
  for (; v + (kInFlight - 1) * stride < nvec; v += kInFlight * stride) {
    uint4 raw[kInFlight];
#pragma unroll
    for (int u = 0; u < kInFlight; u++) raw[u] = load(at(v + u * stride));
#pragma unroll
    for (int u = 0; u < kInFlight; u++) f(at(v + u * stride), raw[u]);
  }
  for (; v < nvec; v += stride) f(at(v), load(at(v)));
}

/* Calls f(i) for each of the n % 8 values of x past its 16-byte loads. */
template <typename F>
__device__ __forceinline__ void for_each_tail(size_t n, F f) {
  const size_t stride = (size_t)gridDim.x * kThreads;
  for (size_t i = n / kVec * kVec + blockIdx.x * (size_t)kThreads + threadIdx.x; i < n; i += stride) f(i);
}

/* The CTA's largest of each thread's m[x] into amax[first + step x], as float bits
   (non-negative floats order as their bits). */
template <int kN>
__device__ __forceinline__ void cta_amax(float (&m)[kN], unsigned *amax, int first, int step) {
  __shared__ float warp_max[kN][kThreads / 32];
#pragma unroll
  for (int x = 0; x < kN; x++) {
    for (int o = 16; o > 0; o >>= 1) m[x] = fmaxf(m[x], __shfl_xor_sync(0xffffffffu, m[x], o));
    if (threadIdx.x % 32 == 0) warp_max[x][threadIdx.x / 32] = m[x];
  }
  __syncthreads();
  if (threadIdx.x < kN) {
    float t = 0.0f;
    for (int w = 0; w < kThreads / 32; w++) t = fmaxf(t, warp_max[threadIdx.x][w]);
    atomicMax(amax + first + step * (int)threadIdx.x, __float_as_uint(t));
  }
}

/* What the amax pass reads: V, K and Q as one run of 16-byte loads, end to end, walked from
   the end. One grid over the three leaves no tail and ramp between them, and V's first
   blocks, with which the pool starts next, are the last read: still in L2. */
struct AmaxRun {
  const __nv_bfloat16 *x[3]; /* v, k, q */
  size_t n[3];               /* values */
  size_t end[3];             /* the loads of x[0] .. x[s] */
};

/* amax[2 - s] of x[s] (q, k, v in amax[0 .. 2]), as float bits. */
__global__ void amax_kernel(const AmaxRun r, unsigned *amax) {
  float m[3] = {0.0f, 0.0f, 0.0f}; /* fmaxf drops NaN */
  auto add = [&](int s, float x) {
#pragma unroll
    for (int t = 0; t < 3; t++)
      if (t == s) m[t] = fmaxf(m[t], fabsf(x));
  };
  auto segment = [&](size_t w) { return w < r.end[0] ? 0 : w < r.end[1] ? 1 : 2; };
  auto load = [&](size_t w) { /* selects, not an index into r, which would copy r to the stack */
    const int s = segment(w);
    const __nv_bfloat16 *x = s == 0 ? r.x[0] : s == 1 ? r.x[1] : r.x[2];
    return reinterpret_cast<const uint4 *>(x)[w - (s == 0 ? 0 : s == 1 ? r.end[0] : r.end[1])];
  };
  for_each_vec<true>(
      r.end[2], load,
      [&](size_t w, uint4 raw) {
        const __nv_bfloat16 *b = reinterpret_cast<const __nv_bfloat16 *>(&raw);
        float a = 0.0f;
#pragma unroll
        for (int e = 0; e < kVec; e++) a = fmaxf(a, fabsf(__bfloat162float(b[e])));
        add(segment(w), a);
      });
#pragma unroll
  for (int s = 0; s < 3; s++) for_each_tail(r.n[s], [&](size_t i) { add(s, __bfloat162float(r.x[s][i])); });
  cta_amax(m, amax, 2, -1); /* v, k, q to amax[2], [1], [0] */
}

/* What the amax of K and V in pages reads: each key row (hkv x dim values, contiguous in its
   page) through the table, a CTA a key block of the plan's. */
struct AmaxPages {
  const __nv_bfloat16 *x[2]; /* k, v pages */
  const int *table, *cu_k, *cu_blocks;
  int max_pages, page_shift, block;
  int row_vecs; /* 16-byte loads a key row: hkv dim / 8 */
};

/* amax[1] and amax[2] of the keys of K and V the table names, as float bits: rows past a
   sequence and pages it does not name are never read. */
__global__ void amax_pages_kernel(const AmaxPages a, unsigned *amax) {
  constexpr int kInFlight = 4; /* loads of K and as many of V a thread, as for_each_vec */
  const int gblock = blockIdx.x;
  int s = 0;
  while (a.cu_blocks[s + 1] <= gblock) s++;
  const int first = (gblock - a.cu_blocks[s]) * a.block;
  const int n = min(a.block, a.cu_k[s + 1] - a.cu_k[s] - first) * a.row_vecs;
  const int *pages = a.table + (size_t)s * a.max_pages;
  float m[2] = {0.0f, 0.0f}; /* fmaxf drops NaN */
  for (int i0 = threadIdx.x; i0 < n; i0 += kInFlight * kThreads) {
    uint4 raw[2][kInFlight] = {};
#pragma unroll
    for (int u = 0; u < kInFlight; u++) {
      const int i = i0 + u * kThreads;
      if (i >= n) break;
      const int t = first + i / a.row_vecs;
      const size_t row = page_row(pages, a.page_shift, t);
#pragma unroll
      for (int x = 0; x < 2; x++)
        raw[x][u] = reinterpret_cast<const uint4 *>(a.x[x])[row * a.row_vecs + i % a.row_vecs];
    }
#pragma unroll
    for (int x = 0; x < 2; x++)
#pragma unroll
      for (int u = 0; u < kInFlight; u++) {
        const __nv_bfloat16 *b = reinterpret_cast<const __nv_bfloat16 *>(&raw[x][u]);
#pragma unroll
        for (int e = 0; e < kVec; e++) m[x] = fmaxf(m[x], fabsf(__bfloat162float(b[e]))); /* zeros: no row */
      }
  }
  cta_amax(m, amax, 1, 1); /* k, v to amax[1], [2] */
}

__global__ void scales_kernel(const unsigned *amax, float *scales) {
  if (threadIdx.x < 3) scales[threadIdx.x] = e4m3_scale(__uint_as_float(amax[threadIdx.x]));
}

__global__ void convert_kernel(const __nv_bfloat16 *x, size_t n, const float *scale, uint8_t *out) {
  const float inverse = e4m3_inverse(*scale);
  const uint4 *vec = reinterpret_cast<const uint4 *>(x);
  for_each_vec<false>(
      n / kVec, [&](size_t v) { return vec[v]; },
      [&](size_t v, uint4 raw) { *reinterpret_cast<uint2 *>(out + v * kVec) = e4m3_codes8(raw, inverse); });
  for_each_tail(n, [&](size_t i) { out[i] = e4m3_code(__bfloat162float(x[i]), inverse); });
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
  AmaxRun r = {{static_cast<const __nv_bfloat16 *>(v), static_cast<const __nv_bfloat16 *>(k),
                static_cast<const __nv_bfloat16 *>(q)},
               {nk, nk, nq}};
  for (int s = 0; s < 3; s++) r.end[s] = (s ? r.end[s - 1] : 0) + r.n[s] / kVec;
  FP2_CUDA("fp2_scales_e4m3", cudaMemsetAsync(amax_scratch, 0, 3 * sizeof(unsigned), stream));
  /* One grid over the three (AmaxRun): at 128K on the H200 0.363 ms, against 0.373 for one
     launch per tensor. */
  amax_kernel<<<grid_for(nq + 2 * nk), kThreads, 0, stream>>>(r, amax_scratch);
  FP2_LAUNCHED("fp2_scales_e4m3: amax");
  scales_kernel<<<1, 32, 0, stream>>>(amax_scratch, scales);
  FP2_LAUNCHED("fp2_scales_e4m3: scales");
  return FP2_OK;
}

extern "C" fp2_status fp2_scales_e4m3_paged(const fp2_params *p, const fp2_plan *plan, const void *q, const void *k,
                                            const void *v, const fp2_kv_pages *pages, float *scales,
                                            unsigned *amax_scratch, cudaStream_t stream) {
  using namespace fp2;
  fp2_status st;
  if ((st = fp2_check_pages(p, pages)) != FP2_OK) return st;
  if (!pages) return fp2_fail(FP2_ERR_ARG, "fp2_scales_e4m3_paged: no pages (fp2_scales_e4m3 takes contiguous K/V)");
  if ((uintptr_t)q % 16 != 0 || (uintptr_t)k % 16 != 0 || (uintptr_t)v % 16 != 0)
    return fp2_fail(FP2_ERR_ARG, "fp2_scales_e4m3_paged: q, k and v must be 16-byte aligned");
  if ((p->hkv * p->dim) % kVec != 0)
    return fp2_fail(FP2_ERR_UNSUPPORTED, "fp2_scales_e4m3_paged: a key row of %d values is not whole 16-byte loads",
                    p->hkv * p->dim);
  const size_t nq = (size_t)plan->total_q * p->hq * p->dim;
  AmaxRun r = {{nullptr, nullptr, static_cast<const __nv_bfloat16 *>(q)}, {0, 0, nq}, {0, 0, nq / kVec}};
  const AmaxPages kv = {{static_cast<const __nv_bfloat16 *>(k), static_cast<const __nv_bfloat16 *>(v)},
                        pages->table,
                        plan->cu_k,
                        plan->cu_blocks,
                        pages->max_pages,
                        page_shift(p->page_size),
                        p->block,
                        p->hkv * p->dim / kVec};
  FP2_CUDA("fp2_scales_e4m3_paged", cudaMemsetAsync(amax_scratch, 0, 3 * sizeof(unsigned), stream));
  amax_kernel<<<grid_for(nq), kThreads, 0, stream>>>(r, amax_scratch); /* Q alone: V and K empty */
  FP2_LAUNCHED("fp2_scales_e4m3_paged: amax of q");
  if (plan->total_blocks > 0) {
    amax_pages_kernel<<<plan->total_blocks, kThreads, 0, stream>>>(kv, amax_scratch);
    FP2_LAUNCHED("fp2_scales_e4m3_paged: amax of k and v");
  }
  scales_kernel<<<1, 32, 0, stream>>>(amax_scratch, scales);
  FP2_LAUNCHED("fp2_scales_e4m3_paged: scales");
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
