/* The cuDNN peer without a GPU: the layout of the graph's tensors over our
   positions-first buffers, the library lookup (FP2_CUDNN_LIB as a file or a directory,
   a clear message when it is wrong), and, where cuDNN 9.8+ is installed, the whole SDPA
   graph planned for a described Hopper GPU (cuDNN's deviceless planning): the heuristics
   must find an engine whose execution plan finalises, which is what a GPU run needs first. */
#include <dlfcn.h>
#include <glob.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error.h"
#include "gpu_info.h"
#include "peer_cudnn.h"
#include "testing.h"

/* Under FP2_SANITIZE: cuDNN (and NVRTC, cuBLASLt) keep allocations of libraries they load
   and unload themselves, which LeakSanitizer reports against unknown modules; leaks are
   not what this test checks. Ignored by builds without AddressSanitizer. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "detect_leaks=0"; }

/* Element offset of logical index (b, h, s, x) under a shape's strides. */
static int64_t offset_of(const cudnn_tensor_shape *t, int64_t b, int64_t h, int64_t s, int64_t x) {
  return b * t->stride[0] + h * t->stride[1] + s * t->stride[2] + x * t->stride[3];
}

/* Every logical element maps to a distinct physical one inside [0, n): the strides
   describe a permutation of a dense buffer, for small shapes checked exhaustively. */
static int is_dense_permutation(const cudnn_tensor_shape *t) {
  int64_t n = t->dim[0] * t->dim[1] * t->dim[2] * t->dim[3];
  unsigned char *seen = calloc((size_t)n, 1);
  int ok = seen != NULL;
  for (int64_t a = 0; ok && a < t->dim[0]; a++)
    for (int64_t b = 0; ok && b < t->dim[1]; b++)
      for (int64_t c = 0; ok && c < t->dim[2]; c++)
        for (int64_t d = 0; ok && d < t->dim[3]; d++) {
          int64_t off = offset_of(t, a, b, c, d);
          if (off < 0 || off >= n || seen[off]) ok = 0;
          else seen[off] = 1;
        }
  free(seen);
  return ok;
}

static void test_layout(void) {
  fp2_params p = {.hq = 8, .hkv = 2, .dim = 64};
  peer_cudnn_layout lay;
  char err[ERR_LEN] = "";
  const int L = 37; /* odd on purpose */
  EXPECT_MSG(peer_cudnn_layout_of(&p, L, &lay, err) == 0, "%s", err);

  /* Q [L, Hq, D]: element (pos, head, x) at (pos * Hq + head) * D + x. */
  EXPECT(lay.q.dim[0] == 1 && lay.q.dim[1] == 8 && lay.q.dim[2] == L && lay.q.dim[3] == 64);
  EXPECT(offset_of(&lay.q, 0, 3, 5, 7) == (5 * 8 + 3) * 64 + 7);
  EXPECT(offset_of(&lay.o, 0, 7, L - 1, 63) == ((int64_t)(L - 1) * 8 + 7) * 64 + 63);
  /* K transposed: logical [1, Hkv, D, L]; element (x, pos) of head h is K[pos, h, x]. */
  EXPECT(lay.kt.dim[1] == 2 && lay.kt.dim[2] == 64 && lay.kt.dim[3] == L);
  EXPECT(offset_of(&lay.kt, 0, 1, 9, 4) == (4 * 2 + 1) * 64 + 9);
  EXPECT(offset_of(&lay.v, 0, 1, 4, 9) == (4 * 2 + 1) * 64 + 9);
  EXPECT(is_dense_permutation(&lay.q) && is_dense_permutation(&lay.kt) && is_dense_permutation(&lay.v) &&
         is_dense_permutation(&lay.o));
  /* Scores and statistics are dense [1, Hq, L, L] and [1, Hq, L, 1]. */
  EXPECT(lay.s.dim[2] == L && lay.s.dim[3] == L && lay.s.stride[1] == (int64_t)L * L && lay.s.stride[3] == 1);
  EXPECT(is_dense_permutation(&lay.s) && is_dense_permutation(&lay.stats));
  EXPECT(lay.stats.dim[3] == 1 && lay.stats.stride[2] == 1 && lay.stats.stride[1] == L);
  for (int i = 0; i < 4; i++) EXPECT(lay.scalar.dim[i] == 1 && lay.scalar.stride[i] == 1);

  /* MHA and head dim 128. */
  p = (fp2_params){.hq = 4, .hkv = 4, .dim = 128};
  EXPECT_MSG(peer_cudnn_layout_of(&p, 1, &lay, err) == 0, "%s", err);
  EXPECT(is_dense_permutation(&lay.q) && is_dense_permutation(&lay.kt));

  /* Shapes the peer refuses, with the reason. */
  p = (fp2_params){.hq = 6, .hkv = 4, .dim = 128};
  EXPECT(peer_cudnn_layout_of(&p, 16, &lay, err) == -1);
  EXPECT_MSG(strstr(err, "multiple") != NULL, "err: %s", err);
  p = (fp2_params){.hq = 8, .hkv = 8, .dim = 96};
  EXPECT(peer_cudnn_layout_of(&p, 16, &lay, err) == -1);
  EXPECT_MSG(strstr(err, "head dimension 96") != NULL, "err: %s", err);
  p = (fp2_params){.hq = 8, .hkv = 8, .dim = 128};
  EXPECT(peer_cudnn_layout_of(&p, 0, &lay, err) == -1);
  EXPECT(peer_cudnn_layout_of(&p, 1 << 30, &lay, err) == -1);
}

