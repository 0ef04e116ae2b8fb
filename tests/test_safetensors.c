/* safetensors and Q/K/V file I/O: a byte-exact round trip of every dtype, qkv_load of
   BF16, F16 and F32 files, and one hand-written file per malformation the loaders must
   reject with a one-line message naming the file. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "infile.h"
#include "numeric.h"
#include "qkv_file.h"
#include "report.h"
#include "safetensors.h"
#include "testing.h"

/* A tensor to create: name, dtype and shape. */
typedef struct spec {
  const char *name;
  tensor_dtype dt;
  int ndim;
  int64_t shape[4];
} spec;

static uint32_t rng_state = 12345u;

static uint32_t rng_next(void) { /* xorshift32: reproducible without libc's rand */
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 17;
  rng_state ^= rng_state << 5;
  return rng_state;
}

/* A value in [-4, 4) that is never zero. */
static float rng_value(void) {
  float x = (float)(rng_next() % 8000u) / 1000.0f - 4.0f;
  return x == 0.0f ? 0.5f : x;
}

/* Random bytes, none of them zero, so a missing or misplaced copy cannot pass. */
static void fill_bytes(tensor *t) {
  unsigned char *p = t->data;
  for (size_t i = 0; i < tensor_bytes(t); i++) p[i] = (unsigned char)(1 + rng_next() % 255u);
}

/* Random non-zero values, stored in the tensor's float dtype. */
static void fill_values(tensor *t) {
  for (size_t i = 0; i < tensor_numel(t); i++) {
    float x = rng_value();
    if (t->dtype == TENSOR_F32)
      ((float *)t->data)[i] = x;
    else if (t->dtype == TENSOR_F16)
      ((uint16_t *)t->data)[i] = f16_from_f32(x);
    else
      ((uint16_t *)t->data)[i] = bf16_from_f32(x);
  }
}

/* Writes a file byte by byte: the 8-byte length field, then the header text with every
   ' written as " (so that the headers below read as JSON), then data_bytes non-zero bytes. */
static void write_raw(const char *path, uint64_t len_field, const char *header, size_t data_bytes) {
  FILE *f = fopen(path, "wb");
  EXPECT_MSG(f != NULL, "cannot create %s", path);
  if (!f) return;
  for (int i = 0; i < 8; i++) fputc((int)((len_field >> (8 * i)) & 0xff), f);
  for (const char *c = header; *c; c++) fputc(*c == '\'' ? '"' : *c, f);
  for (size_t i = 0; i < data_bytes; i++) fputc((int)(1 + i % 251), f);
  EXPECT(fclose(f) == 0);
}

/* The message must be one non-empty line that names the file. */
static void expect_message(const char *err, const char *path, const char *what) {
  EXPECT_MSG(err[0] != '\0', "%s: empty message", what);
  EXPECT_MSG(strstr(err, path) != NULL, "%s: message '%s' does not name the file", what, err);
  EXPECT_MSG(strchr(err, '\n') == NULL, "%s: message '%s' has a newline", what, err);
  printf("  %-26s %s\n", what, err);
}

static void expect_st_reject(const char *path, const char *what) {
  st_file f;
  char err[ERR_LEN] = "";
  int rc = st_load(path, &f, err);
  EXPECT_MSG(rc == -1, "%s: st_load accepted the file", what);
  EXPECT_MSG(f.n == 0 && f.tensors == NULL, "%s: st_load left tensors behind", what);
  expect_message(err, path, what);
  if (rc == 0) st_free(&f);
}

/* ---- round trip ------------------------------------------------------------------- */

