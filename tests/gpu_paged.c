/* fp2_forward on K and V in pages (fp2_kv_pages) against the same pass on them contiguous,
   bit for bit: the output, the FP8 scales, the pooled means and operands, and the index. A
   batch of three requests: a partial last page in every page size, a chunk of a prefill (fewer
   queries than keys) and a single key. The pages are drawn shuffled from a pool with spare
   ones, and every row the table does not name holds 3072: a read of one would move a scale, a
   mean or an output. Page sizes 16, 64, 128 and 256; BF16 and FP8; g = 3 and 4; the portable
   kernels and, on sm_90, the sm90 ones. The output and both workspaces are poisoned first.
   Exits 77 without a GPU. */
#include <cuda_runtime_api.h>
#include <stdlib.h>
#include <string.h>

#include "device_operands.h"
#include "kv_pages.h"
#include "synth.h"
#include "testing.h"

enum { BATCH = 3 };
static const int lq[BATCH] = {1024 + 77, 300, 1};
static const int lk[BATCH] = {1024 + 77, 2048 + 5, 1};

/* One pass: its workspace and output, as fp2_forward leaves them. */
typedef struct pass_out {
  void *ws, *o;
  size_t ws_bytes;
  fp2_workspace w;
} pass_out;

static void run(const fp2_params *p, const fp2_plan *plan, fp2_inputs in, size_t nq, pass_out *r) {
  r->ws_bytes = fp2_workspace_bytes(p, plan);
  CHECK_CUDA(cudaMalloc(&r->ws, r->ws_bytes));
  CHECK_CUDA(cudaMalloc(&r->o, nq * 2));
  CHECK_CUDA(cudaMemset(r->ws, 0xff, r->ws_bytes));
  CHECK_CUDA(cudaMemset(r->o, 0xff, nq * 2));
  check_fp2(fp2_workspace_map(p, plan, r->ws, r->ws_bytes, &r->w), "fp2_workspace_map");
  in.o = r->o;
  check_fp2(fp2_forward(p, plan, &in, r->ws, r->ws_bytes, 0), "fp2_forward");
  CHECK_CUDA(cudaDeviceSynchronize());
}

/* x's keys ([total_k, row] floats) in kp's pages, as bf16 on the device. */
static void *dev_pages(const kv_pages *kp, const float *x, size_t row) {
  void *d = NULL;
  char err[320];
  CHECK_CUDA(cudaMalloc(&d, (size_t)kp->num_pages * kp->page_size * row * 2));
  if (operands_upload_pages(d, kp, lk, x, row, 3072.0f, err) != 0) {
    fprintf(stderr, "upload: %s\n", err);
    exit(3);
  }
  return d;
}