static void test_lib_path(void) {
  char buf[256];
  const char *dir = getenv("TMPDIR") && getenv("TMPDIR")[0] ? getenv("TMPDIR") : "/tmp";
  char want[300];
  EXPECT(peer_cudnn_lib_path("/no/such/libcudnn.so.9", buf, sizeof buf) == 0);
  EXPECT_MSG(strcmp(buf, "/no/such/libcudnn.so.9") == 0, "buf: %s", buf);
  EXPECT(peer_cudnn_lib_path(dir, buf, sizeof buf) == 0);
  snprintf(want, sizeof want, "%s%slibcudnn.so.9", dir, dir[strlen(dir) - 1] == '/' ? "" : "/");
  EXPECT_MSG(strcmp(buf, want) == 0, "buf: %s", buf);
  EXPECT(peer_cudnn_lib_path("/", buf, sizeof buf) == 0 && strcmp(buf, "/libcudnn.so.9") == 0);
  EXPECT(peer_cudnn_lib_path("/", buf, 8) == -1);
}

/* What cuDNN's device-properties descriptor reads (the keys of its JSON form), filled
   with an H200's values: sm_90, 132 SMs, 227 KiB of shared memory per block. */
static const char h200_json[] =
    "{\"maxGridSize\":[2147483647,65535,65535],\"maxBlockSize\":[1024,1024,64],\"regsPerBlock\":65536,"
    "\"multiProcessorCount\":132,\"warpSize\":32,\"maxSharedMemoryPerBlock\":49152,"
    "\"maxSharedMemoryPerBlockOptin\":232448,\"reservedSharedMemoryPerBlock\":1024,\"maxRegistersPerSM\":65536,"
    "\"maxCtasPerSM\":32,\"maxThreadsPerBlock\":1024,\"maxThreadsPerSM\":2048,\"pciDeviceId\":0,\"isTccDriver\":0,"
    "\"supportCoopLaunch\":1,\"totalGlobalMem\":150754820096,\"smClockRateKHz\":1980000,"
    "\"memClockRateKHz\":2619000,\"l2CacheSize\":52428800,\"cudaDeviceId\":0,\"deviceVer\":900,"
    "\"driverVer\":13000,\"deviceName\":\"NVIDIA H200\"}";

/* cuDNN compiles its attention kernels at plan time and needs libcuda for that. Without
   a driver, the toolkit's stub libcuda lets it compile (loading the kernel then fails,
   which planning reports as "compiled only"). 1 when some libcuda is loaded. */
