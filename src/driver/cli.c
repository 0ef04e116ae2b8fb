#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "text_format.h"

/* An argument (or its first len bytes) as messages echo it: whole up to 48 bytes, else its
   start and its length, so that a mistaken 100 KB argument does not fill the terminal. */
#define SHOWN_LEN 80
static const char *shown_n(const char *s, size_t len, char *buf) {
  if (len <= 48)
    snprintf(buf, SHOWN_LEN, "%.*s", (int)len, s);
  else
    snprintf(buf, SHOWN_LEN, "%.40s...(%zu bytes)", s, len);
  return buf;
}
static const char *shown(const char *s, char *buf) { return shown_n(s, strlen(s), buf); }

void opts_defaults(fp2_opts *o) {
  memset(o, 0, sizeof *o);
  o->shape.lens.n = 1;
  o->shape.lens.v[0] = 4096;
  o->shape.hq = 32;
  o->shape.hkv = 8;
  o->shape.dim = 128;
  o->shape.batch = 1;
  o->shape.dtype = FP2_BF16;
  o->select.alpha = 0.1;
  o->select.block = 128;
  o->select.qtile = 128;
  o->select.sink = 2;
  o->select.window = 4;
  o->select.recent = 2;
  o->input.data = "synth:llm";
  o->input.density = -1.0;
  o->input.seed = 1;
  o->run.backend = BACKEND_AUTO;
  o->run.kernel = KERNEL_AUTO;
  o->run.trials = 5;
}

/* One term of a size: digits with an optional k (2^10) or m (2^20) suffix. 0, -1 when it is
   not one, 1 when it is too large for 64 bits. */
static int parse_size_term(const char *s, size_t len, int64_t *out) {
  if (len == 0 || len > 24) return -1;
  char buf[32];
  memcpy(buf, s, len);
  buf[len] = '\0';
  int64_t mult = 1;
  char last = buf[len - 1];
  if (last == 'k' || last == 'K') mult = 1024;
  if (last == 'm' || last == 'M') mult = 1024 * 1024;
  if (mult != 1) buf[--len] = '\0';
  if (len == 0) return -1;
  for (size_t i = 0; i < len; i++)
    if (buf[i] < '0' || buf[i] > '9') return -1;
  errno = 0;
  long long v = strtoll(buf, NULL, 10);
  if (errno || v > INT64_MAX / mult) return 1;
  *out = (int64_t)v * mult;
  return 0;
}

int parse_size(const char *s, int64_t *out, char *err) {
  char buf[SHOWN_LEN];
  if (s[0] == '-') {
    err_set(err, "'%s' is negative (a size or count is 0 or more)", shown(s, buf));
    return -1;
  }
  int64_t total = 0;
  const char *p = s;
  for (;;) {
    const char *plus = strchr(p, '+');
    size_t len = plus ? (size_t)(plus - p) : strlen(p);
    int64_t term;
    const int bad = parse_size_term(p, len, &term);
    if (bad || total > INT64_MAX - term) {
      err_set(err, bad >= 0 ? "'%s' is too large a size" : "'%s' is not a size (examples: 1000, 4k, 128k, 1m, 4k+77)",
              shown(s, buf));
      return -1;
    }
    total += term;
    if (!plus) break;
    p = plus + 1;
  }
  *out = total;
  return 0;
}

/* Splits s at commas into at most SIZE_LIST_MAX items of fewer than 64 bytes and hands each to
   item(text, index, ctx, err); *n receives the count. `what` names the items in messages. */
typedef int (*list_item)(const char *text, int index, void *ctx, char *err);

static int parse_list(const char *s, const char *what, const char *example, list_item item, void *ctx, int *n,
                      char *err) {
  *n = 0;
  const char *p = s;
  for (;;) {
    const char *comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    char buf[64];
    if (len == 0 || len >= sizeof buf || *n == SIZE_LIST_MAX) {
      char shown_buf[SHOWN_LEN];
      err_set(err, "'%s' is not a list of at most %d %s (example: %s)", shown(s, shown_buf), SIZE_LIST_MAX, what,
              example);
      return -1;
    }
    memcpy(buf, p, len);
    buf[len] = '\0';
    if (item(buf, *n, ctx, err) != 0) return -1;
    (*n)++;
    if (!comma) return 0;
    p = comma + 1;
  }
}

