#include "regress.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "stats.h"

const char *verdict_name(verdict v) {
  switch (v) {
    case VERDICT_SAME: return "SAME";
    case VERDICT_FASTER: return "FASTER";
    case VERDICT_SLOWER: return "SLOWER";
    case VERDICT_UNCLEAR: return "UNCLEAR";
  }
  return "?";
}

timing_diff regress_timing(const double *base, int nb, const double *cand, int nc, double floor) {
  timing_diff d;
  d.base_trials = nb;
  d.cand_trials = nc;
  d.base_median = stats_median(base, nb);
  d.cand_median = stats_median(cand, nc);
  d.change = d.cand_median / d.base_median - 1.0;
  double qb1 = stats_quantile(base, nb, 0.25), qb3 = stats_quantile(base, nb, 0.75);
  double qc1 = stats_quantile(cand, nc, 0.25), qc3 = stats_quantile(cand, nc, 0.75);
  d.noise = fmax((qb3 - qb1) / d.base_median, (qc3 - qc1) / d.cand_median);
  if (nb < REGRESS_MIN_TRIALS || nc < REGRESS_MIN_TRIALS || !isfinite(d.change) || !isfinite(d.noise))
    d.v = VERDICT_UNCLEAR;
  else if (fabs(d.change) <= fmax(floor, d.noise) || fabs(d.cand_median - d.base_median) <= REGRESS_ABS_FLOOR_MS)
    d.v = VERDICT_SAME;
  else if (d.change > 0 && stats_min(cand, nc) > qb3)
    d.v = VERDICT_SLOWER;
  else if (d.change < 0 && stats_max(cand, nc) < qb1)
    d.v = VERDICT_FASTER;
  else
    d.v = VERDICT_UNCLEAR;
  return d;
}

static const cJSON *path(const cJSON *doc, const char *a, const char *b) {
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(doc, a);
  return b ? cJSON_GetObjectItemCaseSensitive(x, b) : x;
}

/* Two JSON values are the same (missing counts as null). */
static int same(const cJSON *a, const cJSON *b) {
  if (!a || cJSON_IsNull(a)) return !b || cJSON_IsNull(b);
  return b && cJSON_Compare(a, b, 1);
}

static const char *text_of(const cJSON *x, char *buf, size_t len) {
  if (!x) return "none";
  char *s = cJSON_PrintUnformatted(x);
  snprintf(buf, len, "%s", s ? s : "?");
  free(s);
  return buf;
}

/* The generator version of a config; results from before it was recorded are version 1. */
static int synth_version_of(const cJSON *config) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(config, "synth_version");
  return cJSON_IsNumber(v) ? v->valueint : 1;
}

/* Whether option x, which the other config lacks, is what a record from before the option
   existed ran with: page_size 0, K and V contiguous (the option came with paged K and V). */
static int implied_when_absent(const cJSON *x) {
  return strcmp(x->string, "page_size") == 0 && cJSON_IsNumber(x) && x->valuedouble == 0;
}

int regress_compatible(const cJSON *base, const cJSON *cand, char *err) {
  char a[128], b[128];
  static const struct {
    const char *obj, *key, *what;
  } checks[] = {
      {"experiment", NULL, "experiments"},
      {"provenance", "cuda_driver", "CUDA drivers"},
  };
  for (size_t i = 0; i < sizeof checks / sizeof checks[0]; i++) {
    const cJSON *x = path(base, checks[i].obj, checks[i].key), *y = path(cand, checks[i].obj, checks[i].key);
    if (!same(x, y)) {
      err_set(err, "different %s: %s against %s", checks[i].what, text_of(x, a, sizeof a), text_of(y, b, sizeof b));
      return -1;
    }
  }
  const cJSON *cb = path(base, "config", NULL), *cc = path(cand, "config", NULL), *x;
  const int vb = synth_version_of(cb), vc = synth_version_of(cc);
  if (vb != vc) {
    err_set(err, "different synthetic data generators: synth_version %d against %d", vb, vc);
    return -1;
  }
  /* Configs: name the first option that differs (either side may lack it). */
  for (int side = 0; side < 2; side++)
    cJSON_ArrayForEach(x, (side ? cc : cb)) {
      const cJSON *y = cJSON_GetObjectItemCaseSensitive(side ? cb : cc, x->string);
      if (same(x, y) || strcmp(x->string, "synth_version") == 0) continue;
      if (!y && implied_when_absent(x)) continue;
      const cJSON *bx = side ? y : x, *cx = side ? x : y;
      err_set(err, "different configs: %s is %s against %s", x->string, text_of(bx, a, sizeof a), text_of(cx, b, sizeof b));
      return -1;
    }
  const cJSON *gb = path(base, "provenance", "gpu"), *gc = path(cand, "provenance", "gpu");
  const cJSON *nb = cJSON_GetObjectItemCaseSensitive(gb, "name"), *nc = cJSON_GetObjectItemCaseSensitive(gc, "name");
  const cJSON *sb = cJSON_GetObjectItemCaseSensitive(gb, "sm_count"), *sc = cJSON_GetObjectItemCaseSensitive(gc, "sm_count");
  if (!same(nb, nc) || !same(sb, sc)) {
    char sa[32], sbuf[32];
    err_set(err, "different GPUs: %s (%s SMs) against %s (%s SMs)", text_of(nb, a, sizeof a), text_of(sb, sa, sizeof sa),
            text_of(nc, b, sizeof b), text_of(sc, sbuf, sizeof sbuf));
    return -1;
  }
  if ((!gb || cJSON_IsNull(gb)) && !same(path(base, "provenance", "cpu"), path(cand, "provenance", "cpu"))) {
    err_set(err, "different CPUs: %s against %s", text_of(path(base, "provenance", "cpu"), a, sizeof a),
            text_of(path(cand, "provenance", "cpu"), b, sizeof b));
    return -1;
  }
  return 0;
}

