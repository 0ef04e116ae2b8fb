#include "pass_dump.h"

#include <string.h>

#include "error.h"
#include "safetensors.h"

static void shape_tensor(tensor *t, const char *name, tensor_dtype dt, int ndim, int64_t a, int64_t b, int64_t c) {
  int64_t shape[3] = {a, b, c};
  tensor_init(t, name, dt, ndim, shape);
}

int pass_dump(const char *path, const problem *pb, const pipeline_result *r, char *err) {
  const fp2_params *p = &pb->p;
  const int len = pb->lq[0], nblk = pb->cu_blocks[1], ntiles = pb->cu_tiles[1];
  const size_t pooled = (size_t)p->hkv * nblk * p->dim;
  if (pb->batch != 1) {
    err_set(err, "--dump: writes one sequence, but the batch holds %d", pb->batch);
    return -1;
  }
  if (!r->output) {
    err_set(err, "--dump: the output was not computed for every row");
    return -1;
  }
  tensor t[6];
  int n = 0;
  shape_tensor(&t[n], "o", TENSOR_F32, 3, len, p->hq, p->dim);
  memcpy(t[n++].data, r->output, sizeof(float) * (size_t)len * p->hq * p->dim);
  shape_tensor(&t[n], "k_mean", TENSOR_F32, 3, p->hkv, nblk, p->dim);
  memcpy(t[n++].data, r->k_mean, sizeof(float) * pooled);
  shape_tensor(&t[n], "v_mean", TENSOR_F32, 3, p->hkv, nblk, p->dim);
  memcpy(t[n++].data, r->v_mean, sizeof(float) * pooled);
  shape_tensor(&t[n], "csr_offsets", TENSOR_I32, 1, r->index.nseg + 1, 0, 0);
  memcpy(t[n++].data, r->index.offsets, sizeof(int) * (size_t)(r->index.nseg + 1));
  shape_tensor(&t[n], "csr_indices", TENSOR_I32, 1, r->index.nnz, 0, 0);
  memcpy(t[n++].data, r->index.indices, sizeof(int) * (size_t)r->index.nnz);
  if (r->score) {
    shape_tensor(&t[n], "score", TENSOR_F32, 3, p->hkv, ntiles, nblk);
    memcpy(t[n++].data, r->score, sizeof(float) * (size_t)p->hkv * ntiles * nblk);
  }
  const tensor *list[6];
  for (int i = 0; i < n; i++) list[i] = &t[i];
  int rc = st_save(path, list, n, err);
  for (int i = 0; i < n; i++) tensor_free(&t[i]);
  return rc;
}
