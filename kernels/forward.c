/* fp2_forward, v2: the whole pass — quantise (FP8), pool, select, attend — as the stage calls
   of fp2.h in order, every intermediate carved out of one caller-given workspace. It exists
   so that a caller (the program's gpu backend, a serving engine, a CUDA graph) sizes one
   buffer and makes one call; the layout below is the only place that sizes the stages'
   buffers. Host work only: it launches through the stage calls, allocates nothing, never
   synchronises and reads no device memory.

   The workspace, regions in this order, each starting on a 256-byte boundary (sizes for
   nq = total_q·hq·dim, nk = total_k·hkv·dim, np = hkv·total_blocks·dim):
     q8, k8, v8       nq, nk, nk bytes     FP8 only: e4m3 codes (v8: none where the values
                                          go transposed to the attend workspace instead)
     k16, v16         2·nk bytes each      BF16 in pages the pool copies (fp2_pages_copied)
     scales           3 floats             FP8 only: q, k, v
     amax             3 words              FP8 only: the amax pass's scratch
     k_mean, v_mean   4·np bytes each      f32 means
     kbar, vbar       np bytes each (FP8), 2·np (BF16)
     index.scratch    4·capacity bytes
     index.counts     4·nseg
     index.offsets    4·(nseg + 1)
     index.indices    4·capacity
     select_ws        fp2_select_workspace_bytes
     attend_ws        fp2_attend_workspace_bytes (FP8 on sm90: the values transposed)
   A region of 0 bytes takes no room and maps to NULL. */
#include <nvtx3/nvToolsExt.h>
#include <stdint.h>

#include "cuda_check.h"
#include "fp2.h"

#define ALIGN 256 /* every region's start: more than the 16 bytes TMA and vector loads want, no shared line */

enum {
  R_Q8, R_K8, R_V8, R_K16, R_V16, R_SCALES, R_AMAX, R_K_MEAN, R_V_MEAN, R_KBAR, R_VBAR,
  R_SCRATCH, R_COUNTS, R_OFFSETS, R_INDICES, R_SELECT, R_ATTEND, R_COUNT
};

/* FP8 on the sm90 kernel: the pool writes V's codes transposed into the attend workspace,
   which the attention reads, and no row-major copy (134 MB at 128K, 32:8). */
static int values_transposed(const fp2_params *p) {
  return p->dtype == FP2_FP8 && p->kernel == FP2_KERNEL_SM90 && fp2_sm90_supports_shape(p) == FP2_OK;
}

/* Each region's offset in the workspace (at) and size (bytes); returns the total. */
static size_t layout(const fp2_params *p, const fp2_plan *plan, size_t at[R_COUNT], size_t bytes[R_COUNT]) {
  const int fp8 = p->dtype == FP2_FP8;
  const size_t nq = (size_t)plan->total_q * p->hq * p->dim, nk = (size_t)plan->total_k * p->hkv * p->dim;
  const size_t np = (size_t)p->hkv * plan->total_blocks * p->dim;
  bytes[R_Q8] = fp8 ? nq : 0;
  bytes[R_K8] = fp8 ? nk : 0;
  bytes[R_V8] = fp8 && !values_transposed(p) ? nk : 0;
  bytes[R_K16] = bytes[R_V16] = fp2_pages_copied(p) ? 2 * nk : 0;
  bytes[R_SCALES] = fp8 ? 3 * sizeof(float) : 0;
  bytes[R_AMAX] = fp8 ? 3 * sizeof(unsigned) : 0;
  bytes[R_K_MEAN] = bytes[R_V_MEAN] = np * sizeof(float);
  bytes[R_KBAR] = bytes[R_VBAR] = np * (fp8 ? 1 : 2);
  bytes[R_SCRATCH] = bytes[R_INDICES] = sizeof(int) * (size_t)plan->capacity;
  bytes[R_COUNTS] = sizeof(int) * (size_t)plan->nseg;
  bytes[R_OFFSETS] = sizeof(int) * ((size_t)plan->nseg + 1);
  bytes[R_SELECT] = fp2_select_workspace_bytes(plan);
  bytes[R_ATTEND] = fp2_attend_workspace_bytes(p, plan);
  size_t end = 0;
  for (int r = 0; r < R_COUNT; r++) {
    at[r] = end;
    end += (bytes[r] + ALIGN - 1) / ALIGN * ALIGN;
  }
  return end;
}

