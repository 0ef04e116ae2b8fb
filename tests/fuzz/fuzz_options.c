/* libFuzzer target B: the option parser. The input, as one NUL-terminated string, goes to
   parse_size, parse_size_list, parse_double_list and parse_request_list; split at whitespace
   (and NUL bytes) into arguments, it goes to cli_parse with the shared options of every
   experiment (OPTS_EXPERIMENT) plus --requests, an integer, a number, a number list and a
   positional argument as the commands add them, then to opts_validate. A parse either succeeds with a value its
   grammar allows or fails with a message; options that validate satisfy every bound.
   Built by tests/fuzz/run.sh (clang, -fsanitize=fuzzer,address,undefined);
   tests/test_fuzz_regressions.c runs this same entry point on the committed inputs. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "error.h"
#include "fuzz_expect.h"

#define OPT_MAX_ARGS 64

/* The value of an accepted size recomputed term by term: digits, then k (2^10) or m (2^20),
   terms joined by '+'. Unsigned, so that a wrongly accepted overflow wraps rather than
   being undefined here. */
static uint64_t opt_size_value(const char *s) {
  uint64_t total = 0;
  for (const char *p = s;;) {
    char *end;
    uint64_t v = strtoull(p, &end, 10);
    if (*end == 'k' || *end == 'K' || *end == 'm' || *end == 'M') {
      v *= *end == 'k' || *end == 'K' ? 1024u : 1024u * 1024u;
      end++;
    }
    total += v;
    if (*end != '+') return total;
    p = end + 1;
  }
}

/* A size parses only when made of digits, k/K, m/M and '+' (and ',' in a list). */
static void opt_sizes(const char *s) {
  char err[ERR_LEN] = "";
  int64_t v = -1;
  if (parse_size(s, &v, err) == 0) {
    FUZZ_EXPECT(s[0] && strspn(s, "0123456789kKmM+") == strlen(s), "'%s' parsed as %lld", s,
                (long long)v);
    FUZZ_EXPECT(v >= 0 && (uint64_t)v == opt_size_value(s), "'%s' parsed as %lld", s,
                (long long)v);
  } else {
    fuzz_expect_message("parse_size", err, NULL);
  }
  size_list l;
  err[0] = '\0';
  if (parse_size_list(s, &l, err) == 0) {
    FUZZ_EXPECT(s[0] && strspn(s, "0123456789kKmM+,") == strlen(s), "'%s' parsed as a list", s);
    FUZZ_EXPECT(l.n >= 1 && l.n <= SIZE_LIST_MAX, "'%s' gave %d sizes", s, l.n);
    for (int i = 0; i < l.n; i++)
      FUZZ_EXPECT(l.v[i] >= 0, "'%s' gave size %lld", s, (long long)l.v[i]);
  } else {
    fuzz_expect_message("parse_size_list", err, NULL);
  }
  double_list d;
  err[0] = '\0';
  if (parse_double_list(s, &d, err) == 0) {
    FUZZ_EXPECT(d.n >= 1 && d.n <= SIZE_LIST_MAX, "'%s' gave %d numbers", s, d.n);
    for (int i = 0; i < d.n; i++) FUZZ_EXPECT(isfinite(d.v[i]), "'%s' gave %g", s, d.v[i]);
  } else {
    fuzz_expect_message("parse_double_list", err, NULL);
  }
  request_list r;
  err[0] = '\0';
  if (parse_request_list(s, &r, err) == 0) {
    FUZZ_EXPECT(s[0] && strspn(s, "0123456789kKmM+,x/") == strlen(s), "'%s' parsed as requests", s);
    FUZZ_EXPECT(r.n >= 1 && r.n <= REQUESTS_MAX, "'%s' gave %d requests", s, r.n);
    for (int i = 0; i < r.n; i++)
      FUZZ_EXPECT(r.lq[i] >= 0 && r.lk[i] >= 0, "'%s' gave request %lld/%lld", s, (long long)r.lq[i],
                  (long long)r.lk[i]);
  } else {
    fuzz_expect_message("parse_request_list", err, NULL);
  }
}

