/* Numbers as the human-readable tables show them. */
#ifndef FP2_TEXT_FORMAT_H
#define FP2_TEXT_FORMAT_H

#include <stddef.h>
#include <stdint.h>

/* x as a percentage with one decimal ("12.3%", or "+12.3%" with sign), "-" where x is NaN or
   infinite (not measured, or a ratio of nothing); returns buf. */
const char *format_percent(char *buf, size_t len, double x, int sign);

/* v as a size: 16k or 1m where it is a whole number of them (16K, 1M with upper), else in
   full; snprintf's return value. */
int format_size(char *buf, size_t len, int64_t v, int upper);

#endif
