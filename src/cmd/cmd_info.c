/* fp2bench info: the host, the CUDA runtime and driver, and every GPU with its clocks,
   as text and, with --out, as a result document (experiment "info", one row per GPU).
   With --measure, each GPU's measured ceilings too (cuBLASLt BF16 and FP8 GEMM, copy
   bandwidth: ceilings.h), in its row and, for the current GPU, in provenance.ceilings. */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <string.h>

#include "build_info.h"
#include "ceilings.h"
#include "cli.h"
#include "commands.h"
#include "error.h"
#include "gpu_info.h"
#include "outfile.h"
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
  char sm[32], mem[32], slug[64];
  gpu_name_slug(d->name, slug, sizeof slug);
  fprintf(f, "gpu %d:\n", device);
  fprintf(f, "  %-12s %s\n", "name", d->name);
  fprintf(f, "  %-12s results/%s\n", "results", slug); /* where reproduce and refresh.sh write its records */
  fprintf(f, "  %-12s %s\n", "pci bus", d->pci_bus_id);
  fprintf(f, "  %-12s %d\n", "sms", d->sm_count);
  fprintf(f, "  %-12s %d.%d\n", "cc", d->cc_major, d->cc_minor);
  fprintf(f, "  %-12s %.1f GiB\n", "memory", (double)d->memory_bytes / (1 << 30));
  fprintf(f, "  %-12s %.1f MiB\n", "l2", (double)d->l2_bytes / (1 << 20));
  fprintf(f, "  %-12s sm %d MHz, mem %d MHz\n", "max clocks", d->clock_max_sm_mhz, d->clock_max_mem_mhz);
  fprintf(f, "  %-12s sm %s, mem %s\n", "clocks now", mhz_text(now.sm_mhz, sm, sizeof sm),
          mhz_text(now.mem_mhz, mem, sizeof mem));
}

static void print_ceilings(FILE *f, const ceilings *c) {
  fprintf(f, "  %-12s %.1f TFLOP/s (%d^3, cuBLASLt, median of %d)\n", "bf16 gemm", c->bf16_tflops, c->gemm_n,
          c->trials);
  if (c->fp8_note[0])
    fprintf(f, "  %-12s unavailable: %s\n", "fp8 gemm", c->fp8_note);
  else
    fprintf(f, "  %-12s %.1f TFLOP/s (%d^3, e4m3, %s accumulation)\n", "fp8 gemm", c->fp8_tflops, c->gemm_n,
            c->fp8_fast_accum ? "fast" : "full");
  fprintf(f, "  %-12s %.2f TB/s (%.0f MiB device to device, read + written)\n", "copy", c->copy_tbps,
          c->copy_bytes / (1 << 20));
}

/* Measures the ceilings of device i (made current for the purpose) into its row, and into
   provenance.ceilings when it is the device the report describes. */
static int measure_gpu(FILE *f, report *rep, cJSON *row, int i, int described) {
  char err[ERR_LEN];
  ceilings c;
  cudaError_t e = cudaSetDevice(i);
  if (e != cudaSuccess) {
    fail("info: cannot select cuda device %d: %s", i, cudaGetErrorString(e));
    return -1;
  }
  fprintf(stderr, "measuring the ceilings of gpu %d ...\n", i);
  if (ceilings_measure(&c, err) != 0) {
    fail("info: gpu %d: %s", i, err);
    return -1;
  }
  print_ceilings(f, &c);
  cJSON *obj = cJSON_CreateObject();
  ceilings_to_json(obj, &c);
  report_put(row, "ceilings", obj);
  if (i == described) ceilings_to_json(report_ceilings(rep), &c);
  return 0;
}

/* Describes every GPU as text on f and as a row of rep, with its ceilings when asked. */
static int describe_gpus(FILE *f, report *rep, int n, int measure) {
  const int described = gpu_current();
  int rc = 0;
  for (int i = 0; i < n && rc == 0; i++) {
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
    if (measure) rc = measure_gpu(f, rep, row, i, described);
  }
  if (measure && described >= 0) cudaSetDevice(described);
  return rc;
}

int cmd_info(int argc, char **argv) {
  const char *out = NULL;
  int measure = 0;
  const opt_spec specs[] = {
      {"--out", OPT_STRING, &out, "FILE.json", "also write the description as a result (- for stdout)", NULL},
      {"--measure", OPT_FLAG, &measure, NULL,
       "also measure each GPU's ceilings: cuBLASLt bf16 and fp8 GEMM (8192^3), 2 GiB copy bandwidth", NULL},
  };
  int rc = cli_parse(argc, argv, "info [--measure] [--out FILE.json]",
                     "Describes the host, the CUDA runtime and driver, and every CUDA GPU.", specs, NOPTS(specs));
  if (rc) return rc == 1 ? EXIT_OK : rc;

  char err[ERR_LEN];
  if (outfile_check_option("--out", out, NULL, 0, err) != 0) {
    fail("info: %s", err);
    return EXIT_USAGE;
  }
  /* With --out -, stdout carries the JSON alone, so the text goes to stderr. */
  FILE *text = out && strcmp(out, "-") == 0 ? stderr : stdout;
  report *rep = report_new("info", argc, argv);
  print_host(text, rep);
  char why[ERR_LEN];
  int n = gpu_probe(why);
  if (n == 0) fprintf(text, "no CUDA GPU found (%s)\n", why);
  rc = describe_gpus(text, rep, n, measure) == 0 ? EXIT_OK : EXIT_RUNTIME;
  if (rc == EXIT_OK && out && report_write(rep, out, err) != 0) {
    fail("info: %s", err);
    rc = EXIT_RUNTIME;
  }
  report_free(rep);
  /* Ceilings were asked for and there is nothing to measure: skipped, not failed. */
  if (rc == EXIT_OK && measure && n == 0) {
    fail("info: --measure needs a CUDA GPU (%s)", why);
    rc = EXIT_SKIP;
  }
  return rc;
}
