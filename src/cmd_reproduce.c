/* fp2bench reproduce: every experiment the tool reproduces, one after the other into one
   folder (results/<gpu>/ by default): the JSON of each, its plot, and REPORT.md with our
   numbers beside the paper's. Each step runs as its own fp2bench process, so that one
   failing step is reported and the others still run. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "commands.h"
#include "error.h"
#include "gpu_info.h"
#include "report.h"
#include "subprocess.h"

#define MAX_ARGS 24

/* One step: the result file it writes, the columns of its table in REPORT.md, its command. */
typedef struct step {
  const char *file;
  const char *title;
  const char *columns; /* space-separated row keys; a.b for nested fields */
  const char *args[MAX_ARGS];
} step;

static const step steps[] = {
    {"speedup-llm", "Operator speedup on synth:llm (Tab. 1, right)",
     "dtype len density index_ms attend.median_ms total_ms dense.median_ms speedup_dense speedup_fa2 speedup_sdpa_cudnn "
     "speedup_flex attend_tflops dense_tflops",
     {"speedup", "--dtype", "both", NULL}},
    {"speedup-density5", "Operator speedup at a forced density of 5%",
     "dtype len density index_ms attend.median_ms total_ms dense.median_ms speedup_dense speedup_fa2 speedup_flex "
     "attend_tflops",
     {"speedup", "--dtype", "both", "--density", "0.05", NULL}},
    {"sweep-alpha", "Threshold sweep at 64K (Tab. 9)",
     "dtype alpha density rel_error_corrected rel_error_uncorrected mass_recall needle_recall",
     {"sweep-alpha", NULL}},
    {"correction", "Cost of the mean correction at 64K (Fig. 6)",
     "dtype sparsity density attend_corrected.median_ms attend_uncorrected.median_ms overhead_ms overhead",
     {"correction", NULL}},
    {"density-niah", "Density on needle-in-a-haystack inputs (Tab. 3)",
     "len density blocks_per_segment needle_recall aux_ratio",
     {"density", "--data", "synth:niah", "--len", "4k,8k,16k,32k,64k,128k,256k", NULL}},
    {"breakdown", "Time of each stage of the sparse pass",
     "len density quantise.median_ms pool.median_ms select.median_ms attend_uncorrected.median_ms correction_ms total_ms",
     {"breakdown", NULL}},
    {"chunked", "Chunked prefill at 64K (Tab. 6's setting)",
     "mode chunk density index_ms attend_ms total_ms time_vs_one_pass",
     {"chunked", NULL}},
    {"hpc-ops", "Index size against HPC-Ops' dense mask, and sparse FP8 time per density at 64K (Fig. 5)",
     "len forced_density density hpc_mask_bytes csr_bytes csr_saving index_alloc_bytes attend.median_ms",
     {"hpc-compare", NULL}},
    {"hpc-ops-index-128k", "Index size at 128K, 32:4 heads, 5% (Tab. 7's setting; counted on the cpu)",
     "len forced_density density hpc_mask_bytes csr_bytes csr_saving index_alloc_bytes",
     {"hpc-compare", "--len", "128k", "--heads", "32:4", "--densities", "0.05", "--backend", "cpu", NULL}},
};

/* "NVIDIA H200" -> "h200": the last word of the GPU's name, lower case. */
static void gpu_slug(char *buf, size_t len) {
  gpu_desc d;
  char err[ERR_LEN];
  int dev = gpu_current();
  if (dev < 0 || gpu_describe(dev, &d, err) != 0) {
    snprintf(buf, len, "cpu");
    return;
  }
  const char *w = strrchr(d.name, ' ');
  snprintf(buf, len, "%.60s", w ? w + 1 : d.name);
  for (char *c = buf; *c; c++) *c = isalnum((unsigned char)*c) ? (char)tolower((unsigned char)*c) : '-';
}

static const cJSON *field(const cJSON *row, const char *key) {
  char first[64];
  const char *dot = strchr(key, '.');
  if (!dot) return cJSON_GetObjectItemCaseSensitive(row, key);
  snprintf(first, sizeof first, "%.*s", (int)(dot - key), key);
  return cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(row, first), dot + 1);
}