static void test_round_trip(void) {
  static const spec specs[] = {
      {"f32 odd", TENSOR_F32, 3, {3, 5, 7}},
      {"f16", TENSOR_F16, 2, {1, 13}},
      {"layers.0/\"bf16\"\\x\t", TENSOR_BF16, 4, {2, 3, 1, 5}}, /* needs JSON escapes */
      {"i32", TENSOR_I32, 1, {17}},
      {"u8", TENSOR_U8, 4, {3, 1, 1, 9}},
      {"scalar", TENSOR_F32, 0, {0}},
      {"empty", TENSOR_BF16, 2, {0, 4}},
      {"u8 odd", TENSOR_U8, 1, {3}}, /* leaves the next tensor unaligned */
      {"f16 last", TENSOR_F16, 3, {1, 1, 1}},
  };
  enum { N = sizeof specs / sizeof specs[0] };
  tensor ts[N];
  const tensor *ptrs[N];
  size_t data_bytes = 0;
  for (int i = 0; i < N; i++) {
    tensor_init(&ts[i], specs[i].name, specs[i].dt, specs[i].ndim, specs[i].shape);
    fill_bytes(&ts[i]);
    ptrs[i] = &ts[i];
    data_bytes += tensor_bytes(&ts[i]);
  }
  const char *path = test_temp_path("round_trip.safetensors");
  char err[ERR_LEN] = "";
  EXPECT_MSG(st_save(path, ptrs, N, err) == 0, "st_save: %s", err);

  /* The header length is a multiple of 8 and the data follows it in the given order. */
  size_t size = 0;
  char read_err[ERR_LEN];
  unsigned char *raw = (unsigned char *)read_text_file(path, &size, read_err);
  EXPECT(raw && size >= 8);
  if (raw && size >= 8) {
    uint64_t header_len = 0;
    for (int i = 7; i >= 0; i--) header_len = header_len << 8 | raw[i];
    EXPECT_MSG(header_len % 8 == 0, "header length %llu", (unsigned long long)header_len);
    EXPECT(size == 8 + header_len + data_bytes);
    size_t pos = 8 + header_len;
    for (int i = 0; i < N && size == 8 + header_len + data_bytes; i++) {
      EXPECT_MSG(memcmp(raw + pos, ts[i].data, tensor_bytes(&ts[i])) == 0, "'%s' misplaced",
                 ts[i].name);
      pos += tensor_bytes(&ts[i]);
    }
  }
  free(raw);

  st_file f;
  EXPECT_MSG(st_load(path, &f, err) == 0, "st_load: %s", err);
  EXPECT(f.n == N);
  for (int i = 0; i < N && i < f.n; i++) {
    const tensor *a = &ts[i], *b = &f.tensors[i];
    EXPECT_MSG(strcmp(a->name, b->name) == 0, "tensor %d: name '%s', expected '%s'", i, b->name,
               a->name);
    EXPECT_MSG(st_find(&f, a->name) == b, "st_find('%s')", a->name);
    EXPECT_MSG(a->dtype == b->dtype && a->ndim == b->ndim, "'%s': dtype or rank", a->name);
    for (int d = 0; d < a->ndim; d++)
      EXPECT_MSG(a->shape[d] == b->shape[d], "'%s' dim %d", a->name, d);
    EXPECT_MSG(memcmp(a->data, b->data, tensor_bytes(a)) == 0, "'%s': data differs", a->name);
  }
  EXPECT(st_find(&f, "absent") == NULL);
  st_free(&f);
  EXPECT(f.n == 0 && f.tensors == NULL);
  remove(path);

  /* A file with no tensors at all is valid too. */
  EXPECT_MSG(st_save(path, ptrs, 0, err) == 0, "st_save of nothing: %s", err);
  EXPECT_MSG(st_load(path, &f, err) == 0 && f.n == 0, "st_load of nothing: %s", err);
  st_free(&f);
  remove(path);
  for (int i = 0; i < N; i++) tensor_free(&ts[i]);
}

/* Files written elsewhere may carry metadata, padding, gaps and empty tensors anywhere. */
static void test_accepts_edge_cases(void) {
  const char *path = test_temp_path("edge.safetensors");
  const char *header =
      "{'__metadata__': {'format': 'pt'},"
      " 'a': {'dtype': 'F32', 'shape': [2], 'data_offsets': [0, 8]},"
      " 'z': {'dtype': 'BF16', 'shape': [0, 3], 'data_offsets': [4, 4]},"
      " 's': {'dtype': 'I32', 'shape': [], 'data_offsets': [12, 16]}}  \n  ";
  write_raw(path, strlen(header), header, 16);
  st_file f;
  char err[ERR_LEN] = "";
  EXPECT_MSG(st_load(path, &f, err) == 0, "edge cases: %s", err);
  const tensor *a = st_find(&f, "a"), *z = st_find(&f, "z"), *s = st_find(&f, "s");
  EXPECT(f.n == 3 && a && z && s);
  if (a && z && s) {
    EXPECT(tensor_numel(z) == 0 && z->ndim == 2);
    EXPECT(s->ndim == 0 && tensor_numel(s) == 1);
    const unsigned char *ab = a->data, *sb = s->data;
    EXPECT(ab[0] == 1 && ab[7] == 8 && sb[0] == 13 && sb[3] == 16);
  }
  st_free(&f);
  remove(path);
}

/* ---- malformed files -------------------------------------------------------------- */

#define F32_2 "'dtype': 'F32', 'shape': [2]"
#define AT_0_8 "'data_offsets': [0, 8]"

