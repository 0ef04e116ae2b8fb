/* cuDNN SDPA forward as a peer (see peer_cudnn.h): cuDNN 9 loaded with dlopen, the
   flash-attention graph built descriptor by descriptor with the backend API, an
   execution plan from the engine heuristics, timed with CUDA events.

   The graph mirrors what cudnn-frontend's composite SDPA node lowers to (matmul,
   pointwise scale, GEN_INDEX/CMP_GE/BINARY_SELECT causal mask, the softmax of MAX, SUB,
   EXP, ADD-reduction, LOG, ADD, DIV, then matmul), which is the pattern cuDNN's fused
   attention engines match; written here from the backend API's documented attributes. */
#define _GNU_SOURCE /* dladdr: the file a library was loaded from */
#include "peer_cudnn.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <float.h>
#include <glob.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cuda_host.h"
#include "event_timing.h"
#include "error.h"

/* FP2_NO_CUDNN builds the absent peer even where the headers are (to test that build). */
#if defined(__has_include) && !defined(FP2_NO_CUDNN)
#if __has_include(<cudnn_graph.h>)
#include <cudnn_graph.h>
#if CUDNN_MAJOR >= 9
#define FP2_HAVE_CUDNN_HEADERS 1
#endif
#endif
#endif

#define CUDNN_SONAME "libcudnn.so.9"

/* ---- pure parts ---- */

static void set_shape(cudnn_tensor_shape *t, int64_t d0, int64_t d1, int64_t d2, int64_t d3, int64_t s0, int64_t s1,
                      int64_t s2, int64_t s3) {
  t->dim[0] = d0, t->dim[1] = d1, t->dim[2] = d2, t->dim[3] = d3;
  t->stride[0] = s0, t->stride[1] = s1, t->stride[2] = s2, t->stride[3] = s3;
}

int peer_cudnn_layout_of(const fp2_params *p, int len, peer_cudnn_layout *out, char *err) {
  if (p->hq < 1 || p->hkv < 1 || p->hq % p->hkv != 0) {
    err_set(err, "cudnn peer: query heads %d are not a multiple of kv heads %d", p->hq, p->hkv);
    return -1;
  }
  if (p->dim != 64 && p->dim != 128) {
    err_set(err, "cudnn peer: head dimension %d is not 64 or 128", p->dim);
    return -1;
  }
  if (len < 1) {
    err_set(err, "cudnn peer: length %d is not positive", len);
    return -1;
  }
  const int64_t L = len, hq = p->hq, hkv = p->hkv, d = p->dim;
  /* cuDNN's int64 shapes would take more, but our callers index with 32-bit sizes. */
  if (L * hq * d > INT32_MAX || L * hq > INT32_MAX) {
    err_set(err, "cudnn peer: %d positions x %d heads x %d exceed 2^31 elements", len, p->hq, p->dim);
    return -1;
  }
  /* Positions first: element (s, h, x) of Q sits at (s * Hq + h) * D + x. */
  set_shape(&out->q, 1, hq, L, d, L * hq * d, d, hq * d, 1);
  set_shape(&out->kt, 1, hkv, d, L, L * hkv * d, d, 1, hkv * d);
  set_shape(&out->v, 1, hkv, L, d, L * hkv * d, d, hkv * d, 1);
  set_shape(&out->o, 1, hq, L, d, L * hq * d, d, hq * d, 1);
  set_shape(&out->s, 1, hq, L, L, hq * L * L, L * L, L, 1);
  set_shape(&out->stats, 1, hq, L, 1, hq * L, L, 1, 1);
  set_shape(&out->scalar, 1, 1, 1, 1, 1, 1, 1, 1);
  return 0;
}

int peer_cudnn_lib_path(const char *spec, char *buf, size_t len) {
  struct stat st;
  int n;
  if (stat(spec, &st) == 0 && S_ISDIR(st.st_mode)) {
    size_t sl = strlen(spec);
    const char *sep = sl > 0 && spec[sl - 1] == '/' ? "" : "/";
    n = snprintf(buf, len, "%s%s%s", spec, sep, CUDNN_SONAME);
  } else {
    n = snprintf(buf, len, "%s", spec);
  }
  return n < 0 || (size_t)n >= len ? -1 : 0;
}

static char plan_note[1600];

const char *peer_cudnn_plan_note(void) { return plan_note; }

#ifndef FP2_HAVE_CUDNN_HEADERS

/* ---- built without cuDNN 9 headers: the peer is absent ---- */

#define NO_HEADERS "cuDNN peer: built without cuDNN headers (cudnn_graph.h of cuDNN 9)"

int peer_cudnn_available(char *why) {
  err_set(why, NO_HEADERS);
  return 0;
}

long peer_cudnn_version(void) { return 0; }

const char *peer_cudnn_path(void) { return ""; }

int peer_cudnn_attention(const fp2_params *p, int len, const void *q, const void *k, const void *v, void *o,
                         int trials, double *ms_per_trial, char *err) {
  (void)p, (void)len, (void)q, (void)k, (void)v, (void)o, (void)trials, (void)ms_per_trial;
  err_set(err, NO_HEADERS);
  return -1;
}

int peer_cudnn_attention_fp8(const fp2_params *p, int len, const void *q, const void *k, const void *v,
                             const float *scales, void *o, int trials, double *ms_per_trial, char *err) {
  (void)p, (void)len, (void)q, (void)k, (void)v, (void)scales, (void)o, (void)trials, (void)ms_per_trial;
  err_set(err, NO_HEADERS);
  return -1;
}

int peer_cudnn_plan_offline(const fp2_params *p, int len, const char *device_json, char *err) {
  (void)p, (void)len, (void)device_json;
  err_set(err, NO_HEADERS);
  return -1;
}

#else

/* ---- the library, resolved at run time ---- */

