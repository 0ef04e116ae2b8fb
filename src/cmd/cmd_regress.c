/* fp2bench regress: a candidate result against a baseline of the same benchmark, timing by
   timing, with a noise-aware verdict (regress.h). Without --candidate the baseline's own
   command is run again now, so that both are measured by the same build's rules. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "error.h"
#include "outfile.h"
#include "regress.h"
#include "report.h"
#include "subprocess.h"
#include "text_format.h"

typedef struct regress_args {
  const char *baseline, *candidate, *out;
  double floor;
} regress_args;

/* Runs the baseline's command line again with --out redirected to `path`. */
static int rerun(const cJSON *base, const char *path, char *err) {
  const cJSON *argv = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(base, "provenance"), "argv");
  int n = cJSON_GetArraySize(argv);
  if (!cJSON_IsArray(argv) || n < 2) {
    err_set(err, "the baseline records no command line to run again");
    return -1;
  }
  char **args = xcalloc((size_t)n + 3, sizeof(char *));
  int k = 0, skip = 0;
  const cJSON *a;
  cJSON_ArrayForEach(a, argv) {
    if (!cJSON_IsString(a)) continue;
    if (skip) {
      skip = 0;
      continue;
    }
    if (strcmp(a->valuestring, "--out") == 0) {
      skip = 1;
      continue;
    }
    if (strncmp(a->valuestring, "--out=", 6) == 0) continue;
    args[k++] = a->valuestring;
  }
  args[k++] = "--out";
  args[k++] = (char *)path;
  args[k] = NULL;
  fprintf(stderr, "fp2bench: regress: running the baseline's command again:");
  for (int i = 0; i < k; i++) fprintf(stderr, " %s", args[i]);
  fprintf(stderr, "\n");
  int status = spawn_wait("/proc/self/exe", args, 0, err);
  free(args);
  if (status > 0) err_set(err, "the candidate run failed (exit status %d)", status);
  return status == 0 ? 0 : -1;
}

/* A relative change or noise in per cent, "-" where it cannot be computed (a 0 ms median). */
static void print_percent(double x, int sign) {
  char buf[32];
  printf(" %7s", format_percent(buf, sizeof buf, x, sign));
}

static void print_items(const regress_item *it, int n) {
  printf("%-40s %-10s %10s %10s %8s %7s  %s\n", "row", "timing", "base ms", "cand ms", "change", "noise", "verdict");
  for (int i = 0; i < n; i++) {
    printf("%-40s %-10s %10.4g %10.4g", it[i].row, it[i].key, it[i].d.base_median, it[i].d.cand_median);
    print_percent(it[i].d.change, 1);
    print_percent(it[i].d.noise, 0);
    printf("  %s\n", verdict_name(it[i].d.v));
  }
}

static void add_rows(report *rep, const regress_item *it, int n) {
  for (int i = 0; i < n; i++) {
    cJSON *row = report_add_row(rep);
    report_put_string(row, "row", it[i].row);
    report_put_string(row, "timing", it[i].key);
    report_put_number(row, "base_median_ms", it[i].d.base_median);
    report_put_number(row, "cand_median_ms", it[i].d.cand_median);
    report_put_number(row, "change", it[i].d.change);
    report_put_number(row, "noise", it[i].d.noise);
    report_put_number(row, "base_trials", it[i].d.base_trials);
    report_put_number(row, "cand_trials", it[i].d.cand_trials);
    report_put_string(row, "verdict", verdict_name(it[i].d.v));
  }
}

int cmd_regress(int argc, char **argv) {
  regress_args a = {.floor = 0.03};
  const opt_spec specs[] = {
      {"--baseline", OPT_STRING, &a.baseline, "BASE.json", "the reference result"},
      {"--candidate", OPT_STRING, &a.candidate, "NEW.json", "the result to judge (none: run the baseline's command now)"},
      {"--floor", OPT_DOUBLE, &a.floor, "X", "smallest relative change that can be a regression"},
      {"--out", OPT_STRING, &a.out, "FILE.json", "write the comparison (- for stdout)"},
  };
  int rc = cli_parse(argc, argv, "regress --baseline BASE.json [--candidate NEW.json] [options]",
                     "Compare every timing of a candidate result with a baseline of the same experiment,\n"
                     "GPU, driver and config. SLOWER only when the median change exceeds both --floor and\n"
                     "the noise (relative IQR of the trials) and 2 us, and the candidate's best trial is\n"
                     "slower than the baseline's upper quartile; fewer than 5 trials is UNCLEAR. Exit 1\n"
                     "on SLOWER, 2 when the results cannot be compared.",
                     specs, NOPTS(specs));
  if (rc) return rc == 1 ? EXIT_OK : rc;
  if (!a.baseline) {
    fail("regress: --baseline is missing");
    return EXIT_USAGE;
  }
  if (!(a.floor >= 0 && a.floor < 1)) {
    fail("regress: --floor: %g is outside [0,1)", a.floor);
    return EXIT_USAGE;
  }
  char err[ERR_LEN], tmp[64] = "";
  const named_file inputs[] = {{"--baseline", a.baseline}, {"--candidate", a.candidate}};
  if (outfile_check_option("--out", a.out, inputs, NOPTS(inputs), err) != 0) {
    fail("regress: %s", err);
    return EXIT_USAGE;
  }
  cJSON *base = NULL, *cand = NULL;
  if (report_load(a.baseline, &base, err) != 0) {
    fail("regress: %s", err);
    return EXIT_USAGE;
  }
  const char *cand_path = a.candidate;
  if (!cand_path) {
    snprintf(tmp, sizeof tmp, "/tmp/fp2bench-regress-%ld.json", (long)getpid());
    if (rerun(base, tmp, err) != 0) {
      fail("regress: %s", err);
      cJSON_Delete(base);
      return EXIT_RUNTIME;
    }
    cand_path = tmp;
  }
  rc = EXIT_OK;
  regress_item *items = NULL;
  int n = 0;
  if (report_load(cand_path, &cand, err) != 0) {
    fail("regress: %s", err);
    rc = EXIT_USAGE;
  } else if (regress_compatible(base, cand, err) != 0 || (n = regress_compare(base, cand, a.floor, &items, err)) < 0) {
    fail("regress: cannot compare '%s' with '%s': %s", a.baseline, cand_path, err);
    rc = EXIT_USAGE;
  }
  if (rc == EXIT_OK && n == 0) {
    fail("regress: '%s' and '%s' have no timings to compare", a.baseline, cand_path);
    rc = EXIT_USAGE;
  }
  if (rc == EXIT_OK) {
    print_items(items, n);
    for (int i = 0; i < n; i++)
      if (items[i].d.v == VERDICT_SLOWER) rc = EXIT_FAILED;
    if (a.out) {
      report *rep = report_new("regress", argc, argv);
      cJSON *config = report_config(rep);
      report_put_string(config, "baseline", a.baseline);
      report_put_string(config, "candidate", a.candidate ? a.candidate : "fresh run");
      report_put_number(config, "floor", a.floor);
      add_rows(rep, items, n);
      if (report_write(rep, a.out, err) != 0) {
        fail("regress: %s", err);
        rc = EXIT_RUNTIME;
      }
      report_free(rep);
    }
  }
  if (tmp[0]) remove(tmp);
  free(items);
  cJSON_Delete(base);
  cJSON_Delete(cand);
  return rc;
}
