/* fp2_forward with a pooled cache (fp2_pooled_cache) against the same passes without one, bit
   for bit: two prompts (1101 and 2053 tokens) prefilled together in chunks, each chunk a batch
   of the requests not yet done (lq < lk, as a serving engine runs them), with and without the
   cache: the output, the pooled means and operands, and the index must not differ. Chunks of
   300 queries (chunk ends inside key blocks, so a block is pooled partial, then again whole)
   and of 512 (ends on block ends). The cache's rows are a shuffled table with spare rows, all
   poisoned (NaN) first. Then the cache is seen to be used: its rows hold each full block's
   means, and a last chunk run on a zeroed cache takes zero means for its prefix's blocks and
   pools the rest. BF16 (the cache's only dtype); g = 3 and 4; the portable kernels and, on
   sm_90, the sm90 ones; and with the cache, K and V in pages of 64 and of 128 keys (drawn
   shuffled among spare pages, every row no request names 3072), against the contiguous pass
   without it. Exits 77 without a GPU. */
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "device_operands.h"
#include "kv_pages.h"
#include "synth.h"
#include "testing.h"

enum { BATCH = 2, SPARE_ROWS = 3, TABLE_COLUMNS = 32, SPARE_PAGES = 3 };
static const int prompt[BATCH] = {1024 + 77, 2048 + 5};

/* The tensors of one chunk step, on the device: Q of the chunk's queries, K and V of every key
   before their end (contiguous, or in pages), the output, and fp2_forward's workspace. */
typedef struct step_buffers {
  void *q, *k, *v, *o, *ws;
  size_t ws_bytes;
  fp2_workspace w;
} step_buffers;

/* Rows [from, from + n) of a [*, width] host array, uploaded as bf16 at row `at` of dev. */
static void upload_rows(void *dev, size_t at, const float *x, size_t from, size_t n, size_t width) {
  char err[320];
  if (operands_upload((char *)dev + at * width * 2, x + from * width, n * width, 0, err) != 0) {
    fprintf(stderr, "upload: %s\n", err);
    exit(3);
  }
}

/* One pass of the chunk step (active requests act[0..n), lq/lk each); pages and cache NULL or
   given. */
static void run_step(const fp2_params *p, const fp2_plan *plan, const step_buffers *b, const fp2_kv_pages *pages,
                     const fp2_pooled_cache *cache, size_t nq) {
  CHECK_CUDA(cudaMemset(b->ws, 0xff, b->ws_bytes));
  CHECK_CUDA(cudaMemset(b->o, 0xff, nq * 2));
  const fp2_inputs in = {.q = b->q, .k = b->k, .v = b->v, .o = b->o, .pages = pages, .pooled = cache};
  check_fp2(fp2_forward(p, plan, &in, b->ws, b->ws_bytes, 0), "fp2_forward");
  CHECK_CUDA(cudaDeviceSynchronize());
}

/* kp: K and V in its pages; NULL: contiguous. */
static void alloc_step(const fp2_params *p, const fp2_plan *plan, const kv_pages *kp, step_buffers *b) {
  const size_t keys = kp ? (size_t)kp->num_pages * kp->page_size : (size_t)plan->total_k;
  const size_t nq = (size_t)plan->total_q * p->hq * p->dim, nk = keys * p->hkv * p->dim;
  CHECK_CUDA(cudaMalloc(&b->q, nq * 2));
  CHECK_CUDA(cudaMalloc(&b->k, nk * 2));
  CHECK_CUDA(cudaMalloc(&b->v, nk * 2));
  CHECK_CUDA(cudaMalloc(&b->o, nq * 2));
  b->ws_bytes = fp2_workspace_bytes(p, plan);
  CHECK_CUDA(cudaMalloc(&b->ws, b->ws_bytes));
  check_fp2(fp2_workspace_map(p, plan, b->ws, b->ws_bytes, &b->w), "fp2_workspace_map");
}

static void free_step(step_buffers *b) {
  void *all[] = {b->q, b->k, b->v, b->o, b->ws};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) cudaFree(all[i]);
}

