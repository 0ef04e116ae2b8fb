/* safetensors reading and writing. The loader trusts nothing in the file: every length,
   offset and shape is checked against the file's real size before anything is read. */
#include "safetensors.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "error.h"
#include "infile.h"
#include "outfile.h"

/* The data is copied as is, so the host must share the file's byte order. */
#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "safetensors.c assumes a little-endian host"
#endif

#define ST_MAX_HEADER 100000000u /* the reference implementation's limit */
#define ST_MAX_INT 9007199254740992.0 /* 2^53: larger JSON numbers are not exact doubles */

/* strerror text in the project's lower-case style. */
static const char *errno_text(int e, char *buf, size_t len) {
  snprintf(buf, len, "%s", strerror(e));
  buf[0] = (char)tolower((unsigned char)buf[0]);
  return buf;
}

/* ---- reading ---------------------------------------------------------------------- */

/* Reads n bytes at pos; a short read is an error (the file changed or cannot be read). */
static int read_at(FILE *f, const char *path, uint64_t pos, void *buf, size_t n, char *err) {
  char why[128];
  if (n == 0) return 0;
  if (fseeko(f, (off_t)pos, SEEK_SET) != 0) {
    err_set(err, "'%s': cannot seek: %s", path, errno_text(errno, why, sizeof why));
    return -1;
  }
  if (fread(buf, 1, n, f) != n) {
    if (ferror(f))
      err_set(err, "'%s': cannot read: %s", path, errno_text(errno, why, sizeof why));
    else
      err_set(err, "'%s': file ended while reading %zu bytes at %" PRIu64, path, n, pos);
    return -1;
  }
  return 0;
}

/* A JSON number that is a whole number in [0, 2^53]. */
static int json_count(const cJSON *x, uint64_t *v) {
  if (!cJSON_IsNumber(x)) return -1;
  double d = x->valuedouble;
  if (!(d >= 0.0 && d <= ST_MAX_INT) || d != floor(d)) return -1;
  *v = (uint64_t)d;
  return 0;
}

/* The member `key` of tensor t's entry e, which `is` must accept (`kind` names what it wants);
   NULL with err when it is missing or of another kind. */
static const cJSON *tensor_member(const cJSON *e, const char *key, cJSON_bool (*is)(const cJSON *), const char *kind,
                                  const char *path, const tensor *t, char *err) {
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(e, key);
  if (!x) {
    err_set(err, "'%s': tensor '%s' has no %s", path, t->name, key);
    return NULL;
  }
  if (!is(x)) {
    err_set(err, "'%s': tensor '%s' has a %s that is not %s", path, t->name, key, kind);
    return NULL;
  }
  return x;
}

static int parse_dtype(const cJSON *e, const char *path, tensor *t, char *err) {
  static const tensor_dtype known[] = {TENSOR_F32, TENSOR_F16, TENSOR_BF16, TENSOR_I32, TENSOR_U8};
  const cJSON *dtype = tensor_member(e, "dtype", cJSON_IsString, "a string", path, t, err);
  if (!dtype) return -1;
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
    if (strcmp(dtype->valuestring, tensor_dtype_name(known[i])) == 0) {
      t->dtype = known[i];
      return 0;
    }
  }
  err_set(err, "'%s': tensor '%s' has dtype '%s', not one of F32, F16, BF16, I32, U8", path,
          t->name, dtype->valuestring);
  return -1;
}

