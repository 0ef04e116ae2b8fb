/* The result document: stats helpers, provenance fields, rows with per-trial times,
   the round trip through report_write and report_load, and malformed documents that
   report_load must reject with a one-line reason. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "gpu_info.h"
#include "report.h"
#include "stats.h"
#include "testing.h"

static const cJSON *member(const cJSON *obj, const char *key) {
  return cJSON_GetObjectItemCaseSensitive(obj, key);
}

static double number(const cJSON *obj, const char *key) {
  const cJSON *v = member(obj, key);
  return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static void test_stats(void) {
  const double odd[] = {3.0, 1.0, 2.0}, even[] = {4.0, 1.0, 3.0, 2.0}, one[] = {7.5};
  EXPECT_NEAR(stats_median(odd, 3), 2.0, 0.0);
  EXPECT_NEAR(stats_median(even, 4), 2.5, 0.0);
  EXPECT_NEAR(stats_median(one, 1), 7.5, 0.0);
  EXPECT(isnan(stats_median(odd, 0)));
  EXPECT_NEAR(stats_min(even, 4), 1.0, 0.0);
  EXPECT_NEAR(stats_max(even, 4), 4.0, 0.0);
  EXPECT(isnan(stats_min(odd, 0)) && isnan(stats_max(odd, 0)));
  EXPECT(odd[0] == 3.0 && even[0] == 4.0); /* the median sorts a copy */
}

/* `key` of provenance is a string, or null when allowed. */
static void expect_string(const cJSON *p, const char *key, int null_ok) {
  const cJSON *v = member(p, key);
  EXPECT_MSG(cJSON_IsString(v) || (null_ok && cJSON_IsNull(v)), "provenance.%s", key);
}

static void check_gpu(const cJSON *gpu) {
  if (gpu_count() == 0) {
    EXPECT_MSG(cJSON_IsNull(gpu), "no GPU here, so provenance.gpu must be null");
    return;
  }
  EXPECT(cJSON_IsObject(gpu));
  EXPECT(cJSON_IsString(member(gpu, "name")) && cJSON_IsString(member(gpu, "cc")));
  EXPECT(number(gpu, "sm_count") > 0 && number(gpu, "memory_bytes") > 0 && number(gpu, "l2_bytes") > 0);
  EXPECT(number(gpu, "clock_max_sm_mhz") > 0 && number(gpu, "clock_max_mem_mhz") > 0);
  EXPECT(cJSON_IsObject(member(gpu, "clocks_start")) && cJSON_IsObject(member(gpu, "clocks_end")));
}

static void check_provenance(const cJSON *p) {
  expect_string(p, "git_commit", 0);
  EXPECT(cJSON_IsBool(member(p, "git_dirty")) || cJSON_IsNull(member(p, "git_dirty")));
  const cJSON *command = member(p, "command");
  EXPECT_MSG(
      cJSON_IsString(command) &&
          strcmp(command->valuestring, "fp2bench density --len 4k,8k --data 'it'\\''s a file' ''") == 0,
      "command is %s", cJSON_IsString(command) ? command->valuestring : "not a string");
  const cJSON *argv = member(p, "argv");
  EXPECT(cJSON_IsArray(argv) && cJSON_GetArraySize(argv) == 7);
  EXPECT(cJSON_IsString(cJSON_GetArrayItem(argv, 0)) &&
         strcmp(cJSON_GetArrayItem(argv, 0)->valuestring, "fp2bench") == 0);
  EXPECT(cJSON_IsString(cJSON_GetArrayItem(argv, 5)) &&
         strcmp(cJSON_GetArrayItem(argv, 5)->valuestring, "it's a file") == 0);
  const cJSON *date = member(p, "date_utc");
  EXPECT_MSG(cJSON_IsString(date) && strlen(date->valuestring) == 20 && date->valuestring[10] == 'T' &&
                 date->valuestring[19] == 'Z',
             "date_utc is not ISO 8601 UTC");
  expect_string(p, "host", 0);
  expect_string(p, "cpu", 1);
  expect_string(p, "fp2bench_version", 0);
  expect_string(p, "cuda_runtime", 1);
  expect_string(p, "cuda_driver", 1);
  check_gpu(member(p, "gpu"));
  const cJSON *ceilings = member(p, "ceilings");
  EXPECT(cJSON_IsObject(ceilings) && number(ceilings, "gemm_bf16_tflops") == 700.0);
}

/* key: {"trials_ms", "median_ms", "min_ms", "max_ms", "n"} as report_add_times wrote it. */
static void check_times(const cJSON *row, const char *key, int n, double median, double min, double max) {
  const cJSON *t = member(row, key);
  EXPECT_MSG(cJSON_IsObject(t), "row has no '%s'", key);
  EXPECT(cJSON_IsArray(member(t, "trials_ms")) && cJSON_GetArraySize(member(t, "trials_ms")) == n);
  EXPECT_NEAR(number(t, "n"), n, 0.0);
  if (n == 0) {
    EXPECT(cJSON_IsNull(member(t, "median_ms")) && cJSON_IsNull(member(t, "min_ms")));
    return;
  }
  EXPECT_NEAR(number(t, "median_ms"), median, 1e-12);
  EXPECT_NEAR(number(t, "min_ms"), min, 1e-12);
  EXPECT_NEAR(number(t, "max_ms"), max, 1e-12);
}

