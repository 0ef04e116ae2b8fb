/* The shared-memory tile of the Hopper kernels and the wgmma descriptors that read it. A
   tile is 128 rows x 128 bf16 columns stored as two 64-column halves, each 128 rows of 128
   bytes, written by TMA with the 128-byte swizzle (16-byte chunk c of row r at chunk
   c ^ (r % 8)); halves and 8-row groups start on 1024-byte boundaries, as the swizzle
   pattern and the descriptors require. */
#ifndef FP2_SM90_TILE_CUH
#define FP2_SM90_TILE_CUH

#include "ptx_sm90.cuh"

namespace fp2 {

constexpr int kTileRowsSm90 = 128;                 /* rows of a tile: queries, keys or pooled vectors */
constexpr int kHalfBytes = kTileRowsSm90 * 128;    /* one 64-column half */
constexpr int kTileBytes = 2 * kHalfBytes;

/* What the precision changes in an operand: its element bytes, its 64-column halves of 128
   bytes per row (bf16: two; e4m3: one half holds all 128 columns) and the k of one wgmma
   product step. */
template <bool kFp8>
struct Sm90Operand {
  static constexpr int elem = kFp8 ? 1 : 2;
  static constexpr int halves = kFp8 ? 1 : 2;
  static constexpr int k_step = kFp8 ? 32 : 16;
};

/* The first 1024-byte boundary at or after p in shared memory (launches add the slack). */
__device__ __forceinline__ unsigned char *align_1024(unsigned char *p) {
  return p + (1024 - smem_addr(p) % 1024) % 1024;
}

/* A whole tile by TMA, its two 64-column halves, completing on bar (which expects
   kTileBytes): from a 2-D map at row, or a 3-D map at (c1, c2). */
__device__ __forceinline__ void tma_load_tile_2d(unsigned char *tile, const void *map, int row, uint64_t *bar) {
  tma_load_2d(tile, map, 0, row, bar);
  tma_load_2d(tile + kHalfBytes, map, 64, row, bar);
}
__device__ __forceinline__ void tma_load_tile_3d(unsigned char *tile, const void *map, int c1, int c2,
                                                 uint64_t *bar) {
  tma_load_3d(tile, map, 0, c1, c2, bar);
  tma_load_3d(tile + kHalfBytes, map, 64, c1, c2, bar);
}

/* Rows r0 .. r0 + n - 1 of a tile of rows of kRowBytes (128 or 256) by cp.async, into the
   layout TMA writes (16-byte chunk j of row r at j ^ (r % 8) within its half): row r from
   row_ptr(r) (global) when r < valid, zeros otherwise (naming `base`, reading nothing). The
   CTA's threads `first` .. `first` + kThreads - 1 take part; the caller commits and waits.
   With an L2 policy (l2_evict_first_policy) the rows' reads carry it. */
template <int kRowBytes, int kThreads, typename RowPtr>
__device__ __forceinline__ void cp_async_rows_sw128(unsigned char *tile, int r0, int n, int valid, RowPtr row_ptr,
                                                    const void *base, int first, const uint64_t *l2_policy = nullptr) {
  constexpr int kChunks = kRowBytes / 16;
  for (int i = threadIdx.x - first; i < n * kChunks; i += kThreads) {
    const int r = r0 + i / kChunks, chunk = i % kChunks;
    unsigned char *dst = tile + (chunk / 8) * kHalfBytes + r * 128 + ((chunk % 8) ^ (r % 8)) * 16;
    if (r >= valid) {
      cp_async_16(dst, base, 0);
      continue;
    }
    const unsigned char *src = static_cast<const unsigned char *>(row_ptr(r)) + chunk * 16;
    if (l2_policy)
      cp_async_16_hinted(dst, src, 16, *l2_policy);
    else
      cp_async_16(dst, src, 16);
  }
}

/* A descriptor moved on by bytes (a multiple of 16): its start field holds the shared
   address / 16, and shared addresses stay below 2^18, so that no carry leaves the field. A
   tile's slices are then one addition each on the tile's descriptor, which the compiler
   can compute once; with the address masked per slice it could not. */
__device__ __forceinline__ uint64_t desc_advance(uint64_t desc, uint32_t bytes) { return desc + (bytes >> 4); }

/* The 16-column slice k (0..7) of the 64 rows starting at row0 (a multiple of 8) of a tile
   read K-major, rows being M or N and columns the reduction: Q and K in S = Q K^T. A tile
   of kRows rows has its 64-column halves kRows * 128 bytes apart. */
template <int kRows = kTileRowsSm90>
__device__ __forceinline__ uint64_t desc_kmajor(const unsigned char *tile, int row0, int k) {
  return desc_advance(smem_desc_sw128(tile, 0, 1024), (k / 4) * kRows * 128 + row0 * 128 + (k % 4) * 32);
}

/* Rows 16k .. 16k + 15 (the reduction) of a tile read MN-major, all 128 columns as N: V in
   O = P V. Along N the two halves are kHalfBytes apart, along K 8-row groups 1024 bytes. */
__device__ __forceinline__ uint64_t desc_mnmajor(const unsigned char *tile, int k) {
  return desc_advance(smem_desc_sw128(tile, kHalfBytes, 1024), k * 16 * 128);
}

}  // namespace fp2

#endif
