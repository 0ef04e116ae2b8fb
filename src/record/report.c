#include "report.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "build_info.h"
#include "error.h"
#include "gpu_info.h"
#include "outfile.h"
#include "stats.h"

struct report {
  cJSON *doc;
  cJSON *provenance, *config, *rows; /* owned by doc */
  int has_gpu;
  gpu_desc gpu; /* the described device, for its end clocks */
};

/* cJSON fails only when out of memory; exit then, as xmalloc does. */
static _Noreturn void out_of_memory(void) {
  fail("out of host memory building the json report");
  exit(EXIT_RUNTIME);
}

static cJSON *must(cJSON *item) {
  if (!item) out_of_memory();
  return item;
}

void report_put(cJSON *obj, const char *key, cJSON *item) {
  if (!cJSON_AddItemToObject(obj, key, must(item))) out_of_memory();
}

void report_set(cJSON *obj, const char *key, cJSON *item) {
  if (!cJSON_GetObjectItemCaseSensitive(obj, key))
    report_put(obj, key, item);
  else if (!cJSON_ReplaceItemInObjectCaseSensitive(obj, key, must(item)))
    out_of_memory();
}

void report_put_number(cJSON *obj, const char *key, double v) { report_put(obj, key, cJSON_CreateNumber(v)); }

void report_put_string(cJSON *obj, const char *key, const char *s) {
  report_put(obj, key, s ? cJSON_CreateString(s) : cJSON_CreateNull());
}

/* A count or clock that is known when >= 0, null otherwise. */
static cJSON *int_or_null(int v) { return v >= 0 ? cJSON_CreateNumber(v) : cJSON_CreateNull(); }

/* Characters that no shell treats specially, so a word made of them needs no quotes. */
static int shell_safe(const char *s) {
  return *s &&
         strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./-_") == strlen(s);
}

/* "fp2bench" and the arguments as one line a shell would split back into the same argv:
   unsafe words go in single quotes, with each ' written as '\''. */
static char *shell_command(int argc, char **argv) {
  size_t cap = sizeof "fp2bench";
  for (int i = 0; i < argc; i++) cap += 4 * strlen(argv[i]) + 3;
  char *out = xmalloc(cap), *p = out;
  p += sprintf(p, "fp2bench");
  for (int i = 0; i < argc; i++) {
    *p++ = ' ';
    if (shell_safe(argv[i])) {
      p += sprintf(p, "%s", argv[i]);
      continue;
    }
    *p++ = '\'';
    for (const char *s = argv[i]; *s; s++) {
      if (*s != '\'') {
        *p++ = *s;
        continue;
      }
      memcpy(p, "'\\''", 4);
      p += 4;
    }
    *p++ = '\'';
  }
  *p = '\0';
  return out;
}

static cJSON *argv_json(int argc, char **argv) {
  cJSON *a = must(cJSON_CreateArray());
  if (!cJSON_AddItemToArray(a, must(cJSON_CreateString("fp2bench")))) out_of_memory();
  for (int i = 0; i < argc; i++)
    if (!cJSON_AddItemToArray(a, must(cJSON_CreateString(argv[i])))) out_of_memory();
  return a;
}

static cJSON *date_utc_json(void) {
  time_t now = time(NULL);
  struct tm tm;
  char buf[32];
  if (now == (time_t)-1 || !gmtime_r(&now, &tm) || !strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm))
    return cJSON_CreateNull();
  return cJSON_CreateString(buf);
}

static cJSON *host_json(void) {
  char buf[256];
  if (gethostname(buf, sizeof buf) != 0) return cJSON_CreateNull();
  buf[sizeof buf - 1] = '\0'; /* POSIX leaves a truncated name unterminated */
  return cJSON_CreateString(buf);
}

/* The "model name" of the first processor in /proc/cpuinfo; null where there is none
   (other systems, and Arm kernels, which do not print one). */
static cJSON *cpu_json(void) {
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) return cJSON_CreateNull();
  char *line = NULL, *model = NULL;
  size_t cap = 0;
  while (!model && getline(&line, &cap, f) > 0) {
    if (strncmp(line, "model name", 10) != 0) continue;
    char *colon = strchr(line, ':');
    if (!colon) continue;
    model = colon + 1 + strspn(colon + 1, " \t");
    model[strcspn(model, "\n")] = '\0';
  }
  cJSON *j = model ? cJSON_CreateString(model) : cJSON_CreateNull();
  free(line);
  fclose(f); /* read-only: nothing to lose if closing fails */
  return j;
}

static cJSON *version_json(int version) {
  if (version <= 0) return cJSON_CreateNull();
  char buf[32];
  gpu_version_string(version, buf, sizeof buf);
  return cJSON_CreateString(buf);
}

cJSON *report_clocks_json(gpu_clocks c) {
  cJSON *o = must(cJSON_CreateObject());
  report_put(o, "sm_mhz", int_or_null(c.sm_mhz));
  report_put(o, "mem_mhz", int_or_null(c.mem_mhz));
  return o;
}

void report_add_gpu_fields(cJSON *obj, const gpu_desc *d) {
  char cc[16];
  snprintf(cc, sizeof cc, "%d.%d", d->cc_major, d->cc_minor);
  report_put(obj, "name", cJSON_CreateString(d->name));
  report_put(obj, "sm_count", cJSON_CreateNumber(d->sm_count));
  report_put(obj, "cc", cJSON_CreateString(cc));
  report_put(obj, "memory_bytes", cJSON_CreateNumber((double)d->memory_bytes));
  report_put(obj, "l2_bytes", cJSON_CreateNumber((double)d->l2_bytes));
  report_put(obj, "clock_max_sm_mhz", cJSON_CreateNumber(d->clock_max_sm_mhz));
  report_put(obj, "clock_max_mem_mhz", cJSON_CreateNumber(d->clock_max_mem_mhz));
}

