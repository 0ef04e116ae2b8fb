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

int format_size(char *buf, size_t len, int64_t v, int upper) {
  if (v != 0 && v % (1024 * 1024) == 0) return snprintf(buf, len, "%lld%c", (long long)(v >> 20), upper ? 'M' : 'm');
  if (v != 0 && v % 1024 == 0) return snprintf(buf, len, "%lld%c", (long long)(v >> 10), upper ? 'K' : 'k');
  return snprintf(buf, len, "%lld", (long long)v);
}
