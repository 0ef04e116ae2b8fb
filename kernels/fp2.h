/* fp2: block-sparse prefill attention (FlashPrefill V2) — the library's public C API.

   Definitions are those of kernels/README.md; this header also holds the tile
   geometry that the CPU reference and the kernels share, as host/device inline
   functions, so that "which rows and blocks does tile T cover" has one answer. */
#ifndef FP2_H
#define FP2_H

#include <cuda_runtime_api.h>
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

/* The kernels fp2_select and fp2_attend run: the portable ones (mma.sync, sm_80+, every
   shape and precision) or the Hopper ones (sm_90a: TMA, wgmma; attention with warp
   specialisation; BF16 and FP8, head dim 128, block 128, query tile 128). */
typedef enum { FP2_KERNEL_PORTABLE = 0, FP2_KERNEL_SM90 = 1 } fp2_kernel;

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
  fp2_kernel kernel; /* selection and attention kernels (pooling has one) */
  int page_size;     /* K and V in pages of this many keys (fp2_kv_pages: 16, 64, 128 or 256); 0: contiguous */
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

/* The index segment of tile t of KV head h in a sequence whose tiles start at tile0 (a prefix
   over the batch) and number ntiles: segments go by sequence, then KV head, then tile. */
FP2_HD int fp2_segment(const fp2_params *p, int tile0, int ntiles, int h, int t) {
  return p->hkv * tile0 + h * ntiles + t;
}

/* The tile of rows [row_begin, row_end) whose first and last rows sit at positions p_first
   and p_last: its key blocks. fp2_tile_at's second half, for kernels that divide the rows by g
   their own way (select_tile.cuh). */
FP2_HD fp2_tile fp2_tile_of_rows(const fp2_params *p, int row_begin, int row_end, int p_first, int p_last) {
  fp2_tile tl;
  tl.row_begin = row_begin;
  tl.row_end = row_end;
  tl.p_first = p_first;
  tl.p_last = p_last;
  tl.first_k = p_first / p->block;
  tl.last_k = p_last / p->block;
  tl.nscored = (p_last + 1) / p->block;
  tl.nfull = (p_first + 1) / p->block;
  return tl;
}

/* The end of tile t's rows [t M, min((t + 1) M, rows)) in a sequence of `rows` packed rows
   (lq g). */
FP2_HD int fp2_tile_row_end(const fp2_params *p, int rows, int t) {
  return (t + 1) * p->qtile < rows ? (t + 1) * p->qtile : rows;
}

FP2_HD fp2_tile fp2_tile_at(const fp2_params *p, int lq, int lk, int t) {
  const int g = fp2_group(p), offset = lk - lq, row_begin = t * p->qtile, row_end = fp2_tile_row_end(p, lq * g, t);
  return fp2_tile_of_rows(p, row_begin, row_end, offset + row_begin / g, offset + (row_end - 1) / g);
}

/* Blocks kept whatever the scores say: sink, local window, and the sequence's tail tiles. */
FP2_HD int fp2_always_kept(const fp2_params *p, const fp2_tile *tl, int ntiles, int t, int j) {
  if (j > tl->last_k) return 0;
  return j < p->sink || j >= tl->first_k - p->window + 1 || t >= ntiles - p->recent;
}

/* ---- GPU API: pool -> select -> attend over a batch of sequences. ----
   Q is packed [total_q, hq, dim], K and V [total_k, hkv, dim] (positions first, sequences
   back to back); BF16 operands are bf16, FP8 operands e4m3 codes with per-tensor scales
   (a device float[3]: q, k, v; NULL for BF16). Pooled vectors are [hkv, total_blocks, dim].
   Every call is asynchronous on `stream` and allocates nothing. */

/* Pooled vectors per correction chunk, the Hopper kernel's correction item (fp2_plan's
   cu_chunks). */
#define FP2_POOLED_CHUNK 128