/* Options that pass opts_validate are within its bounds, and so are their parameters. */
static void opt_expect_valid(const fp2_opts *o) {
  FUZZ_EXPECT(o->shape.lens.n >= 1 && o->shape.lens.n <= SIZE_LIST_MAX, "%d lengths", o->shape.lens.n);
  for (int i = 0; i < o->shape.lens.n; i++)
    FUZZ_EXPECT(o->shape.lens.v[i] >= 1 && o->shape.lens.v[i] <= (1 << 24), "length %lld",
                (long long)o->shape.lens.v[i]);
  FUZZ_EXPECT(o->shape.hq >= 1 && o->shape.hq <= 1024 && o->shape.hkv >= 1 && o->shape.hq % o->shape.hkv == 0,
              "heads %d:%d", o->shape.hq, o->shape.hkv);
  FUZZ_EXPECT(o->shape.dim >= 1 && o->shape.dim <= 512 && o->shape.batch >= 1 && o->shape.batch <= 4096,
              "dim %d, batch %d", o->shape.dim, o->shape.batch);
  FUZZ_EXPECT(o->select.alpha >= 0.0 && o->select.alpha <= 1.0, "alpha %g", o->select.alpha);
  FUZZ_EXPECT(o->select.block >= 1 && o->select.block <= 4096 && o->select.qtile >= 1 && o->select.qtile <= 4096,
              "block %d, qtile %d", o->select.block, o->select.qtile);
  FUZZ_EXPECT(o->select.sink >= 0 && o->select.window >= 0 && o->select.recent >= 0, "sink %d, window %d, recent %d",
              o->select.sink, o->select.window, o->select.recent);
  FUZZ_EXPECT(o->input.density == -1.0 || (o->input.density > 0.0 && o->input.density <= 1.0), "density %g",
              o->input.density);
  FUZZ_EXPECT(o->input.seed >= 0, "seed %lld", (long long)o->input.seed);
  FUZZ_EXPECT(o->shape.dtype == FP2_BF16 || o->shape.dtype == FP2_FP8, "dtype %d", o->shape.dtype);
  FUZZ_EXPECT(o->run.backend >= BACKEND_AUTO && o->run.backend <= BACKEND_GPU, "backend %d", o->run.backend);
  FUZZ_EXPECT(o->input.data != NULL, "no data source");
  FUZZ_EXPECT(o->shape.requests.n == 0 || o->shape.batch == 1, "--requests with --batch %d", o->shape.batch);
  for (int b = 0; b < o->shape.requests.n; b++)
    FUZZ_EXPECT(o->shape.requests.lq[b] >= 1 && o->shape.requests.lq[b] <= o->shape.requests.lk[b] &&
                    o->shape.requests.lk[b] <= (1 << 24),
                "request %lld/%lld", (long long)o->shape.requests.lq[b], (long long)o->shape.requests.lk[b]);
  fp2_params p = opts_params(o);
  FUZZ_EXPECT(p.hq == o->shape.hq && p.hkv == o->shape.hkv && p.dim == o->shape.dim &&
                  p.correction == !o->select.no_correction,
              "opts_params differs from the options");
  int b = opts_backend(o, 0);
  FUZZ_EXPECT(b == BACKEND_CPU || b == BACKEND_GPU, "backend %d resolved to %d", o->run.backend, b);
}

/* The input split into argv[1..] at whitespace and NUL bytes; argv[0] is the command. */
static void opt_command_line(char *buf, size_t size) {
  char *argv[OPT_MAX_ARGS + 1];
  int argc = 0;
  argv[argc++] = "fuzz";
  for (size_t i = 0; i < size && argc < OPT_MAX_ARGS;) {
    while (i < size && (buf[i] == '\0' || strchr(" \t\n\r", buf[i]))) buf[i++] = '\0';
    if (i == size) break;
    argv[argc++] = &buf[i];
    while (i < size && buf[i] != '\0' && !strchr(" \t\n\r", buf[i])) i++;
  }
  argv[argc] = NULL;

  fp2_opts o;
  opts_defaults(&o);
  int rows = 0;
  double tol = 0.0;
  double_list levels = {3, {0.0, 0.5, 0.9}};
  const char *file = NULL;
  int file_given = 0;
  const opt_spec specs[] = {
      OPTS_EXPERIMENT(&o),
      OPT_REQUESTS(&o, "a batch"),
      {"--rows", OPT_INT, &rows, "N", "an integer option"},
      {"--flip-tol", OPT_DOUBLE, &tol, "X", "a number option"},
      {"--sparsity", OPT_DOUBLE_LIST, &levels, "S[,S...]", "a number list option"},
      {"FILE", OPT_POSITIONAL, &file, NULL, "a positional argument", &file_given},
  };
  int rc = cli_parse(argc, argv, "fuzz [options] [FILE]", "the options of every experiment",
                     specs, NOPTS(specs));
  FUZZ_EXPECT(rc == 0 || rc == 1 || rc == EXIT_USAGE, "cli_parse returned %d", rc);
  if (rc != 0) return;
  FUZZ_EXPECT(file_given == (file != NULL), "positional given %d but %s", file_given,
              file ? file : "unset");
  FUZZ_EXPECT(levels.n >= 1 && levels.n <= SIZE_LIST_MAX, "%d numbers in --sparsity", levels.n);
  char err[ERR_LEN] = "";
  if (opts_validate(&o, err) == 0) {
    opt_expect_valid(&o);
  } else {
    fuzz_expect_message("opts_validate", err, NULL);
    FUZZ_EXPECT(strncmp(err, "--", 2) == 0, "message does not name the option: %s", err);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *s = xmalloc(size + 1);
  memcpy(s, data, size);
  s[size] = '\0';
  opt_sizes(s);
  opt_command_line(s, size);
  free(s);
  return 0;
}
