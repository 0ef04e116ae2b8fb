/* Pooled keys and values, v2: the mean of each key block per KV head (the last block of a
   sequence may be partial), and the pooled operands the scoring and the correction use:
   bf16 of the mean, or for FP8 the e4m3 code of mean / scale with the tensor's own scale.
   FP8 also converts K and V here (e4m3.cuh), as this pass reads them anyway: the codes are
   written, and the means are those of the codes' values, as the attention sees them.
   For the Hopper FP8 kernel it also writes V's codes and means transposed (the layout of
   transpose_values.h), so that no later pass reads V again to turn it around; fp2_forward
   then gives no v8, and V's codes go only there.
   K and V may come in pages (fp2_kv_pages, a template parameter so that the contiguous path
   does not pay for it): each key row is then read through the page table. FP8's codes go
   contiguous, as always; BF16 in pages smaller than FP2_ATTEND_PAGE_MIN keys is copied
   contiguous for the attention, which reads larger pages itself.
   A pooled cache (fp2_pooled_cache; BF16; a template parameter) keeps the means of
   full blocks across the chunks of a prefill: the pool's grid then covers only the blocks
   past each request's prefix, writing the full ones to the cache, and its last CTAs copy the
   prefix's means from it (a warp a row, no key read; a kernel of its own until 2026-12-04).
   Written by this same code from the same keys, a cached mean is the one pooling would give,
   bit for bit.
   One CTA per (key block, KV head): 16 lanes of 16-byte loads per key row, 16 key rows at
   a time, partial sums in f32 combined through shared memory. Bandwidth-bound: reads K and
   V once. v1 (one thread per head dimension, one element a load, from the codes of a
   separate convert pass) took 0.19 ms at 128K in BF16 on the H200 and 0.20 ms in FP8; this
   one with V^T, 0.257 ms with V's row-major codes as well and 0.212 without (32:8); with a
   block's KV heads side by side in the grid 0.206 (BF16 0.144 -> 0.138), and with K's and
   V's loads of a round in flight together 0.205. */
#include "cuda_check.h"
#include "dependent_launch.cuh"
#include "e4m3.cuh"
#include "fp2.h"
#include "online_softmax.cuh"
#include "page_row.cuh"