/* Each header is written with a correct length field and 16 data bytes. */
static const struct {
  const char *what, *header;
} bad_headers[] = {
    {"empty header", ""},
    {"not json", "{'a': {'dtype': "},
    {"unterminated escape", "{'a\\"},
    {"not an object", "[1, 2]"},
    {"data after the object", "{} x"},
    {"entry not an object", "{'a': 5}"},
    {"missing dtype", "{'a': {'shape': [2], " AT_0_8 "}}"},
    {"dtype not a string", "{'a': {'dtype': 4, 'shape': [2], " AT_0_8 "}}"},
    {"dtype F64", "{'a': {'dtype': 'F64', 'shape': [1], " AT_0_8 "}}"},
    {"dtype F8_E4M3", "{'a': {'dtype': 'F8_E4M3', 'shape': [8], " AT_0_8 "}}"},
    {"dtype unknown", "{'a': {'dtype': 'f32', 'shape': [2], " AT_0_8 "}}"},
    {"missing shape", "{'a': {'dtype': 'F32', " AT_0_8 "}}"},
    {"shape not an array", "{'a': {'dtype': 'F32', 'shape': 2, " AT_0_8 "}}"},
    {"shape entry a string", "{'a': {'dtype': 'F32', 'shape': ['2'], " AT_0_8 "}}"},
    {"shape negative", "{'a': {'dtype': 'F32', 'shape': [-2], " AT_0_8 "}}"},
    {"shape not whole", "{'a': {'dtype': 'F32', 'shape': [1.5], " AT_0_8 "}}"},
    {"shape huge", "{'a': {'dtype': 'F32', 'shape': [1e300], " AT_0_8 "}}"},
    {"shape beyond 2^53", "{'a': {'dtype': 'U8', 'shape': [18014398509481984], " AT_0_8 "}}"},
    {"shape size overflows",
     "{'a': {'dtype': 'F32', 'shape': [4294967296, 4294967296, 4294967296], " AT_0_8 "}}"},
    {"shape 5 dims", "{'a': {'dtype': 'F32', 'shape': [1, 1, 1, 1, 2], " AT_0_8 "}}"},
    {"missing data_offsets", "{'a': {" F32_2 "}}"},
    {"offsets not an array", "{'a': {" F32_2 ", 'data_offsets': '0-8'}}"},
    {"offsets one entry", "{'a': {" F32_2 ", 'data_offsets': [8]}}"},
    {"offsets three entries", "{'a': {" F32_2 ", 'data_offsets': [0, 8, 8]}}"},
    {"offsets negative", "{'a': {" F32_2 ", 'data_offsets': [-8, 0]}}"},
    {"offsets not whole", "{'a': {" F32_2 ", 'data_offsets': [0, 8.5]}}"},
    {"offsets begin > end", "{'a': {" F32_2 ", 'data_offsets': [8, 0]}}"},
    {"offsets past the data", "{'a': {" F32_2 ", 'data_offsets': [12, 20]}}"},
    {"byte count", "{'a': {'dtype': 'F32', 'shape': [3], " AT_0_8 "}}"},
    {"overlap", "{'a': {" F32_2 ", " AT_0_8 "}, 'b': {" F32_2 ", 'data_offsets': [4, 12]}}"},
    {"overlap nested",
     "{'a': {'dtype': 'U8', 'shape': [16], 'data_offsets': [0, 16]},"
     " 'b': {'dtype': 'U8', 'shape': [2], 'data_offsets': [8, 10]}}"},
    {"duplicate name", "{'a': {" F32_2 ", " AT_0_8 "}, 'a': {" F32_2 ", 'data_offsets': [8, 16]}}"},
    {"name too long", /* 64 characters */
     "{'a123456789012345678901234567890123456789012345678901234567890123': {" F32_2 ", " AT_0_8
     "}}"},
    {"metadata not an object", "{'__metadata__': 5}"},
    {"metadata value a number", "{'__metadata__': {'format': 1}}"},
    {"metadata twice", "{'__metadata__': {}, '__metadata__': {}}"},
};