typedef struct cudnn_api {
  void *lib;
  char path[1024]; /* the file the loader opened */
  long version, cudart_version;
  size_t (*GetVersion)(void);
  size_t (*GetCudartVersion)(void);
  const char *(*GetErrorString)(cudnnStatus_t);
  void (*GetLastErrorString)(char *, size_t);
  cudnnStatus_t (*Create)(cudnnHandle_t *);
  cudnnStatus_t (*Destroy)(cudnnHandle_t);
  cudnnStatus_t (*SetStream)(cudnnHandle_t, cudaStream_t);
  cudnnStatus_t (*BackendCreateDescriptor)(cudnnBackendDescriptorType_t, cudnnBackendDescriptor_t *);
  cudnnStatus_t (*BackendDestroyDescriptor)(cudnnBackendDescriptor_t);
  cudnnStatus_t (*BackendFinalize)(cudnnBackendDescriptor_t);
  cudnnStatus_t (*BackendSetAttribute)(cudnnBackendDescriptor_t, cudnnBackendAttributeName_t,
                                       cudnnBackendAttributeType_t, int64_t, const void *);
  cudnnStatus_t (*BackendGetAttribute)(cudnnBackendDescriptor_t const, cudnnBackendAttributeName_t,
                                       cudnnBackendAttributeType_t, int64_t, int64_t *, void *);
  cudnnStatus_t (*BackendExecute)(cudnnHandle_t, cudnnBackendDescriptor_t, cudnnBackendDescriptor_t);
} cudnn_api;

static cudnn_api api; /* api.lib != NULL once loaded; kept for the process */

/* dlsym into a function pointer without a cast between object and function pointers. */
static int resolve(void *lib, const char *name, void *fn_ptr, size_t fn_size, char *why, const char *path) {
  void *sym = dlsym(lib, name);
  if (!sym) {
    err_set(why, "'%s' has no %s: it is not cuDNN 9", path, name);
    return -1;
  }
  memcpy(fn_ptr, &sym, fn_size);
  return 0;
}

#define RESOLVE(field, name)                                                              \
  if (resolve(lib, name, &a.field, sizeof a.field, why, path) != 0) goto unusable

enum { LOAD_OK = 0, LOAD_MISSING = -1, LOAD_UNUSABLE = -2 };

/* Opens path and resolves every function; on success fills api. LOAD_MISSING when the
   loader could not open it (why: its message), LOAD_UNUSABLE when it is not cuDNN 9. */
static int load_from(const char *path, char *why) {
  dlerror();
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *e = dlerror();
    err_set(why, "%s", e ? e : "dlopen failed");
    return LOAD_MISSING;
  }
  cudnn_api a;
  memset(&a, 0, sizeof a);
  RESOLVE(GetVersion, "cudnnGetVersion");
  RESOLVE(GetCudartVersion, "cudnnGetCudartVersion");
  RESOLVE(GetErrorString, "cudnnGetErrorString");
  RESOLVE(GetLastErrorString, "cudnnGetLastErrorString");
  RESOLVE(Create, "cudnnCreate");
  RESOLVE(Destroy, "cudnnDestroy");
  RESOLVE(SetStream, "cudnnSetStream");
  RESOLVE(BackendCreateDescriptor, "cudnnBackendCreateDescriptor");
  RESOLVE(BackendDestroyDescriptor, "cudnnBackendDestroyDescriptor");
  RESOLVE(BackendFinalize, "cudnnBackendFinalize");
  RESOLVE(BackendSetAttribute, "cudnnBackendSetAttribute");
  RESOLVE(BackendGetAttribute, "cudnnBackendGetAttribute");
  RESOLVE(BackendExecute, "cudnnBackendExecute");
  a.version = (long)a.GetVersion();
  a.cudart_version = (long)a.GetCudartVersion();
  if (a.version < 90000) {
    err_set(why, "'%s' is cuDNN %ld: 9.0 or later is needed", path, a.version);
    goto unusable;
  }
  a.lib = lib;
  /* The file itself, also when the loader searched for a bare name. */
  Dl_info info;
  void *sym;
  memcpy(&sym, &a.GetVersion, sizeof sym); /* POSIX: function and object pointers agree */
  if (dladdr(sym, &info) != 0 && info.dli_fname && info.dli_fname[0])
    snprintf(a.path, sizeof a.path, "%s", info.dli_fname);
  else
    snprintf(a.path, sizeof a.path, "%s", path);
  api = a;
  return LOAD_OK;
unusable:
  dlclose(lib);
  return LOAD_UNUSABLE;
}

/* Where pip installs cuDNN (nvidia-cudnn-cu12 / -cu13, as PyTorch pulls it in), for
   machines where nobody set FP2_CUDNN_LIB. LOAD_OK, or the outcome of the last file tried
   (LOAD_MISSING when none matched). */
static int load_from_pip(char *why) {
  static const char *const patterns[] = {
      "/usr/local/lib/python3*/dist-packages/nvidia/cudnn/lib/" CUDNN_SONAME,
      "/usr/local/lib/python3*/site-packages/nvidia/cudnn/lib/" CUDNN_SONAME,
      "/usr/lib/python3/dist-packages/nvidia/cudnn/lib/" CUDNN_SONAME,
      "/usr/lib/python3*/site-packages/nvidia/cudnn/lib/" CUDNN_SONAME,
      "/opt/conda/lib/python3*/site-packages/nvidia/cudnn/lib/" CUDNN_SONAME,
  };
  static const char *const env_roots[] = {"VIRTUAL_ENV", "CONDA_PREFIX", "HOME"};
  const size_t nroots = sizeof env_roots / sizeof env_roots[0], npatterns = sizeof patterns / sizeof patterns[0];
  char pattern[1024];
  int last = LOAD_MISSING;
  for (size_t r = 0; r < nroots + npatterns; r++) {
    if (r < nroots) {
      const char *root = getenv(env_roots[r]);
      if (!root || !root[0]) continue;
      const char *mid = strcmp(env_roots[r], "HOME") == 0 ? "/.local" : "";
      snprintf(pattern, sizeof pattern, "%s%s/lib/python3*/site-packages/nvidia/cudnn/lib/%s", root, mid,
               CUDNN_SONAME);
    } else {
      snprintf(pattern, sizeof pattern, "%s", patterns[r - nroots]);
    }
    glob_t g;
    if (glob(pattern, 0, NULL, &g) != 0) continue;
    for (size_t i = 0; i < g.gl_pathc; i++) {
      char reason[ERR_LEN];
      last = load_from(g.gl_pathv[i], reason);
      if (last == LOAD_OK) break;
      err_set(why, "'%s': %s", g.gl_pathv[i], reason);
    }
    globfree(&g);
    if (last == LOAD_OK) return LOAD_OK;
  }
  return last;
}