/* Fills t->ndim and t->shape, and the tensor's size in bytes (guarded against overflow). */
static int parse_shape(const cJSON *e, const char *path, tensor *t, uint64_t *bytes, char *err) {
  const cJSON *shape = tensor_member(e, "shape", cJSON_IsArray, "an array", path, t, err);
  if (!shape) return -1;
  int ndim = cJSON_GetArraySize(shape);
  if (ndim > TENSOR_MAX_DIMS) {
    err_set(err, "'%s': tensor '%s' has %d dimensions, more than %d", path, t->name, ndim,
            TENSOR_MAX_DIMS);
    return -1;
  }
  t->ndim = ndim;
  *bytes = tensor_dtype_size(t->dtype);
  for (int i = 0; i < ndim; i++) {
    const cJSON *d = cJSON_GetArrayItem(shape, i);
    uint64_t dim;
    if (json_count(d, &dim)) {
      if (cJSON_IsNumber(d))
        err_set(err, "'%s': tensor '%s' has shape entry %d = %g, not a whole number in [0, 2^53]",
                path, t->name, i, d->valuedouble);
      else
        err_set(err, "'%s': tensor '%s' has shape entry %d that is not a number", path, t->name, i);
      return -1;
    }
    if (dim != 0 && *bytes > UINT64_MAX / dim) {
      err_set(err, "'%s': tensor '%s' has a shape whose size overflows 64 bits", path, t->name);
      return -1;
    }
    t->shape[i] = (int64_t)dim;
    *bytes *= dim;
  }
  return 0;
}

/* Reads data_offsets [begin, end] relative to the data section of data_size bytes. */
static int parse_offsets(const cJSON *e, const char *path, const char *name, uint64_t data_size,
                         uint64_t *begin, uint64_t *end, char *err) {
  const cJSON *off = cJSON_GetObjectItemCaseSensitive(e, "data_offsets");
  if (!off) {
    err_set(err, "'%s': tensor '%s' has no data_offsets", path, name);
    return -1;
  }
  if (!cJSON_IsArray(off) || cJSON_GetArraySize(off) != 2 ||
      json_count(cJSON_GetArrayItem(off, 0), begin) ||
      json_count(cJSON_GetArrayItem(off, 1), end)) {
    err_set(err, "'%s': tensor '%s' has data_offsets that are not [begin, end] whole numbers", path,
            name);
    return -1;
  }
  if (*begin > *end) {
    err_set(err, "'%s': tensor '%s' has data_offsets [%" PRIu64 ", %" PRIu64 "] with begin > end",
            path, name, *begin, *end);
    return -1;
  }
  if (*end > data_size) {
    err_set(err,
            "'%s': tensor '%s' has data_offsets [%" PRIu64 ", %" PRIu64
            "] beyond the data section (%" PRIu64 " bytes)",
            path, name, *begin, *end, data_size);
    return -1;
  }
  return 0;
}

/* Where one tensor's bytes lie in the data section. */
typedef struct span {
  uint64_t begin, end;
  tensor *t;
} span;

/* Parses one header entry into t (everything but the data) and its span. */
static int parse_entry(const cJSON *e, const char *path, uint64_t data_size, tensor *t, span *s,
                       char *err) {
  size_t len = strlen(e->string);
  if (len >= TENSOR_NAME_LEN) {
    err_set(err, "'%s': tensor name '%.32s...' has %zu bytes, more than %d", path, e->string, len,
            TENSOR_NAME_LEN - 1);
    return -1;
  }
  memcpy(t->name, e->string, len + 1);
  if (!cJSON_IsObject(e)) {
    err_set(err, "'%s': tensor '%s' is not a JSON object", path, t->name);
    return -1;
  }
  uint64_t bytes;
  if (parse_dtype(e, path, t, err) || parse_shape(e, path, t, &bytes, err) ||
      parse_offsets(e, path, t->name, data_size, &s->begin, &s->end, err))
    return -1;
  if (s->end - s->begin != bytes) {
    err_set(err,
            "'%s': tensor '%s' has %" PRIu64 " bytes of data but its dtype and shape need %" PRIu64,
            path, t->name, s->end - s->begin, bytes);
    return -1;
  }
  s->t = t;
  return 0;
}