namespace fp2 {
namespace {

constexpr int kPoolThreads = 256;

/* Head dim D: D / 8 lanes of 16-byte loads per key row, the CTA's other threads on other rows. */
template <int D>
struct PoolShape {
  static constexpr int lanes = D / 8, rows_at_once = kPoolThreads / lanes;
  static_assert(2 * D <= kPoolThreads, "one thread per pooled value of K and of V");
};

struct PoolArgs {
  fp2_params p;
  const int *cu_q, *cu_k, *cu_blocks, *cu_chunks;
  int batch;
  const __nv_bfloat16 *x[2]; /* k, v: contiguous, or pages */
  const int *table;          /* pages: fp2_kv_pages */
  int max_pages, page_shift; /* page_size = 1 << page_shift */
  const float *scales;       /* FP8: [3], k and v at 1 and 2 */
  float *mean[2];
  void *bar[2];
  void *out[2];              /* FP8: K's and V's codes for the attention (with vt, V's may be
                                NULL); BF16: a copy of small pages (fp2_pages_copied), or NULL */
  uint8_t *vt;               /* FP8, sm90 shape: V's codes and then V̄'s, transposed; else NULL */
  float *cache_mean[2];      /* the pooled cache (BF16): k_mean, v_mean; */
  const int *cache_table;    /* NULL: none */
  int cache_max_blocks;
};

/* The transposed values (transpose_values.h): V^T [hkv * 128, 128 * total_blocks], with the
   key of slot j of each group of 32 at fp8_slot_key(j); then V̄^T [hkv * 128, 128 *
   total_chunks], means in the same order within each chunk of 128, zero past a sequence's. */
constexpr int kVtRows = 128;

/* The staged V codes of a block, [128 rows][32 words]: word w of row r at w ^ 4 (r / 16 % 8),
   so that both the row-wise stores and the column-wise reads below are conflict-free. */
__device__ __forceinline__ int vt_word(int row, int w) { return row * 32 + (w ^ (4 * ((row / 16) % 8))); }

/* V^T of the block: thread t writes head dims 4 (t / 8) .. + 3, slots 16 (t % 8) .. + 15 (8
   threads a 128-byte row); each 4 slots' bytes come from the 4 rows fp8_slot_key puts there,
   turned around with byte permutes. */
__device__ __forceinline__ void store_vt_block(const uint32_t *tile, uint8_t *vt, size_t pitch, int h,
                                               int gblock) {
  const int l8 = threadIdx.x % 8, dq = threadIdx.x / 8;
  uint32_t run[4][4]; /* run[i][e]: slots 16 l8 + 4 i .. + 3 of head dim 4 dq + e */
#pragma unroll
  for (int i = 0; i < 4; i++) {
    const int slot = 16 * l8 + 4 * i, base = slot / 32 * 32;
    uint32_t w[4];
#pragma unroll
    for (int j = 0; j < 4; j++) w[j] = tile[vt_word(base + fp8_slot_key(slot % 32 + j), dq)];
    transpose_4x4_bytes(w, run[i]);
  }
#pragma unroll
  for (int e = 0; e < 4; e++)
    *reinterpret_cast<uint4 *>(vt + ((size_t)h * kVtRows + 4 * dq + e) * pitch + (size_t)gblock * kVtRows + 16 * l8) =
        make_uint4(run[0][e], run[1][e], run[2][e], run[3][e]);
}

/* Key blocks wholly inside sequence s's keys before its queries: those a pooled cache holds. */
__device__ __forceinline__ int prefix_blocks(const PoolArgs &a, int s) {
  return (a.cu_k[s + 1] - a.cu_k[s] - (a.cu_q[s + 1] - a.cu_q[s])) / a.p.block;
}

/* With a pooled cache, a sequence's blocks are its prefix's (copied from the cache) and the
   fresh ones past it (pooled). The b-th block of one kind, counted over the sequences in
   order: returns its sequence s, and b becomes its place among s's blocks of that kind. */
template <bool kFresh>
__device__ __forceinline__ int nth_block_of_kind(const PoolArgs &a, int &b) {
  for (int s = 0;; s++) {
    const int prefix = prefix_blocks(a, s), n = kFresh ? a.cu_blocks[s + 1] - a.cu_blocks[s] - prefix : prefix;
    if (b < n) return s;
    b -= n;
  }
}

/* The b-th block the pool's grid covers, as block j of sequence s: every block, or with a
   pooled cache the fresh ones. */
template <bool kCache>
__device__ __forceinline__ void pooled_block(const PoolArgs &a, int b, int &s, int &j) {
  if constexpr (kCache) {
    s = nth_block_of_kind<true>(a, b);
    j = prefix_blocks(a, s) + b;
  } else {
    s = 0;
    while (a.cu_blocks[s + 1] <= b) s++;
    j = b - a.cu_blocks[s];
  }
}

constexpr int kCachedWarps = kPoolThreads / 32;

/* With a pooled cache, the means of the blocks of each sequence's prefix, copied from it into
   the pass's means and pooled operands (bf16): row `row` of the plan's prefix blocks x hkv (a
   block's D means of one KV head, K's and V's), by one warp. */
template <int D>
__device__ __forceinline__ void copy_cached_means(const PoolArgs &a, int row) {
  const fp2_params &p = a.p;
  const int h = row % p.hkv, lane = threadIdx.x % 32;
  int j = row / p.hkv;
  const int s = nth_block_of_kind<false>(a, j);
  const size_t from = ((size_t)a.cache_table[(size_t)s * a.cache_max_blocks + j] * p.hkv + h) * D;
  const size_t to = ((size_t)h * a.cu_blocks[a.batch] + a.cu_blocks[s] + j) * D;
  for (int d = 4 * lane; d < D; d += 128)
#pragma unroll
    for (int x = 0; x < 2; x++) {
      const float4 m = *reinterpret_cast<const float4 *>(a.cache_mean[x] + from + d);
      *reinterpret_cast<float4 *>(a.mean[x] + to + d) = m;
      const __nv_bfloat162 lo = __floats2bfloat162_rn(m.x, m.y), hi = __floats2bfloat162_rn(m.z, m.w);
      *reinterpret_cast<uint2 *>(static_cast<__nv_bfloat16 *>(a.bar[x]) + to + d) =
          make_uint2(*reinterpret_cast<const uint32_t *>(&lo), *reinterpret_cast<const uint32_t *>(&hi));
    }
}

/* grid: the key blocks pooled (pooled_block) x hkv CTAs in one dimension, the hkv heads of a
   block side by side: together they read each of its positions' K and V rows whole (hkv x D
   values, contiguous), so that a DRAM page is opened once, not once per head at other times.
   With a pooled cache, CTAs from pooled_ctas on copy the prefix's rows, kCachedWarps a CTA
   (cached_rows of them): one launch, not two, for a chunk whose pool is short. block:
   kPoolThreads. */
template <int D, bool kFp8, bool kVt, bool kPaged, bool kCache>
__global__ void __launch_bounds__(kPoolThreads) pool_kernel(PoolArgs a, int pooled_ctas, int cached_rows) {
  constexpr int kLanes = PoolShape<D>::lanes, kRowsAtOnce = PoolShape<D>::rows_at_once;
  static_assert(!kVt || (kFp8 && D == kVtRows && kRowsAtOnce == 16), "V^T: FP8, head dim 128");
  static_assert(!kCache || !kFp8, "a pooled cache: BF16");
  __shared__ float partial[2][kRowsAtOnce][D];
  __shared__ uint32_t vt_tile[kVt ? kVtRows * 32 : 1];
  const fp2_params &p = a.p;
  grid_dependents_launch(); /* the select starts on Q while the pool drains (dependent_launch.cuh) */
  if constexpr (kCache)
    if ((int)blockIdx.x >= pooled_ctas) {
      const int row = ((int)blockIdx.x - pooled_ctas) * kCachedWarps + threadIdx.x / 32;
      if (row < cached_rows) copy_cached_means<D>(a, row);
      return;
    }
  const int h = blockIdx.x % p.hkv, total_blocks = a.cu_blocks[a.batch];
  const int lane = threadIdx.x % kLanes, r0 = threadIdx.x / kLanes;
  int s, j;
  pooled_block<kCache>(a, blockIdx.x / p.hkv, s, j);
  const int gblock = a.cu_blocks[s] + j, lk = a.cu_k[s + 1] - a.cu_k[s];
  const int first = j * p.block, count = min(p.block, lk - first);
  float inverse[2], sum[2][8] = {};
#pragma unroll
  for (int x = 0; x < 2; x++) inverse[x] = e4m3_inverse(kFp8 ? a.scales[1 + x] : 1.0f);
  /* Four rows of K and the same four of V: eight loads in flight before any code is stored
     (the stores could alias them). */
  for (int r = r0; r < count; r += 4 * kRowsAtOnce) {
    uint4 raw[2][4] = {};
    size_t at[4]; /* the rows' offsets in the contiguous operands, the same in K and V */
#pragma unroll
    for (int u = 0; u < 4; u++) {
      const int t = first + r + u * kRowsAtOnce;
      at[u] = ((size_t)(a.cu_k[s] + t) * p.hkv + h) * D + lane * 8;
      if (r + u * kRowsAtOnce >= count) continue; /* past the sequence: no row, no page */
      const size_t from =
          kPaged ? (page_row(a.table + (size_t)s * a.max_pages, a.page_shift, t) * p.hkv + h) * D + lane * 8 : at[u];
#pragma unroll
      for (int x = 0; x < 2; x++) raw[x][u] = *reinterpret_cast<const uint4 *>(a.x[x] + from);
    }
#pragma unroll
    for (int x = 0; x < 2; x++)
#pragma unroll
      for (int u = 0; u < 4; u++) {
        if (r + u * kRowsAtOnce >= count) break;
        if constexpr (kFp8) {
          const uint2 c = e4m3_codes8(raw[x][u], inverse[x]);
          if (!kVt || a.out[x]) *reinterpret_cast<uint2 *>(static_cast<uint8_t *>(a.out[x]) + at[u]) = c;
          if (kVt && x == 1) {
            const int row = r + u * kRowsAtOnce;
            *reinterpret_cast<uint2 *>(&vt_tile[vt_word(row, 2 * lane)]) = c;
          }
#pragma unroll
          for (int e = 0; e < 8; e++) sum[x][e] += e4m3_value((uint8_t)((e < 4 ? c.x : c.y) >> (8 * (e % 4))));
        } else {
          if (kPaged && a.out[x]) /* small pages: the attention's copy */
            *reinterpret_cast<uint4 *>(static_cast<__nv_bfloat16 *>(a.out[x]) + at[u]) = raw[x][u];
          const __nv_bfloat16 *b = reinterpret_cast<const __nv_bfloat16 *>(&raw[x][u]);
#pragma unroll
          for (int e = 0; e < 8; e++) sum[x][e] += __bfloat162float(b[e]);
        }
      }
  }
#pragma unroll
  for (int x = 0; x < 2; x++)
#pragma unroll
    for (int e = 0; e < 8; e++) partial[x][r0][lane * 8 + e] = sum[x][e];
  if constexpr (kVt) /* the rows past a partial block: zero in V^T */
    for (int row = r0; row < kVtRows; row += kRowsAtOnce)
      if (row >= count) *reinterpret_cast<uint2 *>(&vt_tile[vt_word(row, 2 * lane)]) = make_uint2(0, 0);
  __syncthreads();
  const size_t vt_pitch = (size_t)kVtRows * total_blocks;
  if constexpr (kVt) store_vt_block(vt_tile, a.vt, vt_pitch, h, gblock);
  /* Threads 0 .. D - 1: K's dimension d; D .. 2 D - 1: V's. */
  if (threadIdx.x >= 2 * D) return;
  const int x = threadIdx.x / D, d = threadIdx.x % D;
  float total = 0.0f;
#pragma unroll
  for (int r = 0; r < kRowsAtOnce; r++) total += partial[x][r][d];
  const float scale = kFp8 ? a.scales[1 + x] : 1.0f, mean = total * scale / (float)count;
  const size_t out = ((size_t)h * total_blocks + gblock) * D + d;
  a.mean[x][out] = mean;
  if constexpr (kFp8) {
    const uint8_t code = e4m3_code(mean, e4m3_inverse(scale));
    static_cast<uint8_t *>(a.bar[x])[out] = code;
    if (kVt && x == 1) { /* V̄^T: this mean's column, and zeros past the sequence's last block */
      const int total_chunks = a.cu_chunks[a.batch], nblocks = a.cu_blocks[s + 1] - a.cu_blocks[s];
      uint8_t *row = a.vt + (size_t)p.hkv * kVtRows * vt_pitch +
                     ((size_t)h * kVtRows + d) * ((size_t)kVtRows * total_chunks) +
                     (size_t)kVtRows * (a.cu_chunks[s] + j / kVtRows);
      auto column = [](int m) { return m / 32 * 32 + fp8_key_slot(m % 32); }; /* mean m of a chunk */
      row[column(j % kVtRows)] = code;
      if (j == nblocks - 1)
        for (int m = j % kVtRows + 1; m < kVtRows; m++) row[column(m)] = 0;
    }
  } else {
    static_cast<__nv_bfloat16 *>(a.bar[x])[out] = __float2bfloat16_rn(mean);
    if constexpr (kCache) /* a full block: kept for the later chunks */
      if (count == p.block) {
        const int row = a.cache_table[(size_t)s * a.cache_max_blocks + j];
        a.cache_mean[x][((size_t)row * p.hkv + h) * D + d] = mean;
      }
  }
}

template <int D, bool kPaged>
void launch(const PoolArgs &a, const fp2_plan *plan, cudaStream_t stream) {
  const int ctas = plan->total_blocks * a.p.hkv;
  if constexpr (D == kVtRows)
    if (a.vt) {
      pool_kernel<D, true, true, kPaged, false><<<ctas, kPoolThreads, 0, stream>>>(a, ctas, 0);
      return;
    }
  if (a.p.dtype == FP2_FP8) {
    pool_kernel<D, true, false, kPaged, false><<<ctas, kPoolThreads, 0, stream>>>(a, ctas, 0);
  } else if (!a.cache_table) {
    pool_kernel<D, false, false, kPaged, false><<<ctas, kPoolThreads, 0, stream>>>(a, ctas, 0);
  } else {
    const int pooled = (plan->total_blocks - plan->prefix_blocks) * a.p.hkv, rows = plan->prefix_blocks * a.p.hkv;
    pool_kernel<D, false, false, kPaged, true>
        <<<pooled + (rows + kCachedWarps - 1) / kCachedWarps, kPoolThreads, 0, stream>>>(a, pooled, rows);
  }
}

}  // namespace
}  // namespace fp2