static void cell(FILE *f, const cJSON *x) {
  if (cJSON_IsNumber(x))
    fprintf(f, " %.4g |", x->valuedouble);
  else if (cJSON_IsString(x))
    fprintf(f, " %s |", x->valuestring);
  else if (cJSON_IsBool(x))
    fprintf(f, " %s |", cJSON_IsTrue(x) ? "yes" : "no");
  else
    fprintf(f, " - |");
}

/* One section of REPORT.md: provenance, the table, and the paper's statements. */
static void report_section(FILE *f, const step *s, const cJSON *doc) {
  const cJSON *prov = cJSON_GetObjectItemCaseSensitive(doc, "provenance");
  const cJSON *gpu = cJSON_GetObjectItemCaseSensitive(prov, "gpu");
  const cJSON *cmd = cJSON_GetObjectItemCaseSensitive(prov, "command");
  const cJSON *commit = cJSON_GetObjectItemCaseSensitive(prov, "git_commit");
  const cJSON *date = cJSON_GetObjectItemCaseSensitive(prov, "date_utc");
  const cJSON *name = cJSON_GetObjectItemCaseSensitive(gpu, "name");
  fprintf(f, "## %s\n\n`%s` — %s, commit %.12s, %s. Data: `%s.json`, plot: `%s.png`.\n\n", s->title,
          cJSON_IsString(cmd) ? cmd->valuestring : "?", cJSON_IsString(name) ? name->valuestring : "no GPU",
          cJSON_IsString(commit) ? commit->valuestring : "?", cJSON_IsString(date) ? date->valuestring : "?", s->file,
          s->file);
  char cols[512];
  snprintf(cols, sizeof cols, "%s", s->columns);
  const char *names[32];
  int n = 0;
  for (char *t = strtok(cols, " "); t && n < 32; t = strtok(NULL, " ")) names[n++] = t;
  fprintf(f, "|");
  for (int i = 0; i < n; i++) fprintf(f, " %s |", names[i]);
  fprintf(f, "\n|");
  for (int i = 0; i < n; i++) fprintf(f, "---|");
  fprintf(f, "\n");
  const cJSON *row;
  cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(doc, "rows")) {
    fprintf(f, "|");
    for (int i = 0; i < n; i++) cell(f, field(row, names[i]));
    fprintf(f, "\n");
  }
  const cJSON *paper = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "config"), "paper");
  const cJSON *values = cJSON_GetObjectItemCaseSensitive(paper, "paper_values"), *v;
  if (cJSON_GetArraySize(values) > 0) {
    const cJSON *src = cJSON_GetObjectItemCaseSensitive(paper, "source"), *pg = cJSON_GetObjectItemCaseSensitive(paper, "gpu");
    fprintf(f, "\nThe paper (%s, %s):\n\n", cJSON_IsString(src) ? src->valuestring : "?",
            cJSON_IsString(pg) ? pg->valuestring : "?");
    cJSON_ArrayForEach(v, values) {
      const cJSON *q = cJSON_GetObjectItemCaseSensitive(v, "quote");
      if (!cJSON_IsString(q)) q = cJSON_GetObjectItemCaseSensitive(v, "statement");
      if (cJSON_IsString(q)) fprintf(f, "- %s\n", q->valuestring);
    }
  }
  fprintf(f, "\n");
}

/* Runs one step; 0 when it wrote its JSON. */
static int run_step(const step *s, const char *dir, int extra_argc, char **extra_argv, char *err) {
  char json[1200], png[1200];
  snprintf(json, sizeof json, "%s/%s.json", dir, s->file);
  snprintf(png, sizeof png, "%s/%s.png", dir, s->file);
  char *args[MAX_ARGS + 16];
  int k = 0;
  args[k++] = "fp2bench";
  for (int i = 0; s->args[i]; i++) args[k++] = (char *)s->args[i];
  for (int i = 0; i < extra_argc && k < MAX_ARGS + 12; i++) args[k++] = extra_argv[i];
  args[k++] = "--out";
  args[k++] = json;
  args[k] = NULL;
  fprintf(stderr, "fp2bench: reproduce: %s\n", s->title);
  int status = spawn_wait("/proc/self/exe", args, 1, err);
  if (status != 0) {
    if (status > 0) err_set(err, "'fp2bench %s' failed (exit status %d)", s->args[0], status);
    return -1;
  }
  char *plot[] = {"fp2bench", "plot", json, "-o", png, NULL};
  if (spawn_wait("/proc/self/exe", plot, 1, err) != 0)
    fprintf(stderr, "fp2bench: reproduce: no plot for %s: %s\n", s->file, err);
  return 0;
}

