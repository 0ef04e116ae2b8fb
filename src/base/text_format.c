#include "text_format.h"

#include <math.h>
#include <stdio.h>

const char *format_percent(char *buf, size_t len, double x, int sign) {
  if (isfinite(x))
    snprintf(buf, len, sign ? "%+.1f%%" : "%.1f%%", 100 * x);
  else
    snprintf(buf, len, "-");
  return buf;
}