/* Device metadata of a batch, built once per batch from its host-side lengths. */
typedef struct fp2_plan {
  int batch;
  int total_q, total_k;
  int total_tiles;       /* query tiles per KV head, over the batch */
  int total_blocks;      /* key blocks over the batch */
  int nseg;              /* index segments (sequence, KV head, tile): hkv * total_tiles */
  int max_blocks;        /* most key blocks of one sequence */
  int capacity;          /* causal blocks summed over segments: the most the index can hold */
  int total_chunks;      /* chunks of FP2_POOLED_CHUNK pooled vectors, each sequence's rounded up */
  int prefix_blocks;     /* key blocks wholly inside their sequence's first lk - lq keys (those
                            before its queries): what a pooled cache holds */
  int *cu_q, *cu_k;          /* device [batch+1]: first row of each sequence */
  int *cu_tiles, *cu_blocks; /* device [batch+1]: prefix of tiles and of key blocks */
  int *cu_chunks;        /* device [batch+1]: prefix of pooled chunks */
  int *tile_seq;         /* device [total_tiles]: the sequence of each tile */
  int *seg_base;         /* device [nseg+1]: where each segment's slice of the scratch index starts */
} fp2_plan;

/* Refuses batches whose index would not fit 32-bit offsets. Synchronous: the metadata is on
   the device when it returns, for use on any stream (not inside a stream capture). */
fp2_status fp2_plan_create(const fp2_params *p, int batch, const int *lq, const int *lk, fp2_plan *plan);
void fp2_plan_destroy(fp2_plan *plan);

/* The plan's prefix sums on the host, each [batch + 1]: rows of Q and of K/V, query tiles,
   key blocks and pooled chunks, for a caller that lays out host tensors as the plan does.
   Lengths are not checked here (fp2_plan_create does); FP2_ERR_ARG past 2^31. */
fp2_status fp2_plan_prefixes(const fp2_params *p, int batch, const int *lq, const int *lk, int *cu_q, int *cu_k,
                             int *cu_tiles, int *cu_blocks, int *cu_chunks);

/* K and V as a serving engine's page cache (vLLM's and FlashInfer's NHD layout): bf16 pages
   [num_pages, page_size, hkv, dim], key t of request b at row t % page_size of page
   table[b * max_pages + t / page_size] (page_size: fp2_params). The table must name a page
   for each of a request's keys; pages it does not name are never read. The pool reads the
   pages. BF16 pages of FP2_ATTEND_PAGE_MIN keys or more the attention reads too (the sm90
   kernel by one TMA box a page, 128 keys at most); smaller ones the pool copies contiguous for
   it, into the workspace (k16, v16). FP8's pool writes the codes contiguous, as it does from
   contiguous K and V, and the attention reads those. */
#define FP2_ATTEND_PAGE_MIN 64 /* kernels/NOTES.md (H100): a TMA box a page of 16 keys cost the
                                  sm90 attention 25 % at 128K, the copy 1-4 % of the pass; pages
                                  of 64 cost 5-12 % of the attention and save 2 nk bytes */

/* Whether the pool copies p's pages contiguous for the attention (above). */
FP2_HD int fp2_pages_copied(const fp2_params *p) {
  return p->dtype == FP2_BF16 && p->page_size > 0 && p->page_size < FP2_ATTEND_PAGE_MIN;
}

typedef struct fp2_kv_pages {
  const int *table; /* device [batch, max_pages] */
  int max_pages;
  int num_pages; /* pages that k and v hold: the extent of the sm90 kernel's TMA maps */
} fp2_kv_pages;

/* FP2_OK where p->page_size is 0 (pages NULL) or a page size the kernels take with a table
   (pages non-NULL, max_pages >= 1, num_pages >= 1 and num_pages * page_size rows within 2^31,
   the TMA's coordinates); else FP2_ERR_ARG with the reason. Needs no GPU. */
fp2_status fp2_check_pages(const fp2_params *p, const fp2_kv_pages *pages);

