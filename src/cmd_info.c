/* fp2bench info: the host, the CUDA runtime and driver, and every GPU with its clocks,
   as text and, with --out, as a result document (experiment "info", one row per GPU). */
#include <stdio.h>
#include <string.h>

#include "build_info.h"
#include "cli.h"
#include "commands.h"
#include "error.h"
#include "gpu_info.h"
#include "report.h"

/* "13.0", or "unavailable" for a version the runtime could not give. */
static const char *version_text(int version, char *buf, size_t len) {
  if (version > 0)
    gpu_version_string(version, buf, len);
  else
    snprintf(buf, len, "unavailable");
  return buf;
}

/* "1980 MHz", or "unknown" for a clock NVML could not read. */
static const char *mhz_text(int mhz, char *buf, size_t len) {
  if (mhz < 0)
    snprintf(buf, len, "unknown");
  else
    snprintf(buf, len, "%d MHz", mhz);
  return buf;
}

/* The host part comes from the report's provenance, so text and JSON say the same. */
static void print_host(FILE *f, report *rep) {
  const cJSON *p = report_provenance(rep);
  const cJSON *host = cJSON_GetObjectItemCaseSensitive(p, "host");
  const cJSON *cpu = cJSON_GetObjectItemCaseSensitive(p, "cpu");
  char runtime[32], driver[32];
  fprintf(f, "%-14s %s (commit %s%s)\n", "fp2bench", fp2_version, fp2_git_commit,
          fp2_git_dirty == 1 ? ", dirty" : "");
  fprintf(f, "%-14s %s\n", "host", cJSON_IsString(host) ? host->valuestring : "unknown");
  fprintf(f, "%-14s %s\n", "cpu", cJSON_IsString(cpu) ? cpu->valuestring : "unknown");
  fprintf(f, "%-14s %s\n", "cuda runtime", version_text(gpu_runtime_version(), runtime, sizeof runtime));
  fprintf(f, "%-14s %s\n", "cuda driver", version_text(gpu_driver_version(), driver, sizeof driver));
}

static void print_gpu(FILE *f, int device, const gpu_desc *d, gpu_clocks now) {
  char sm[32], mem[32];
  fprintf(f, "gpu %d:\n", device);
  fprintf(f, "  %-12s %s\n", "name", d->name);
  fprintf(f, "  %-12s %s\n", "pci bus", d->pci_bus_id);
  fprintf(f, "  %-12s %d\n", "sms", d->sm_count);
  fprintf(f, "  %-12s %d.%d\n", "cc", d->cc_major, d->cc_minor);
  fprintf(f, "  %-12s %.1f GiB\n", "memory", (double)d->memory_bytes / (1 << 30));
  fprintf(f, "  %-12s %.1f MiB\n", "l2", (double)d->l2_bytes / (1 << 20));
  fprintf(f, "  %-12s sm %d MHz, mem %d MHz\n", "max clocks", d->clock_max_sm_mhz, d->clock_max_mem_mhz);
  fprintf(f, "  %-12s sm %s, mem %s\n", "clocks now", mhz_text(now.sm_mhz, sm, sizeof sm),
          mhz_text(now.mem_mhz, mem, sizeof mem));
}

/* Describes every GPU as text on f and as a row of rep. */
static int describe_gpus(FILE *f, report *rep, int n) {
  for (int i = 0; i < n; i++) {
    gpu_desc d;
    char err[ERR_LEN];
    if (gpu_describe(i, &d, err) != 0) {
      fail("info: %s", err);
      return -1;
    }
    gpu_clocks now = gpu_clocks_now(&d);
    print_gpu(f, i, &d, now);
    cJSON *row = report_add_row(rep);
    report_put_number(row, "device", i);
    report_add_gpu_fields(row, &d);
    report_put_string(row, "pci_bus_id", d.pci_bus_id);
    report_put(row, "clocks", report_clocks_json(now));
  }
  return 0;
}

int cmd_info(int argc, char **argv) {
  const char *out = NULL;
  const opt_spec specs[] = {
      {"--out", OPT_STRING, &out, "FILE.json", "also write the description as a result (- for stdout)", NULL},
      /* TODO(--measure): the cuBLAS GEMM (bf16, fp8) and copy-bandwidth ceilings go here,
         as an OPT_FLAG; not implemented. */
  };
  int rc =
      cli_parse(argc, argv, "info [--out FILE.json]",
                "Describes the host, the CUDA runtime and driver, and every CUDA GPU.", specs, NOPTS(specs));
  if (rc) return rc == 1 ? EXIT_OK : rc;

  /* With --out -, stdout carries the JSON alone, so the text goes to stderr. */
  FILE *text = out && strcmp(out, "-") == 0 ? stderr : stdout;
  report *rep = report_new("info", argc, argv);
  print_host(text, rep);
  char why[ERR_LEN];
  int n = gpu_probe(why);
  if (n == 0) fprintf(text, "no CUDA GPU found (%s)\n", why);
  rc = describe_gpus(text, rep, n) == 0 ? EXIT_OK : EXIT_RUNTIME;
  /* TODO(--measure): measure the ceilings of each GPU here and store them with
     report_ceilings(rep), before the report is written. */
  char err[ERR_LEN];
  if (rc == EXIT_OK && out && report_write(rep, out, err) != 0) {
    fail("info: %s", err);
    rc = EXIT_RUNTIME;
  }
  report_free(rep);
  return rc;
}