static void test_round_trip(void) {
  char *argv[] = {"density", "--len", "4k,8k", "--data", "it's a file", "", NULL};
  report *r = report_new("density", 6, argv);
  report_put_number(report_config(r), "alpha", 0.1);
  report_put_number(report_ceilings(r), "gemm_bf16_tflops", 700.0);
  EXPECT(report_ceilings(r) == report_ceilings(r)); /* replaces the null once */
  const double odd[] = {1.5, 1.2, 1.9}, even[] = {2.0, 1.0, 4.0, 3.0};
  cJSON *row = report_add_row(r);
  report_put_number(row, "len", 4096);
  report_add_times(row, "attend", odd, 3);
  report_add_times(row, "index", even, 4);
  report_add_times(report_add_row(r), "none", NULL, 0);

  const char *path = test_temp_path("report.json");
  char err[ERR_LEN], tmp[1100];
  EXPECT_MSG(report_write(r, path, err) == 0, "%s", err);
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
  EXPECT_MSG(access(tmp, F_OK) != 0, "temporary file '%s' left behind", tmp);
  report_free(r);

  cJSON *doc = NULL;
  EXPECT_MSG(report_load(path, &doc, err) == 0, "%s", err);
  if (doc) {
    EXPECT(strcmp(member(doc, "schema")->valuestring, REPORT_SCHEMA) == 0);
    EXPECT(strcmp(member(doc, "experiment")->valuestring, "density") == 0);
    EXPECT_NEAR(number(member(doc, "config"), "alpha"), 0.1, 0.0);
    check_provenance(member(doc, "provenance"));
    const cJSON *rows = member(doc, "rows");
    EXPECT(cJSON_GetArraySize(rows) == 2);
    EXPECT_NEAR(number(cJSON_GetArrayItem(rows, 0), "len"), 4096, 0.0);
    check_times(cJSON_GetArrayItem(rows, 0), "attend", 3, 1.5, 1.2, 1.9);
    check_times(cJSON_GetArrayItem(rows, 0), "index", 4, 2.5, 1.0, 4.0);
    check_times(cJSON_GetArrayItem(rows, 1), "none", 0, 0, 0, 0);
  }
  cJSON_Delete(doc);
  unlink(path);
}

static void test_write_failure(void) {
  char *argv[] = {"info", NULL};
  report *r = report_new("info", 1, argv);
  char err[ERR_LEN] = "";
  const char *path = "/nonexistent-fp2bench-dir/r.json";
  EXPECT(report_write(r, path, err) == -1);
  EXPECT_MSG(strstr(err, "cannot write '/nonexistent-fp2bench-dir/r.json'") != NULL, "err: %s", err);
  report_free(r);
}

/* report_load must refuse `text` with a reason containing `reason`. */
static void expect_rejected(const char *text, const char *reason) {
  const char *path = test_temp_path("bad.json");
  FILE *f = fopen(path, "w");
  EXPECT(f != NULL);
  if (!f) return;
  EXPECT(fputs(text, f) != EOF);
  EXPECT(fclose(f) == 0);
  cJSON *doc = NULL;
  char err[ERR_LEN] = "";
  EXPECT_MSG(report_load(path, &doc, err) == -1 && doc == NULL, "accepted: %s", text);
  EXPECT_MSG(strstr(err, reason) != NULL, "for %s: '%s' does not say '%s'", text, err, reason);
  EXPECT_MSG(strchr(err, '\n') == NULL, "for %s: more than one line", text);
  cJSON_Delete(doc);
  unlink(path);
}

#define BODY "\"provenance\": {}, \"config\": {}"

static void test_malformed(void) {
  expect_rejected("", "is not valid json");
  expect_rejected("{\"schema\": \"fp2bench/1\",\n\"rows\": [}", "is not valid json (line 2)");
  expect_rejected("{\"schema\": \"fp2bench/1\", \"experiment\": \"d\", " BODY ", \"rows\": []} x",
                  "is not valid json");
  expect_rejected("[1, 2]", "is not a json object");
  expect_rejected("{\"experiment\": \"d\", " BODY ", \"rows\": []}", "has no 'schema'");
  expect_rejected("{\"schema\": 1, \"experiment\": \"d\", " BODY ", \"rows\": []}",
                  "'schema' is not a string");
  expect_rejected("{\"schema\": \"fp2bench/2\", \"experiment\": \"d\", " BODY ", \"rows\": []}",
                  "has schema 'fp2bench/2', expected 'fp2bench/1'");
  expect_rejected("{\"schema\": \"fp2bench/1\", " BODY ", \"rows\": []}", "has no 'experiment'");
  expect_rejected("{\"schema\": \"fp2bench/1\", \"experiment\": \"d\", \"config\": {}, \"rows\": []}",
                  "has no 'provenance'");
  expect_rejected(
      "{\"schema\": \"fp2bench/1\", \"experiment\": \"d\", \"provenance\": [], \"config\": {}, "
      "\"rows\": []}",
      "'provenance' is not an object");
  expect_rejected(
      "{\"schema\": \"fp2bench/1\", \"experiment\": \"d\", \"provenance\": {}, \"config\": 3, "
      "\"rows\": []}",
      "'config' is not an object");
  expect_rejected("{\"schema\": \"fp2bench/1\", \"experiment\": \"d\", " BODY ", \"rows\": {}}",
                  "'rows' is not an array");
  expect_rejected("{\"schema\": \"fp2bench/1\", \"experiment\": \"d\", " BODY ", \"rows\": [{}, 3]}",
                  "rows[1] is not an object");
  expect_rejected("{\"schema\": \"fp2bench/1\", \"experiment\": \"../x\", " BODY ", \"rows\": []}",
                  "experiment '../x' is not a name");

  cJSON *doc = NULL;
  char err[ERR_LEN] = "";
  EXPECT(report_load("/nonexistent-fp2bench-dir/r.json", &doc, err) == -1);
  EXPECT_MSG(strstr(err, "cannot open '/nonexistent-fp2bench-dir/r.json'") != NULL, "err: %s", err);
}

int main(void) {
  test_stats();
  test_round_trip();
  test_write_failure();
  test_malformed();
  return test_result("test_report");
}