int peer_cudnn_available(char *why) {
  if (api.lib) return 1;
  char reason[ERR_LEN] = "";
  const char *spec = getenv("FP2_CUDNN_LIB");
  if (spec && spec[0]) {
    char path[1024];
    if (peer_cudnn_lib_path(spec, path, sizeof path) != 0) {
      err_set(why, "cuDNN not found: FP2_CUDNN_LIB is too long");
      return 0;
    }
    int rc = load_from(path, reason);
    if (rc == LOAD_OK) return 1;
    if (rc == LOAD_MISSING)
      err_set(why, "cuDNN not found at '%s' (FP2_CUDNN_LIB): %s", path, reason);
    else
      err_set(why, "cuDNN named by FP2_CUDNN_LIB is unusable: %s", reason);
    return 0;
  }
  int rc = load_from(CUDNN_SONAME, reason);
  if (rc == LOAD_OK) return 1;
  /* On the default path but unusable (a dependency missing, or too old): say so. */
  if (rc == LOAD_UNUSABLE || strstr(reason, CUDNN_SONAME ": cannot open") == NULL) {
    err_set(why, "cuDNN found but unusable: %s", reason);
    return 0;
  }
  rc = load_from_pip(reason);
  if (rc == LOAD_OK) return 1;
  if (reason[0] && strstr(reason, "': ") != NULL)
    err_set(why, "cuDNN found but unusable: %s", reason);
  else
    err_set(why, "cuDNN not found (set FP2_CUDNN_LIB to %s or its directory)", CUDNN_SONAME);
  return 0;
}

long peer_cudnn_version(void) { return api.lib ? api.version : 0; }

const char *peer_cudnn_path(void) { return api.lib ? api.path : ""; }

/* ---- graph building ---- */

/* Every descriptor created for one graph, destroyed together; the first failure is kept
   in err and later calls do nothing, so building code reads straight through. */
#define GB_MAX_DESC 96
#define GB_MAX_OPS 32

typedef struct graph_build {
  cudnnBackendDescriptor_t desc[GB_MAX_DESC];
  int ndesc;
  cudnnBackendDescriptor_t ops[GB_MAX_OPS];
  int nops;
  int failed;
  char *err;
} graph_build;

/* "CUDNN_STATUS_BAD_PARAM: <cuDNN's last error message>" into buf. */
static void status_text(cudnnStatus_t s, char *buf, size_t len) {
  char last[256] = "";
  api.GetLastErrorString(last, sizeof last);
  for (char *c = last; *c; c++)
    if (*c == '\n' || *c == '\r') *c = ' ';
  size_t n = strlen(last);
  while (n > 0 && last[n - 1] == ' ') last[--n] = '\0';
  snprintf(buf, len, "%s%s%s", api.GetErrorString(s), last[0] ? ": " : "", last);
}

static int gb_check(graph_build *g, cudnnStatus_t s, const char *call, const char *what) {
  if (s == CUDNN_STATUS_SUCCESS) return 0;
  if (!g->failed) {
    char text[200];
    status_text(s, text, sizeof text);
    err_set(g->err, "cuDNN: %s(%s) failed: %s", call, what, text);
  }
  g->failed = 1;
  return -1;
}

static cudnnBackendDescriptor_t gb_new(graph_build *g, cudnnBackendDescriptorType_t type, const char *what) {
  if (g->failed) return NULL;
  if (g->ndesc == GB_MAX_DESC) {
    err_set(g->err, "cuDNN: too many descriptors building %s", what);
    g->failed = 1;
    return NULL;
  }
  cudnnBackendDescriptor_t d = NULL;
  if (gb_check(g, api.BackendCreateDescriptor(type, &d), "cudnnBackendCreateDescriptor", what) != 0) return NULL;
  g->desc[g->ndesc++] = d;
  return d;
}

static void gb_set_(graph_build *g, cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name,
                    const char *name_text, cudnnBackendAttributeType_t type, int64_t count, const void *value,
                    const char *what) {
  if (g->failed) return;
  char call[160];
  snprintf(call, sizeof call, "cudnnBackendSetAttribute %s", name_text);
  gb_check(g, api.BackendSetAttribute(d, name, type, count, value), call, what);
}

/* The attribute's name goes into the error message. */
#define gb_set(g, d, name, type, count, value, what) gb_set_(g, d, name, #name, type, count, value, what)

static void gb_finalize(graph_build *g, cudnnBackendDescriptor_t d, const char *what) {
  if (g->failed) return;
  gb_check(g, api.BackendFinalize(d), "cudnnBackendFinalize", what);
}

static void gb_free(graph_build *g) {
  for (int i = g->ndesc - 1; i >= 0; i--) api.BackendDestroyDescriptor(g->desc[i]);
  g->ndesc = 0;
  g->nops = 0;
}

static void gb_add_op(graph_build *g, cudnnBackendDescriptor_t op, const char *what) {
  if (g->failed) return;
  if (g->nops == GB_MAX_OPS) {
    err_set(g->err, "cuDNN: too many operations at %s", what);
    g->failed = 1;
    return;
  }
  g->ops[g->nops++] = op;
}

enum tensor_kind { T_IO = 0, T_VIRTUAL = 1, T_BY_VALUE = 2 };

/* A tensor descriptor of 4 dimensions (by-value scalars too: the backend refuses a
   pointwise operation whose operands differ in rank). */
static cudnnBackendDescriptor_t gb_tensor(graph_build *g, int64_t uid, cudnnDataType_t type,
                                          const cudnn_tensor_shape *shape, enum tensor_kind kind,
                                          const char *what) {
  cudnnBackendDescriptor_t t = gb_new(g, CUDNN_BACKEND_TENSOR_DESCRIPTOR, what);
  const int64_t alignment = 16;
  bool is_virtual = kind == T_VIRTUAL, by_value = kind == T_BY_VALUE;
  gb_set(g, t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid, what);
  gb_set(g, t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type, what);
  gb_set(g, t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, shape->dim, what);
  gb_set(g, t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, shape->stride, what);
  gb_set(g, t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment, what);
  gb_set(g, t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &is_virtual, what);
  if (by_value) gb_set(g, t, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &by_value, what);
  gb_finalize(g, t, what);
  return t;
}

/* y = mode(x[, b[, t]]): a pointwise descriptor and its operation. axis >= 0 for
   GEN_INDEX. */
