/* The gpu backend: fp2_forward over a whole problem, each stage timed with CUDA events. */
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_host.h"
#include "device_operands.h"
#include "error.h"
#include "event_timing.h"
#include "gpu_backend.h"
#include "kv_pages.h"
#include "numeric.h"
#include "run_choices.h"
#include "stats.h"
#include "wallclock.h"

#define FP2_OR_FAIL(call)                                                                             \
  do {                                                                                                \
    if ((call) != FP2_OK) {                                                                           \
      err_set(err, "%s", fp2_error_message());                                                        \
      goto fail;                                                                                      \
    }                                                                                                 \
  } while (0)

/* What the backend allocates: bf16 Q/K/V and O, and fp2_forward's one workspace, whose
   intermediates (operands, pooled vectors, index) the backend poisons and reads through w. */
typedef struct device_buffers {
  void *q, *k, *v;         /* bf16; with --paged, k and v are pages */
  int *table;              /* --paged: the page table */
  fp2_kv_pages pages;
  void *o;                 /* bf16 */
  void *ws;
  size_t ws_bytes;
  fp2_workspace w;         /* ws mapped */
  void *flush;             /* written before every run, so that no input is left in L2 */
} device_buffers;

static void free_buffers(device_buffers *d) {
  void *all[] = {d->q, d->k, d->v, d->table, d->o, d->ws, d->flush};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) cudaFree(all[i]);
  memset(d, 0, sizeof *d);
}

/* Bytes of device memory a problem needs, for the refusal message (nk: K's values as held,
   pages and spare pages included). */
static double device_bytes(const problem *pb, double nk, size_t ws) {
  double nq = (double)pb->total_q * pb->p.hq * pb->p.dim;
  return 2 * (nq + 2 * nk) + 2 * nq /* o */ + (double)ws + (double)FLUSH_BYTES;
}

/* --paged: one spare page a request, so that pages of no request lie among theirs; every row
   the table does not name holds 3072 (a bf16 value no synthetic input reaches): a kernel that
   read one would move a scale, a mean or an output. */
enum { SPARE_PAGES_PER_REQUEST = 1 };
#define UNNAMED_ROW_VALUE 3072.0f

/* p: the problem's parameters with the kernel that runs (--kernel auto resolved); submit_ms:
   the host's time in fp2_forward. */
static int run_once(const problem *pb, const fp2_params *p, const pipeline_config *cfg, const fp2_plan *plan,
                    device_buffers *d, const fp2_stage_events *ev, int forced, double *submit_ms, char *err) {
  const size_t nq = (size_t)pb->total_q * p->hq * p->dim;
  const size_t npooled = (size_t)p->hkv * plan->total_blocks * p->dim;
  const fp2_workspace *w = &d->w;
  /* Poison everything the kernels write: unwritten elements show up as NaN or -1. */
  CUDA_GOTO(cudaMemset(d->o, 0xff, nq * 2), fail);
  CUDA_GOTO(cudaMemset(w->k_mean, 0xff, npooled * 4), fail);
  CUDA_GOTO(cudaMemset(w->v_mean, 0xff, npooled * 4), fail);
  if (w->attend_ws) CUDA_GOTO(cudaMemset(w->attend_ws, 0xff, w->attend_ws_bytes), fail); /* FP8's V^T: NaN codes */
  if (!forced) {
    CUDA_GOTO(cudaMemset(w->index.offsets, 0xff, sizeof(int) * ((size_t)plan->nseg + 1)), fail);
    CUDA_GOTO(cudaMemset(w->index.indices, 0xff, sizeof(int) * (size_t)plan->capacity), fail);
  }
  /* The L2 is flushed first, as the peers' timing does; fp2_forward records ev around each
     stage and brackets it in an NVTX range, for nsys / ncu. */
  const fp2_inputs in = {.q = d->q,
                         .k = d->k,
                         .v = d->v,
                         .o = cfg->attend ? d->o : NULL,
                         .offsets = forced ? w->index.offsets : NULL,
                         .indices = forced ? w->index.indices : NULL,
                         .events = ev,
                         .pages = p->page_size ? &d->pages : NULL,
                         .pooled = cfg->pooled_cache};
  CUDA_GOTO(cudaMemsetAsync(d->flush, 0, FLUSH_BYTES, 0), fail);
  const double t0 = wall_ms();
  FP2_OR_FAIL(fp2_forward(p, plan, &in, d->ws, d->ws_bytes, 0));
  *submit_ms = wall_ms() - t0;
  CUDA_GOTO(cudaEventSynchronize(ev->at[FP2_STAGES]), fail);
  return 0;
fail:
  return -1;
}