static void one_case(fp2_dtype dt, int hq, fp2_kernel kernel, int page_size, uint64_t seed) {
  const fp2_params p = {.hq = hq, .hkv = 8, .dim = 128, .block = 128, .qtile = 128, .alpha = 0.1f, .sink = 2,
                        .window = 4, .recent = 2, .correction = 1, .dtype = dt, .kernel = kernel};
  fp2_params pp = p;
  pp.page_size = page_size;
  char what[128];
  snprintf(what, sizeof what, "%s %s g=%d pages of %d", dt == FP2_FP8 ? "fp8" : "bf16",
           kernel == FP2_KERNEL_SM90 ? "sm90" : "portable", hq / p.hkv, page_size);
  fprintf(stderr, "gpu_paged: %s\n", what);
  problem pb;
  char err[320];
  problem_init(&pb, &p, BATCH, lq, lk);
  if (synth_fill(&pb, SYNTH_LLM, seed, err) != 0) {
    fprintf(stderr, "synth: %s\n", err);
    exit(3);
  }
  fp2_plan plan;
  check_fp2(fp2_plan_create(&p, BATCH, lq, lk, &plan), "fp2_plan_create");
  const size_t nq = (size_t)plan.total_q * hq * p.dim, nk = (size_t)plan.total_k * p.hkv * p.dim;
  const size_t row = (size_t)p.hkv * p.dim;
  void *q, *k, *v;
  CHECK_CUDA(cudaMalloc(&q, nq * 2));
  CHECK_CUDA(cudaMalloc(&k, nk * 2));
  CHECK_CUDA(cudaMalloc(&v, nk * 2));
  if (operands_upload(q, pb.q, nq, 0, err) || operands_upload(k, pb.k, nk, 0, err) ||
      operands_upload(v, pb.v, nk, 0, err)) {
    fprintf(stderr, "upload: %s\n", err);
    exit(3);
  }
  kv_pages kp;
  if (kv_pages_plan(&kp, BATCH, lk, page_size, 3, seed, err) != 0) {
    fprintf(stderr, "%s\n", err);
    exit(3);
  }
  void *kpages = dev_pages(&kp, pb.k, row), *vpages = dev_pages(&kp, pb.v, row), *table = NULL;
  CHECK_CUDA(cudaMalloc(&table, sizeof(int) * BATCH * kp.max_pages));
  CHECK_CUDA(cudaMemcpy(table, kp.table, sizeof(int) * BATCH * kp.max_pages, cudaMemcpyHostToDevice));
  const fp2_kv_pages pages = {table, kp.max_pages, kp.num_pages};

  pass_out c, g;
  run(&p, &plan, (fp2_inputs){.q = q, .k = k, .v = v}, nq, &c);
  run(&pp, &plan, (fp2_inputs){.q = q, .k = kpages, .v = vpages, .pages = &pages}, nq, &g);

  const int fp8 = dt == FP2_FP8;
  const size_t np = (size_t)p.hkv * plan.total_blocks * p.dim;
  int nnz = 0;
  CHECK_CUDA(cudaMemcpy(&nnz, c.w.index.offsets + plan.nseg, sizeof nnz, cudaMemcpyDeviceToHost));
  const struct {
    const char *name;
    const void *contiguous, *paged;
    size_t bytes;
  } parts[] = {
      {"output", c.o, g.o, nq * 2},
      {"scales", c.w.scales, g.w.scales, fp8 ? 3 * sizeof(float) : 0},
      {"k_mean", c.w.k_mean, g.w.k_mean, np * 4},
      {"v_mean", c.w.v_mean, g.w.v_mean, np * 4},
      {"kbar", c.w.kbar, g.w.kbar, np * (fp8 ? 1 : 2)},
      {"vbar", c.w.vbar, g.w.vbar, np * (fp8 ? 1 : 2)},
      {"k's codes", c.w.k8, g.w.k8, fp8 ? nk : 0},
      {"v's codes", c.w.v8, g.w.v8, c.w.v8 ? nk : 0},
      {"attend workspace (FP8 on sm90: V transposed)", c.w.attend_ws, g.w.attend_ws, c.w.attend_ws_bytes},
      {"index offsets", c.w.index.offsets, g.w.index.offsets, sizeof(int) * ((size_t)plan.nseg + 1)},
      {"index blocks", c.w.index.indices, g.w.index.indices, sizeof(int) * (size_t)(nnz > 0 ? nnz : 0)},
  };
  for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
    EXPECT_MSG(test_same_device_bytes(parts[i].contiguous, parts[i].paged, parts[i].bytes),
               "%s: the %s differ from contiguous", what, parts[i].name);
  EXPECT_MSG(!g.w.k16 == !fp2_pages_copied(&pp), "%s: the copies of K and V are %s", what,
             g.w.k16 ? "there" : "missing");
  if (g.w.k16) /* the pool's copies of small pages, which the attention read */
    EXPECT_MSG(test_same_device_bytes(g.w.k16, k, nk * 2) && test_same_device_bytes(g.w.v16, v, nk * 2),
               "%s: the copies of K and V differ", what);

  void *all[] = {q, k, v, kpages, vpages, table, c.ws, c.o, g.ws, g.o};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) cudaFree(all[i]);
  kv_pages_free(&kp);
  fp2_plan_destroy(&plan);
  problem_free(&pb);
}

int main(void) {
  const int major = test_gpu_major("gpu_paged");
  static const int sizes[] = {16, 64, 128, 256};
  uint64_t seed = 1;
  for (int dt = FP2_BF16; dt <= FP2_FP8; dt++)
    for (int k = 0; k < (major == 9 ? 2 : 1); k++)
      for (int i = 0; i < 4; i++)
        one_case((fp2_dtype)dt, i % 2 ? 32 : 24, k ? FP2_KERNEL_SM90 : FP2_KERNEL_PORTABLE, sizes[i], seed++);
  return test_result("gpu_paged");
}