static void test_rejects_malformed(void) {
  const char *path = test_temp_path("bad.safetensors");
  printf("malformed files:\n");
  for (size_t i = 0; i < sizeof bad_headers / sizeof bad_headers[0]; i++) {
    write_raw(path, strlen(bad_headers[i].header), bad_headers[i].header, 16);
    expect_st_reject(path, bad_headers[i].what);
  }

  /* Cases that need a wrong length field or no file at all. */
  FILE *f = fopen(path, "wb");
  EXPECT(f && fwrite("\x10\0\0\0\0", 1, 5, f) == 5 && fclose(f) == 0);
  expect_st_reject(path, "shorter than 8 bytes");
  write_raw(path, 0, "", 0);
  expect_st_reject(path, "length 0, no header");
  write_raw(path, 1000, "{}", 10);
  expect_st_reject(path, "header beyond the file");
  write_raw(path, (uint64_t)1 << 40, "{}", 10);
  expect_st_reject(path, "header length absurd");
  write_raw(path, UINT64_MAX, "{}", 10);
  expect_st_reject(path, "header length 2^64-1");
  remove(path);
  expect_st_reject(path, "no such file");
  const char *dir = test_temp_path("dir.safetensors");
  EXPECT(mkdir(dir, 0700) == 0);
  expect_st_reject(dir, "not a regular file");
  rmdir(dir);
}

static void test_save_errors(void) {
  int64_t shape[1] = {4};
  tensor a, b;
  tensor_init(&a, "x", TENSOR_F32, 1, shape);
  tensor_init(&b, "x", TENSOR_U8, 1, shape);
  fill_bytes(&a);
  fill_bytes(&b);
  const tensor *both[2] = {&a, &b};
  char err[ERR_LEN] = "";
  printf("save errors:\n");

  const char *path = test_temp_path("no-such-dir/x.safetensors");
  EXPECT(st_save(path, both, 1, err) == -1);
  expect_message(err, path, "missing directory");

  path = test_temp_path("dup.safetensors");
  err[0] = '\0';
  EXPECT(st_save(path, both, 2, err) == -1);
  expect_message(err, path, "duplicate name");
  EXPECT(access(path, F_OK) != 0); /* refused before creating the file */

  FILE *full = fopen("/dev/full", "wb"); /* every write fails with ENOSPC */
  if (full) {
    fclose(full);
    err[0] = '\0';
    EXPECT(st_save("/dev/full", both, 1, err) == -1);
    expect_message(err, "/dev/full", "disk full");
  }
  tensor_free(&a);
  tensor_free(&b);
}

/* ---- Q/K/V files ------------------------------------------------------------------ */

/* Saves tensors made from specs with random values (bytes for non-float dtypes). */
static void save_specs(const char *path, const spec *specs, int n, tensor *ts) {
  const tensor *ptrs[8];
  for (int i = 0; i < n; i++) {
    tensor_init(&ts[i], specs[i].name, specs[i].dt, specs[i].ndim, specs[i].shape);
    if (specs[i].dt == TENSOR_F32 || specs[i].dt == TENSOR_F16 || specs[i].dt == TENSOR_BF16)
      fill_values(&ts[i]);
    else
      fill_bytes(&ts[i]);
    ptrs[i] = &ts[i];
  }
  char err[ERR_LEN] = "";
  EXPECT_MSG(st_save(path, ptrs, n, err) == 0, "st_save: %s", err);
}

/* Checks one loaded array against the stored tensor: exact conversions, at most 10 reports. */
static void expect_values(const float *got, const tensor *want) {
  int bad = 0;
  for (size_t i = 0; i < tensor_numel(want) && bad < 10; i++) {
    float w = tensor_get_f32(want, i);
    if (got[i] != w || w == 0.0f) {
      fprintf(stderr, "%s[%zu] = %.9g, expected %.9g (non-zero)\n", want->name, i, got[i], w);
      bad++;
    }
  }
  EXPECT_MSG(bad == 0, "%s: %d wrong values", want->name, bad);
}

static void test_qkv_valid(void) {
  static const tensor_dtype dts[] = {TENSOR_BF16, TENSOR_F16, TENSOR_F32};
  const char *path = test_temp_path("qkv.safetensors");
  for (int i = 0; i < 3; i++) {
    /* g = 3 query heads per KV head; an extra tensor the loader must ignore */
    spec specs[4] = {{"layer", TENSOR_I32, 1, {1}},
                     {"v", dts[i], 3, {5, 2, 3}},
                     {"q", dts[i], 3, {5, 6, 3}},
                     {"k", dts[i], 3, {5, 2, 3}}};
    tensor ts[4];
    save_specs(path, specs, 4, ts);
    qkv_host h;
    char err[ERR_LEN] = "";
    EXPECT_MSG(qkv_load(path, &h, err) == 0, "qkv_load %s: %s", tensor_dtype_name(dts[i]), err);
    EXPECT(h.len == 5 && h.hq == 6 && h.hkv == 2 && h.dim == 3 && h.file_dtype == dts[i]);
    if (h.q) {
      expect_values(h.q, &ts[2]);
      expect_values(h.k, &ts[3]);
      expect_values(h.v, &ts[1]);
    }
    qkv_free(&h);
    EXPECT(h.q == NULL && h.len == 0);
    for (int j = 0; j < 4; j++) tensor_free(&ts[j]);
  }
  remove(path);
}