static void gb_pointwise(graph_build *g, cudnnPointwiseMode_t mode, cudnnDataType_t math,
                         cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t b, cudnnBackendDescriptor_t t,
                         cudnnBackendDescriptor_t y, int64_t axis, const char *what) {
  cudnnBackendDescriptor_t pw = gb_new(g, CUDNN_BACKEND_POINTWISE_DESCRIPTOR, what);
  gb_set(g, pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode, what);
  gb_set(g, pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &math, what);
  if (mode == CUDNN_POINTWISE_GEN_INDEX) gb_set(g, pw, CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, 1, &axis, what);
  gb_finalize(g, pw, what);
  cudnnBackendDescriptor_t op = gb_new(g, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, what);
  const float alpha1 = 1.0f, alpha2 = 1.0f;
  gb_set(g, op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &pw, what);
  gb_set(g, op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x, what);
  if (b) gb_set(g, op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &b, what);
  if (t) gb_set(g, op, CUDNN_ATTR_OPERATION_POINTWISE_TDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &t, what);
  gb_set(g, op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y, what);
  gb_set(g, op, CUDNN_ATTR_OPERATION_POINTWISE_ALPHA1, CUDNN_TYPE_FLOAT, 1, &alpha1, what);
  gb_set(g, op, CUDNN_ATTR_OPERATION_POINTWISE_ALPHA2, CUDNN_TYPE_FLOAT, 1, &alpha2, what);
  gb_finalize(g, op, what);
  gb_add_op(g, op, what);
}

/* c = a · b, accumulated in f32. */
static void gb_matmul(graph_build *g, cudnnBackendDescriptor_t a, cudnnBackendDescriptor_t b,
                      cudnnBackendDescriptor_t c, const char *what) {
  const cudnnDataType_t comp = CUDNN_DATA_FLOAT;
  cudnnBackendDescriptor_t mm = gb_new(g, CUDNN_BACKEND_MATMUL_DESCRIPTOR, what);
  gb_set(g, mm, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp, what);
  gb_finalize(g, mm, what);
  cudnnBackendDescriptor_t op = gb_new(g, CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR, what);
  gb_set(g, op, CUDNN_ATTR_OPERATION_MATMUL_ADESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &a, what);
  gb_set(g, op, CUDNN_ATTR_OPERATION_MATMUL_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &b, what);
  gb_set(g, op, CUDNN_ATTR_OPERATION_MATMUL_CDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &c, what);
  gb_set(g, op, CUDNN_ATTR_OPERATION_MATMUL_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &mm, what);
  gb_finalize(g, op, what);
  gb_add_op(g, op, what);
}

/* y = reduce(x) over the dimensions where y has extent 1, in f32. */
static void gb_reduction(graph_build *g, cudnnReduceTensorOp_t mode, cudnnBackendDescriptor_t x,
                         cudnnBackendDescriptor_t y, const char *what) {
  const cudnnDataType_t comp = CUDNN_DATA_FLOAT;
  cudnnBackendDescriptor_t rd = gb_new(g, CUDNN_BACKEND_REDUCTION_DESCRIPTOR, what);
  gb_set(g, rd, CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &mode, what);
  gb_set(g, rd, CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp, what);
  gb_finalize(g, rd, what);
  cudnnBackendDescriptor_t op = gb_new(g, CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR, what);
  gb_set(g, op, CUDNN_ATTR_OPERATION_REDUCTION_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &rd, what);
  gb_set(g, op, CUDNN_ATTR_OPERATION_REDUCTION_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x, what);
  gb_set(g, op, CUDNN_ATTR_OPERATION_REDUCTION_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y, what);
  gb_finalize(g, op, what);
  gb_add_op(g, op, what);
}

/* Unique ids of the tensors the variant pack binds. */
enum {
  UID_Q = 1,
  UID_K,
  UID_V,
  UID_O,
  UID_STATS,
  UID_SCALE,     /* by value: 1/sqrt(D) */
  UID_NEG_INF,   /* by value: the masked logit */
  UID_DESCALE_Q, /* FP8: device scalars */
  UID_DESCALE_K,
  UID_DESCALE_V,
  UID_DESCALE_S,
  UID_SCALE_S,
  UID_SCALE_O,
  UID_AMAX_S,
  UID_AMAX_O,
  UID_VIRTUAL = 100 /* intermediates from here */
};

#define FP8_AUX_SLOTS 8 /* device scalars, one per 16-byte slot: see aux_slot */

/* Slot of each FP8 device scalar in the aux buffer (4 floats apart: 16-byte aligned). */
enum { AUX_DESCALE_Q, AUX_DESCALE_K, AUX_DESCALE_V, AUX_DESCALE_S, AUX_SCALE_S, AUX_SCALE_O, AUX_AMAX_S, AUX_AMAX_O };

static int64_t aux_slot(int i) { return 4 * (int64_t)i; }

typedef struct sdpa_graph {
  graph_build g;
  cudnnBackendDescriptor_t opgraph;
  int stats_out; /* stats is an output (training form) rather than virtual */
  int fp8;
  float scale, neg_inf; /* by-value scalars: must outlive execution */
} sdpa_graph;

/* Builds the operation graph of peer_cudnn.h's comment. handle may be NULL (deviceless
   planning, cuDNN 9.8+). */
