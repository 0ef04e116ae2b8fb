/* What the current GPU can do at best, measured on it (DESIGN.md's Timing rules): a cuBLASLt
   BF16 GEMM and an FP8 e4m3 GEMM of 8192^3 (f32 accumulation, bf16 output), and the
   device-to-device copy bandwidth of a 2 GiB cudaMemcpyAsync. Results quote their rates
   next to these, measured in the same run.

   Inputs are random and non-zero (uploaded from the host; the copy source tiles the GEMM
   input); each measurement runs twice as warm-up, then `trials` times between CUDA events
   on one stream, and the rate is that of the median time. Per-trial times are kept. */
#ifndef FP2_CEILINGS_H
#define FP2_CEILINGS_H

#include <cjson/cJSON.h>

#include "error.h"

#define CEILINGS_TRIALS 10     /* timed repetitions of each measurement */
#define CEILINGS_MAX_TRIALS 32
#define CEILINGS_GEMM_N 8192   /* M = N = K */
#define CEILINGS_COPY_BYTES ((size_t)2 << 30)

typedef struct ceilings {
  int gemm_n;           /* M = N = K of both GEMMs */
  int trials;           /* timed repetitions behind each median */
  double bf16_tflops;   /* 2 N^3 / median time */
  double fp8_tflops;    /* NaN when FP8 GEMMs are not available: fp8_note says why */
  double copy_tbps;     /* (bytes read + bytes written) / median time, 10^12 bytes/s */
  double copy_bytes;    /* bytes of one copy (read once, written once) */
  double bf16_ms[CEILINGS_MAX_TRIALS], fp8_ms[CEILINGS_MAX_TRIALS], copy_ms[CEILINGS_MAX_TRIALS];
  int fp8_fast_accum;   /* CUBLASLT_MATMUL_DESC_FAST_ACCUM was set (as FP8 forward passes do) */
  char fp8_note[ERR_LEN]; /* empty, or why there is no FP8 number */
  int device;           /* the CUDA device measured */
  long cublaslt_version;
} ceilings;

/* Measures the current device with CEILINGS_TRIALS trials. 0, or -1 with err naming the
   CUDA or cuBLASLt call that failed. An FP8 GEMM that cuBLASLt does not offer on this GPU
   (before compute capability 8.9) is not an error: fp8_tflops is NaN and fp8_note says so. */
int ceilings_measure(ceilings *out, char *err);

/* The same with a chosen number of trials (1..CEILINGS_MAX_TRIALS) and GEMM size and copy
   size (for tests that must be quick; n a multiple of 16, bytes a multiple of 4096). */
int ceilings_measure_sized(ceilings *out, int trials, int gemm_n, size_t copy_bytes, char *err);

/* Adds the ceilings to obj (provenance.ceilings, from report_ceilings): the three rates,
   the GEMM shape, the copy size, and {trials_ms, median_ms, min_ms, max_ms, n} of each. */
void ceilings_to_json(cJSON *obj, const ceilings *c);

#endif