/* Pooled means kept across the chunks of a prefill: the means of a request's full key blocks
   do not change once its keys are written, so a chunk need not pool its prefix again. Row r
   of k_mean and of v_mean is [hkv, dim] f32; key block j of request b lies in row
   table[b * max_blocks + j]. A pass reads the blocks wholly inside a request's first lk - lq
   keys (those before its queries: the earlier chunks, run with this cache, wrote them) and
   pools the others, writing each full one it pools. BF16 only, K and V contiguous or in pages
   of FP2_ATTEND_PAGE_MIN keys or more: FP8 re-converts the prefix under the chunk's
   per-tensor scales, and smaller pages are copied whole for the attention, so both read the
   prefix anyway. */
typedef struct fp2_pooled_cache {
  float *k_mean, *v_mean; /* device [rows, hkv, dim], 16-byte aligned */
  const int *table;       /* device [batch, max_blocks] */
  int max_blocks;         /* at least plan->max_blocks */
} fp2_pooled_cache;

/* FP2_OK where cache is NULL, or one p (its dtype and page size) and plan allow (above);
   else FP2_ERR_ARG or FP2_ERR_UNSUPPORTED with the reason. Needs no GPU. */
fp2_status fp2_check_pooled_cache(const fp2_params *p, const fp2_plan *plan, const fp2_pooled_cache *cache);

/* FP8 (DESIGN.md section 3). The per-tensor scales of q (nq values), k and v (nk each),
   bf16, 16-byte aligned: scales[t] = amax / 448 (1 when amax is 0), from an amax pass over
   each. amax_scratch: three device words. */
fp2_status fp2_scales_e4m3(const void *q, size_t nq, const void *k, const void *v, size_t nk, float *scales,
                           unsigned *amax_scratch, cudaStream_t stream);
/* The same with k and v in pages (fp2_kv_pages; p and plan give their keys): only the keys
   the table names enter the amax. */
fp2_status fp2_scales_e4m3_paged(const fp2_params *p, const fp2_plan *plan, const void *q, const void *k,
                                 const void *v, const fp2_kv_pages *pages, float *scales, unsigned *amax_scratch,
                                 cudaStream_t stream);
/* x (bf16, n values) -> e4m3 codes of x * (1 / *scale), the reciprocal correctly rounded and
   the product rounded once (*scale a device float, as fp2_scales_e4m3 writes it). x 16-byte
   aligned, out 8-byte aligned (as cudaMalloc gives). fp2_pool writes the codes of K and V
   itself: this converts Q. */
fp2_status fp2_convert_e4m3(const void *x, size_t n, const float *scale, uint8_t *out, cudaStream_t stream);

/* Pooled means (f32) and the pooled operands the later stages use: bf16 of the mean, or the
   e4m3 code of the mean (as fp2_convert_e4m3's) with the tensor's own scale. k and v are the
   bf16 inputs, contiguous (pages NULL) or in pages (fp2_kv_pages). FP8 converts K and V on the
   way (scales[1], scales[2] from fp2_scales_e4m3), writes their codes contiguous to k_out and
   v_out (8-byte aligned), the attention's operands, and pools the codes' values. BF16 in pages
   of fewer than FP2_ATTEND_PAGE_MIN keys copies K and V contiguous there (16-byte aligned),
   for the attention; other BF16 takes k_out and v_out NULL. vt (FP8 with head dim and block
   128, else NULL; 16-byte aligned): V's codes and V̄'s also written transposed, as the sm90
   kernel reads them, into fp2_attend's workspace, which then takes v = NULL; v_out may then be
   NULL, and V's codes go only there. cache (NULL: none; fp2_pooled_cache): the blocks of each
   request's prefix are read from it, not pooled, and the full blocks pooled are written to it. */
fp2_status fp2_pool(const fp2_params *p, const fp2_plan *plan, const void *k, const void *v,
                    const fp2_kv_pages *pages, const fp2_pooled_cache *cache, const float *scales, float *k_mean,
                    float *v_mean, void *kbar, void *vbar, void *k_out, void *v_out, uint8_t *vt,
                    cudaStream_t stream);

