#include "testing.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "device_operands.h"

int test_failures = 0;

void check_fp2(fp2_status s, const char *what) {
  if (s != FP2_OK) {
    fprintf(stderr, "%s: %s\n", what, fp2_error_message());
    exit(3);
  }
}

float *test_download(const void *dev, size_t n, int fp8) {
  char err[320];
  float *x = operands_download(dev, n, fp8, err);
  if (!x) {
    fprintf(stderr, "download: %s\n", err);
    exit(3);
  }
  return x;
}

int test_same_device_bytes(const void *a, const void *b, size_t n) {
  if (n == 0) return 1;
  unsigned char *ha = malloc(n), *hb = malloc(n);
  CHECK_CUDA(cudaMemcpy(ha, a, n, cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(hb, b, n, cudaMemcpyDeviceToHost));
  const int same = memcmp(ha, hb, n) == 0;
  free(ha);
  free(hb);
  return same;
}

int test_gpu_major(const char *name) {
  int devices = 0, dev = 0, major = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    fprintf(stderr, "%s: no GPU, skipped\n", name);
    exit(77);
  }
  CHECK_CUDA(cudaGetDevice(&dev));
  CHECK_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  return major;
}

int test_result(const char *name) {
  if (test_failures) {
    fprintf(stderr, "%s: %d failure(s)\n", name, test_failures);
    return test_failures > 100 ? 100 : test_failures;
  }
  printf("%s: ok\n", name);
  return 0;
}

const char *test_source_path(const char *rel) {
  static char buf[4][1024];
  static int next;
  const char *root = getenv("FP2_SOURCE_DIR");
  char *out = buf[next++ % 4];
  snprintf(out, sizeof buf[0], "%s/%s", root ? root : FP2_SOURCE_DIR, rel);
  return out;
}

const char *test_temp_path(const char *name) {
  static char buf[4][1024];
  static int next;
  const char *tmp = getenv("TMPDIR");
  char *out = buf[next++ % 4];
  snprintf(out, sizeof buf[0], "%s/fp2test-%ld-%s", tmp ? tmp : "/tmp", (long)getpid(), name);
  return out;
}