static int upload_index(const csr_index *c, fp2_index *dev, char *err) {
  CUDA_GOTO(cudaMemcpy(dev->offsets, c->offsets, sizeof(int) * ((size_t)c->nseg + 1), cudaMemcpyHostToDevice), fail);
  CUDA_GOTO(cudaMemcpy(dev->indices, c->indices, sizeof(int) * (size_t)c->nnz, cudaMemcpyHostToDevice), fail);
  return 0;
fail:
  return -1;
}

static int keep_outputs(const problem *pb, const fp2_plan *plan, const device_buffers *d, pipeline_result *out,
                        char *err) {
  const fp2_params *p = &pb->p;
  const int fp8 = p->dtype == FP2_FP8;
  const size_t nq = (size_t)pb->total_q * p->hq * p->dim, nk = (size_t)pb->total_k * p->hkv * p->dim;
  const size_t npooled = (size_t)p->hkv * plan->total_blocks * p->dim;
  out->k_mean = xmalloc(sizeof(float) * (npooled ? npooled : 1));
  out->v_mean = xmalloc(sizeof(float) * (npooled ? npooled : 1));
  const fp2_workspace *w = &d->w;
  CUDA_GOTO(cudaMemcpy(out->k_mean, w->k_mean, npooled * 4, cudaMemcpyDeviceToHost), fail);
  CUDA_GOTO(cudaMemcpy(out->v_mean, w->v_mean, npooled * 4, cudaMemcpyDeviceToHost), fail);
  if (!(out->kbar = operands_download(w->kbar, npooled, fp8, err))) return -1;
  if (!(out->vbar = operands_download(w->vbar, npooled, fp8, err))) return -1;
  if (!(out->output = operands_download(d->o, nq, 0, err))) return -1;
  if (fp8) {
    if (!(out->gpu.q_op = operands_download(w->q8, nq, 1, err))) return -1;
    if (!(out->gpu.k_op = operands_download(w->k8, nk, 1, err))) return -1;
    out->gpu.v_op = w->v8 ? operands_download(w->v8, nk, 1, err)
                          : values_download_transposed(w->attend_ws, pb, err);
    if (!out->gpu.v_op) return -1;
  }
  return 0;
fail:
  return -1;
}

/* The kernel to run: p.kernel, or under --kernel auto the one kernel_auto_pick gives this GPU. */
static int pick_kernel(const problem *pb, fp2_params *p, char *err) {
  int dev = 0, major = 0;
  if (!pb->kernel_auto) return 0;
  CUDA_GOTO(cudaGetDevice(&dev), fail);
  CUDA_GOTO(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev), fail);
  p->kernel = kernel_auto_pick(p, major);
  return 0;
fail:
  return -1;
}

