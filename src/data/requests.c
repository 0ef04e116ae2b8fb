#include "requests.h"

#include <stdio.h>
#include <string.h>

#include "text_format.h"

int requests_format(char *buf, size_t len, const request_list *r) {
  size_t used = 0;
  if (len) buf[0] = '\0';
  for (int b = 0, run; b < r->n; b += run) {
    for (run = 1; b + run < r->n && r->lq[b + run] == r->lq[b] && r->lk[b + run] == r->lk[b]; run++) continue;
    char count[16] = "", q[32] = "", k[32];
    if (run > 1) snprintf(count, sizeof count, "%dx", run);
    if (r->lq[b] != r->lk[b]) {
      format_size(q, sizeof q - 1, r->lq[b], 0);
      strcat(q, "/");
    }
    format_size(k, sizeof k, r->lk[b], 0);
    int w = snprintf(buf + used, len - used, "%s%s%s%s", b ? "," : "", count, q, k);
    if (w < 0 || (size_t)w >= len - used) return (int)len; /* truncated */
    used += (size_t)w;
  }
  return (int)used;
}

int64_t requests_total_q(const request_list *r) {
  int64_t t = 0;
  for (int b = 0; b < r->n; b++) t += r->lq[b];
  return t;
}

int64_t requests_total_k(const request_list *r) {
  int64_t t = 0;
  for (int b = 0; b < r->n; b++) t += r->lk[b];
  return t;
}
