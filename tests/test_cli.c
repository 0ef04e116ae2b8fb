/* Sizes, lists, option tables and shape checks of the shared option parser. */
#include <string.h>

#include "cli.h"
#include "error.h"
#include "testing.h"

static void sizes(void) {
  static const struct {
    const char *s;
    int64_t v;
  } good[] = {{"1000", 1000}, {"4k", 4096}, {"128k", 131072}, {"1m", 1048576}, {"4k+77", 4173}, {"8K", 8192}, {"0", 0}};
  char err[ERR_LEN];
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
    int64_t v = -1;
    EXPECT_MSG(parse_size(good[i].s, &v, err) == 0 && v == good[i].v, "'%s' -> %lld", good[i].s, (long long)v);
  }
  const char *bad[] = {"", "k", "4kk", "-4", "4.5k", "99999999999999999999", "4k+", "+4", "4 k", "0x10", "4g"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    int64_t v;
    EXPECT_MSG(parse_size(bad[i], &v, err) != 0, "'%s' accepted", bad[i]);
  }
  size_list l;
  EXPECT(parse_size_list("4k,8k,16k", &l, err) == 0 && l.n == 3 && l.v[2] == 16384);
  EXPECT(parse_size_list("4k,,8k", &l, err) != 0);
  EXPECT(parse_size_list("4k,", &l, err) != 0);
  EXPECT(parse_size_list(",4k", &l, err) != 0);
}

static int parse(fp2_opts *o, int argc, const char **argv) {
  const opt_spec specs[] = {OPTS_EXPERIMENT(o)};
  return cli_parse(argc, (char **)argv, "test", "test", specs, NOPTS(specs));
}

static void options(void) {
  fp2_opts o;
  opts_defaults(&o);
  const char *ok[] = {"run", "--len", "4k,128k", "--heads=64:8", "--dim", "64", "--dtype", "fp8", "--alpha", "0.25",
                      "--no-correction", "--density", "0.05", "--seed", "42", "--backend", "cpu", "--data", "synth:niah"};
  EXPECT(parse(&o, (int)(sizeof ok / sizeof ok[0]), ok) == 0);
  EXPECT(o.shape.lens.n == 2 && o.shape.lens.v[1] == 131072 && o.given.len);
  EXPECT(o.shape.hq == 64 && o.shape.hkv == 8 && o.given.heads && o.shape.dim == 64 && o.given.dim);
  EXPECT(o.shape.dtype == FP2_FP8 && o.select.alpha == 0.25 && o.select.no_correction && o.input.density == 0.05 &&
         o.input.seed == 42);
  EXPECT(o.run.backend == BACKEND_CPU && strcmp(o.input.data, "synth:niah") == 0);
  char err[ERR_LEN];
  EXPECT(opts_validate(&o, err) == 0);
  fp2_params p = opts_params(&o);
  EXPECT(p.correction == 0 && p.dtype == FP2_FP8 && p.alpha == 0.25f);

  const char *bad[][3] = {{"run", "--bogus", NULL},     {"run", "--len", NULL},        {"run", "--len", "4q"},
                          {"run", "--heads", "32"},     {"run", "--heads", "a:8"},     {"run", "--dim", "12x"},
                          {"run", "--dtype", "fp16"},   {"run", "--alpha", "nan"},     {"run", "--no-correction=1", NULL},
                          {"run", "stray", NULL},       {"run", "--backend", "tpu"}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    opts_defaults(&o);
    int argc = bad[i][2] ? 3 : 2;
    EXPECT_MSG(parse(&o, argc, bad[i]) == EXIT_USAGE, "'%s %s' accepted", bad[i][1], bad[i][2] ? bad[i][2] : "");
  }
}

/* Impossible shapes and parameters name the option at fault. */
static void expect_invalid(const fp2_opts *o, const char *option) {
  char err[ERR_LEN] = "";
  EXPECT_MSG(opts_validate(o, err) != 0 && strncmp(err, option, strlen(option)) == 0, "%s: got '%s'", option, err);
}