static int size_item(const char *text, int index, void *ctx, char *err) {
  return parse_size(text, &((size_list *)ctx)->v[index], err);
}

int parse_size_list(const char *s, size_list *out, char *err) {
  return parse_list(s, "sizes", "4k,8k,16k", size_item, out, &out->n, err);
}

static int parse_int(const char *s, int *out);

/* One item of a request list: [Nx]L or [Nx]LQ/LK, appended N times. */
static int request_item(const char *text, int index, void *ctx, char *err) {
  request_list *r = ctx;
  char buf[SHOWN_LEN];
  const char *x = strchr(text, 'x'), *sizes = x ? x + 1 : text;
  int count = 1;
  (void)index;
  if (x) {
    char n[16];
    size_t len = (size_t)(x - text);
    if (len == 0 || len >= sizeof n || strspn(text, "0123456789") != len) {
      count = 0; /* digits only: strtoll would take a sign or leading spaces */
    } else {
      memcpy(n, text, len);
      n[len] = '\0';
      if (parse_int(n, &count) != 0) count = 0;
    }
    if (count <= 0) {
      err_set(err, "'%s': the count before 'x' is not a positive integer (example: 3x8k)", shown(text, buf));
      return -1;
    }
  }
  int64_t lq, lk;
  const char *slash = strchr(sizes, '/');
  if (slash) {
    char q[64];
    memcpy(q, sizes, (size_t)(slash - sizes));
    q[slash - sizes] = '\0';
    if (parse_size(q, &lq, err) != 0 || parse_size(slash + 1, &lk, err) != 0) return -1;
  } else {
    if (parse_size(sizes, &lk, err) != 0) return -1;
    lq = lk;
  }
  if (count > REQUESTS_MAX - r->n) {
    err_set(err, "more than %d requests", REQUESTS_MAX);
    return -1;
  }
  for (int i = 0; i < count; i++, r->n++) {
    r->lq[r->n] = lq;
    r->lk[r->n] = lk;
  }
  return 0;
}

int parse_request_list(const char *s, request_list *out, char *err) {
  int items;
  out->n = 0;
  return parse_list(s, "requests (NxR counts as one)", "64k,3x8k,8k/128k", request_item, out, &items, err);
}

static int parse_double(const char *s, double *out);

static int double_item(const char *text, int index, void *ctx, char *err) {
  const int rc = parse_double(text, &((double_list *)ctx)->v[index]);
  if (rc == 0) return 0;
  err_set(err, rc > 0 ? "'%s' is out of the range of a double" : "'%s' is not a number", text);
  return -1;
}

int parse_double_list(const char *s, double_list *out, char *err) {
  return parse_list(s, "numbers", "0.2,0.1,0.05", double_item, out, &out->n, err);
}

/* 0, -1 when s is not an integer, 1 when it is one outside the range of an int. */
static int parse_int(const char *s, int *out) {
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (end == s || *end) return -1;
  if (errno || v < INT_MIN || v > INT_MAX) return 1;
  *out = (int)v;
  return 0;
}

/* 0, -1 when s is not a number, 1 when it is one too large for a double. A number too small
   for one (1e-400) is its nearest double, 0 or a subnormal, as strtod gives it. */
static int parse_double(const char *s, double *out) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (end == s || *end || isnan(v) || (isinf(v) && errno != ERANGE)) return -1;
  if (isinf(v)) return 1;
  *out = v;
  return 0;
}

