/* Numbers as the human-readable tables show them. */
#ifndef FP2_TEXT_FORMAT_H
#define FP2_TEXT_FORMAT_H

#include <stddef.h>

/* x as a percentage with one decimal ("12.3%", or "+12.3%" with sign), "-" where x is NaN or
   infinite (not measured, or a ratio of nothing); returns buf. */
const char *format_percent(char *buf, size_t len, double x, int sign);

#endif
