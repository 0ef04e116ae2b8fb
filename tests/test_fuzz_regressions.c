/* The fuzzers' inputs in a normal build: every file of tests/fuzz/corpus/<target>/ (the
   seeds) and tests/fuzz/regressions/<target>/ (inputs that once crashed, leaked or hit
   undefined behaviour) goes through the fuzz target's own entry point, included here under
   another name. The entry points abort on any broken expectation (a load that fails
   without a message, a round trip that changes a tensor, options that validate outside
   their bounds), so a regression fails this test; under FP2_SANITIZE it is also checked
   for memory errors and leaks. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "infile.h"
#include "report.h"
#include "testing.h"

#define LLVMFuzzerTestOneInput fuzz_safetensors_one
#include "fuzz/fuzz_safetensors.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_options_one
#include "fuzz/fuzz_options.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_plot_one
#include "fuzz/fuzz_plot.c"
#undef LLVMFuzzerTestOneInput

static int compare_strings(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Runs every file of the folder through the entry point, in name order; returns how many,
   or -1 when the folder cannot be read and must exist. */
static int run_folder(const char *rel, int must_exist, int (*one)(const uint8_t *, size_t)) {
  const char *dir = test_source_path(rel);
  DIR *d = opendir(dir);
  if (!d) {
    if (must_exist) fprintf(stderr, "cannot open folder '%s'\n", dir);
    return must_exist ? -1 : 0;
  }
  char **names = NULL;
  int n = 0, cap = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.') continue; /* ., .. and hidden files */
    if (n == cap) {
      cap = cap ? 2 * cap : 16;
      char **grown = realloc(names, (size_t)cap * sizeof *names);
      if (!grown) abort();
      names = grown;
    }
    names[n] = malloc(strlen(e->d_name) + 1);
    if (!names[n]) abort();
    strcpy(names[n++], e->d_name);
  }
  closedir(d);
  if (n) qsort(names, (size_t)n, sizeof *names, compare_strings);
  for (int i = 0; i < n; i++) {
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    size_t len = 0;
    char err[ERR_LEN];
    char *buf = read_text_file(path, &len, err);
    EXPECT_MSG(buf != NULL, "%s", err);
    if (buf) {
      fprintf(stderr, "%s (%zu bytes)\n", path, len); /* the culprit, should one abort */
      one((const uint8_t *)buf, len);
      free(buf);
    }
    free(names[i]);
  }
  free(names);
  return n;
}

int main(void) {
  static const struct {
    const char *name;
    int (*one)(const uint8_t *, size_t);
  } targets[] = {{"safetensors", fuzz_safetensors_one}, {"options", fuzz_options_one}, {"plot", fuzz_plot_one}};
  for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++) {
    char corpus[256], regressions[256];
    snprintf(corpus, sizeof corpus, "tests/fuzz/corpus/%s", targets[i].name);
    snprintf(regressions, sizeof regressions, "tests/fuzz/regressions/%s", targets[i].name);
    int seeds = run_folder(corpus, 1, targets[i].one);
    int found = run_folder(regressions, 0, targets[i].one);
    EXPECT_MSG(seeds > 0, "no seed inputs in %s", corpus);
    printf("%-12s %d seeds, %d regression inputs\n", targets[i].name, seeds, found);
  }
  return test_result("test_fuzz_regressions");
}