int gpu_pipeline(const problem *pb, const pipeline_config *cfg, int trials, pipeline_result *out, char *err) {
  fp2_params params = pb->p;
  const fp2_params *p = &params;
  const int fp8 = p->dtype == FP2_FP8, forced = cfg->density >= 0 || cfg->index;
  const size_t nq = (size_t)pb->total_q * p->hq * p->dim, nk = (size_t)pb->total_k * p->hkv * p->dim;
  device_buffers d;
  fp2_plan plan;
  fp2_stage_events ev = {{0}};
  int rc = -1;
  memset(out, 0, sizeof *out);
  memset(&d, 0, sizeof d);
  if (pick_kernel(pb, &params, err) != 0) return -1;
  if (fp2_plan_create(p, pb->batch, pb->lq, pb->lk, &plan) != FP2_OK) {
    err_set(err, "%s", fp2_error_message());
    return -1;
  }
  d.ws_bytes = fp2_workspace_bytes(p, &plan);
  kv_pages kp = {0};
  if (p->page_size && kv_pages_plan(&kp, pb->batch, pb->lk, p->page_size, SPARE_PAGES_PER_REQUEST * pb->batch,
                                    cfg->seed, err) != 0)
    goto fail;
  const size_t nk_held = p->page_size ? (size_t)kp.num_pages * kp.page_size * p->hkv * p->dim : nk;
  size_t free_bytes = 0, total_bytes = 0;
  CUDA_GOTO(cudaMemGetInfo(&free_bytes, &total_bytes), fail);
  double need = device_bytes(pb, (double)nk_held, d.ws_bytes);
  if (need > (double)free_bytes) {
    err_set(err, "the problem needs %.2f GB of GPU memory but %.2f GB are free", need / 1e9, free_bytes / 1e9);
    goto fail;
  }
  CUDA_GOTO(cudaMalloc(&d.q, nq * 2), fail);
  CUDA_GOTO(cudaMalloc(&d.k, nk_held * 2), fail);
  CUDA_GOTO(cudaMalloc(&d.v, nk_held * 2), fail);
  CUDA_GOTO(cudaMalloc(&d.o, nq * 2), fail);
  CUDA_GOTO(cudaMalloc(&d.ws, d.ws_bytes), fail);
  CUDA_GOTO(cudaMalloc(&d.flush, FLUSH_BYTES), fail);
  FP2_OR_FAIL(fp2_workspace_map(p, &plan, d.ws, d.ws_bytes, &d.w));
  if (operands_upload(d.q, pb->q, nq, 0, err) != 0) goto fail;
  if (p->page_size) {
    const size_t table_bytes = sizeof(int) * (size_t)kp.batch * kp.max_pages;
    CUDA_GOTO(cudaMalloc((void **)&d.table, table_bytes), fail);
    CUDA_GOTO(cudaMemcpy(d.table, kp.table, table_bytes, cudaMemcpyHostToDevice), fail);
    d.pages = (fp2_kv_pages){d.table, kp.max_pages, kp.num_pages};
    const size_t row = (size_t)pb->p.hkv * pb->p.dim;
    if (operands_upload_pages(d.k, &kp, pb->lk, pb->k, row, UNNAMED_ROW_VALUE, err) != 0 ||
        operands_upload_pages(d.v, &kp, pb->lk, pb->v, row, UNNAMED_ROW_VALUE, err) != 0)
      goto fail;
  } else if (operands_upload(d.k, pb->k, nk, 0, err) != 0 || operands_upload(d.v, pb->v, nk, 0, err) != 0) {
    goto fail;
  }
  if (cfg->index) {
    if (upload_index(cfg->index, &d.w.index, err) != 0) goto fail;
  } else if (forced) {
    csr_index c;
    ref_forced_index(pb, cfg->density, cfg->seed, &c);
    int up = upload_index(&c, &d.w.index, err);
    csr_free(&c);
    if (up) goto fail;
  }
  for (int i = 0; i <= FP2_STAGES; i++) CUDA_GOTO(cudaEventCreate(&ev.at[i]), fail);
  out->kernel = kernel_name(p->kernel);
  out->times.trials = trials;
  out->times.t_quant = xcalloc((size_t)trials + 1, sizeof(double));
  out->times.t_pool = xcalloc((size_t)trials + 1, sizeof(double));
  out->times.t_select = xcalloc((size_t)trials + 1, sizeof(double));
  out->times.t_attend = xcalloc((size_t)trials + 1, sizeof(double));
  out->times.t_submit = xcalloc((size_t)trials + 1, sizeof(double));
  /* cfg->index_whole: each timed pass comes after one that stops after the index, with events
     only where the index stage begins and ends (and after the pass, to wait on), so that its
     kernels may start early across the stages as they do untimed. The last pass is then a
     whole one, whose outputs keep_outputs reads. */
  const fp2_stage_events whole = {.at = {[0] = ev.at[0], [FP2_STAGE_ATTEND] = ev.at[FP2_STAGE_ATTEND],
                                         [FP2_STAGES] = ev.at[FP2_STAGES]}};
  pipeline_config index_only = *cfg;
  index_only.attend = 0;
  if (cfg->index_whole) out->times.t_index_whole = xcalloc((size_t)trials + 1, sizeof(double));
  for (int it = -1; it < trials; it++) { /* it = -1: warm-up, not recorded */
    double submit_ms = 0;
    if (it >= 0 && cfg->index_whole) {
      if (run_once(pb, p, &index_only, &plan, &d, &whole, forced, &submit_ms, err) != 0) goto fail;
      float index_ms;
      CUDA_GOTO(cudaEventElapsedTime(&index_ms, whole.at[0], whole.at[FP2_STAGE_ATTEND]), fail);
      out->times.t_index_whole[it] = index_ms;
    }
    if (run_once(pb, p, cfg, &plan, &d, &ev, forced, &submit_ms, err) != 0) goto fail;
    if (it < 0) continue;
    out->times.t_submit[it] = submit_ms;
    float ms[FP2_STAGES];
    for (int s = 0; s < FP2_STAGES; s++) CUDA_GOTO(cudaEventElapsedTime(&ms[s], ev.at[s], ev.at[s + 1]), fail);
    out->times.t_quant[it] = ms[FP2_STAGE_QUANTIZE];
    out->times.t_pool[it] = ms[FP2_STAGE_POOL];
    out->times.t_select[it] = ms[FP2_STAGE_SELECT];
    out->times.t_attend[it] = ms[FP2_STAGE_ATTEND];
  }
  if (cfg->index_whole) out->times.ms_index_whole = stats_median(out->times.t_index_whole, trials);
  out->times.ms_quant = stats_median(out->times.t_quant, trials);
  out->times.ms_pool = stats_median(out->times.t_pool, trials);
  out->times.ms_select = stats_median(out->times.t_select, trials);
  out->times.ms_attend = stats_median(out->times.t_attend, trials);
  out->times.ms_submit = stats_median(out->times.t_submit, trials);
  out->max_blocks = plan.max_blocks;
  if (index_download(&plan, &d.w.index, &out->index, err) != 0) goto fail;
  out->gpu.scales[0] = out->gpu.scales[1] = out->gpu.scales[2] = 1.0f;
  if (fp8) CUDA_GOTO(cudaMemcpy(out->gpu.scales, d.w.scales, sizeof out->gpu.scales, cudaMemcpyDeviceToHost), fail);
  out->kbar_scale = out->gpu.scales[1];
  out->vbar_scale = out->gpu.scales[2];
  if (cfg->keep_outputs && keep_outputs(pb, &plan, &d, out, err) != 0) goto fail;
  rc = 0;
fail:
  for (int i = 0; i <= FP2_STAGES; i++)
    if (ev.at[i]) cudaEventDestroy(ev.at[i]);
  free_buffers(&d);
  kv_pages_free(&kp);
  fp2_plan_destroy(&plan);
  if (rc != 0) pipeline_result_free(out);
  return rc;
}