/* The current device with its start clocks; null without a GPU, or when the runtime
   cannot describe it (the reason goes to stderr: the run itself may not need the GPU). */
static cJSON *gpu_json(report *r) {
  int device = gpu_current();
  if (device < 0) return cJSON_CreateNull();
  char err[ERR_LEN];
  if (gpu_describe(device, &r->gpu, err) != 0) {
    fail("provenance: %s", err);
    return cJSON_CreateNull();
  }
  r->has_gpu = 1;
  cJSON *g = must(cJSON_CreateObject());
  report_add_gpu_fields(g, &r->gpu);
  report_put(g, "clocks_start", report_clocks_json(gpu_clocks_now(&r->gpu)));
  report_put(g, "clocks_end", cJSON_CreateNull());
  return g;
}

static cJSON *provenance_json(report *r, int argc, char **argv) {
  cJSON *p = must(cJSON_CreateObject());
  char *command = shell_command(argc, argv);
  report_put(p, "git_commit", cJSON_CreateString(fp2_git_commit));
  report_put(p, "git_dirty", fp2_git_dirty < 0 ? cJSON_CreateNull() : cJSON_CreateBool(fp2_git_dirty));
  report_put(p, "command", cJSON_CreateString(command));
  report_put(p, "argv", argv_json(argc, argv));
  report_put(p, "date_utc", date_utc_json());
  report_put(p, "host", host_json());
  report_put(p, "cpu", cpu_json());
  report_put_string(p, "fp2bench_version", fp2_version);
  report_put(p, "cuda_runtime", version_json(gpu_runtime_version()));
  report_put(p, "cuda_driver", version_json(gpu_driver_version()));
  report_put(p, "gpu", gpu_json(r));
  report_put(p, "ceilings", cJSON_CreateNull());
  free(command);
  return p;
}

report *report_new(const char *experiment, int argc, char **argv) {
  report *r = xcalloc(1, sizeof *r);
  r->doc = must(cJSON_CreateObject());
  report_put(r->doc, "schema", cJSON_CreateString(REPORT_SCHEMA));
  report_put(r->doc, "experiment", cJSON_CreateString(experiment));
  r->provenance = provenance_json(r, argc, argv);
  report_put(r->doc, "provenance", r->provenance);
  r->config = must(cJSON_CreateObject());
  report_put(r->doc, "config", r->config);
  r->rows = must(cJSON_CreateArray());
  report_put(r->doc, "rows", r->rows);
  return r;
}

cJSON *report_config(report *r) { return r->config; }

cJSON *report_provenance(report *r) { return r->provenance; }

cJSON *report_ceilings(report *r) {
  cJSON *c = cJSON_GetObjectItemCaseSensitive(r->provenance, "ceilings");
  if (cJSON_IsObject(c)) return c;
  c = must(cJSON_CreateObject());
  if (!cJSON_ReplaceItemInObjectCaseSensitive(r->provenance, "ceilings", c)) out_of_memory();
  return c;
}

cJSON *report_add_row(report *r) {
  cJSON *row = must(cJSON_CreateObject());
  if (!cJSON_AddItemToArray(r->rows, row)) out_of_memory();
  return row;
}

void report_add_times(cJSON *row, const char *key, const double *trials_ms, int n) {
  cJSON *t = must(cJSON_CreateObject());
  report_put(t, "trials_ms", n > 0 ? cJSON_CreateDoubleArray(trials_ms, n) : cJSON_CreateArray());
  report_put(t, "median_ms", cJSON_CreateNumber(stats_median(trials_ms, n)));
  report_put(t, "min_ms", cJSON_CreateNumber(stats_min(trials_ms, n)));
  report_put(t, "max_ms", cJSON_CreateNumber(stats_max(trials_ms, n)));
  report_put(t, "n", cJSON_CreateNumber(n > 0 ? n : 0));
  report_put(row, key, t);
}

static int write_stdout(const char *text, char *err) {
  if (fputs(text, stdout) == EOF || fflush(stdout) != 0) {
    err_set(err, "cannot write the report to standard output: %s", strerror(errno));
    return -1;
  }
  return 0;
}

int report_write(report *r, const char *path, char *err) {
  if (r->has_gpu) {
    cJSON *gpu = cJSON_GetObjectItemCaseSensitive(r->provenance, "gpu");
    cJSON *end = report_clocks_json(gpu_clocks_now(&r->gpu));
    if (!cJSON_ReplaceItemInObjectCaseSensitive(gpu, "clocks_end", end)) out_of_memory();
  }
  char *json = cJSON_Print(r->doc);
  if (!json) out_of_memory();
  size_t len = strlen(json);
  char *text = xmalloc(len + 2);
  memcpy(text, json, len);
  memcpy(text + len, "\n", 2);
  cJSON_free(json);
  int rc = strcmp(path, "-") == 0 ? write_stdout(text, err) : outfile_write(path, text, len + 1, err);
  free(text);
  return rc;
}

void report_free(report *r) {
  if (!r) return;
  cJSON_Delete(r->doc);
  free(r);
}