static int load_libcuda(void) {
  if (dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL)) return 1;
  const char *home = getenv("CUDA_HOME");
  char from_home[512];
  snprintf(from_home, sizeof from_home, "%s/lib64/stubs/libcuda.so", home && home[0] ? home : "/nonexistent");
  const char *const patterns[] = {from_home, "/usr/local/cuda/lib64/stubs/libcuda.so",
                                  "/usr/local/cuda/targets/*/lib/stubs/libcuda.so",
                                  "/usr/local/cuda-*/lib64/stubs/libcuda.so",
                                  "/usr/local/cuda-*/targets/*/lib/stubs/libcuda.so"};
  for (size_t i = 0; i < sizeof patterns / sizeof patterns[0]; i++) {
    glob_t g;
    if (glob(patterns[i], 0, NULL, &g) != 0) continue;
    for (size_t j = 0; j < g.gl_pathc; j++) {
      if (dlopen(g.gl_pathv[j], RTLD_NOW | RTLD_GLOBAL)) {
        fprintf(stderr, "test_peer_cudnn: no driver: cuDNN compiles against the stub %s\n", g.gl_pathv[j]);
        globfree(&g);
        return 1;
      }
    }
    globfree(&g);
  }
  return 0;
}

/* FP2_CUDNN_LIB as the test found it (the user's choice), or NULL. */
static char *user_lib;

/* Restores the user's FP2_CUDNN_LIB, or unsets it. */
static void user_setting(void) {
  if (user_lib)
    setenv("FP2_CUDNN_LIB", user_lib, 1);
  else
    unsetenv("FP2_CUDNN_LIB");
}

/* The file cuDNN loads from with the user's setting, found in a child process (a load is
   kept for the life of a process): "" when there is none. */
static void default_library(char *path, size_t len) {
  path[0] = '\0';
  int fd[2];
  if (pipe(fd) != 0) return;
  pid_t pid = fork();
  if (pid == 0) {
    close(fd[0]);
    user_setting();
    char why[ERR_LEN];
    if (peer_cudnn_available(why)) {
      const char *p = peer_cudnn_path();
      if (write(fd[1], p, strlen(p)) < 0) _exit(2);
    }
    _exit(0);
  }
  close(fd[1]);
  size_t got = 0;
  ssize_t n;
  while (pid > 0 && got + 1 < len && (n = read(fd[0], path + got, len - 1 - got)) > 0) got += (size_t)n;
  path[got] = '\0';
  close(fd[0]);
  if (pid > 0) waitpid(pid, NULL, 0);
}

