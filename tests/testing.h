/* Minimal test harness: every failed expectation prints where and what, the test's
   exit code is the number of failures (capped), and a test without a GPU exits 77. */
#ifndef FP2_TESTING_H
#define FP2_TESTING_H

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

#include "fp2.h"

extern int test_failures;

#define EXPECT(cond)                                                                  \
  do {                                                                                \
    if (!(cond)) {                                                                    \
      fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond);             \
      test_failures++;                                                                \
    }                                                                                 \
  } while (0)

#define EXPECT_MSG(cond, ...)                                                         \
  do {                                                                                \
    if (!(cond)) {                                                                    \
      fprintf(stderr, "%s:%d: expected %s: ", __FILE__, __LINE__, #cond);             \
      fprintf(stderr, __VA_ARGS__);                                                   \
      fputc('\n', stderr);                                                            \
      test_failures++;                                                                \
    }                                                                                 \
  } while (0)

#define EXPECT_NEAR(a, b, tol)                                                        \
  do {                                                                                \
    double ea_ = (double)(a), eb_ = (double)(b);                                      \
    if (!(ea_ - eb_ <= (tol) && eb_ - ea_ <= (tol))) {                                \
      fprintf(stderr, "%s:%d: %s = %.9g, %s = %.9g, differ by more than %g\n",       \
              __FILE__, __LINE__, #a, ea_, #b, eb_, (double)(tol));                   \
      test_failures++;                                                                \
    }                                                                                 \
  } while (0)

/* A CUDA runtime call in a gpu test: on failure print it and exit 3 (not a test failure:
   the test could not run). */
#define CHECK_CUDA(call)                                                                             \
  do {                                                                                               \
    cudaError_t e_ = (call);                                                                         \
    if (e_ != cudaSuccess) {                                                                         \
      fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_));   \
      exit(3);                                                                                       \
    }                                                                                                \
  } while (0)

/* A library call in a gpu test: on failure print `what` and the library's message and exit 3
   (the test could not run). */
void check_fp2(fp2_status s, const char *what);

/* n device operands (bf16, or e4m3 codes) as f32 values the caller frees; exit 3 on failure. */
float *test_download(const void *dev, size_t n, int fp8);

/* Are n bytes at a and at b (device) the same? Exit 3 when a copy fails. */
int test_same_device_bytes(const void *a, const void *b, size_t n);

/* The compute capability major of the current GPU; without a GPU it prints that `name` is
   skipped and exits 77. */
int test_gpu_major(const char *name);

/* Exit code for main: 0 when every expectation held. */
int test_result(const char *name);

/* Path of a file under the source tree (FP2_SOURCE_DIR). */
const char *test_source_path(const char *rel);

/* A scratch path unique to this process under the temp directory. */
const char *test_temp_path(const char *name);

#endif
