/* fp2bench reproduce: every experiment the tool reproduces, one after the other into one
   folder (results/<gpu>/ by default): the JSON of each, its plot, and REPORT.md with our
   numbers beside the paper's. Each step runs as its own fp2bench process, so that one
   failing step is reported and the others still run. --steps runs a subset (a GPU slot may
   not hold them all); REPORT.md is always assembled from every step's JSON in the folder, so
   that staged runs end with one full report. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "error.h"
#include "gpu_info.h"
#include "outfile.h"
#include "peers.h"
#include "report.h"
#include "report_md.h"
#include "subprocess.h"
#include "synth.h"

#define MAX_ARGS 24

/* One step: the result file it writes, the columns of its table in REPORT.md, its command.
   The title names no size: REPORT.md adds the lengths and heads its result ran at. */
typedef struct step {
  const char *file;
  const char *title;
  const char *columns; /* space-separated row keys; a.b for nested fields */
  const char *args[MAX_ARGS];
} step;

/* One step per dtype for the speedups: with every peer, both would pass a 10-minute GPU slot.
   They ask for every peer; those not built here (fpv2, hpc) are skipped with the reason. */
#define SPEEDUP_LLM_COLUMNS                                                                                     \
  "dtype kernel len density index_ms attend.median_ms attend_nocorr.median_ms total_ms dense.median_ms "        \
  "speedup_dense speedup_cudnn speedup_fa2 speedup_sdpa_cudnn speedup_flex speedup_flex_kernel speedup_fpv2 "       \
  "speedup_fpv2_kernel speedup_hpc attend_tflops dense_tflops"
#define SPEEDUP_DENSITY5_COLUMNS                                                                         \
  "dtype kernel len density index_ms attend.median_ms attend_nocorr.median_ms total_ms dense.median_ms " \
  "speedup_dense speedup_cudnn speedup_fa2 speedup_flex speedup_flex_kernel speedup_fpv2 speedup_fpv2_kernel " \
  "speedup_hpc attend_tflops"

static const step steps[] = {
    {"speedup-llm-bf16", "Operator speedup on synth:llm, BF16 (Tab. 1, right)", SPEEDUP_LLM_COLUMNS,
     {"speedup", "--dtype", "bf16", "--peers", PEERS_CHOICES, NULL}},
    {"speedup-llm-fp8", "Operator speedup on synth:llm, FP8 (Tab. 1, right)", SPEEDUP_LLM_COLUMNS,
     {"speedup", "--dtype", "fp8", "--peers", PEERS_CHOICES, NULL}},
    {"speedup-density5-bf16", "Operator speedup at a forced density of 5%, BF16", SPEEDUP_DENSITY5_COLUMNS,
     {"speedup", "--dtype", "bf16", "--density", "0.05", "--peers", PEERS_CHOICES, NULL}},
    {"speedup-density5-fp8", "Operator speedup at a forced density of 5%, FP8", SPEEDUP_DENSITY5_COLUMNS,
     {"speedup", "--dtype", "fp8", "--density", "0.05", "--peers", PEERS_CHOICES, NULL}},
    {"speedup-peers-128k",
     "Our pass against FlashPrefill V2's own (its index builder and corrected attention) and, kernel for kernel on "
     "our mask, its and HPC-Ops' sparse kernels",
     "dtype kernel len density index_ms attend.median_ms attend_nocorr.median_ms total_ms fpv2.median_ms "
     "fpv2_kernel.median_ms hpc.median_ms hpc_density speedup_fpv2 speedup_fpv2_kernel speedup_hpc",
     {"speedup", "--len", "128k", "--dtype", "both", "--peers", "fpv2,hpc", NULL}},
    {"sweep-alpha", "Threshold sweep (Tab. 9)",
     "dtype kernel alpha density rel_error_corrected rel_error_uncorrected mass_recall needle_recall",
     {"sweep-alpha", NULL}},
    {"correction", "Cost of the mean correction (Fig. 6)",
     "dtype sparsity density attend_corrected.median_ms attend_uncorrected.median_ms overhead_ms overhead",
     {"correction", NULL}},
    {"density-niah", "Density on needle-in-a-haystack inputs (Tab. 3)",
     "len density blocks_per_segment needle_recall aux_ratio",
     {"density", "--data", "synth:niah", "--len", "4k,8k,16k,32k,64k,128k,256k", NULL}},
    {"breakdown", "Time of each stage of the sparse pass",
     "len density quantise.median_ms pool.median_ms select.median_ms attend_uncorrected.median_ms correction_ms total_ms",
     {"breakdown", NULL}},
    {"chunked", "Chunked prefill (Tab. 6's setting)",
     "mode chunk density index_ms attend_ms total_ms time_vs_one_pass index_vs_uncached",
     {"chunked", NULL}},
    {"hpc-ops", "Index size against HPC-Ops' dense mask, and sparse FP8 time per density (Fig. 5)",
     "len forced_density density hpc_mask_bytes csr_bytes csr_saving attend.median_ms hpc.median_ms hpc_density "
     "fpv2_kernel.median_ms speedup_hpc speedup_fpv2_kernel",
     {"hpc-compare", NULL}},
    {"hpc-ops-index-128k", "Index size at a density of 5% (Tab. 7's setting; counted on the cpu)",
     "len forced_density density hpc_mask_bytes csr_bytes csr_saving index_alloc_bytes",
     {"hpc-compare", "--len", "128k", "--heads", "32:4", "--densities", "0.05", "--backend", "cpu", NULL}},
};

