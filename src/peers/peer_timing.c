#include "peer_timing.h"

#include <math.h>
#include <stdio.h>

#include "report.h"
#include "stats.h"

double peer_flops(const peer_timing *t, const density_stats *d) {
  switch (t->pairs) {
  case PAIRS_INDEX: return flops_sparse(d);
  case PAIRS_COUNTED: return 4.0 * d->dim * t->pairs_count;
  default: return flops_dense(d);
  }
}

int peer_ratios(const peer_timing *t, double total_ms, double nocorr_ms, double *vs_total, double *vs_nocorr) {
  const double ms = stats_median(t->trials_ms, t->trials);
  const int apply = (t->versus == VERSUS_TOTAL ? RATIO_TOTAL : 0) |
                    (t->pairs == PAIRS_INDEX || t->versus == VERSUS_NOCORR ? RATIO_NOCORR : 0);
  *vs_total = apply & RATIO_TOTAL ? ms / total_ms : NAN;
  *vs_nocorr = apply & RATIO_NOCORR ? ms / nocorr_ms : NAN;
  return apply;
}

void peer_put(cJSON *row, const peer_timing *t, const density_stats *d, double total_ms, double nocorr_ms) {
  char key[64];
  const double ms = stats_median(t->trials_ms, t->trials);
  double vs_total, vs_nocorr;
  const int apply = peer_ratios(t, total_ms, nocorr_ms, &vs_total, &vs_nocorr);
  report_add_times(row, t->name, t->trials_ms, t->trials);
  snprintf(key, sizeof key, "%.31s_tflops", t->name);
  report_put_number(row, key, peer_flops(t, d) / ms / 1e9);
  snprintf(key, sizeof key, "speedup_%.31s", t->name);
  report_put_number(row, key, t->versus == VERSUS_NOCORR ? vs_nocorr : vs_total);
  if (apply == (RATIO_TOTAL | RATIO_NOCORR)) { /* on our index, set against the total */
    snprintf(key, sizeof key, "speedup_%.31s_kernel", t->name);
    report_put_number(row, key, vs_nocorr);
  }
  if (t->pairs == PAIRS_COUNTED) {
    snprintf(key, sizeof key, "%.31s_density", t->name);
    report_put_number(row, key, t->density);
  }
}

void peers_put_skipped(cJSON *row, const peer_skip *skipped, int nskipped) {
  cJSON *skips = cJSON_CreateArray();
  for (int i = 0; i < nskipped; i++) {
    cJSON *s = cJSON_CreateObject();
    report_put_string(s, "peer", skipped[i].name);
    report_put_string(s, "why", skipped[i].why);
    cJSON_AddItemToArray(skips, s);
  }
  report_put(row, "peers_skipped", skips);
}

void peers_skip(peer_skip *skipped, int *nskipped, const char *name, const char *why) {
  if (*nskipped >= PEERS_MAX) return;
  peer_skip *s = &skipped[(*nskipped)++];
  snprintf(s->name, sizeof s->name, "%s", name);
  snprintf(s->why, sizeof s->why, "%.300s", why);
  fprintf(stderr, "fp2bench: peer %s skipped: %s\n", name, s->why);
}