static int build_sdpa(sdpa_graph *sg, const peer_cudnn_layout *lay, int fp8, int stats_out, cudnnHandle_t handle,
                      char *err) {
  graph_build *g = &sg->g;
  memset(sg, 0, sizeof *sg);
  g->err = err;
  sg->fp8 = fp8;
  sg->stats_out = stats_out;
  sg->scale = (float)(1.0 / sqrt((double)lay->q.dim[3]));
  /* cudnn-frontend masks with the lowest float before cuDNN 9.10, -inf since. */
  sg->neg_inf = api.version < 91000 ? -FLT_MAX : -INFINITY;

  const cudnnDataType_t io = fp8 ? CUDNN_DATA_FP8_E4M3 : CUDNN_DATA_BFLOAT16, f32 = CUDNN_DATA_FLOAT;
  int64_t vid = UID_VIRTUAL;
  cudnnBackendDescriptor_t q = gb_tensor(g, UID_Q, io, &lay->q, T_IO, "tensor q");
  cudnnBackendDescriptor_t kt = gb_tensor(g, UID_K, io, &lay->kt, T_IO, "tensor k (transposed)");
  cudnnBackendDescriptor_t v = gb_tensor(g, UID_V, io, &lay->v, T_IO, "tensor v");
  cudnnBackendDescriptor_t o = gb_tensor(g, UID_O, io, &lay->o, T_IO, "tensor o");
  cudnnBackendDescriptor_t scale = gb_tensor(g, UID_SCALE, f32, &lay->scalar, T_BY_VALUE, "scalar attn_scale");
  cudnnBackendDescriptor_t neg_inf = gb_tensor(g, UID_NEG_INF, f32, &lay->scalar, T_BY_VALUE, "scalar -inf");

  /* S = Q · Kᵀ, scaled */
  cudnnBackendDescriptor_t s = gb_tensor(g, vid++, f32, &lay->s, T_VIRTUAL, "virtual s");
  gb_matmul(g, q, kt, s, "bmm1 q.kT");
  cudnnBackendDescriptor_t s_scaled = gb_tensor(g, vid++, f32, &lay->s, T_VIRTUAL, "virtual s*scale");
  gb_pointwise(g, CUDNN_POINTWISE_MUL, f32, s, scale, NULL, s_scaled, -1, "attn_scale");
  cudnnBackendDescriptor_t last = s_scaled;
  if (fp8) {
    cudnnBackendDescriptor_t dq = gb_tensor(g, UID_DESCALE_Q, f32, &lay->scalar, T_IO, "tensor descale_q");
    cudnnBackendDescriptor_t dk = gb_tensor(g, UID_DESCALE_K, f32, &lay->scalar, T_IO, "tensor descale_k");
    cudnnBackendDescriptor_t s_dq = gb_tensor(g, vid++, f32, &lay->s, T_VIRTUAL, "virtual s*descale_q");
    gb_pointwise(g, CUDNN_POINTWISE_MUL, f32, last, dq, NULL, s_dq, -1, "descale_q");
    cudnnBackendDescriptor_t s_dk = gb_tensor(g, vid++, f32, &lay->s, T_VIRTUAL, "virtual s*descale_k");
    gb_pointwise(g, CUDNN_POINTWISE_MUL, f32, s_dq, dk, NULL, s_dk, -1, "descale_k");
    last = s_dk;
  }

  /* causal mask, top-left aligned: keep row >= col */
  cudnnBackendDescriptor_t row = gb_tensor(g, vid++, CUDNN_DATA_INT32, &lay->s, T_VIRTUAL, "virtual row index");
  gb_pointwise(g, CUDNN_POINTWISE_GEN_INDEX, f32, last, NULL, NULL, row, 2, "gen_row_index");
  cudnnBackendDescriptor_t col = gb_tensor(g, vid++, CUDNN_DATA_INT32, &lay->s, T_VIRTUAL, "virtual col index");
  gb_pointwise(g, CUDNN_POINTWISE_GEN_INDEX, f32, last, NULL, NULL, col, 3, "gen_col_index");
  cudnnBackendDescriptor_t keep = gb_tensor(g, vid++, CUDNN_DATA_BOOLEAN, &lay->s, T_VIRTUAL, "virtual row>=col");
  gb_pointwise(g, CUDNN_POINTWISE_CMP_GE, CUDNN_DATA_BOOLEAN, row, col, NULL, keep, -1, "row>=col");
  cudnnBackendDescriptor_t masked = gb_tensor(g, vid++, f32, &lay->s, T_VIRTUAL, "virtual masked s");
  gb_pointwise(g, CUDNN_POINTWISE_BINARY_SELECT, f32, last, neg_inf, keep, masked, -1, "causal select");

  /* softmax with its statistics */
  cudnnBackendDescriptor_t m = gb_tensor(g, vid++, f32, &lay->stats, T_VIRTUAL, "virtual row max");
  gb_reduction(g, CUDNN_REDUCE_TENSOR_MAX, masked, m, "softmax max");
  cudnnBackendDescriptor_t sub = gb_tensor(g, vid++, f32, &lay->s, T_VIRTUAL, "virtual s-max");
  gb_pointwise(g, CUDNN_POINTWISE_SUB, f32, masked, m, NULL, sub, -1, "softmax sub");
  cudnnBackendDescriptor_t e = gb_tensor(g, vid++, f32, &lay->s, T_VIRTUAL, "virtual exp");
  gb_pointwise(g, CUDNN_POINTWISE_EXP, f32, sub, NULL, NULL, e, -1, "softmax exp");
  cudnnBackendDescriptor_t z = gb_tensor(g, vid++, f32, &lay->stats, T_VIRTUAL, "virtual row sum");
  gb_reduction(g, CUDNN_REDUCE_TENSOR_ADD, e, z, "softmax sum");
  cudnnBackendDescriptor_t logz = gb_tensor(g, vid++, f32, &lay->stats, T_VIRTUAL, "virtual log sum");
  gb_pointwise(g, CUDNN_POINTWISE_LOG, f32, z, NULL, NULL, logz, -1, "softmax log");
  cudnnBackendDescriptor_t stats = stats_out ? gb_tensor(g, UID_STATS, f32, &lay->stats, T_IO, "tensor stats")
                                             : gb_tensor(g, vid++, f32, &lay->stats, T_VIRTUAL, "virtual stats");
  gb_pointwise(g, CUDNN_POINTWISE_ADD, f32, m, logz, NULL, stats, -1, "softmax stats");

  /* P in the second matmul's operand type */
  cudnnBackendDescriptor_t pr = gb_tensor(g, vid++, fp8 ? f32 : io, &lay->s, T_VIRTUAL, "virtual p");
  gb_pointwise(g, CUDNN_POINTWISE_DIV, f32, e, z, NULL, pr, -1, "softmax div");
  if (!fp8) {
    gb_matmul(g, pr, v, o, "bmm2 p.v");
  } else {
    cudnnBackendDescriptor_t amax_s = gb_tensor(g, UID_AMAX_S, f32, &lay->scalar, T_IO, "tensor amax_s");
    gb_reduction(g, CUDNN_REDUCE_TENSOR_AMAX, pr, amax_s, "amax_s");
    cudnnBackendDescriptor_t scale_s = gb_tensor(g, UID_SCALE_S, f32, &lay->scalar, T_IO, "tensor scale_s");
    cudnnBackendDescriptor_t p8 = gb_tensor(g, vid++, io, &lay->s, T_VIRTUAL, "virtual p*scale_s (e4m3)");
    gb_pointwise(g, CUDNN_POINTWISE_MUL, f32, pr, scale_s, NULL, p8, -1, "scale_s");
    cudnnBackendDescriptor_t pv = gb_tensor(g, vid++, f32, &lay->o, T_VIRTUAL, "virtual p.v");
    gb_matmul(g, p8, v, pv, "bmm2 p.v");
    cudnnBackendDescriptor_t ds = gb_tensor(g, UID_DESCALE_S, f32, &lay->scalar, T_IO, "tensor descale_s");
    cudnnBackendDescriptor_t dv = gb_tensor(g, UID_DESCALE_V, f32, &lay->scalar, T_IO, "tensor descale_v");
    cudnnBackendDescriptor_t so = gb_tensor(g, UID_SCALE_O, f32, &lay->scalar, T_IO, "tensor scale_o");
    cudnnBackendDescriptor_t pv_s = gb_tensor(g, vid++, f32, &lay->o, T_VIRTUAL, "virtual o*descale_s");
    gb_pointwise(g, CUDNN_POINTWISE_MUL, f32, pv, ds, NULL, pv_s, -1, "descale_s");
    cudnnBackendDescriptor_t pv_v = gb_tensor(g, vid++, f32, &lay->o, T_VIRTUAL, "virtual o*descale_v");
    gb_pointwise(g, CUDNN_POINTWISE_MUL, f32, pv_s, dv, NULL, pv_v, -1, "descale_v");
    gb_pointwise(g, CUDNN_POINTWISE_MUL, f32, pv_v, so, NULL, o, -1, "scale_o");
    cudnnBackendDescriptor_t amax_o = gb_tensor(g, UID_AMAX_O, f32, &lay->scalar, T_IO, "tensor amax_o");
    gb_reduction(g, CUDNN_REDUCE_TENSOR_AMAX, pv_v, amax_o, "amax_o");
  }

  sg->opgraph = gb_new(g, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, "operation graph");
  gb_set(g, sg->opgraph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, g->nops, g->ops,
         "operation graph");
  if (handle) gb_set(g, sg->opgraph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle, "operation graph");
  gb_finalize(g, sg->opgraph, "operation graph");
  return g->failed ? -1 : 0;
}