/* --small: what every step gets appended to run in seconds (tests of this driver). --quick:
   every step at one length (the last --len given wins), for a smoke run on a GPU. */
static char *small_args[] = {"--len", "1k", "--heads", "8:2", "--dim", "32", "--backend", "cpu"};
static char *quick_args[] = {"--len", "16k"};

int cmd_reproduce(int argc, char **argv) {
  const char *dir = NULL;
  int small = 0, quick = 0;
  const opt_spec specs[] = {
      {"--dir", OPT_STRING, &dir, "DIR", "where the results go (default: results/<gpu>)"},
      {"--quick", OPT_FLAG, &quick, NULL, "every step at 16K only: a smoke run of a few minutes on a GPU"},
      {"--small", OPT_FLAG, &small, NULL, "a tiny size on the cpu backend, to test this driver (numbers mean nothing)"},
  };
  int rc = cli_parse(argc, argv, "reproduce [options]",
                     "Run every experiment the tool reproduces (speedup on synth:llm and at 5% density,\n"
                     "sweep-alpha, correction, density on synth:niah, breakdown, chunked, the index against\n"
                     "HPC-Ops') at the paper's settings into one folder: each step's JSON and plot, and\n"
                     "REPORT.md with our numbers beside the paper's. Takes tens of minutes on a GPU.",
                     specs, NOPTS(specs));
  if (rc) return rc == 1 ? EXIT_OK : rc;
  if (small && quick) {
    fail("reproduce: --small and --quick exclude each other");
    return EXIT_USAGE;
  }
  char slug[64], dirbuf[256];
  if (!dir) {
    gpu_slug(slug, sizeof slug);
    snprintf(dirbuf, sizeof dirbuf, "results/%s", slug);
    dir = dirbuf;
  }
  if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
    fail("reproduce: cannot create '%s': %s", dir, strerror(errno));
    return EXIT_RUNTIME;
  }
  int failed = 0;
  char report_path[1200], err[ERR_LEN];
  snprintf(report_path, sizeof report_path, "%s/REPORT.md", dir);
  FILE *md = fopen(report_path, "w");
  if (!md) {
    fail("reproduce: cannot create '%s': %s", report_path, strerror(errno));
    return EXIT_RUNTIME;
  }
  fprintf(md, "# fp2bench reproduction of FlashPrefill V2's operator-level results\n\n"
              "Written by `fp2bench reproduce%s`; every table below comes from the JSON beside it.%s\n\n",
          small ? " --small" : quick ? " --quick" : "",
          small   ? " **A test run at a tiny size on the cpu: the numbers mean nothing.**"
          : quick ? " **A smoke run with every step at 16K only: not the paper's lengths.**"
                  : "");
  char **extra = small ? small_args : quick_args;
  const int nextra = small ? NOPTS(small_args) : quick ? NOPTS(quick_args) : 0;
  for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
    if (run_step(&steps[i], dir, nextra, extra, err) != 0) {
      fail("reproduce: %s", err);
      fprintf(md, "## %s\n\nFailed: %s.\n\n", steps[i].title, err);
      failed++;
      continue;
    }
    char json[1200];
    snprintf(json, sizeof json, "%s/%s.json", dir, steps[i].file);
    cJSON *doc = NULL;
    if (report_load(json, &doc, err) != 0) {
      fprintf(md, "## %s\n\nIts result cannot be read: %s.\n\n", steps[i].title, err);
      failed++;
      continue;
    }
    report_section(md, &steps[i], doc);
    cJSON_Delete(doc);
  }
  if (fclose(md) != 0) {
    fail("reproduce: cannot write '%s': %s", report_path, strerror(errno));
    return EXIT_RUNTIME;
  }
  fprintf(stderr, "fp2bench: reproduce: %s written; %d of %zu steps failed\n", report_path, failed,
          sizeof steps / sizeof steps[0]);
  return failed ? EXIT_RUNTIME : EXIT_OK;
}