/* The message of a failed parse_int or parse_double (rc), naming the option. */
static void number_error(char *err, const char *option, const char *v, int rc, const char *what, const char *range) {
  char buf[SHOWN_LEN];
  if (rc > 0)
    err_set(err, "%s: '%s' is out of range (%s)", option, shown(v, buf), range);
  else
    err_set(err, "%s: '%s' is not %s", option, shown(v, buf), what);
}

/* Index of `s` among the '|'-separated choices, or -1. */
static int choice_index(const char *choices, const char *s) {
  int i = 0;
  size_t n = strlen(s);
  for (const char *p = choices;; i++) {
    const char *bar = strchr(p, '|');
    size_t len = bar ? (size_t)(bar - p) : strlen(p);
    if (len == n && strncmp(p, s, n) == 0) return i;
    if (!bar) return -1;
    p = bar + 1;
  }
}

void choice_name(const char *choices, int index, char *buf, size_t len) {
  const char *p = choices;
  for (int i = 0; i < index && p; i++) {
    p = strchr(p, '|');
    if (p) p++;
  }
  if (!p) p = "?";
  size_t n = strcspn(p, "|");
  if (n >= len) n = len - 1;
  memcpy(buf, p, n);
  buf[n] = '\0';
}

static void format_default(const opt_spec *s, char *buf, size_t len) {
  switch (s->kind) {
    case OPT_FLAG: snprintf(buf, len, "%s", *(int *)s->dst ? "on" : "off"); break;
    case OPT_INT: snprintf(buf, len, "%d", *(int *)s->dst); break;
    case OPT_SIZE: snprintf(buf, len, "%lld", (long long)*(int64_t *)s->dst); break;
    case OPT_SIZE_LIST: {
      const size_list *l = s->dst;
      size_t used = 0;
      buf[0] = '\0';
      for (int i = 0; i < l->n && used < len; i++) {
        if (i) used += (size_t)snprintf(buf + used, len - used, ",");
        if (used < len) used += (size_t)format_size(buf + used, len - used, l->v[i], 0);
      }
      break;
    }
    case OPT_DOUBLE_LIST: {
      const double_list *l = s->dst;
      size_t used = 0;
      buf[0] = '\0';
      for (int i = 0; i < l->n && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%g", i ? "," : "", l->v[i]);
      break;
    }
    case OPT_DOUBLE: {
      double v = *(double *)s->dst;
      if (v < 0)
        snprintf(buf, len, "off");
      else
        snprintf(buf, len, "%g", v);
      break;
    }
    case OPT_STRING:
    case OPT_POSITIONAL: {
      const char *v = *(const char **)s->dst;
      snprintf(buf, len, "%s", v ? v : "none");
      break;
    }
    case OPT_CHOICE: choice_name(s->meta, *(int *)s->dst, buf, len); break;
    case OPT_HEADS: {
      const shape_opts *sh = s->dst;
      snprintf(buf, len, "%d:%d", sh->hq, sh->hkv);
      break;
    }
    case OPT_REQUESTS: {
      const request_list *r = s->dst;
      if (r->n == 0)
        snprintf(buf, len, "none");
      else
        requests_format(buf, len, r);
      break;
    }
  }
}

static void print_help(const char *usage, const char *summary, const opt_spec *specs, int n) {
  printf("usage: fp2bench %s\n\n%s\n\noptions:\n", usage, summary);
  for (int i = 0; i < n; i++) {
    const opt_spec *s = &specs[i];
    char left[64], def[128];
    if (s->kind == OPT_POSITIONAL)
      snprintf(left, sizeof left, "%s", s->name);
    else if (s->kind == OPT_FLAG)
      snprintf(left, sizeof left, "%s", s->name);
    else
      snprintf(left, sizeof left, "%s %s", s->name, s->meta ? s->meta : "V");
    format_default(s, def, sizeof def);
    /* A help text that states its own default (one computed at run time) gets no second one. */
    if (s->kind == OPT_FLAG || (s->kind == OPT_POSITIONAL && strcmp(def, "none") == 0) ||
        strstr(s->help, "(default:"))
      printf("  %-24s %s\n", left, s->help);
    else
      printf("  %-24s %s (default: %s)\n", left, s->help, def);
  }
  printf("  %-24s %s\n", "--help", "this text");
}

/* A parser's result rc (0 or -1) with its message prefixed by the option's name. */
static int named(const opt_spec *s, int rc, char *err) {
  if (rc == 0) return 0;
  char inner[ERR_LEN];
  snprintf(inner, sizeof inner, "%s", err);
  err_set(err, "%s: %s", s->name, inner);
  return -1;
}

static int set_value(const opt_spec *s, const char *v, char *err) {
  switch (s->kind) {
    case OPT_INT: {
      const int rc = parse_int(v, s->dst);
      if (rc) number_error(err, s->name, v, rc, "an integer", "an integer here is within -2147483648..2147483647");
      return rc ? -1 : 0;
    }
    case OPT_SIZE: return named(s, parse_size(v, s->dst, err), err);
    case OPT_SIZE_LIST: return named(s, parse_size_list(v, s->dst, err), err);
    case OPT_REQUESTS: return named(s, parse_request_list(v, s->dst, err), err);
    case OPT_DOUBLE_LIST: return named(s, parse_double_list(v, s->dst, err), err);
    case OPT_DOUBLE: {
      const int rc = parse_double(v, s->dst);
      if (rc) number_error(err, s->name, v, rc, "a number", "beyond the largest double");
      return rc ? -1 : 0;
    }
    case OPT_STRING:
    case OPT_POSITIONAL:
      *(const char **)s->dst = v;
      return 0;
    case OPT_CHOICE: {
      int i = choice_index(s->meta, v);
      if (i < 0) {
        char buf[SHOWN_LEN];
        err_set(err, "%s: '%s' is not one of %s", s->name, shown(v, buf), s->meta);
        return -1;
      }
      *(int *)s->dst = i;
      return 0;
    }
    case OPT_HEADS: {
      shape_opts *sh = s->dst;
      const char *colon = strchr(v, ':');
      char a[32];
      size_t la = colon ? (size_t)(colon - v) : 0;
      char buf[SHOWN_LEN];
      if (!colon || la == 0 || la >= sizeof a) {
        err_set(err, "%s: '%s' is not HQ:HKV (example: 32:8)", s->name, shown(v, buf));
        return -1;
      }
      memcpy(a, v, la);
      a[la] = '\0';
      int rc = parse_int(a, &sh->hq);
      if (rc == 0) rc = parse_int(colon + 1, &sh->hkv);
      if (rc) number_error(err, s->name, v, rc, "HQ:HKV (example: 32:8)", "head counts are at most 1024");
      return rc ? -1 : 0;
    }
    case OPT_FLAG: break;
  }
  return -1;
}

void cli_set_help(opt_spec *specs, int nspecs, const char *name, const char *help) {
  for (int i = 0; i < nspecs; i++)
    if (strcmp(specs[i].name, name) == 0) specs[i].help = help;
}

int cli_parse(int argc, char **argv, const char *usage, const char *summary, const opt_spec *specs,
              int nspecs) {
  char err[ERR_LEN];
  int next_positional = 0;
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
      print_help(usage, summary, specs, nspecs);
      return 1;
    }
    if (strncmp(arg, "--", 2) != 0 || strcmp(arg, "-") == 0) {
      const opt_spec *pos = NULL;
      for (int k = 0, seen = 0; k < nspecs; k++)
        if (specs[k].kind == OPT_POSITIONAL && seen++ == next_positional) pos = &specs[k];
      if (!pos) {
        char buf[SHOWN_LEN];
        fail("%s: unexpected argument '%s' (see fp2bench %s --help)", argv[0], shown(arg, buf), argv[0]);
        return EXIT_USAGE;
      }
      next_positional++;
      set_value(pos, arg, err);
      if (pos->given) *pos->given = 1;
      continue;
    }
    const char *eq = strchr(arg, '=');
    size_t name_len = eq ? (size_t)(eq - arg) : strlen(arg);
    const opt_spec *s = NULL;
    for (int k = 0; k < nspecs; k++)
      if (specs[k].kind != OPT_POSITIONAL && strlen(specs[k].name) == name_len &&
          strncmp(specs[k].name, arg, name_len) == 0)
        s = &specs[k];
    if (!s) {
      char buf[SHOWN_LEN];
      fail("%s: unknown option '%s' (see fp2bench %s --help)", argv[0], shown_n(arg, name_len, buf), argv[0]);
      return EXIT_USAGE;
    }
    if (s->kind == OPT_FLAG) {
      if (eq) {
        fail("%s: option '%s' takes no value", argv[0], s->name);
        return EXIT_USAGE;
      }
      *(int *)s->dst = 1;
      if (s->given) *s->given = 1;
      continue;
    }
    const char *value = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
    if (!value) {
      fail("%s: option '%s' needs a value %s", argv[0], s->name, s->meta ? s->meta : "");
      return EXIT_USAGE;
    }
    if (set_value(s, value, err) != 0) {
      fail("%s: %s", argv[0], err);
      return EXIT_USAGE;
    }
    if (s->given) *s->given = 1;
  }
  return 0;
}