/* ---- plans ---- */

typedef struct sdpa_plan {
  cudnnBackendDescriptor_t plan;
  int64_t workspace;
  int64_t engine;
} sdpa_plan;

/* The global index of the engine behind a finalised plan's config, or -1. */
static int64_t engine_index(cudnnBackendDescriptor_t cfg) {
  cudnnBackendDescriptor_t engine = NULL;
  int64_t index = -1, n = 0;
  if (api.BackendCreateDescriptor(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &engine) != CUDNN_STATUS_SUCCESS) return -1;
  if (api.BackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &engine) ==
          CUDNN_STATUS_SUCCESS &&
      n == 1)
    api.BackendGetAttribute(engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &n, &index);
  api.BackendDestroyDescriptor(engine);
  return index;
}

/* The engine config's own workspace estimate (cuDNN 9.2+), or -1. */
static int64_t config_workspace(cudnnBackendDescriptor_t cfg) {
  int64_t ws = -1, n = 0;
  if (api.version < 90200 ||
      api.BackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &n, &ws) !=
          CUDNN_STATUS_SUCCESS)
    return -1;
  return ws;
}

/* Outcome of make_plan besides 0 (a plan) and -1: without a driver (deviceless planning
   on a machine with only the toolkit's stub libcuda), an engine accepted the graph and
   compiled its kernel, and only loading it failed. */
#define PLAN_COMPILED_ONLY 1

/* Asks the heuristics (mode A, then the fallback list) for engine configs and keeps the
   first whose execution plan finalises. The plan's descriptors belong to sg->g. */
static int make_plan(sdpa_graph *sg, cudnnHandle_t handle, cudnnBackendDescriptor_t deviceprop, sdpa_plan *out,
                     char *err) {
  graph_build *g = &sg->g;
  static const cudnnBackendHeurMode_t modes[] = {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK};
  static const char *const mode_names[] = {"heuristics mode a", "fallback heuristics"};
  char failures[ERR_LEN] = ""; /* "engine 12: why; engine 3: why" of the first few */
  int64_t tried = 0;
  int compiled_only = 0;
  for (int mi = 0; mi < 2; mi++) {
    cudnnBackendDescriptor_t heur = gb_new(g, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, mode_names[mi]);
    gb_set(g, heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &sg->opgraph,
           mode_names[mi]);
    gb_set(g, heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &modes[mi], mode_names[mi]);
    if (deviceprop)
      gb_set(g, heur, CUDNN_ATTR_ENGINEHEUR_DEVICEPROP, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &deviceprop,
             mode_names[mi]);
    gb_finalize(g, heur, mode_names[mi]);
    if (g->failed) return -1;
    int64_t count = 0;
    cudnnStatus_t st =
        api.BackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, NULL);
    if (gb_check(g, st, "cudnnBackendGetAttribute CUDNN_ATTR_ENGINEHEUR_RESULTS", mode_names[mi]) != 0) return -1;
    if (count <= 0) continue;
    if (count > 16) count = 16; /* the first few are the heuristics' best guesses */
    cudnnBackendDescriptor_t cfgs[16];
    for (int64_t i = 0; i < count; i++) cfgs[i] = gb_new(g, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, "engine config");
    if (g->failed) return -1;
    int64_t got = 0;
    st = api.BackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &got,
                                 cfgs);
    if (gb_check(g, st, "cudnnBackendGetAttribute CUDNN_ATTR_ENGINEHEUR_RESULTS", mode_names[mi]) != 0) return -1;
    for (int64_t i = 0; i < got; i++) {
      tried++;
      cudnnBackendDescriptor_t plan = gb_new(g, CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, "execution plan");
      /* cuDNN 9.0's frontend gave the plan the handle; later ones leave it to the
         operation graph and mark the attribute deprecated: set it, ignore a refusal. */
      if (handle) api.BackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
      gb_set(g, plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfgs[i],
             "execution plan");
      if (g->failed) return -1;
      st = api.BackendFinalize(plan);
      if (st != CUDNN_STATUS_SUCCESS) {
        /* Not every proposed engine supports the graph: try the next, remember why. */
        char text[200];
        status_text(st, text, sizeof text);
        size_t used = strlen(failures);
        if (used + 40 < sizeof failures)
          snprintf(failures + used, sizeof failures - used, "%sengine %lld: %s", used ? "; " : "",
                   (long long)engine_index(cfgs[i]), text);
        if (!handle && !compiled_only && st == CUDNN_STATUS_EXECUTION_FAILED_CUDA_DRIVER) {
          compiled_only = 1;
          out->plan = NULL;
          out->workspace = config_workspace(cfgs[i]);
          out->engine = engine_index(cfgs[i]);
        }
        continue;
      }
      int64_t ws = 0, n = 0;
      st = api.BackendGetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &n, &ws);
      if (gb_check(g, st, "cudnnBackendGetAttribute CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE", "execution plan") != 0)
        return -1;
      out->plan = plan;
      out->workspace = ws;
      out->engine = engine_index(cfgs[i]);
      return 0;
    }
  }
  if (compiled_only) return PLAN_COMPILED_ONLY;
  if (tried == 0)
    err_set(err, "cuDNN: the heuristics offer no engine for this attention graph");
  else
    err_set(err, "cuDNN: none of the %lld engines offered could build a plan (%s)", (long long)tried, failures);
  return -1;
}

