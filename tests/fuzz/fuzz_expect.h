/* Expectations of the fuzz targets: a broken one is a finding, reported with where and
   what, then abort() (which libFuzzer and CTest both report as a failure).
   tests/fuzz/run.sh discards the targets' stderr (-close_fd_mask=3: cli_parse prints a line
   per bad option), so the message goes through the sanitizer runtime's report channel,
   which libFuzzer keeps, whenever a sanitizer is linked in; plain stderr otherwise. */
#ifndef FP2_FUZZ_EXPECT_H
#define FP2_FUZZ_EXPECT_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

/* Defined by every sanitizer runtime (clang's and gcc's); NULL without one. */
extern void __sanitizer_report_error_summary(const char *summary) __attribute__((weak));

__attribute__((noreturn, format(printf, 4, 5))) static void fuzz_failed(const char *file, int line,
                                                                        const char *cond,
                                                                        const char *fmt, ...) {
  char msg[1024];
  int n = snprintf(msg, sizeof msg, "%s:%d: expected %s: ", file, line, cond);
  va_list ap;
  va_start(ap, fmt);
  if (n >= 0 && (size_t)n < sizeof msg) vsnprintf(msg + n, sizeof msg - (size_t)n, fmt, ap);
  va_end(ap);
  if (__sanitizer_report_error_summary)
    __sanitizer_report_error_summary(msg);
  else
    fprintf(stderr, "%s\n", msg);
  abort();
}

#define FUZZ_EXPECT(cond, ...)                                   \
  do {                                                           \
    if (!(cond)) fuzz_failed(__FILE__, __LINE__, #cond, __VA_ARGS__); \
  } while (0)

/* What a failing call promises: a message (err; it may run over several lines) that fits
   ERR_LEN and, unless name is NULL, names the file or thing it is about. */
static inline void fuzz_expect_message(const char *what, const char *err, const char *name) {
  size_t len = strnlen(err, ERR_LEN);
  FUZZ_EXPECT(len > 0 && len < ERR_LEN, "%s failed without a message", what);
  if (name) FUZZ_EXPECT(strstr(err, name) != NULL, "%s: message does not name '%s': %s", what, name, err);
}

#endif