/* K's or V's rows of the step's requests (lk[i] keys of prompt act[i]) back to back, as its
   plan lays them out: [sum of lk, width] host floats. */
static float *step_rows(const float *x, const problem *pb, const int *act, const int *lk, int n, size_t width) {
  size_t keys = 0;
  for (int i = 0; i < n; i++) keys += (size_t)lk[i];
  float *rows = malloc(sizeof(float) * (keys ? keys : 1) * width), *at = rows;
  for (int i = 0; i < n; i++) {
    memcpy(at, x + (size_t)pb->cu_k[act[i]] * width, sizeof(float) * lk[i] * width);
    at += (size_t)lk[i] * width;
  }
  return rows;
}

/* Host copy of n floats at dev. */
static float *download_floats(const float *dev, size_t n) {
  float *h = malloc(sizeof(float) * (n ? n : 1));
  CHECK_CUDA(cudaMemcpy(h, dev, sizeof(float) * n, cudaMemcpyDeviceToHost));
  return h;
}

/* The cache's rows against the means the last pass without it wrote ([hkv, total_blocks, dim]):
   every full block of every active request, and, with `zeroed`, the pass with the cache read
   zeros for the blocks of each prefix and pooled the rest like the pass without. */
static void check_cache_used(const fp2_params *p, const fp2_plan *plan, const int *act, int n, const int *lq,
                             const int *lk, const int *table, int max_blocks, const float *cache_k, const float *means,
                             const float *cached_pass, const char *what) {
  const size_t dim = (size_t)p->dim;
  int gblock = 0;
  for (int i = 0; i < n; i++) {
    const int nblocks = fp2_num_blocks(p, lk[i]);
    for (int j = 0; j < nblocks; j++, gblock++)
      for (int h = 0; h < p->hkv; h++) {
        const float *pooled = means + ((size_t)h * plan->total_blocks + gblock) * dim;
        const float *row = cache_k + ((size_t)table[act[i] * max_blocks + j] * p->hkv + h) * dim;
        const float *got = cached_pass + ((size_t)h * plan->total_blocks + gblock) * dim;
        const int full = (j + 1) * p->block <= lk[i], prefix = (j + 1) * p->block <= lk[i] - lq[i];
        if (!full) continue;
        EXPECT_MSG(memcmp(row, pooled, dim * 4) == 0,
                   "%s: request %d block %d head %d: the cache's row is not its means",
                   what, act[i], j, h);
        int zero = 1, same = memcmp(got, pooled, dim * 4) == 0;
        for (size_t d = 0; d < dim; d++) zero &= got[d] == 0.0f;
        EXPECT_MSG(prefix ? zero : same, "%s: request %d block %d head %d: %s", what, act[i], j, h,
                   prefix ? "a prefix block was pooled, not read from the zeroed cache" : "a new block was not pooled");
      }
  }
}