/* __metadata__ is a map of strings; its content is not used. */
static int check_metadata(const cJSON *m, const char *path, char *err) {
  if (!cJSON_IsObject(m)) {
    err_set(err, "'%s': __metadata__ is not a JSON object", path);
    return -1;
  }
  const cJSON *item;
  cJSON_ArrayForEach(item, m) {
    if (!cJSON_IsString(item)) {
      err_set(err, "'%s': __metadata__ entry '%s' is not a string", path, item->string);
      return -1;
    }
  }
  return 0;
}

static int compare_names(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A name that appears twice, or NULL. cJSON keeps every duplicate key, so sort the
   names and compare neighbours. */
static const char *find_duplicate(const char **names, int n) {
  qsort(names, (size_t)n, sizeof *names, compare_names);
  for (int i = 1; i < n; i++)
    if (strcmp(names[i - 1], names[i]) == 0) return names[i];
  return NULL;
}

static int compare_spans(const void *a, const void *b) {
  const span *x = a, *y = b;
  return x->begin < y->begin ? -1 : x->begin > y->begin;
}

/* Sorted by begin, each non-empty span must start at or after the furthest end so far. */
static int check_overlaps(span *spans, int n, const char *path, char *err) {
  qsort(spans, (size_t)n, sizeof *spans, compare_spans);
  const span *last = NULL; /* the non-empty span reaching furthest */
  for (int i = 0; i < n; i++) {
    const span *s = &spans[i];
    if (s->begin == s->end) continue; /* a zero-size tensor occupies no bytes */
    if (last && s->begin < last->end) {
      err_set(err,
              "'%s': tensors '%s' [%" PRIu64 ", %" PRIu64 ") and '%s' [%" PRIu64 ", %" PRIu64
              ") overlap",
              path, last->t->name, last->begin, last->end, s->t->name, s->begin, s->end);
      return -1;
    }
    if (!last || s->end > last->end) last = s;
  }
  return 0;
}

/* Parses the header text (NUL-terminated as well, since cJSON before 1.7.18 can read one
   byte past the given length); only whitespace may follow the JSON object. */
static cJSON *parse_header(const char *text, size_t len, const char *path, char *err) {
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
  if (!root) {
    err_set(err, "'%s': header is not valid JSON (error at byte %td)", path, end ? end - text : 0);
    return NULL;
  }
  while (end < text + len && *end && strchr(" \t\r\n", *end)) end++;
  if (end < text + len) {
    err_set(err, "'%s': header has data after the JSON value at byte %td", path, end - text);
  } else if (!cJSON_IsObject(root)) {
    err_set(err, "'%s': header is not a JSON object", path);
  } else {
    return root;
  }
  cJSON_Delete(root);
  return NULL;
}

/* Checks every header entry, then reads the data of each tensor in file order. */
static int load_tensors(FILE *f, const char *path, const cJSON *root, uint64_t data_start,
                        uint64_t data_size, st_file *out, char *err) {
  int total = cJSON_GetArraySize(root);
  out->tensors = xcalloc((size_t)total, sizeof *out->tensors);
  span *spans = xcalloc((size_t)total, sizeof *spans);
  const char **names = xcalloc((size_t)total, sizeof *names);
  int metadata = 0, rc = -1;
  const char *dup;
  const cJSON *e;
  cJSON_ArrayForEach(e, root) {
    if (strcmp(e->string, "__metadata__") == 0) {
      if (metadata++) {
        err_set(err, "'%s': __metadata__ appears twice", path);
        goto done;
      }
      if (check_metadata(e, path, err)) goto done;
      continue;
    }
    tensor *t = &out->tensors[out->n++]; /* counted now so st_free releases it */
    if (parse_entry(e, path, data_size, t, &spans[out->n - 1], err)) goto done;
    names[out->n - 1] = t->name;
  }
  if ((dup = find_duplicate(names, out->n))) {
    err_set(err, "'%s': tensor '%s' appears twice", path, dup);
    goto done;
  }
  if (check_overlaps(spans, out->n, path, err)) goto done;
  for (int i = 0; i < out->n; i++) {
    tensor *t = spans[i].t;
    t->data = xmalloc(tensor_bytes(t));
    if (read_at(f, path, data_start + spans[i].begin, t->data, tensor_bytes(t), err)) goto done;
  }
  rc = 0;
done:
  free(spans);
  free(names);
  return rc;
}

/* Checks the header length against the file, then parses the header and the tensors. */
static int load_file(FILE *f, const char *path, st_file *out, char *err) {
  char why[128];
  struct stat st;
  if (fstat(fileno(f), &st) != 0) {
    err_set(err, "'%s': cannot stat: %s", path, errno_text(errno, why, sizeof why));
    return -1;
  }
  uint64_t size = (uint64_t)st.st_size;
  unsigned char len_bytes[8];
  if (size < 8) {
    err_set(err, "'%s': file has %" PRIu64 " bytes, too short for the 8-byte header length", path,
            size);
    return -1;
  }
  if (read_at(f, path, 0, len_bytes, 8, err)) return -1;
  uint64_t header_len = 0;
  for (int i = 7; i >= 0; i--) header_len = header_len << 8 | len_bytes[i];
  /* A text file or any other data gives a huge length: say what the file is not. */
  if (header_len > ST_MAX_HEADER) {
    err_set(err, "'%s' is not a safetensors file: its header length %" PRIu64 " is beyond the limit of %u bytes",
            path, header_len, ST_MAX_HEADER);
    return -1;
  }
  if (header_len > size - 8) {
    err_set(err,
            "'%s' is not a safetensors file: its header length %" PRIu64 " is beyond the end of the file (%" PRIu64
            " bytes)",
            path, header_len, size);
    return -1;
  }
  char *text = xmalloc((size_t)header_len + 1);
  cJSON *root = NULL;
  text[header_len] = '\0';
  if (read_at(f, path, 8, text, (size_t)header_len, err) == 0)
    root = parse_header(text, (size_t)header_len, path, err);
  free(text);
  if (!root) return -1;
  int rc = load_tensors(f, path, root, 8 + header_len, size - 8 - header_len, out, err);
  cJSON_Delete(root);
  return rc;
}

int st_load(const char *path, st_file *out, char *err) {
  memset(out, 0, sizeof *out);
  FILE *f = infile_open(path, err);
  if (!f) return -1;
  int rc = load_file(f, path, out, err);
  fclose(f); /* read only: nothing to lose if closing fails */
  if (rc) st_free(out);
  return rc;
}

const tensor *st_find(const st_file *f, const char *name) {
  for (int i = 0; i < f->n; i++)
    if (strcmp(f->tensors[i].name, name) == 0) return &f->tensors[i];
  return NULL;
}

void st_free(st_file *f) {
  for (int i = 0; i < f->n; i++) tensor_free(&f->tensors[i]);
  free(f->tensors);
  f->tensors = NULL;
  f->n = 0;
}

/* ---- writing ---------------------------------------------------------------------- */

/* Bytes of header text one entry can take: a name of 63 characters escaped as \uXXXX,
   four dimensions and two offsets of up to 20 digits, and the fixed text around them. */
#define ST_ENTRY_MAX (6 * TENSOR_NAME_LEN + 6 * 21 + 128)

/* Appends a JSON string literal; the buffer was sized for the worst case. */
static size_t put_string(char *buf, size_t pos, const char *s) {
  buf[pos++] = '"';
  for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
    if (*c == '"' || *c == '\\') {
      buf[pos++] = '\\';
      buf[pos++] = (char)*c;
    } else if (*c < 0x20) {
      pos += (size_t)sprintf(buf + pos, "\\u%04x", *c);
    } else {
      buf[pos++] = (char)*c;
    }
  }
  buf[pos++] = '"';
  return pos;
}