static void shapes(void) {
  fp2_opts o;
  opts_defaults(&o);
  o.shape.hq = 30;
  expect_invalid(&o, "--heads");
  opts_defaults(&o);
  o.shape.hkv = 0;
  expect_invalid(&o, "--heads");
  opts_defaults(&o);
  o.shape.dim = 0;
  expect_invalid(&o, "--dim");
  opts_defaults(&o);
  o.shape.batch = -1;
  expect_invalid(&o, "--batch");
  opts_defaults(&o);
  o.select.alpha = 1.5;
  expect_invalid(&o, "--alpha");
  opts_defaults(&o);
  o.select.alpha = -0.1;
  expect_invalid(&o, "--alpha");
  opts_defaults(&o);
  o.shape.lens.v[0] = 0;
  expect_invalid(&o, "--len");
  opts_defaults(&o);
  o.select.block = 0;
  expect_invalid(&o, "--block");
  opts_defaults(&o);
  o.select.qtile = -128;
  expect_invalid(&o, "--qtile");
  opts_defaults(&o);
  o.select.window = -1;
  expect_invalid(&o, "--window");
  opts_defaults(&o);
  o.input.density = 1.5;
  expect_invalid(&o, "--density");
  opts_defaults(&o);
  o.input.density = 0;
  expect_invalid(&o, "--density");
  opts_defaults(&o); /* found by fuzzing: the tile arithmetic of 16m x 1024:1 overflows int */
  o.shape.lens.v[0] = (int64_t)1 << 24;
  o.shape.hq = 1024;
  o.shape.hkv = 1;
  expect_invalid(&o, "--len");
  opts_defaults(&o);
  char err[ERR_LEN];
  EXPECT(opts_validate(&o, err) == 0);
  o.shape.lens.v[0] = (int64_t)1 << 20; /* 1M tokens at 32:8 is fine */
  EXPECT(opts_validate(&o, err) == 0);
}

/* --kernel: auto is the default and picks sm90 only on sm_90, for BF16 and the shapes it takes;
   an explicit sm90 refuses other shapes (exit 2 in the commands). */
static void kernels(void) {
  fp2_opts o;
  opts_defaults(&o);
  EXPECT(o.run.kernel == KERNEL_AUTO);
  fp2_params p = opts_params(&o);
  EXPECT(p.kernel == FP2_KERNEL_PORTABLE);
  EXPECT(kernel_auto_pick(&p, 9) == FP2_KERNEL_SM90);
  EXPECT(kernel_auto_pick(&p, 8) == FP2_KERNEL_PORTABLE && kernel_auto_pick(&p, 10) == FP2_KERNEL_PORTABLE);
  p.dtype = FP2_FP8;
  EXPECT(kernel_auto_pick(&p, 9) == FP2_KERNEL_SM90 && kernel_auto_pick(&p, 8) == FP2_KERNEL_PORTABLE);
  o.shape.dim = 64;
  p = opts_params(&o);
  EXPECT(kernel_auto_pick(&p, 9) == FP2_KERNEL_PORTABLE);
  o.shape.dim = 128;
  o.shape.hq = 24;
  o.shape.hkv = 8; /* g = 3 does not divide the tile: the sm90 kernel loads Q itself */
  p = opts_params(&o);
  EXPECT(kernel_auto_pick(&p, 9) == FP2_KERNEL_SM90);
  o.select.block = 64;
  p = opts_params(&o);
  EXPECT(kernel_auto_pick(&p, 9) == FP2_KERNEL_PORTABLE);
  char err[ERR_LEN];
  EXPECT(opts_validate(&o, err) == 0);
  o.run.kernel = KERNEL_SM90;
  expect_invalid(&o, "--kernel sm90");
  const char *args[] = {"run", "--kernel", "portable"};
  opts_defaults(&o);
  EXPECT(parse(&o, 3, args) == 0 && o.run.kernel == KERNEL_PORTABLE && opts_params(&o).kernel == FP2_KERNEL_PORTABLE);
  args[2] = "sm90";
  EXPECT(parse(&o, 3, args) == 0 && o.run.kernel == KERNEL_SM90 && opts_params(&o).kernel == FP2_KERNEL_SM90);
}

/* --paged: the library's page sizes on the gpu backend, none on the cpu's. */
static void paged(void) {
  fp2_opts o;
  char err[ERR_LEN];
  static const int sizes[] = {16, 64, 128, 256};
  for (int i = 0; i < 4; i++) {
    opts_defaults(&o);
    o.run.backend = BACKEND_GPU;
    o.run.paged = sizes[i];
    EXPECT_MSG(opts_validate(&o, err) == 0, "--paged %d: %s", sizes[i], err);
    EXPECT(opts_params(&o).page_size == sizes[i]);
  }
  o.run.paged = 32;
  expect_invalid(&o, "--paged");
  o.run.paged = 64;
  o.run.backend = BACKEND_CPU;
  expect_invalid(&o, "--paged");
}

int main(void) {
  sizes();
  options();
  shapes();
  kernels();
  paged();
  return test_result("test_cli");
}
