/* The device metadata of a batch (fp2_plan): prefix sums of rows, tiles and key blocks, the
   sequence of each tile, and each segment's slice of the scratch index. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_check.h"
#include "fp2.h"

static fp2_status upload(int **dst, const int *src, size_t n, const char *what) {
  FP2_CUDA(what, cudaMalloc((void **)dst, sizeof(int) * (n ? n : 1)));
  FP2_CUDA(what, cudaMemcpy(*dst, src, sizeof(int) * n, cudaMemcpyHostToDevice));
  return FP2_OK;
}

/* A copy from pageable memory may return before its DMA is done, and a caller's non-blocking
   stream does not wait for the legacy stream: the plan is whole when fp2_plan_create returns. */
static fp2_status uploads_done(void) {
  FP2_CUDA("fp2_plan_create", cudaDeviceSynchronize());
  return FP2_OK;
}

fp2_status fp2_plan_prefixes(const fp2_params *p, int batch, const int *lq, const int *lk, int *cu_q, int *cu_k,
                             int *cu_tiles, int *cu_blocks, int *cu_chunks) {
  int64_t q = 0, k = 0, t = 0, b = 0, c = 0;
  for (int s = 0; s < batch; s++) {
    cu_q[s] = (int)q;
    cu_k[s] = (int)k;
    cu_tiles[s] = (int)t;
    cu_blocks[s] = (int)b;
    cu_chunks[s] = (int)c;
    q += lq[s];
    k += lk[s];
    t += fp2_num_tiles(p, lq[s]);
    b += fp2_num_blocks(p, lk[s]);
    c += fp2_cdiv(fp2_num_blocks(p, lk[s]), FP2_POOLED_CHUNK);
    if (q > INT32_MAX || k > INT32_MAX || t > INT32_MAX || b > INT32_MAX)
      return fp2_fail(FP2_ERR_ARG, "fp2_plan_prefixes: the batch has more than 2^31 rows, tiles or blocks");
  }
  cu_q[batch] = (int)q;
  cu_k[batch] = (int)k;
  cu_tiles[batch] = (int)t;
  cu_blocks[batch] = (int)b;
  cu_chunks[batch] = (int)c;
  return FP2_OK;
}

fp2_status fp2_plan_create(const fp2_params *p, int batch, const int *lq, const int *lk, fp2_plan *plan) {
  memset(plan, 0, sizeof *plan);
  if (batch <= 0) return fp2_fail(FP2_ERR_ARG, "fp2_plan_create: batch of %d sequences", batch);
  for (int s = 0; s < batch; s++)
    if (lq[s] <= 0 || lk[s] < lq[s])
      return fp2_fail(FP2_ERR_ARG, "fp2_plan_create: sequence %d has %d queries and %d keys", s, lq[s], lk[s]);
  int *cu = malloc(sizeof(int) * 5 * (size_t)(batch + 1));
  if (!cu) return fp2_fail(FP2_ERR_ARG, "fp2_plan_create: out of host memory");
  int *cu_q = cu, *cu_k = cu + batch + 1, *cu_tiles = cu + 2 * (batch + 1), *cu_blocks = cu + 3 * (batch + 1);
  int *cu_chunks = cu + 4 * (batch + 1);
  fp2_status prefixes = fp2_plan_prefixes(p, batch, lq, lk, cu_q, cu_k, cu_tiles, cu_blocks, cu_chunks);
  if (prefixes != FP2_OK) {
    free(cu);
    return prefixes;
  }
  int total_tiles = cu_tiles[batch];
  int64_t nseg = (int64_t)p->hkv * total_tiles;
  int *tile_seq = malloc(sizeof(int) * (size_t)(total_tiles ? total_tiles : 1));
  int *seg_base = malloc(sizeof(int) * (size_t)(nseg + 1));
  fp2_status st = FP2_OK;
  if (!tile_seq || !seg_base || nseg > INT32_MAX) {
    st = fp2_fail(FP2_ERR_ARG, "fp2_plan_create: %lld segments do not fit", (long long)nseg);
    goto done;
  }
  /* Segments in (sequence, KV head, tile) order, each sized by its tile's causal blocks. */
  int64_t cap = 0;
  int max_blocks = 0;
  for (int s = 0; s < batch; s++) {
    int ntiles = cu_tiles[s + 1] - cu_tiles[s], nblk = cu_blocks[s + 1] - cu_blocks[s];
    if (nblk > max_blocks) max_blocks = nblk;
    for (int t = 0; t < ntiles; t++) tile_seq[cu_tiles[s] + t] = s;
    for (int h = 0; h < p->hkv; h++)
      for (int t = 0; t < ntiles; t++) {
        seg_base[(int64_t)p->hkv * cu_tiles[s] + (int64_t)h * ntiles + t] = (int)cap;
        cap += fp2_tile_at(p, lq[s], lk[s], t).last_k + 1;
        if (cap > INT32_MAX) {
          st = fp2_fail(FP2_ERR_ARG, "fp2_plan_create: the index would hold more than 2^31 blocks");
          goto done;
        }
      }
  }
  seg_base[nseg] = (int)cap;
  plan->batch = batch;
  plan->total_q = cu_q[batch];
  plan->total_k = cu_k[batch];
  plan->total_tiles = total_tiles;
  plan->total_blocks = cu_blocks[batch];
  plan->nseg = (int)nseg;
  plan->max_blocks = max_blocks;
  plan->capacity = (int)cap;
  plan->total_chunks = cu_chunks[batch];
  for (int s = 0; s < batch; s++) plan->prefix_blocks += (lk[s] - lq[s]) / p->block;
  if ((st = upload(&plan->cu_q, cu_q, (size_t)batch + 1, "fp2_plan_create")) ||
      (st = upload(&plan->cu_k, cu_k, (size_t)batch + 1, "fp2_plan_create")) ||
      (st = upload(&plan->cu_tiles, cu_tiles, (size_t)batch + 1, "fp2_plan_create")) ||
      (st = upload(&plan->cu_blocks, cu_blocks, (size_t)batch + 1, "fp2_plan_create")) ||
      (st = upload(&plan->cu_chunks, cu_chunks, (size_t)batch + 1, "fp2_plan_create")) ||
      (st = upload(&plan->tile_seq, tile_seq, (size_t)total_tiles, "fp2_plan_create")) ||
      (st = upload(&plan->seg_base, seg_base, (size_t)nseg + 1, "fp2_plan_create")) || (st = uploads_done()))
    fp2_plan_destroy(plan);
done:
  free(cu);
  free(tile_seq);
  free(seg_base);
  return st;
}

void fp2_plan_destroy(fp2_plan *plan) {
  cudaFree(plan->cu_q);
  cudaFree(plan->cu_k);
  cudaFree(plan->cu_tiles);
  cudaFree(plan->cu_blocks);
  cudaFree(plan->cu_chunks);
  cudaFree(plan->tile_seq);
  cudaFree(plan->seg_base);
  memset(plan, 0, sizeof *plan);
}
