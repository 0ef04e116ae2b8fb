/* Error reporting shared by every host module: one-line messages, fixed exit codes. */
#ifndef FP2_ERROR_H
#define FP2_ERROR_H

#include <stddef.h>

/* Exit codes of fp2bench (CTest treats 77 as skipped). */
enum {
  EXIT_OK = 0,
  EXIT_FAILED = 1,  /* a check or a regression failed */
  EXIT_USAGE = 2,   /* bad option, impossible shape, unreadable input */
  EXIT_RUNTIME = 3, /* CUDA or system error */
  EXIT_SKIP = 77    /* the requested backend is absent (no GPU) */
};

/* Modules that can fail return 0 on success and -1 on failure, with the reason in a
   caller-provided buffer of ERR_LEN bytes: lower case, no trailing full stop. */
#define ERR_LEN 320

void err_set(char *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prints "fp2bench: <msg>" on stderr. */
void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Allocation that exits with EXIT_RUNTIME and the size when memory runs out. */
void *xmalloc(size_t bytes);
void *xcalloc(size_t count, size_t size);
void *xrealloc(void *p, size_t bytes);

#endif
