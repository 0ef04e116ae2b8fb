/* The verdict logic of fp2bench regress on synthetic trials and on the fixture results. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "regress.h"
#include "report.h"
#include "rng.h"
#include "testing.h"

/* n trials around `median` with relative log-normal noise `sigma`. */
static void draw(double *x, int n, double median, double sigma, uint64_t seed) {
  for (int i = 0; i < n; i++) x[i] = median * exp(sigma * rng_normal(seed, 1, (uint64_t)i));
}

static void synthetic(void) {
  double b[20], c[20];
  /* Repeated measurements of one thing with 1-2% noise: SAME, over many seeds. */
  int same = 0;
  for (uint64_t s = 0; s < 200; s++) {
    draw(b, 10, 10.0, 0.015, 2 * s);
    draw(c, 10, 10.0, 0.015, 2 * s + 1);
    same += regress_timing(b, 10, c, 10, 0.03).v == VERDICT_SAME;
  }
  EXPECT_MSG(same == 200, "only %d of 200 noisy repeats are SAME", same);
  /* An injected 10% slowdown is SLOWER, every time. */
  int slower = 0;
  for (uint64_t s = 0; s < 200; s++) {
    draw(b, 10, 10.0, 0.015, 2 * s);
    draw(c, 10, 11.0, 0.015, 2 * s + 1);
    slower += regress_timing(b, 10, c, 10, 0.03).v == VERDICT_SLOWER;
  }
  EXPECT_MSG(slower == 200, "only %d of 200 10%% slowdowns are SLOWER", slower);
  /* A speed-up is FASTER, and never SLOWER. */
  draw(b, 10, 10.0, 0.01, 5);
  draw(c, 10, 9.0, 0.01, 6);
  EXPECT(regress_timing(b, 10, c, 10, 0.03).v == VERDICT_FASTER);
  /* A 2% change is under the floor: SAME. */
  draw(c, 10, 10.2, 0.005, 7);
  EXPECT(regress_timing(b, 10, c, 10, 0.03).v == VERDICT_SAME);
  /* A 10% change buried in 20% noise is not SLOWER. */
  draw(b, 10, 10.0, 0.2, 8);
  draw(c, 10, 11.0, 0.2, 9);
  EXPECT(regress_timing(b, 10, c, 10, 0.03).v != VERDICT_SLOWER);
  /* A 1.7 us kernel 10 % slower (H200, BF16 quantise): within the absolute floor, SAME. */
  double tb[5] = {0.00166, 0.00166, 0.00167, 0.00166, 0.00166}, tc[5] = {0.00182, 0.00181, 0.00182, 0.00182, 0.00181};
  EXPECT(regress_timing(tb, 5, tc, 5, 0.03).v == VERDICT_SAME);
  /* The same 10 % on 0.1 ms is not: SLOWER. */
  for (int i = 0; i < 5; i++) tb[i] *= 60, tc[i] *= 60;
  EXPECT(regress_timing(tb, 5, tc, 5, 0.03).v == VERDICT_SLOWER);
  /* Too few trials: UNCLEAR even for a large change. */
  draw(b, 4, 10.0, 0.01, 10);
  draw(c, 4, 20.0, 0.01, 11);
  EXPECT(regress_timing(b, 4, c, 4, 0.03).v == VERDICT_UNCLEAR);
  /* Median and change are exact on a known case. */
  double kb[5] = {10, 11, 9, 10, 10}, kc[5] = {12, 12, 12, 12, 12};
  timing_diff d = regress_timing(kb, 5, kc, 5, 0.03);
  EXPECT_NEAR(d.base_median, 10.0, 1e-12);
  EXPECT_NEAR(d.change, 0.2, 1e-12);
  EXPECT(d.v == VERDICT_SLOWER);
}

static cJSON *load(const char *name) {
  char rel[128], err[ERR_LEN];
  snprintf(rel, sizeof rel, "tests/fixtures/regress/%s.json", name);
  cJSON *doc = NULL;
  if (report_load(test_source_path(rel), &doc, err) != 0) fprintf(stderr, "%s\n", err);
  EXPECT(doc != NULL);
  return doc;
}