#define NSTEPS (sizeof steps / sizeof steps[0])

/* The step names, comma-separated, for --help and messages. */
static const char *step_names(char *buf, size_t len) {
  size_t used = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < NSTEPS && used < len; i++)
    used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? "," : "", steps[i].file);
  return buf;
}

/* --steps LIST: want[i] = 1 for each step named; -1 with err naming an unknown one. */
static int pick_steps(const char *list, unsigned char *want, char *err) {
  for (const char *p = list;;) {
    const size_t n = strcspn(p, ",");
    size_t i = 0;
    while (i < NSTEPS && !(strlen(steps[i].file) == n && strncmp(steps[i].file, p, n) == 0)) i++;
    if (i == NSTEPS) {
      char names[512];
      err_set(err, "--steps: unknown step '%.*s' (%s)", (int)(n < 64 ? n : 64), p, step_names(names, sizeof names));
      return -1;
    }
    want[i] = 1;
    if (!p[n]) return 0;
    p += n + 1;
  }
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
  status = spawn_wait("/proc/self/exe", plot, 1, err);
  if (status > 0) err_set(err, "'fp2bench plot' failed (exit status %d; its message is above)", status);
  if (status != 0) fprintf(stderr, "fp2bench: reproduce: no plot for %s: %s\n", s->file, err);
  return 0;
}

/* --small: what every step gets appended to run in seconds (tests of this driver). --quick:
   every step at one length (the last --len given wins), for a smoke run on a GPU. */
static char *small_args[] = {"--len", "1k", "--heads", "8:2", "--dim", "32", "--backend", "cpu"};
static char *quick_args[] = {"--len", "16k"};

/* One step's result as write_report finds it in the folder. */
typedef struct step_result {
  int present;        /* the JSON file exists */
  cJSON *doc;         /* parsed, or NULL */
  char lerr[ERR_LEN]; /* why it could not be read */
} step_result;

/* The report's data paragraph: which synth:llm version each result ran on (its
   config.synth_version; results without it are version 1), and what the generator is
   calibrated to, so that numbers from different versions are never read as one set. */
static void write_data_note(FILE *md, const step_result *res) {
  char by_version[SYNTH_VERSION + 1][600];
  for (int v = 0; v <= SYNTH_VERSION; v++) by_version[v][0] = '\0';
  for (size_t i = 0; i < NSTEPS; i++) {
    if (!res[i].doc) continue;
    const cJSON *config = cJSON_GetObjectItemCaseSensitive(res[i].doc, "config");
    const cJSON *data = cJSON_GetObjectItemCaseSensitive(config, "data");
    const cJSON *version = cJSON_GetObjectItemCaseSensitive(config, "synth_version");
    const int v = cJSON_IsNumber(version) ? version->valueint : 1;
    if (cJSON_IsString(data) && strncmp(data->valuestring, "synth:", 6) == 0 && v >= 0 && v <= SYNTH_VERSION) {
      char *list = by_version[v];
      snprintf(list + strlen(list), sizeof by_version[v] - strlen(list), "%s`%s`", list[0] ? ", " : "",
               steps[i].file);
    }
  }
  fprintf(md, "Data: the synthetic sources of `src/synth.c` (the generator's version is in each result's config)");
  const char *sep = ": ";
  for (int v = SYNTH_VERSION; v >= 0; v--) {
    if (!by_version[v][0]) continue;
    fprintf(md, "%sversion %d in %s", sep, v, by_version[v]);
    sep = "; ";
  }
  fprintf(md, ". `synth:llm` version %d is calibrated to: %s; the measured calibration is in the README's Data "
              "section.\n\n",
          SYNTH_VERSION, synth_llm_calibration);
}

/* REPORT.md from every step's JSON in dir (each read once), written to a temporary file and
   renamed at the end (an interrupted run leaves the previous report whole). why[i]: the
   failure of step i in this run, or "". mode: the flag of this run, for the header. Returns
   the number of results that could not be read, or -1 with err when the report could not be
   written. */
