/* libFuzzer target A: the safetensors reader. Each input is written to a scratch file (one
   path per process) and read with st_load, then with qkv_load. Either a load succeeds, with
   tensors whose bytes fit in the file, or it fails with a message naming the file.
   A file that loads is written back with st_save_with_metadata and must load again to the
   same tensors.
   Built by tests/fuzz/run.sh (clang, -fsanitize=fuzzer,address,undefined);
   tests/test_fuzz_regressions.c runs this same entry point on the committed inputs. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "fuzz_expect.h"
#include "qkv_file.h"
#include "safetensors.h"

static char st_in_path[512], st_out_path[512];

static void st_remove_scratch(void) {
  remove(st_in_path);
  remove(st_out_path);
}

/* Scratch paths under $TMPDIR (or /tmp), unique to this process, removed at exit. */
static void st_init_paths(void) {
  if (st_in_path[0]) return;
  const char *dir = getenv("TMPDIR");
  if (!dir || !*dir) dir = "/tmp";
  snprintf(st_in_path, sizeof st_in_path, "%s/fp2fuzz-st-%ld-in.safetensors", dir, (long)getpid());
  snprintf(st_out_path, sizeof st_out_path, "%s/fp2fuzz-st-%ld-out.safetensors", dir,
           (long)getpid());
  atexit(st_remove_scratch);
}

static void st_write_input(const uint8_t *data, size_t size) {
  FILE *f = fopen(st_in_path, "wb");
  FUZZ_EXPECT(f != NULL, "cannot create scratch file '%s'", st_in_path);
  FUZZ_EXPECT(size == 0 || fwrite(data, 1, size, f) == size, "cannot write '%s'", st_in_path);
  FUZZ_EXPECT(fclose(f) == 0, "cannot write '%s'", st_in_path);
}

/* What a successful st_load promises: every tensor has its data, within the file's bytes. */
static void st_expect_loaded(const st_file *f, size_t file_size) {
  uint64_t total = 0;
  FUZZ_EXPECT(f->n >= 0 && (f->n == 0 || f->tensors != NULL), "n = %d", f->n);
  for (int i = 0; i < f->n; i++) {
    const tensor *t = &f->tensors[i];
    FUZZ_EXPECT(strnlen(t->name, TENSOR_NAME_LEN) < TENSOR_NAME_LEN, "tensor %d has no NUL", i);
    FUZZ_EXPECT(t->ndim >= 0 && t->ndim <= TENSOR_MAX_DIMS, "'%s' has ndim %d", t->name, t->ndim);
    FUZZ_EXPECT(t->data != NULL, "'%s' has no data", t->name);
    for (int d = 0; d < t->ndim; d++)
      FUZZ_EXPECT(t->shape[d] >= 0, "'%s' has shape entry %d = %lld", t->name, d,
                (long long)t->shape[d]);
    FUZZ_EXPECT(st_find(f, t->name) == t, "'%s' is not found as itself", t->name);
    total += tensor_bytes(t);
    FUZZ_EXPECT(total <= file_size, "tensor data (%llu bytes) beyond the file (%zu bytes)",
              (unsigned long long)total, file_size);
  }
}

/* A loaded file written back (st_save_with_metadata, with the tensor names as metadata
   too, to exercise the writer's escaping) loads again to the same tensors in the same order. */
static void st_expect_round_trip(const st_file *f) {
  char err[ERR_LEN] = "";
  const tensor **list = xcalloc((size_t)f->n, sizeof *list);
  const char **meta = xcalloc(2 * (size_t)f->n + 3, sizeof *meta);
  meta[0] = "format";
  meta[1] = "pt";
  for (int i = 0; i < f->n; i++) {
    list[i] = &f->tensors[i];
    meta[2 + 2 * i] = meta[3 + 2 * i] = f->tensors[i].name;
  }
  int rc = st_save_with_metadata(st_out_path, list, f->n, meta, err);
  free(list);
  free(meta);
  FUZZ_EXPECT(rc == 0, "st_save of a loaded file failed: %s", err);
  st_file g;
  rc = st_load(st_out_path, &g, err);
  FUZZ_EXPECT(rc == 0, "the file st_save wrote does not load: %s", err);
  FUZZ_EXPECT(g.n == f->n, "%d tensors written, %d read back", f->n, g.n);
  for (int i = 0; i < f->n; i++) {
    const tensor *a = &f->tensors[i], *b = &g.tensors[i];
    FUZZ_EXPECT(strcmp(a->name, b->name) == 0, "tensor %d: '%s' read back as '%s'", i, a->name,
              b->name);
    FUZZ_EXPECT(a->dtype == b->dtype && a->ndim == b->ndim &&
                  memcmp(a->shape, b->shape, (size_t)a->ndim * sizeof a->shape[0]) == 0,
              "'%s': dtype or shape changed", a->name);
    FUZZ_EXPECT(memcmp(a->data, b->data, tensor_bytes(a)) == 0, "'%s': data changed", a->name);
  }
  st_free(&g);
}

/* What a successful qkv_load promises: one GQA problem, values as stored. */
static void st_expect_qkv(const qkv_host *h, const st_file *f) {
  FUZZ_EXPECT(h->len >= 1 && h->hq >= 1 && h->hkv >= 1 && h->dim >= 1 && h->hq % h->hkv == 0,
            "shape len %d, heads %d:%d, dim %d", h->len, h->hq, h->hkv, h->dim);
  const char *names[3] = {"q", "k", "v"};
  const float *values[3] = {h->q, h->k, h->v};
  for (int i = 0; i < 3; i++) {
    const tensor *t = st_find(f, names[i]);
    FUZZ_EXPECT(t != NULL && values[i] != NULL, "'%s' loaded by qkv_load only", names[i]);
    size_t heads = i == 0 ? (size_t)h->hq : (size_t)h->hkv;
    FUZZ_EXPECT(tensor_numel(t) == (size_t)h->len * heads * (size_t)h->dim, "'%s': wrong size",
              names[i]);
    for (size_t j = 0; j < tensor_numel(t); j++) {
      float want = tensor_get_f32(t, j);
      FUZZ_EXPECT(memcmp(&want, &values[i][j], sizeof want) == 0, "'%s'[%zu] changed", names[i], j);
    }
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  st_init_paths();
  st_write_input(data, size);
  char err[ERR_LEN] = "";
  st_file f;
  if (st_load(st_in_path, &f, err) != 0) {
    fuzz_expect_message("st_load", err, st_in_path);
    FUZZ_EXPECT(f.n == 0 && f.tensors == NULL, "a failed st_load left %d tensors", f.n);
  } else {
    st_expect_loaded(&f, size);
    st_expect_round_trip(&f);
  }

  qkv_host h;
  err[0] = '\0';
  if (qkv_load(st_in_path, &h, err) != 0) {
    fuzz_expect_message("qkv_load", err, st_in_path);
    FUZZ_EXPECT(h.q == NULL && h.k == NULL && h.v == NULL, "a failed qkv_load left data");
  } else {
    FUZZ_EXPECT(f.n > 0, "qkv_load read a file that st_load rejected");
    st_expect_qkv(&h, &f);
    qkv_free(&h);
  }
  st_free(&f);
  return 0;
}