static void note_plan(const sdpa_graph *sg, const sdpa_plan *pl, const char *where) {
  snprintf(plan_note, sizeof plan_note,
           "cudnn %ld.%ld.%ld for cuda %ld.%ld (%s), %s sdpa, engine %lld, workspace %lld bytes, stats %s%s%s",
           api.version / 10000, api.version / 100 % 100, api.version % 100, api.cudart_version / 1000,
           api.cudart_version / 10 % 100, api.path, sg->fp8 ? "fp8" : "bf16", (long long)pl->engine,
           (long long)pl->workspace, sg->stats_out ? "output" : "virtual", where[0] ? ", " : "", where);
}

/* Builds the graph and a plan: first the inference form (stats virtual), then, if no
   engine takes it, the training form with stats as an output. 0, PLAN_COMPILED_ONLY
   (deviceless only) or -1. */
static int graph_and_plan(const peer_cudnn_layout *lay, int fp8, cudnnHandle_t handle,
                          cudnnBackendDescriptor_t deviceprop, sdpa_graph *sg, sdpa_plan *pl, char *err) {
  char first[ERR_LEN] = "";
  for (int stats_out = 0; stats_out < 2; stats_out++) {
    memset(pl, 0, sizeof *pl);
    if (build_sdpa(sg, lay, fp8, stats_out, handle, err) == 0) {
      int rc = make_plan(sg, handle, deviceprop, pl, err);
      if (rc >= 0) return rc;
    }
    gb_free(&sg->g);
    if (stats_out == 0) snprintf(first, sizeof first, "%s", err);
  }
  /* Report the inference form's failure: it is the graph we meant. */
  char second[ERR_LEN];
  snprintf(second, sizeof second, "%s", err);
  err_set(err, "%s (with stats as an output: %s)", first, strcmp(first, second) == 0 ? "the same" : second);
  return -1;
}

int peer_cudnn_plan_offline(const fp2_params *p, int len, const char *device_json, char *err) {
  if (!peer_cudnn_available(err)) return -1;
  if (api.version < 90800) {
    err_set(err, "cuDNN %ld cannot plan without a GPU: 9.8 or later is needed", api.version);
    return -1;
  }
  peer_cudnn_layout lay;
  if (peer_cudnn_layout_of(p, len, &lay, err) != 0) return -1;
  cudnnBackendDescriptor_t dp = NULL;
  cudnnStatus_t st = api.BackendCreateDescriptor(CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR, &dp);
  char text[200];
  if (st == CUDNN_STATUS_SUCCESS)
    st = api.BackendSetAttribute(dp, CUDNN_ATTR_DEVICEPROP_JSON_REPRESENTATION, CUDNN_TYPE_CHAR,
                                 (int64_t)strlen(device_json), device_json);
  if (st == CUDNN_STATUS_SUCCESS) st = api.BackendFinalize(dp);
  if (st != CUDNN_STATUS_SUCCESS) {
    status_text(st, text, sizeof text);
    err_set(err, "cuDNN: the device description was refused: %s", text);
    if (dp) api.BackendDestroyDescriptor(dp);
    return -1;
  }
  sdpa_graph sg;
  sdpa_plan pl;
  int rc = graph_and_plan(&lay, p->dtype == FP2_FP8, NULL, dp, &sg, &pl, err);
  if (rc >= 0) {
    note_plan(&sg, &pl,
              rc == 0 ? "planned without a GPU"
                      : "compiled without a GPU, not loaded (no driver): workspace is the config's estimate");
    gb_free(&sg.g);
  }
  api.BackendDestroyDescriptor(dp);
  return rc;
}

/* ---- execution ---- */