/* The JSON header, padded with spaces to a multiple of 8 bytes (as the reference
   implementation does, so that the data section starts aligned). */
static char *build_header(const tensor *const *tensors, int n, const char *const *metadata, size_t *len) {
  size_t meta_bytes = 32;
  for (int i = 0; metadata && metadata[i]; i++) meta_bytes += 6 * strlen(metadata[i]) + 4;
  char *buf = xmalloc((size_t)n * ST_ENTRY_MAX + meta_bytes + 16);
  size_t pos = 0;
  uint64_t offset = 0;
  buf[pos++] = '{';
  if (metadata && metadata[0]) {
    pos = put_string(buf, pos, "__metadata__");
    buf[pos++] = ':';
    buf[pos++] = '{';
    for (int i = 0; metadata[i] && metadata[i + 1]; i += 2) {
      if (i) buf[pos++] = ',';
      pos = put_string(buf, pos, metadata[i]);
      buf[pos++] = ':';
      pos = put_string(buf, pos, metadata[i + 1]);
    }
    buf[pos++] = '}';
  }
  for (int i = 0; i < n; i++) {
    const tensor *t = tensors[i];
    if (i || (metadata && metadata[0])) buf[pos++] = ',';
    pos = put_string(buf, pos, t->name);
    pos +=
        (size_t)sprintf(buf + pos, ":{\"dtype\":\"%s\",\"shape\":[", tensor_dtype_name(t->dtype));
    for (int d = 0; d < t->ndim; d++)
      pos += (size_t)sprintf(buf + pos, d ? ",%" PRId64 : "%" PRId64, t->shape[d]);
    uint64_t end = offset + tensor_bytes(t);
    pos += (size_t)sprintf(buf + pos, "],\"data_offsets\":[%" PRIu64 ",%" PRIu64 "]}", offset, end);
    offset = end;
  }
  buf[pos++] = '}';
  while (pos % 8) buf[pos++] = ' ';
  *len = pos;
  return buf;
}