static int write_report(const char *dir, const char *mode, char why[][ERR_LEN], char *err) {
  char path[1200];
  snprintf(path, sizeof path, "%s/REPORT.md", dir);
  outfile out;
  if (outfile_open(&out, path, err) != 0) return -1;
  FILE *md = out.f;
  step_result res[NSTEPS];
  for (size_t i = 0; i < NSTEPS; i++) {
    char json[1200];
    snprintf(json, sizeof json, "%s/%s.json", dir, steps[i].file);
    res[i].doc = NULL;
    res[i].present = access(json, F_OK) == 0;
    if (res[i].present && report_load(json, &res[i].doc, res[i].lerr) != 0) res[i].doc = NULL;
  }
  fprintf(md, "# fp2bench reproduction of FlashPrefill V2's operator-level results\n\n"
              "Assembled by `fp2bench reproduce%s` from every step's JSON in this folder; each section names "
              "the command and commit that wrote its table.%s\n\n",
          mode, strcmp(mode, " --small") == 0 ? " **The last run was a test at a tiny size on the cpu: its numbers "
                                                 "mean nothing.**"
                : strcmp(mode, " --quick") == 0 ? " **The last run was a smoke run with every step at 16K only: not "
                                                  "the paper's lengths.**"
                                                : "");
  write_data_note(md, res);
  int unreadable = 0;
  for (size_t i = 0; i < NSTEPS; i++) {
    report_md_heading(md, steps[i].title, res[i].doc);
    if (why[i][0]) fprintf(md, "Failed in this run: %s.\n\n", why[i]);
    if (!res[i].present) {
      fprintf(md, "Not run yet (`fp2bench reproduce --steps %s`).\n\n", steps[i].file);
    } else if (!res[i].doc) {
      fprintf(md, "Its result cannot be read: %s.\n\n", res[i].lerr);
      unreadable++;
    } else {
      if (why[i][0]) fprintf(md, "An earlier result:\n\n");
      report_md_section(md, steps[i].file, steps[i].columns, res[i].doc);
    }
    cJSON_Delete(res[i].doc);
  }
  return outfile_close(&out, 1, err) == 0 ? unreadable : -1;
}

int cmd_reproduce(int argc, char **argv) {
  const char *dir = NULL, *list = NULL;
  int small = 0, quick = 0, report_only = 0;
  char names[512], steps_help[640];
  snprintf(steps_help, sizeof steps_help, "run only these steps, comma-separated (default: all): %s",
           step_names(names, sizeof names));
  const opt_spec specs[] = {
      {"--dir", OPT_STRING, &dir, "DIR", "where the results go (default: results/<gpu>)"},
      {"--steps", OPT_STRING, &list, "NAME[,NAME...]", steps_help},
      {"--quick", OPT_FLAG, &quick, NULL, "every step at 16K only: a smoke run of a few minutes on a GPU"},
      {"--small", OPT_FLAG, &small, NULL, "a tiny size on the cpu backend, to test this driver (numbers mean nothing)"},
      {"--report-only", OPT_FLAG, &report_only, NULL,
       "run nothing: assemble REPORT.md from the JSON already in --dir (after results from several runs were "
       "gathered there)"},
  };
  int rc = cli_parse(argc, argv, "reproduce [options]",
                     "Run every experiment the tool reproduces (speedup on synth:llm and at 5% density,\n"
                     "sweep-alpha, correction, density on synth:niah, breakdown, chunked, the index against\n"
                     "HPC-Ops') at the paper's settings into one folder: each step's JSON and plot, and\n"
                     "REPORT.md with our numbers beside the paper's. All steps take tens of minutes on a\n"
                     "GPU; --steps runs some of them, and REPORT.md is assembled from every step's JSON\n"
                     "in the folder each time (steps not run yet say so), so that runs in stages end with\n"
                     "one full report.",
                     specs, NOPTS(specs));
  if (rc) return rc == 1 ? EXIT_OK : rc;
  if (small + quick + report_only > 1 || (report_only && list)) {
    fail("reproduce: --small, --quick and --report-only exclude each other, and --report-only runs no --steps");
    return EXIT_USAGE;
  }
  char err[ERR_LEN];
  unsigned char want[NSTEPS];
  memset(want, list || report_only ? 0 : 1, sizeof want);
  if (list && pick_steps(list, want, err) != 0) {
    fail("reproduce: %s", err);
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
  char **extra = small ? small_args : quick_args;
  const int nextra = small ? NOPTS(small_args) : quick ? NOPTS(quick_args) : 0;
  char why[NSTEPS][ERR_LEN];
  int failed = 0, ran = 0;
  for (size_t i = 0; i < NSTEPS; i++) {
    why[i][0] = '\0';
    if (!want[i]) continue;
    ran++;
    if (run_step(&steps[i], dir, nextra, extra, why[i]) != 0) {
      fail("reproduce: %s", why[i]);
      failed++;
    }
  }
  const int unreadable = write_report(dir, small ? " --small" : quick ? " --quick" : "", why, err);
  if (unreadable < 0) {
    fail("reproduce: %s", err);
    return EXIT_RUNTIME;
  }
  fprintf(stderr, "fp2bench: reproduce: %s/REPORT.md written; %d of %d steps run failed, %d results unreadable\n",
          dir, failed, ran, unreadable);
  return failed || unreadable ? EXIT_RUNTIME : EXIT_OK;
}