/* The block index: per segment, ascending kept blocks. scratch holds the scored blocks'
   log2 energies, each segment's at seg_base, and then its kept blocks; counts, offsets and
   indices form the CSR. */
typedef struct fp2_index {
  int *scratch; /* device [capacity] */
  int *counts;  /* device [nseg] */
  int *offsets; /* device [nseg+1] */
  int *indices; /* device [capacity]; offsets[nseg] used */
} fp2_index;

size_t fp2_select_workspace_bytes(const fp2_plan *plan);

/* Fused scoring (one pass over the pooled keys), then the max-based threshold, the
   always-kept blocks and the CSR in two light passes; p->kernel picks the scoring kernel
   (FP2_KERNEL_SM90: wgmma, head dim 128, Hopper only). q: the operand (bf16 Q, or FP8's
   codes) with q8 NULL; or FP8 with q8 (8-byte aligned): bf16 Q (16-byte aligned), whose
   codes with scales[0] (as fp2_convert_e4m3 makes them) are written to q8 on the way: the
   sm90 kernel converts each tile as it stages it, the portable one runs the convert pass
   first.
   Precision: scores from the operands as given (bf16 Q and K̄, or e4m3 codes) on tensor
   cores: bf16 (both kernels) and FP8 on the portable one (codes exact in f16) give exact
   products summed in f32; FP8 on sm90 is e4m3 wgmma, whose accumulator keeps about 14 bits.
   Energies are sums in f32 of ex2.approx (relative error near 2^-22) against a per-key
   reference (sm90: the key's score on the tile's first row, or a maximum of its scores
   over half the tile's rows, the second half's part rescaled onto the first's, where that
   would overflow or a row does not count the key) or per-group maxima (portable), kept as log2
   values; a block is kept when its log2 energy is >= the tile's largest + log2(alpha).
   check --backend gpu holds the index to the oracle on the same rounded K̄ with flips
   allowed within 1e-4 (BF16) or 5e-3 (FP8) of the threshold. */
fp2_status fp2_select(const fp2_params *p, const fp2_plan *plan, const void *q, uint8_t *q8, const void *kbar,
                      const float *scales, fp2_index *index, void *workspace, size_t workspace_bytes,
                      cudaStream_t stream);

/* Whether the sm90 kernels take the shape of p (head dim, block, query tile; the
   GPU is checked at launch): FP2_OK, or FP2_ERR_UNSUPPORTED with the reason in
   fp2_error_message(). Needs no GPU. */
fp2_status fp2_sm90_supports_shape(const fp2_params *p);

/* Bytes of workspace fp2_attend needs for p and plan: FP8 on the sm90 kernel transposes the
   values into it first (its products read them K-major), unless v is NULL: then they are
   there already (fp2_pool's vt); 0 otherwise. */
size_t fp2_attend_workspace_bytes(const fp2_params *p, const fp2_plan *plan);

/* Block-sparse attention over a CSR index (offsets [nseg+1], indices), with mean correction
   when p->correction; o is bf16 [total_q, hq, dim]. The dense pass is the full causal index.
   pages (BF16 only; NULL: contiguous): k and v are pages (fp2_kv_pages), read through the
   table at any page size (fp2_forward gives pages of fewer than FP2_ATTEND_PAGE_MIN keys the
   pool's contiguous copy instead); FP8's operands are the pool's contiguous codes. FP8 on the
   sm90 kernel: v NULL says the workspace already holds the transposed values (fp2_pool's vt). */
fp2_status fp2_attend(const fp2_params *p, const fp2_plan *plan, const void *q, const void *k, const void *v,
                      const fp2_kv_pages *pages, const void *kbar, const void *vbar, const float *scales,
                      const int *offsets, const int *indices, void *o, void *workspace, size_t workspace_bytes,
                      cudaStream_t stream);