extern "C" fp2_status fp2_pool(const fp2_params *p, const fp2_plan *plan, const void *k, const void *v,
                               const fp2_kv_pages *pages, const fp2_pooled_cache *cache, const float *scales,
                               float *k_mean, float *v_mean, void *kbar, void *vbar, void *k_out, void *v_out,
                               uint8_t *vt, cudaStream_t stream) {
  using namespace fp2;
  const int fp8 = p->dtype == FP2_FP8;
  fp2_status st;
  if ((st = fp2_check_pages(p, pages)) != FP2_OK || (st = fp2_check_pooled_cache(p, plan, cache)) != FP2_OK)
    return st;
  if (p->dim != 128 && p->dim != 64)
    return fp2_fail(FP2_ERR_UNSUPPORTED, "fp2_pool: the gpu kernels take head dim 64 or 128 (got %d)", p->dim);
  if (fp8 && (!scales || !k_out || (!v_out && !vt)))
    return fp2_fail(FP2_ERR_ARG, "fp2_pool: FP8 needs the scales, k_out, and v_out or vt");
  if (!fp8 && (fp2_pages_copied(p) ? !k_out || !v_out : k_out || v_out))
    return fp2_fail(FP2_ERR_ARG,
                    "fp2_pool: BF16 takes k_out and v_out with pages of fewer than %d keys, and only then",
                    FP2_ATTEND_PAGE_MIN);
  if (vt && (!fp8 || p->dim != kVtRows || p->block != kVtRows))
    return fp2_fail(FP2_ERR_UNSUPPORTED, "fp2_pool: transposed values are FP8 with head dim and block 128 only");
  const unsigned out_align = fp8 ? 8 : 16;
  if ((uintptr_t)k % 16 != 0 || (uintptr_t)v % 16 != 0 || (uintptr_t)k_out % out_align != 0 ||
      (uintptr_t)v_out % out_align != 0 || (uintptr_t)vt % 16 != 0 ||
      (cache && ((uintptr_t)cache->k_mean % 16 != 0 || (uintptr_t)cache->v_mean % 16 != 0)))
    return fp2_fail(FP2_ERR_ARG,
                    "fp2_pool: k, v, vt and a pooled cache's means must be 16-byte aligned, k_out and v_out %u-byte "
                    "aligned",
                    out_align);
  if (plan->total_blocks == 0) return FP2_OK;
  const PoolArgs a = {*p,
                      plan->cu_q,
                      plan->cu_k,
                      plan->cu_blocks,
                      plan->cu_chunks,
                      plan->batch,
                      {static_cast<const __nv_bfloat16 *>(k), static_cast<const __nv_bfloat16 *>(v)},
                      pages ? pages->table : nullptr,
                      pages ? pages->max_pages : 0,
                      pages ? page_shift(p->page_size) : 0,
                      scales,
                      {k_mean, v_mean},
                      {kbar, vbar},
                      {k_out, v_out},
                      vt,
                      {cache ? cache->k_mean : nullptr, cache ? cache->v_mean : nullptr},
                      cache ? cache->table : nullptr,
                      cache ? cache->max_blocks : 0};
  if (p->dim == 128)
    pages ? launch<128, true>(a, plan, stream) : launch<128, false>(a, plan, stream);
  else
    pages ? launch<64, true>(a, plan, stream) : launch<64, false>(a, plan, stream);
  FP2_LAUNCHED("fp2_pool");
  return FP2_OK;
}