int gpu_pooled_cache_create(const fp2_params *p, int len, fp2_pooled_cache *cache, char *err) {
  const int nblocks = fp2_num_blocks(p, len);
  const size_t bytes = sizeof(float) * (size_t)nblocks * p->hkv * p->dim;
  int *table = xmalloc(sizeof(int) * (size_t)(nblocks > 0 ? nblocks : 1));
  for (int j = 0; j < nblocks; j++) table[j] = j;
  memset(cache, 0, sizeof *cache);
  cache->max_blocks = nblocks;
  CUDA_GOTO(cudaMalloc((void **)&cache->k_mean, bytes), fail);
  CUDA_GOTO(cudaMalloc((void **)&cache->v_mean, bytes), fail);
  CUDA_GOTO(cudaMalloc((void **)&cache->table, sizeof(int) * (size_t)nblocks), fail);
  CUDA_GOTO(cudaMemset(cache->k_mean, 0xff, bytes), fail);
  CUDA_GOTO(cudaMemset(cache->v_mean, 0xff, bytes), fail);
  CUDA_GOTO(cudaMemcpy((void *)cache->table, table, sizeof(int) * (size_t)nblocks, cudaMemcpyHostToDevice), fail);
  free(table);
  return 0;
fail:
  free(table);
  gpu_pooled_cache_free(cache);
  return -1;
}

void gpu_pooled_cache_free(fp2_pooled_cache *cache) {
  cudaFree(cache->k_mean);
  cudaFree(cache->v_mean);
  cudaFree((void *)cache->table);
  memset(cache, 0, sizeof *cache);
}