/* Verdict of the fixture's attention timing against base.json. */
static verdict attend_verdict(const char *name) {
  cJSON *base = load("base"), *cand = load(name);
  char err[ERR_LEN];
  regress_item *items = NULL;
  verdict v = VERDICT_UNCLEAR;
  EXPECT(regress_compatible(base, cand, err) == 0);
  int n = regress_compare(base, cand, 0.03, &items, err);
  EXPECT(n == 4);
  for (int i = 0; i < n; i++) {
    if (strcmp(items[i].key, "attend") == 0) v = items[i].d.v;
    else EXPECT_MSG(items[i].d.v == VERDICT_SAME || items[i].d.v == VERDICT_UNCLEAR, "%s: %s", items[i].key,
                    verdict_name(items[i].d.v));
  }
  free(items);
  cJSON_Delete(base);
  cJSON_Delete(cand);
  return v;
}

static void refused(const char *name, const char *why) {
  cJSON *base = load("base"), *cand = load(name);
  char err[ERR_LEN] = "";
  EXPECT(regress_compatible(base, cand, err) != 0);
  EXPECT_MSG(strstr(err, why) != NULL, "'%s' does not say '%s'", err, why);
  cJSON_Delete(base);
  cJSON_Delete(cand);
}

/* Results on different synthetic data are refused, naming both versions; a result without
   config.synth_version is version 1. */
static void generator_versions(void) {
  cJSON *base = load("base"), *cand = load("same");
  char err[ERR_LEN] = "";
  cJSON *version = cJSON_AddNumberToObject(cJSON_GetObjectItemCaseSensitive(cand, "config"), "synth_version", 1);
  EXPECT_MSG(regress_compatible(base, cand, err) == 0, "a missing version against version 1: %s", err);
  cJSON_SetNumberValue(version, 2);
  EXPECT(regress_compatible(base, cand, err) != 0);
  EXPECT_MSG(strstr(err, "synth_version 1 against 2") != NULL, "'%s' does not name both versions", err);
  EXPECT(regress_compatible(cand, base, err) != 0);
  EXPECT_MSG(strstr(err, "synth_version 2 against 1") != NULL, "'%s' does not name both versions", err);
  cJSON_Delete(base);
  cJSON_Delete(cand);
}

/* A result from before config.page_size existed ran K and V contiguous: it compares with
   page_size 0 (either side), not with pages. */
static void page_size_absent(void) {
  cJSON *base = load("base"), *cand = load("same");
  char err[ERR_LEN] = "";
  EXPECT(!cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(base, "config"), "page_size"));
  cJSON *pages = cJSON_AddNumberToObject(cJSON_GetObjectItemCaseSensitive(cand, "config"), "page_size", 0);
  EXPECT_MSG(regress_compatible(base, cand, err) == 0, "no page_size against 0: %s", err);
  EXPECT_MSG(regress_compatible(cand, base, err) == 0, "page_size 0 against none: %s", err);
  cJSON_SetNumberValue(pages, 64);
  EXPECT(regress_compatible(base, cand, err) != 0);
  EXPECT_MSG(strstr(err, "page_size is none against 64") != NULL, "'%s' does not name page_size", err);
  cJSON_Delete(base);
  cJSON_Delete(cand);
}

int main(void) {
  synthetic();
  EXPECT(attend_verdict("same") == VERDICT_SAME);
  EXPECT(attend_verdict("slow10") == VERDICT_SLOWER);
  EXPECT(attend_verdict("fast10") == VERDICT_FASTER);
  EXPECT(attend_verdict("three-trials") == VERDICT_UNCLEAR);
  refused("other-config", "dtype");
  refused("other-gpu", "different GPUs");
  refused("other-driver", "CUDA drivers");
  generator_versions();
  page_size_absent();
  return test_result("test_regress");
}