#define LEN_MAX (1 << 24) /* tokens of one sequence or request (16m) */

/* --requests: each request within the lengths --len takes, no more queries than keys, and a
   batch whose rows and segments the library's 32-bit counts hold (g: the group size). */
static int requests_validate(const fp2_opts *o, int64_t g, char *err) {
  const request_list *r = &o->shape.requests;
  const int64_t limit = INT32_MAX / 2;
  int64_t tiles = 0, queries = 0;
  for (int b = 0; b < r->n; b++) {
    if (r->lk[b] <= 0 || r->lk[b] > LEN_MAX || r->lq[b] <= 0 || r->lq[b] > r->lk[b]) {
      err_set(err, "--requests: request %d (%lld/%lld) needs 1 <= queries <= keys <= 16m", b + 1,
              (long long)r->lq[b], (long long)r->lk[b]);
      return -1;
    }
    tiles += (r->lq[b] * g + o->select.qtile - 1) / o->select.qtile;
    queries += r->lq[b];
  }
  if (r->n && o->shape.batch != 1) {
    err_set(err, "--requests gives the batch itself: --batch must be 1");
    return -1;
  }
  if (queries * g > limit || tiles * o->shape.hkv > limit || requests_total_k(r) > limit) {
    err_set(err, "--requests: %lld queries and %lld keys with --heads %d:%d are beyond what the index can count",
            (long long)queries, (long long)requests_total_k(r), o->shape.hq, o->shape.hkv);
    return -1;
  }
  return 0;
}

