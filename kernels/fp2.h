/* fp2: block-sparse prefill attention (FlashPrefill V2) — the library's public C API.

   Definitions are those of DESIGN.md section 3; this header also holds the tile
   geometry that the CPU reference and the kernels share, as host/device inline
   functions, so that "which rows and blocks does tile T cover" has one answer. */
#ifndef FP2_H
#define FP2_H

#include <stddef.h>
#include <stdint.h>

#ifdef __CUDACC__
#define FP2_HD __host__ __device__ __forceinline__
#else
#define FP2_HD static inline
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { FP2_BF16 = 0, FP2_FP8 = 1 } fp2_dtype;

/* Every library call returns a status; on failure fp2_error_message() names the call
   and the cause (for CUDA errors: the runtime's own text and the operation). */
typedef enum {
  FP2_OK = 0,
  FP2_ERR_ARG = 1,         /* an argument the library cannot accept */
  FP2_ERR_CUDA = 2,        /* a CUDA runtime call or kernel launch failed */
  FP2_ERR_UNSUPPORTED = 3  /* valid, but not implemented for this shape or GPU */
} fp2_status;

const char *fp2_error_message(void);

/* Shape and selection parameters of one problem. */
typedef struct fp2_params {
  int hq, hkv, dim;  /* query heads, KV heads (hq % hkv == 0), head dim */
  int block;         /* B: key block size in tokens */
  int qtile;         /* M: packed query rows per tile */
  float alpha;       /* keep a scored block when E >= alpha * max E */
  int sink;          /* blocks J < sink always kept (within causality) */
  int window;        /* blocks first_k - window + 1 .. last_k always kept */
  int recent;        /* the last `recent` tiles of a sequence keep every causal block */
  int correction;    /* 1: unselected fully visible blocks enter as pooled virtual keys */
  fp2_dtype dtype;
} fp2_params;

/* One query tile of one sequence and KV head. Queries are the last lq of lk positions
   (lq == lk for a whole prefill); positions below are absolute key positions. */
typedef struct fp2_tile {
  int row_begin, row_end; /* packed rows [row_begin, row_end): row r = pos * g + head */
  int p_first, p_last;    /* positions of the first and last row */
  int first_k, last_k;    /* key blocks of those positions; last_k is the causal limit */
  int nscored;            /* blocks J < nscored are fully visible to the last row */
  int nfull;              /* blocks J < nfull are fully visible to every row */
} fp2_tile;

FP2_HD int fp2_cdiv(int a, int b) { return (a + b - 1) / b; }

FP2_HD int fp2_group(const fp2_params *p) { return p->hq / p->hkv; }

/* Query tiles per KV head of a sequence with lq queries. */
FP2_HD int fp2_num_tiles(const fp2_params *p, int lq) { return fp2_cdiv(lq * fp2_group(p), p->qtile); }

/* Key blocks of a sequence with lk keys (the last one may be partial). */
FP2_HD int fp2_num_blocks(const fp2_params *p, int lk) { return fp2_cdiv(lk, p->block); }

FP2_HD fp2_tile fp2_tile_at(const fp2_params *p, int lq, int lk, int t) {
  fp2_tile tl;
  int g = fp2_group(p);
  int offset = lk - lq;
  tl.row_begin = t * p->qtile;
  tl.row_end = (t + 1) * p->qtile < lq * g ? (t + 1) * p->qtile : lq * g;
  tl.p_first = offset + tl.row_begin / g;
  tl.p_last = offset + (tl.row_end - 1) / g;
  tl.first_k = tl.p_first / p->block;
  tl.last_k = tl.p_last / p->block;
  tl.nscored = (tl.p_last + 1) / p->block;
  tl.nfull = (tl.p_first + 1) / p->block;
  return tl;
}

/* Blocks kept whatever the scores say: sink, local window, and the sequence's tail tiles. */
FP2_HD int fp2_always_kept(const fp2_params *p, const fp2_tile *tl, int ntiles, int t, int j) {
  if (j > tl->last_k) return 0;
  return j < p->sink || j >= tl->first_k - p->window + 1 || t >= ntiles - p->recent;
}

#ifdef __cplusplus
}
#endif

#endif