/* Rank-3 specs of q, k and v with the given dtype suffix and shape. */
#define Q(dt, a, b, c) {"q", TENSOR_##dt, 3, {a, b, c}}
#define K(dt, a, b, c) {"k", TENSOR_##dt, 3, {a, b, c}}
#define V(dt, a, b, c) {"v", TENSOR_##dt, 3, {a, b, c}}

static void test_qkv_rejects(void) {
  static const struct {
    const char *what;
    int n;
    spec specs[3];
  } cases[] = {
      {"missing k", 2, {Q(BF16, 4, 2, 8), V(BF16, 4, 1, 8)}},
      {"missing q", 2, {K(BF16, 4, 1, 8), V(BF16, 4, 1, 8)}},
      {"missing v", 2, {Q(BF16, 4, 2, 8), K(BF16, 4, 1, 8)}},
      {"q rank 2", 3, {{"q", TENSOR_F32, 2, {4, 16}}, K(F32, 4, 1, 8), V(F32, 4, 1, 8)}},
      {"k rank 4", 3, {Q(F32, 4, 2, 8), {"k", TENSOR_F32, 4, {1, 4, 1, 8}}, V(F32, 4, 1, 8)}},
      {"k positions", 3, {Q(BF16, 128, 2, 8), K(BF16, 64, 1, 8), V(BF16, 64, 1, 8)}},
      {"v positions", 3, {Q(BF16, 8, 2, 8), K(BF16, 8, 1, 8), V(BF16, 7, 1, 8)}},
      {"k head dim", 3, {Q(F16, 4, 2, 8), K(F16, 4, 1, 4), V(F16, 4, 1, 8)}},
      {"v head dim", 3, {Q(F16, 4, 2, 8), K(F16, 4, 1, 8), V(F16, 4, 1, 16)}},
      {"k vs v heads", 3, {Q(F32, 4, 4, 8), K(F32, 4, 2, 8), V(F32, 4, 1, 8)}},
      {"hq not a multiple", 3, {Q(F32, 4, 3, 8), K(F32, 4, 2, 8), V(F32, 4, 2, 8)}},
      {"zero positions", 3, {Q(F32, 0, 2, 8), K(F32, 0, 1, 8), V(F32, 0, 1, 8)}},
      {"zero kv heads", 3, {Q(F32, 4, 2, 8), K(F32, 4, 0, 8), V(F32, 4, 0, 8)}},
      {"zero head dim", 3, {Q(F32, 4, 2, 0), K(F32, 4, 1, 0), V(F32, 4, 1, 0)}},
      {"v dtype I32", 3, {Q(F32, 4, 2, 8), K(F32, 4, 1, 8), V(I32, 4, 1, 8)}},
      {"q dtype U8", 3, {Q(U8, 4, 2, 8), K(F32, 4, 1, 8), V(F32, 4, 1, 8)}},
      {"mixed dtypes", 3, {Q(BF16, 4, 2, 8), K(F32, 4, 1, 8), V(BF16, 4, 1, 8)}},
  };
  const char *path = test_temp_path("bad_qkv.safetensors");
  printf("bad q/k/v files:\n");
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tensor ts[3];
    save_specs(path, cases[i].specs, cases[i].n, ts);
    qkv_host h;
    char err[ERR_LEN] = "";
    EXPECT_MSG(qkv_load(path, &h, err) == -1, "%s: qkv_load accepted the file", cases[i].what);
    EXPECT_MSG(h.q == NULL && h.k == NULL && h.v == NULL, "%s: arrays left behind", cases[i].what);
    expect_message(err, path, cases[i].what);
    for (int j = 0; j < cases[i].n; j++) tensor_free(&ts[j]);
  }
  remove(path);

  /* A file st_load rejects is rejected with st_load's message. */
  qkv_host h;
  char err[ERR_LEN] = "";
  EXPECT(qkv_load(path, &h, err) == -1);
  expect_message(err, path, "no such file");
}

int main(void) {
  test_round_trip();
  test_accepts_edge_cases();
  test_rejects_malformed();
  test_save_errors();
  test_qkv_valid();
  test_qkv_rejects();
  return test_result("test_safetensors");
}
