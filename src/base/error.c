#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void err_set(char *err, const char *fmt, ...) {
  if (!err) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, ERR_LEN, fmt, ap);
  va_end(ap);
}

void fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("fp2bench: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

void *xmalloc(size_t bytes) {
  void *p = malloc(bytes ? bytes : 1);
  if (!p) {
    fail("out of host memory allocating %zu bytes", bytes);
    exit(EXIT_RUNTIME);
  }
  return p;
}

void *xrealloc(void *p, size_t bytes) {
  void *grown = realloc(p, bytes ? bytes : 1);
  if (!grown) {
    fail("out of host memory allocating %zu bytes", bytes);
    exit(EXIT_RUNTIME);
  }
  return grown;
}

void *xcalloc(size_t count, size_t size) {
  void *p = calloc(count ? count : 1, size ? size : 1);
  if (!p) {
    fail("out of host memory allocating %zu x %zu bytes", count, size);
    exit(EXIT_RUNTIME);
  }
  return p;
}