#define CUDNN_OR_FAIL(call, what)                                                         \
  do {                                                                                    \
    cudnnStatus_t s_ = (call);                                                            \
    if (s_ != CUDNN_STATUS_SUCCESS) {                                                     \
      char text_[200];                                                                    \
      status_text(s_, text_, sizeof text_);                                               \
      err_set(err, "cuDNN: %s failed (%s): %s", #call, what, text_);                     \
      goto done;                                                                          \
    }                                                                                     \
  } while (0)

/* One execution of the planned graph, the run that gpu_time_runs repeats (the handle is
   bound to the stream it times). */
typedef struct plan_run {
  cudnnHandle_t handle;
  cudnnBackendDescriptor_t plan, pack;
} plan_run;

static int execute_plan(void *ctx, cudaStream_t stream, char *err) {
  (void)stream;
  const plan_run *r = ctx;
  cudnnStatus_t s = api.BackendExecute(r->handle, r->plan, r->pack);
  if (s == CUDNN_STATUS_SUCCESS) return 0;
  char text[200];
  status_text(s, text, sizeof text);
  err_set(err, "cuDNN: executing the plan failed: %s", text);
  return -1;
}

static int run_attention(const fp2_params *p, int len, const void *q, const void *k, const void *v,
                         const float *scales, void *o, int trials, double *ms_per_trial, char *err) {
  if (!peer_cudnn_available(err)) return -1;
  const int fp8 = scales != NULL;
  if (trials < 0 || (trials > 0 && !ms_per_trial)) {
    err_set(err, "cudnn peer: %d trials", trials);
    return -1;
  }
  peer_cudnn_layout lay;
  if (peer_cudnn_layout_of(p, len, &lay, err) != 0) return -1;

  int rc = -1, built = 0;
  cudnnHandle_t handle = NULL;
  cudnnBackendDescriptor_t pack = NULL;
  cudaStream_t stream = NULL;
  void *workspace = NULL, *flush = NULL;
  float *stats = NULL, *aux = NULL;
  sdpa_graph sg;
  sdpa_plan pl;

  /* The caller's inputs may still be in flight on its own streams. */
  CUDA_GOTO(cudaDeviceSynchronize(), done);
  CUDNN_OR_FAIL(api.Create(&handle), "creating the handle");
  CUDA_GOTO(cudaStreamCreate(&stream), done);
  CUDNN_OR_FAIL(api.SetStream(handle, stream), "binding the stream");
  if (graph_and_plan(&lay, fp8, handle, NULL, &sg, &pl, err) != 0) goto done;
  built = 1;

  if (pl.workspace > 0) CUDA_GOTO(cudaMalloc(&workspace, (size_t)pl.workspace), done);
  if (sg.stats_out) CUDA_GOTO(cudaMalloc((void **)&stats, sizeof(float) * (size_t)p->hq * (size_t)len), done);
  if (fp8) {
    /* Each device scalar in a 16-byte slot of its own (the tensors promise 16-byte
       alignment): descale q, k, v from the caller; P is scaled by 2^8 before its e4m3
       rounding (DESIGN.md's Definitions) and descaled after the second matmul; O unscaled. */
    const float fixed[3] = {1.0f / 256.0f, 256.0f, 1.0f}; /* descale_s, scale_s, scale_o */
    CUDA_GOTO(cudaMalloc((void **)&aux, sizeof(float) * 4 * FP8_AUX_SLOTS), done);
    CUDA_GOTO(cudaMemsetAsync(aux, 0, sizeof(float) * 4 * FP8_AUX_SLOTS, stream), done);
    for (int i = 0; i < 3; i++)
      CUDA_GOTO(cudaMemcpyAsync(aux + aux_slot(AUX_DESCALE_Q + i), scales + i, sizeof(float),
                                   cudaMemcpyDeviceToDevice, stream), done);
    for (int i = 0; i < 3; i++)
      CUDA_GOTO(cudaMemcpyAsync(aux + aux_slot(AUX_DESCALE_S + i), &fixed[i], sizeof(float),
                                   cudaMemcpyHostToDevice, stream), done);
    CUDA_GOTO(cudaStreamSynchronize(stream), done);
  }

  {
    int64_t uids[16];
    void *ptrs[16];
    int n = 0;
#define BIND(uid, ptr) (uids[n] = (uid), ptrs[n] = (void *)(ptr), n++)
    BIND(UID_Q, q);
    BIND(UID_K, k);
    BIND(UID_V, v);
    BIND(UID_O, o);
    BIND(UID_SCALE, &sg.scale);
    BIND(UID_NEG_INF, &sg.neg_inf);
    if (sg.stats_out) BIND(UID_STATS, stats);
    if (fp8) {
      BIND(UID_DESCALE_Q, aux + aux_slot(AUX_DESCALE_Q));
      BIND(UID_DESCALE_K, aux + aux_slot(AUX_DESCALE_K));
      BIND(UID_DESCALE_V, aux + aux_slot(AUX_DESCALE_V));
      BIND(UID_DESCALE_S, aux + aux_slot(AUX_DESCALE_S));
      BIND(UID_SCALE_S, aux + aux_slot(AUX_SCALE_S));
      BIND(UID_SCALE_O, aux + aux_slot(AUX_SCALE_O));
      BIND(UID_AMAX_S, aux + aux_slot(AUX_AMAX_S));
      BIND(UID_AMAX_O, aux + aux_slot(AUX_AMAX_O));
    }
#undef BIND
    CUDNN_OR_FAIL(api.BackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack), "variant pack");
    CUDNN_OR_FAIL(api.BackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, n, uids),
                  "variant pack ids");
    CUDNN_OR_FAIL(api.BackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, n, ptrs),
                  "variant pack pointers");
    CUDNN_OR_FAIL(api.BackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace),
                  "variant pack workspace");
    CUDNN_OR_FAIL(api.BackendFinalize(pack), "variant pack");
  }

  /* One warm-up (the first run may load modules; with no trials it is the checked run), then
     each trial after an L2 flush, as our kernels and the torch peers are timed. */
  if (trials > 0) CUDA_GOTO(cudaMalloc(&flush, FLUSH_BYTES), done);
  plan_run run = {handle, pl.plan, pack};
  if (gpu_time_runs(execute_plan, &run, stream, 1, trials, flush, ms_per_trial, err) != 0) goto done;
  CUDA_GOTO(cudaStreamSynchronize(stream), done);
  note_plan(&sg, &pl, "");
  rc = 0;

done:
  if (stream) cudaStreamSynchronize(stream);
  if (pack) api.BackendDestroyDescriptor(pack);
  if (built) gb_free(&sg.g);
  cudaFree(workspace);
  cudaFree(flush);
  cudaFree(stats);
  cudaFree(aux);
  if (stream) cudaStreamDestroy(stream);
  if (handle) api.Destroy(handle);
  if (rc != 0) cudaGetLastError(); /* clear a non-sticky error, so later checks do not report it */
  return rc;
}

int peer_cudnn_attention(const fp2_params *p, int len, const void *q, const void *k, const void *v, void *o,
                         int trials, double *ms_per_trial, char *err) {
  if (p->dtype != FP2_BF16) {
    err_set(err, "cudnn peer: peer_cudnn_attention takes bf16 operands; fp8 goes through peer_cudnn_attention_fp8");
    return -1;
  }
  return run_attention(p, len, q, k, v, NULL, o, trials, ms_per_trial, err);
}

int peer_cudnn_attention_fp8(const fp2_params *p, int len, const void *q, const void *k, const void *v,
                             const float *scales, void *o, int trials, double *ms_per_trial, char *err) {
  if (!scales) {
    err_set(err, "cudnn peer: fp8 attention needs the dequantisation scales");
    return -1;
  }
  return run_attention(p, len, q, k, v, scales, o, trials, ms_per_trial, err);
}

#endif