/* page_size: the passes with the cache read K and V in pages of that many keys; 0: contiguous. */
static void one_case(int hq, fp2_kernel kernel, int chunk, int page_size, uint64_t seed) {
  const fp2_params p = {.hq = hq, .hkv = 8, .dim = 128, .block = 128, .qtile = 128, .alpha = 0.1f, .sink = 2,
                        .window = 4, .recent = 2, .correction = 1, .dtype = FP2_BF16, .kernel = kernel};
  fp2_params paged = p;
  paged.page_size = page_size;
  char what[128], err[320];
  snprintf(what, sizeof what, "%s g=%d chunks of %d, pages of %d (0: contiguous)",
           kernel == FP2_KERNEL_SM90 ? "sm90" : "portable", hq / p.hkv, chunk, page_size);
  fprintf(stderr, "gpu_pooled_cache: %s\n", what);
  problem pb;
  problem_init(&pb, &p, BATCH, prompt, prompt);
  if (synth_fill(&pb, SYNTH_LLM, seed, err) != 0) {
    fprintf(stderr, "synth: %s\n", err);
    exit(3);
  }
  /* The cache: request b's block j at a shuffled row among spare ones, every row NaN. */
  const int max_blocks = fp2_num_blocks(&p, prompt[1]), rows = 2 * max_blocks + SPARE_ROWS;
  const size_t row_floats = (size_t)p.hkv * p.dim;
  int table[BATCH * TABLE_COLUMNS];
  if (max_blocks > TABLE_COLUMNS) abort();
  for (int i = 0; i < BATCH * max_blocks; i++) table[i] = (int)((7 * (unsigned)i + 5) % (unsigned)rows);
  float *cache_k, *cache_v;
  int *dev_table;
  CHECK_CUDA(cudaMalloc((void **)&cache_k, sizeof(float) * rows * row_floats));
  CHECK_CUDA(cudaMalloc((void **)&cache_v, sizeof(float) * rows * row_floats));
  CHECK_CUDA(cudaMemset(cache_k, 0xff, sizeof(float) * rows * row_floats));
  CHECK_CUDA(cudaMemset(cache_v, 0xff, sizeof(float) * rows * row_floats));
  CHECK_CUDA(cudaMalloc((void **)&dev_table, sizeof table));

  for (int first = 0; first < prompt[1]; first += chunk) {
    int act[BATCH], lq[BATCH], lk[BATCH], n = 0;
    for (int b = 0; b < BATCH; b++)
      if (first < prompt[b]) {
        act[n] = b;
        lk[n] = first + chunk < prompt[b] ? first + chunk : prompt[b];
        lq[n] = lk[n] - first;
        n++;
      }
    int step_table[BATCH * TABLE_COLUMNS];
    for (int i = 0; i < n; i++)
      memcpy(step_table + i * max_blocks, table + act[i] * max_blocks, sizeof(int) * max_blocks);
    CHECK_CUDA(cudaMemcpy(dev_table, step_table, sizeof(int) * n * max_blocks, cudaMemcpyHostToDevice));
    const fp2_pooled_cache cache = {cache_k, cache_v, dev_table, max_blocks};
    fp2_plan plan;
    check_fp2(fp2_plan_create(&p, n, lq, lk, &plan), "fp2_plan_create");
    int prefix = 0;
    for (int i = 0; i < n; i++) prefix += (lk[i] - lq[i]) / p.block;
    EXPECT_MSG(plan.prefix_blocks == prefix, "%s: the plan counts %d prefix blocks, not %d", what, plan.prefix_blocks,
               prefix);
    const size_t nq = (size_t)plan.total_q * hq * p.dim, np = row_floats * plan.total_blocks;
    kv_pages kp = {0};
    int *dev_pages = NULL;
    if (page_size && kv_pages_plan(&kp, n, lk, page_size, SPARE_PAGES, seed + (uint64_t)first, err) != 0) {
      fprintf(stderr, "%s\n", err);
      exit(3);
    }
    step_buffers c, g;
    alloc_step(&p, &plan, NULL, &c);
    alloc_step(&p, &plan, page_size ? &kp : NULL, &g);
    size_t qrow = 0;
    for (int i = 0; i < n; i++) {
      const size_t q0 = (size_t)pb.cu_q[act[i]] + (size_t)(lk[i] - lq[i]);
      upload_rows(c.q, qrow, pb.q, q0, (size_t)lq[i], (size_t)hq * p.dim);
      upload_rows(g.q, qrow, pb.q, q0, (size_t)lq[i], (size_t)hq * p.dim);
      qrow += (size_t)lq[i];
    }
    float *k_rows = step_rows(pb.k, &pb, act, lk, n, row_floats);
    float *v_rows = step_rows(pb.v, &pb, act, lk, n, row_floats);
    upload_rows(c.k, 0, k_rows, 0, (size_t)plan.total_k, row_floats);
    upload_rows(c.v, 0, v_rows, 0, (size_t)plan.total_k, row_floats);
    if (!page_size) {
      upload_rows(g.k, 0, k_rows, 0, (size_t)plan.total_k, row_floats);
      upload_rows(g.v, 0, v_rows, 0, (size_t)plan.total_k, row_floats);
    } else if (operands_upload_pages(g.k, &kp, lk, k_rows, row_floats, 3072.0f, err) != 0 ||
               operands_upload_pages(g.v, &kp, lk, v_rows, row_floats, 3072.0f, err) != 0) {
      fprintf(stderr, "upload: %s\n", err);
      exit(3);
    }
    free(k_rows);
    free(v_rows);
    if (page_size) {
      CHECK_CUDA(cudaMalloc((void **)&dev_pages, sizeof(int) * n * kp.max_pages));
      CHECK_CUDA(cudaMemcpy(dev_pages, kp.table, sizeof(int) * n * kp.max_pages, cudaMemcpyHostToDevice));
    }
    const fp2_kv_pages pages = {dev_pages, kp.max_pages, kp.num_pages};
    const fp2_kv_pages *g_pages = page_size ? &pages : NULL;
    run_step(&p, &plan, &c, NULL, NULL, nq);
    run_step(&paged, &plan, &g, g_pages, &cache, nq);
    char at[160];
    snprintf(at, sizeof at, "%s, chunk at %d", what, first);
    int nnz = 0;
    CHECK_CUDA(cudaMemcpy(&nnz, c.w.index.offsets + plan.nseg, sizeof nnz, cudaMemcpyDeviceToHost));
    const struct {
      const char *name;
      const void *without, *with;
      size_t bytes;
    } parts[] = {
        {"output", c.o, g.o, nq * 2},
        {"k_mean", c.w.k_mean, g.w.k_mean, np * 4},
        {"v_mean", c.w.v_mean, g.w.v_mean, np * 4},
        {"kbar", c.w.kbar, g.w.kbar, np * 2},
        {"vbar", c.w.vbar, g.w.vbar, np * 2},
        {"index offsets", c.w.index.offsets, g.w.index.offsets, sizeof(int) * ((size_t)plan.nseg + 1)},
        {"index blocks", c.w.index.indices, g.w.index.indices, sizeof(int) * (size_t)(nnz > 0 ? nnz : 0)},
    };
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
      EXPECT_MSG(test_same_device_bytes(parts[i].without, parts[i].with, parts[i].bytes),
                 "%s: the %s differ with the cache", at, parts[i].name);
    if (first + chunk >= prompt[1]) { /* the last chunk: the cache holds what it should and is read */
      float *k_cache = download_floats(cache_k, (size_t)rows * row_floats);
      float *means = download_floats(c.w.k_mean, np);
      CHECK_CUDA(cudaMemset(cache_k, 0, sizeof(float) * rows * row_floats));
      run_step(&paged, &plan, &g, g_pages, &cache, nq);
      float *cached_pass = download_floats(g.w.k_mean, np);
      check_cache_used(&p, &plan, act, n, lq, lk, table, max_blocks, k_cache, means, cached_pass, at);
      free(k_cache);
      free(means);
      free(cached_pass);
    }
    free_step(&c);
    free_step(&g);
    cudaFree(dev_pages);
    if (page_size) kv_pages_free(&kp);
    fp2_plan_destroy(&plan);
  }
  void *all[] = {cache_k, cache_v, dev_table};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) cudaFree(all[i]);
  problem_free(&pb);
}

int main(void) {
  const int major = test_gpu_major("gpu_pooled_cache");
  one_case(24, FP2_KERNEL_PORTABLE, 300, 0, 1);
  one_case(32, FP2_KERNEL_PORTABLE, 512, 0, 2);
  one_case(24, FP2_KERNEL_PORTABLE, 300, 64, 5);
  if (major == 9) {
    one_case(32, FP2_KERNEL_SM90, 300, 0, 3);
    one_case(24, FP2_KERNEL_SM90, 512, 0, 4);
    one_case(32, FP2_KERNEL_SM90, 300, 128, 6);
    one_case(24, FP2_KERNEL_SM90, 512, 64, 7);
  }
  return test_result("gpu_pooled_cache");
}
