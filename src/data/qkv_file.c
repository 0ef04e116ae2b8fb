/* Recorded q, k, v: loads a safetensors file, checks that the three shapes describe one
   GQA attention problem, and widens the values to f32 for the reference and the kernels. */
#include "qkv_file.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "safetensors.h"

/* Finds a rank-3 float tensor whose dimensions are in [1, 2^31), so they fit an int. */
static const tensor *find_input(const st_file *f, const char *path, const char *name, char *err) {
  const tensor *t = st_find(f, name);
  if (!t) {
    err_set(err, "'%s': no tensor '%s'", path, name);
    return NULL;
  }
  if (t->dtype != TENSOR_BF16 && t->dtype != TENSOR_F16 && t->dtype != TENSOR_F32) {
    err_set(err, "'%s': %s has dtype %s, not BF16, F16 or F32", path, name,
            tensor_dtype_name(t->dtype));
    return NULL;
  }
  if (t->ndim != 3) {
    err_set(err, "'%s': %s has %d dimensions, not 3 [positions, heads, head dim]", path, name,
            t->ndim);
    return NULL;
  }
  for (int i = 0; i < 3; i++) {
    if (t->shape[i] < 1 || t->shape[i] > INT32_MAX) {
      err_set(err, "'%s': %s has shape [%lld, %lld, %lld], with a dimension outside [1, 2^31)",
              path, name, (long long)t->shape[0], (long long)t->shape[1], (long long)t->shape[2]);
      return NULL;
    }
  }
  return t;
}

/* Compares dimension d of t with that of ref, naming the dimension in the message. */
static int same_dim(const tensor *t, const tensor *ref, int d, const char *path, char *err) {
  long long a = t->shape[d], b = ref->shape[d];
  if (a == b) return 0;
  if (d == 2)
    err_set(err, "'%s': %s has head dim %lld but %s has %lld", path, t->name, a, ref->name, b);
  else
    err_set(err, "'%s': %s has %lld %s but %s has %lld", path, t->name, a,
            d == 0 ? "positions" : "heads", ref->name, b);
  return -1;
}

static int check_shapes(const tensor *q, const tensor *k, const tensor *v, const char *path,
                        char *err) {
  if (same_dim(k, q, 0, path, err) || same_dim(v, q, 0, path, err) ||
      same_dim(k, q, 2, path, err) || same_dim(v, q, 2, path, err) || same_dim(v, k, 1, path, err))
    return -1;
  if (q->shape[1] % k->shape[1] != 0) {
    err_set(err, "'%s': q has %lld heads, not a multiple of the %lld heads of k", path,
            (long long)q->shape[1], (long long)k->shape[1]);
    return -1;
  }
  if (k->dtype != q->dtype || v->dtype != q->dtype) {
    const tensor *odd = k->dtype != q->dtype ? k : v;
    err_set(err, "'%s': %s is %s but q is %s", path, odd->name, tensor_dtype_name(odd->dtype),
            tensor_dtype_name(q->dtype));
    return -1;
  }
  return 0;
}

static float *to_f32(const tensor *t) {
  size_t n = tensor_numel(t);
  float *out = xmalloc(n * sizeof *out);
  for (size_t i = 0; i < n; i++) out[i] = tensor_get_f32(t, i);
  return out;
}

/* A NaN or infinity in one row spoils its whole query tile (the tile's running maximum and
   the pooled means): refused, naming the first one as [position, head, element]. */
static int check_finite(const float *x, const tensor *t, const char *path, char *err) {
  const size_t n = tensor_numel(t), heads = (size_t)t->shape[1], dim = (size_t)t->shape[2];
  for (size_t i = 0; i < n; i++) {
    if (isfinite(x[i])) continue;
    err_set(err, "'%s': %s holds %s at [%zu, %zu, %zu] (position, head, element): inputs must be finite", path,
            t->name, isnan(x[i]) ? "nan" : x[i] > 0 ? "inf" : "-inf", i / (heads * dim), i / dim % heads, i % dim);
    return -1;
  }
  return 0;
}

int qkv_load(const char *path, qkv_host *out, char *err) {
  memset(out, 0, sizeof *out);
  st_file f;
  if (st_load(path, &f, err)) return -1;
  const tensor *q, *k, *v;
  int rc = -1;
  if ((q = find_input(&f, path, "q", err)) && (k = find_input(&f, path, "k", err)) &&
      (v = find_input(&f, path, "v", err)) && check_shapes(q, k, v, path, err) == 0) {
    out->len = (int)q->shape[0];
    out->hq = (int)q->shape[1];
    out->hkv = (int)k->shape[1];
    out->dim = (int)q->shape[2];
    out->file_dtype = q->dtype;
    out->q = to_f32(q);
    out->k = to_f32(k);
    out->v = to_f32(v);
    rc = check_finite(out->q, q, path, err) || check_finite(out->k, k, path, err) || check_finite(out->v, v, path, err)
             ? -1
             : 0;
  }
  st_free(&f);
  if (rc) qkv_free(out);
  return rc;
}

void qkv_free(qkv_host *q) {
  free(q->q);
  free(q->k);
  free(q->v);
  memset(q, 0, sizeof *q);
}