size_t fp2_workspace_bytes(const fp2_params *p, const fp2_plan *plan) {
  size_t at[R_COUNT], bytes[R_COUNT];
  return layout(p, plan, at, bytes);
}

fp2_status fp2_workspace_map(const fp2_params *p, const fp2_plan *plan, void *workspace, size_t workspace_bytes,
                             fp2_workspace *w) {
  size_t at[R_COUNT], bytes[R_COUNT];
  const size_t need = layout(p, plan, at, bytes);
  if (!workspace || (uintptr_t)workspace % ALIGN != 0)
    return fp2_fail(FP2_ERR_ARG, "fp2_workspace_map: the workspace must be %d-byte aligned", ALIGN);
  if (workspace_bytes < need)
    return fp2_fail(FP2_ERR_ARG, "fp2_workspace_map: workspace of %zu bytes is too small (%zu needed)",
                    workspace_bytes, need);
  void *ptr[R_COUNT];
  for (int r = 0; r < R_COUNT; r++) ptr[r] = bytes[r] ? (char *)workspace + at[r] : NULL;
  w->q8 = ptr[R_Q8];
  w->k8 = ptr[R_K8];
  w->v8 = ptr[R_V8];
  w->k16 = ptr[R_K16];
  w->v16 = ptr[R_V16];
  w->scales = ptr[R_SCALES];
  w->amax = ptr[R_AMAX];
  w->k_mean = ptr[R_K_MEAN];
  w->v_mean = ptr[R_V_MEAN];
  w->kbar = ptr[R_KBAR];
  w->vbar = ptr[R_VBAR];
  w->index.scratch = ptr[R_SCRATCH];
  w->index.counts = ptr[R_COUNTS];
  w->index.offsets = ptr[R_OFFSETS];
  w->index.indices = ptr[R_INDICES];
  w->select_ws = ptr[R_SELECT];
  w->select_ws_bytes = bytes[R_SELECT];
  w->attend_ws = ptr[R_ATTEND];
  w->attend_ws_bytes = bytes[R_ATTEND];
  return FP2_OK;
}

/* One pass's arguments, as the stages take them. */
typedef struct pass {
  const fp2_params *p;
  const fp2_plan *plan;
  const fp2_inputs *in;
  fp2_workspace w;
  const void *q, *k, *v;  /* the operands: the inputs (BF16) or their codes (FP8) */
  const fp2_kv_pages *pages; /* BF16 from pages the attention reads: the inputs'; else NULL */
  const float *scales;    /* NULL for BF16 */
  uint8_t *vt;            /* FP8 on the sm90 kernel: the pool writes the transposed values here
                             (the attend workspace), and the attend does not transpose them */
  const int *offsets, *indices;
  cudaStream_t stream;
} pass;

/* The stages, each a call of fp2.h (or a few), in pass order. FP8: the quantise stage finds
   the three scales; the pool converts K and V as it reads them, the select Q (the sm90
   kernel as it stages its tiles; kernels/NOTES.md), or the quantise stage where the caller
   gives the index and no select runs. */
static fp2_status quantize(pass *x) {
  const fp2_params *p = x->p;
  const size_t nq = (size_t)x->plan->total_q * p->hq * p->dim, nk = (size_t)x->plan->total_k * p->hkv * p->dim;
  fp2_status st;
  if (p->dtype != FP2_FP8) return FP2_OK;
  st = x->in->pages ? fp2_scales_e4m3_paged(p, x->plan, x->in->q, x->in->k, x->in->v, x->in->pages, x->w.scales,
                                             x->w.amax, x->stream)
                    : fp2_scales_e4m3(x->in->q, nq, x->in->k, x->in->v, nk, x->w.scales, x->w.amax, x->stream);
  if (st != FP2_OK) return st;
  return x->in->offsets ? fp2_convert_e4m3(x->in->q, nq, x->w.scales + 0, x->w.q8, x->stream) : FP2_OK;
}

