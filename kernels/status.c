/* The library's last error message, per thread, as fp2.h promises. */
#include <stdarg.h>
#include <stdio.h>

#include "fp2.h"
#include "status.h"

static _Thread_local char last_message[512] = "no error";

const char *fp2_error_message(void) { return last_message; }

fp2_status fp2_fail(fp2_status status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_message, sizeof last_message, fmt, ap);
  va_end(ap);
  return status;
}