int opts_validate(const fp2_opts *o, char *err) {
  for (int i = 0; i < o->shape.lens.n; i++)
    if (o->shape.lens.v[i] <= 0 || o->shape.lens.v[i] > LEN_MAX) {
      err_set(err, "--len: %lld is outside 1..16m", (long long)o->shape.lens.v[i]);
      return -1;
    }
  if (o->shape.hq <= 0 || o->shape.hkv <= 0) {
    err_set(err, "--heads: head counts must be positive (got %d:%d)", o->shape.hq, o->shape.hkv);
    return -1;
  }
  if (o->shape.hq % o->shape.hkv != 0) {
    err_set(err, "--heads: %d query heads are not a multiple of %d KV heads", o->shape.hq, o->shape.hkv);
    return -1;
  }
  if (o->shape.hq > 1024) {
    err_set(err, "--heads: %d query heads is more than 1024", o->shape.hq);
    return -1;
  }
  if (o->shape.dim <= 0 || o->shape.dim > 512) {
    err_set(err, "--dim: %d is outside 1..512", o->shape.dim);
    return -1;
  }
  if (o->shape.batch <= 0 || o->shape.batch > 4096) {
    err_set(err, "--batch: %d is outside 1..4096", o->shape.batch);
    return -1;
  }
  if (!(o->select.alpha >= 0.0 && o->select.alpha <= 1.0)) {
    err_set(err, "--alpha: %g is outside [0,1]", o->select.alpha);
    return -1;
  }
  if (o->select.block <= 0 || o->select.block > 4096) {
    err_set(err, "--block: %d is outside 1..4096", o->select.block);
    return -1;
  }
  if (o->select.qtile <= 0 || o->select.qtile > 4096) {
    err_set(err, "--qtile: %d is outside 1..4096", o->select.qtile);
    return -1;
  }
  if (o->select.sink < 0) {
    err_set(err, "--sink: %d is negative", o->select.sink);
    return -1;
  }
  if (o->select.window < 0) {
    err_set(err, "--window: %d is negative", o->select.window);
    return -1;
  }
  if (o->select.recent < 0) {
    err_set(err, "--recent: %d is negative", o->select.recent);
    return -1;
  }
  if (o->input.density >= 0.0 ? !(o->input.density > 0.0 && o->input.density <= 1.0) : o->input.density != -1.0) {
    err_set(err, "--density: %g is outside (0,1]", o->input.density);
    return -1;
  }
  if (o->run.trials < 1) {
    err_set(err, "--trials: %d is not positive", o->run.trials);
    return -1;
  }
  if (o->run.paged) { /* the library's own list of page sizes; the table here only stands in */
    const int any_table[1] = {0};
    const fp2_kv_pages page_size_only = {any_table, 1, 1};
    const fp2_params p = opts_params(o);
    if (fp2_check_pages(&p, &page_size_only) != FP2_OK) {
      err_set(err, "--paged: %s", fp2_error_message());
      return -1;
    }
  }
  if (o->run.paged && o->run.backend == BACKEND_CPU) {
    err_set(err, "--paged: pages are a layout of the gpu's K and V; the cpu backend has none");
    return -1;
  }
  if (o->run.kernel == KERNEL_SM90) {
    const fp2_params p = opts_params(o);
    if (fp2_sm90_supports_shape(&p) != FP2_OK) {
      err_set(err, "--kernel sm90: %s", fp2_error_message());
      return -1;
    }
  }
  /* Rows, tiles and segments are counted in 32-bit integers by the library. */
  const int64_t limit = INT32_MAX / 2, g = o->shape.hq / o->shape.hkv;
  for (int i = 0; i < o->shape.lens.n; i++) {
    int64_t rows = o->shape.lens.v[i] * g, tiles = (rows + o->select.qtile - 1) / o->select.qtile;
    if (rows > limit || o->shape.batch * o->shape.lens.v[i] * (int64_t)o->shape.hq > (int64_t)1 << 40 ||
        (int64_t)o->shape.batch * o->shape.hkv * tiles > limit) {
      err_set(err, "--len: %lld tokens with --heads %d:%d and --batch %d is beyond what the index can count",
              (long long)o->shape.lens.v[i], o->shape.hq, o->shape.hkv, o->shape.batch);
      return -1;
    }
  }
  return requests_validate(o, g, err);
}

fp2_params opts_params(const fp2_opts *o) {
  fp2_params p;
  memset(&p, 0, sizeof p);
  p.hq = o->shape.hq;
  p.hkv = o->shape.hkv;
  p.dim = o->shape.dim;
  p.block = o->select.block;
  p.qtile = o->select.qtile;
  p.alpha = (float)o->select.alpha;
  p.sink = o->select.sink;
  p.window = o->select.window;
  p.recent = o->select.recent;
  p.correction = !o->select.no_correction;
  p.dtype = (fp2_dtype)o->shape.dtype;
  p.kernel = kernel_of_choice(o->run.kernel);
  p.page_size = o->run.paged;
  return p;
}

int opts_backend(const fp2_opts *o, int gpu_present) {
  if (o->run.backend == BACKEND_AUTO) return gpu_present ? BACKEND_GPU : BACKEND_CPU;
  return o->run.backend;
}