static fp2_status pool(pass *x) {
  const int fp8 = x->p->dtype == FP2_FP8;
  return fp2_pool(x->p, x->plan, x->in->k, x->in->v, x->in->pages, x->in->pooled, x->scales, x->w.k_mean,
                  x->w.v_mean, x->w.kbar, x->w.vbar, fp8 ? (void *)x->w.k8 : x->w.k16, fp8 ? (void *)x->w.v8 : x->w.v16,
                  x->vt, x->stream);
}

static fp2_status select_blocks(pass *x) {
  if (x->in->offsets) return FP2_OK; /* the caller's index */
  const int fp8 = x->p->dtype == FP2_FP8;
  return fp2_select(x->p, x->plan, fp8 ? x->in->q : x->q, fp8 ? x->w.q8 : NULL, x->w.kbar, x->scales, &x->w.index,
                    x->w.select_ws, x->w.select_ws_bytes, x->stream);
}

static fp2_status attend(pass *x) {
  if (!x->in->o) return FP2_OK;
  fp2_params p = *x->p;
  if (!x->pages) p.page_size = 0; /* FP8's codes, or the pool's copy: contiguous */
  return fp2_attend(&p, x->plan, x->q, x->k, x->vt ? NULL : x->v, x->pages, x->w.kbar, x->w.vbar, x->scales,
                    x->offsets, x->indices, x->in->o, x->w.attend_ws, x->w.attend_ws_bytes, x->stream);
}

static fp2_status (*const stages[FP2_STAGES])(pass *) = {quantize, pool, select_blocks, attend};

/* NVTX range names, for nsys and ncu. */
static const char *const stage_names[FP2_STAGES] = {"fp2 quantise", "fp2 pool", "fp2 select", "fp2 attend"};

/* Event i of the caller's, where it gave one. */
static fp2_status record_event(const fp2_inputs *in, int i, cudaStream_t stream) {
  if (in->events && in->events->at[i]) FP2_CUDA("fp2_forward", cudaEventRecord(in->events->at[i], stream));
  return FP2_OK;
}

fp2_status fp2_forward(const fp2_params *p, const fp2_plan *plan, const fp2_inputs *in, void *workspace,
                       size_t workspace_bytes, cudaStream_t stream) {
  pass x = {.p = p, .plan = plan, .in = in, .stream = stream};
  fp2_status st = fp2_workspace_map(p, plan, workspace, workspace_bytes, &x.w);
  if (st != FP2_OK) return st;
  if (!in->q || !in->k || !in->v) return fp2_fail(FP2_ERR_ARG, "fp2_forward: q, k and v are required");
  if (!in->offsets != !in->indices)
    return fp2_fail(FP2_ERR_ARG, "fp2_forward: a given index needs both its offsets and its indices");
  /* The pool checks them too; here, so that no stage runs before a refusal. */
  if ((st = fp2_check_pages(p, in->pages)) != FP2_OK ||
      (st = fp2_check_pooled_cache(p, plan, in->pooled)) != FP2_OK)
    return st;
  const int fp8 = p->dtype == FP2_FP8;
  /* The attention's operands: FP8's codes, or BF16 as given (contiguous or in pages), or the
     pool's copy of small pages. */
  const int copied = fp2_pages_copied(p);
  x.q = fp8 ? (const void *)x.w.q8 : in->q;
  x.k = fp8 ? (const void *)x.w.k8 : copied ? x.w.k16 : in->k;
  x.v = fp8 ? (const void *)x.w.v8 : copied ? x.w.v16 : in->v;
  x.pages = fp8 || copied ? NULL : in->pages;
  x.scales = fp8 ? x.w.scales : NULL;
  x.vt = values_transposed(p) ? x.w.attend_ws : NULL;
  x.offsets = in->offsets ? in->offsets : x.w.index.offsets;
  x.indices = in->indices ? in->indices : x.w.index.indices;
  for (int s = 0; s < FP2_STAGES; s++) {
    if ((st = record_event(in, s, stream)) != FP2_OK) return st;
    nvtxRangePushA(stage_names[s]);
    st = stages[s](&x);
    nvtxRangePop();
    if (st != FP2_OK) return st;
  }
  return record_event(in, FP2_STAGES, stream);
}