/* Keys that name what a row measures rather than what was measured. */
static const char *const identity_keys[] = {"len", "dtype", "mode", "peer", "kernel", "data", "hq", "hkv",
                                            "dim", "batch", "alpha", "density_target", "correction"};

static void row_identity(const cJSON *row, char *buf, size_t len) {
  size_t used = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < sizeof identity_keys / sizeof identity_keys[0]; i++) {
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(row, identity_keys[i]);
    if (!x || cJSON_IsObject(x) || cJSON_IsArray(x)) continue;
    char v[64];
    text_of(x, v, sizeof v);
    used += (size_t)snprintf(buf + used, used < len ? len - used : 0, "%s%s=%s", used ? " " : "", identity_keys[i], v);
    if (used >= len) break;
  }
}

static const cJSON *find_row(const cJSON *rows, const char *identity) {
  const cJSON *row;
  cJSON_ArrayForEach(row, rows) {
    char id[160];
    row_identity(row, id, sizeof id);
    if (strcmp(id, identity) == 0) return row;
  }
  return NULL;
}

/* trials_ms of a timing object as doubles; returns the count (0 when absent). */
static int trials_of(const cJSON *timing, double **out) {
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(timing, "trials_ms");
  int n = cJSON_GetArraySize(t), k = 0;
  *out = xmalloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
  const cJSON *x;
  cJSON_ArrayForEach(x, t) if (cJSON_IsNumber(x)) (*out)[k++] = x->valuedouble;
  return k;
}

static int is_timing(const cJSON *x) { return cJSON_IsObject(x) && cJSON_GetObjectItemCaseSensitive(x, "trials_ms"); }

int regress_compare(const cJSON *base, const cJSON *cand, double floor, regress_item **items, char *err) {
  const cJSON *brows = cJSON_GetObjectItemCaseSensitive(base, "rows"), *crows = cJSON_GetObjectItemCaseSensitive(cand, "rows");
  int n = 0, total = 0;
  const cJSON *brow, *timing;
  cJSON_ArrayForEach(brow, brows) cJSON_ArrayForEach(timing, brow) total += is_timing(timing);
  regress_item *out = xmalloc(sizeof(regress_item) * (size_t)(total > 0 ? total : 1));
  cJSON_ArrayForEach(brow, brows) {
    char id[160];
    row_identity(brow, id, sizeof id);
    const cJSON *crow = find_row(crows, id);
    if (!crow) {
      err_set(err, "the candidate has no row %s", id);
      free(out);
      return -1;
    }
    cJSON_ArrayForEach(timing, brow) {
      if (!is_timing(timing)) continue;
      const cJSON *ctiming = cJSON_GetObjectItemCaseSensitive(crow, timing->string);
      if (!ctiming) {
        err_set(err, "the candidate's row %s has no timing '%s'", id, timing->string);
        free(out);
        return -1;
      }
      double *b, *c;
      int nb = trials_of(timing, &b), nc = trials_of(ctiming, &c);
      snprintf(out[n].row, sizeof out[n].row, "%s", id);
      snprintf(out[n].key, sizeof out[n].key, "%s", timing->string);
      out[n].d = regress_timing(b, nb, c, nc, floor);
      n++;
      free(b);
      free(c);
    }
  }
  *items = out;
  return n;
}