/* What the loader would reject is refused before anything is written. */
static int check_for_save(const char *path, const tensor *const *tensors, int n, char *err) {
  for (int i = 0; i < n; i++) {
    const tensor *t = tensors[i];
    if (t->ndim < 0 || t->ndim > TENSOR_MAX_DIMS) {
      err_set(err, "cannot write '%s': tensor '%s' has %d dimensions", path, t->name, t->ndim);
      return -1;
    }
    if (strcmp(t->name, "__metadata__") == 0) {
      err_set(err, "cannot write '%s': '__metadata__' is not a tensor name", path);
      return -1;
    }
  }
  const char **names = xcalloc((size_t)n, sizeof *names);
  for (int i = 0; i < n; i++) names[i] = tensors[i]->name;
  const char *dup = find_duplicate(names, n);
  if (dup) err_set(err, "cannot write '%s': tensor '%s' appears twice", path, dup);
  free(names);
  return dup ? -1 : 0;
}

static int write_all(FILE *f, const void *data, size_t bytes) {
  return bytes == 0 || fwrite(data, 1, bytes, f) == bytes ? 0 : -1;
}

int st_save(const char *path, const tensor *const *tensors, int n, char *err) {
  return st_save_with_metadata(path, tensors, n, NULL, err);
}

int st_save_with_metadata(const char *path, const tensor *const *tensors, int n, const char *const *metadata,
                          char *err) {
  if (check_for_save(path, tensors, n, err)) return -1;
  outfile out;
  if (outfile_open(&out, path, err) != 0) return -1;
  size_t header_len;
  char *header = build_header(tensors, n, metadata, &header_len);
  unsigned char len_bytes[8];
  for (int i = 0; i < 8; i++) len_bytes[i] = (unsigned char)((uint64_t)header_len >> (8 * i));
  /* a failed fwrite leaves the stream's error flag set, which outfile_close reports */
  int ok = write_all(out.f, len_bytes, 8) == 0 && write_all(out.f, header, header_len) == 0;
  for (int i = 0; i < n && ok; i++) ok = write_all(out.f, tensors[i]->data, tensor_bytes(tensors[i])) == 0;
  free(header);
  return outfile_close(&out, 1, err);
}