/* ---- The whole pass: fp2_forward (forward.c). ----
   Quantise (FP8) -> pool -> select -> attend, each intermediate in one caller-given
   workspace. It allocates nothing, never synchronises with the host and reads no device
   memory on the host, so that it can be captured in a CUDA graph; a kernel's first launch
   may load its module, so run it once before capturing. */

/* The stages of a pass, in order. */
typedef enum { FP2_STAGE_QUANTIZE, FP2_STAGE_POOL, FP2_STAGE_SELECT, FP2_STAGE_ATTEND, FP2_STAGES } fp2_stage;

/* Events fp2_forward records on its stream for timing: at[s] before stage s, at[FP2_STAGES]
   after the last, so that at[s] .. at[s + 1] is stage s (empty when the stage does not run).
   An entry left NULL is not recorded: an event between two kernels may keep the second from
   starting early under the first (dependent_launch.cuh), so a range timed whole leaves its
   inner entries NULL. */
typedef struct fp2_stage_events {
  cudaEvent_t at[FP2_STAGES + 1];
} fp2_stage_events;

/* The tensors of one pass. A request's queries are the last lq(b) of its lk(b) positions
   (the plan's lengths): lq < lk is a chunk of a prefill against the keys before it. */
typedef struct fp2_inputs {
  const void *q;        /* [total_q, hq, dim] bf16, requests at plan->cu_q; 16-byte aligned */
  const void *k, *v;    /* [total_k, hkv, dim] bf16, requests at plan->cu_k; 16-byte aligned */
  void *o;              /* [total_q, hq, dim] bf16 output; NULL: stop after the index */
  const int *offsets;   /* a CSR index ([nseg + 1], then block ids) to attend over instead of */
  const int *indices;   /* selecting one; both NULL: select */
  const fp2_stage_events *events; /* NULL: none */
  const fp2_kv_pages *pages;      /* NULL: k and v contiguous; else k and v are pages (p->page_size) */
  const fp2_pooled_cache *pooled; /* NULL: every key block is pooled; else the means kept across chunks */
} fp2_inputs;

/* Where each intermediate lies in a workspace (fp2_workspace_map): fp2_forward writes them,
   and a caller may read the index, the scales and the pooled vectors of the last pass there. */
typedef struct fp2_workspace {
  uint8_t *q8, *k8, *v8;  /* FP8: e4m3 codes of q, k, v; NULL for BF16 */
  void *k16, *v16;        /* BF16 in pages of fewer than FP2_ATTEND_PAGE_MIN keys: K and V
                             contiguous, as the pool copies them for the attention; else NULL */
  float *scales;          /* FP8: [3] dequantisation scales of q, k, v; NULL for BF16 */
  unsigned *amax;         /* FP8: [3] the amax pass's scratch; NULL for BF16 */
  float *k_mean, *v_mean; /* [hkv, total_blocks, dim] f32 */
  void *kbar, *vbar;      /* [hkv, total_blocks, dim] bf16, or e4m3 codes for FP8 */
  fp2_index index;        /* the selected index (not written when the inputs give one) */
  void *select_ws;        /* fp2_select's workspace */
  size_t select_ws_bytes;
  void *attend_ws;        /* fp2_attend's; NULL when it needs none */
  size_t attend_ws_bytes;
} fp2_workspace;

/* Bytes of workspace fp2_forward needs for p and plan. */
size_t fp2_workspace_bytes(const fp2_params *p, const fp2_plan *plan);

/* The intermediates' places in `workspace` (256-byte aligned, as cudaMalloc gives, and at
   least fp2_workspace_bytes long): each region starts on a 256-byte boundary. */
fp2_status fp2_workspace_map(const fp2_params *p, const fp2_plan *plan, void *workspace, size_t workspace_bytes,
                             fp2_workspace *w);

/* One pass over the batch of plan, asynchronous on stream. Every stage's status is returned
   as it failed, its call named in fp2_error_message(). */
fp2_status fp2_forward(const fp2_params *p, const fp2_plan *plan, const fp2_inputs *in, void *workspace,
                       size_t workspace_bytes, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