/* In a child: FP2_CUDNN_LIB set to `spec` loads cuDNN from inside `dir`. */
static int loads_from(const char *spec, const char *dir) {
  pid_t pid = fork();
  if (pid == 0) {
    setenv("FP2_CUDNN_LIB", spec, 1);
    char why[ERR_LEN];
    if (!peer_cudnn_available(why)) {
      fprintf(stderr, "test_peer_cudnn: FP2_CUDNN_LIB=%s: %s\n", spec, why);
      _exit(1);
    }
    _exit(strncmp(peer_cudnn_path(), dir, strlen(dir)) == 0 ? 0 : 3);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return 0;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static void test_library(void) {
  char why[ERR_LEN] = "";
  /* A wrong FP2_CUDNN_LIB is reported as such, naming the path, and nothing is loaded. */
  setenv("FP2_CUDNN_LIB", "/nonexistent/fp2bench/cudnn", 1);
  EXPECT(peer_cudnn_available(why) == 0);
  if (strstr(why, "built without cuDNN headers")) {
    fprintf(stderr, "test_peer_cudnn: %s: only the pure parts are tested\n", why);
    return;
  }
  EXPECT_MSG(strstr(why, "cuDNN not found") != NULL && strstr(why, "/nonexistent/fp2bench/cudnn") != NULL &&
                 strstr(why, "FP2_CUDNN_LIB") != NULL,
             "why: %s", why);
  EXPECT(peer_cudnn_version() == 0 && strcmp(peer_cudnn_path(), "") == 0);
  fp2_params p = {.hq = 8, .hkv = 2, .dim = 128, .dtype = FP2_BF16};
  double ms[1];
  char err[ERR_LEN] = "";
  EXPECT(peer_cudnn_attention(&p, 128, NULL, NULL, NULL, NULL, 1, ms, err) == -1);
  EXPECT_MSG(strstr(err, "FP2_CUDNN_LIB") != NULL, "err: %s", err);
  /* A library that is not cuDNN is named as such. */
  setenv("FP2_CUDNN_LIB", "libm.so.6", 1);
  EXPECT(peer_cudnn_available(why) == 0);
  EXPECT_MSG(strstr(why, "unusable") != NULL, "why: %s", why); /* headerless builds returned above */
  EXPECT(peer_cudnn_version() == 0);

  /* FP2_CUDNN_LIB as the library's file or its directory (as pip's nvidia/cudnn/lib). */
  char path[1024], dir[1024];
  default_library(path, sizeof path);
  if (path[0]) {
    char tmp[1024];
    snprintf(tmp, sizeof tmp, "%s", path);
    snprintf(dir, sizeof dir, "%s", dirname(tmp));
    EXPECT_MSG(loads_from(path, dir), "FP2_CUDNN_LIB=%s did not load", path);
    EXPECT_MSG(loads_from(dir, dir), "FP2_CUDNN_LIB=%s did not load", dir);
  }

  /* Where the library can be had (the user's FP2_CUDNN_LIB, the default path, a pip
     install), load it. */
  user_setting();
  if (!peer_cudnn_available(why)) {
    fprintf(stderr, "test_peer_cudnn: no cuDNN here (%s): deviceless planning not tested\n", why);
    EXPECT_MSG(why[0] != '\0', "no reason given");
    return;
  }
  EXPECT(peer_cudnn_version() >= 90000 && peer_cudnn_path()[0] != '\0');
  fprintf(stderr, "test_peer_cudnn: cuDNN %ld from %s\n", peer_cudnn_version(), peer_cudnn_path());
  /* Without a GPU, running the peer fails with the reason, and nothing crashes. */
  if (gpu_count() == 0) {
    EXPECT(peer_cudnn_attention(&p, 128, NULL, NULL, NULL, NULL, 1, ms, err) == -1);
    EXPECT_MSG(err[0] != '\0', "no reason");
    fprintf(stderr, "test_peer_cudnn: without a GPU the peer says: %s\n", err);
  }

  if (peer_cudnn_version() < 90800) {
    fprintf(stderr, "test_peer_cudnn: cuDNN before 9.8 cannot plan without a GPU: not tested\n");
    return;
  }
  if (!load_libcuda()) {
    fprintf(stderr, "test_peer_cudnn: no libcuda, not even the toolkit's stub: planning not tested\n");
    return;
  }

  /* A description cuDNN refuses is an error with its reason. */
  EXPECT(peer_cudnn_plan_offline(&p, 1024, "{}", err) == -1);
  EXPECT_MSG(strstr(err, "device description") != NULL, "err: %s", err);

  /* The graphs: 32:8 and 8:8 heads, d = 128 and 64, an odd length, BF16 and FP8. */
  static const struct {
    int hq, hkv, dim, len;
    fp2_dtype dtype;
  } cases[] = {{32, 8, 128, 1024, FP2_BF16}, {8, 8, 64, 4096, FP2_BF16}, {16, 2, 128, 1000, FP2_BF16},
               {32, 8, 128, 1024, FP2_FP8}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    p = (fp2_params){.hq = cases[i].hq, .hkv = cases[i].hkv, .dim = cases[i].dim, .dtype = cases[i].dtype};
    /* 0: a plan (a real driver); 1: compiled, but the stub driver cannot load it. */
    int rc = peer_cudnn_plan_offline(&p, cases[i].len, h200_json, err);
    EXPECT_MSG(rc == 0 || rc == 1, "%s %d:%d d=%d L=%d: %s", cases[i].dtype == FP2_FP8 ? "fp8" : "bf16", cases[i].hq,
               cases[i].hkv, cases[i].dim, cases[i].len, err);
    if (rc >= 0) fprintf(stderr, "test_peer_cudnn: %s\n", peer_cudnn_plan_note());
  }
}

int main(void) {
  const char *lib = getenv("FP2_CUDNN_LIB");
  user_lib = lib && lib[0] ? strdup(lib) : NULL;
  test_layout();
  test_lib_path();
  test_library();
  free(user_lib);
  return test_result("test_peer_cudnn");
}
