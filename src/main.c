/* fp2bench: reproduce and benchmark FlashPrefill V2 block-sparse prefill attention.
   A static command table, one dispatcher (in the manner of git's builtins). */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "error.h"

static const struct cmd {
  const char *name;
  int (*fn)(int, char **);
  const char *summary;
} commands[] = {
    {"info", cmd_info, "host, CUDA and GPU description"},
    {"run", cmd_run, "one forward pass (pool, select, attend) on one source"},
    {"density", cmd_density, "selected density per length and head, with the FLOP model"},
    {"speedup", cmd_speedup, "operator speedup over dense attention, ours and the peers' (paper Tab. 1)"},
    {"sweep-alpha", cmd_sweep_alpha, "density, error with and without correction, needle recall per alpha (Tab. 9)"},
    {"correction", cmd_correction, "cost of the mean correction against sparsity (Fig. 6)"},
    {"breakdown", cmd_breakdown, "time of each stage of the sparse pass per length"},
    {"chunked", cmd_chunked, "chunked prefill: the index re-run per chunk against one pass (Tab. 6)"},
    {"batch", cmd_batch, "continuous batching: a mix of whole prompts and chunks in one pass, tokens/s"},
    {"hpc-compare", cmd_hpc_compare, "our CSR index against HPC-Ops' dense mask, and sparse time per density (Fig. 5, Tab. 7)"},
    {"reproduce", cmd_reproduce, "every experiment into results/<gpu>/ with plots and REPORT.md"},
    {"check", cmd_check, "compare a backend with the fp64 oracle on fresh random inputs"},
    {"plot", cmd_plot, "render a result JSON with its gnuplot script"},
    {"regress", cmd_regress, "compare a result with a baseline: SAME, FASTER, SLOWER or UNCLEAR"},
};

static void usage(FILE *f) {
  fprintf(f, "usage: fp2bench <command> [options]   (fp2bench <command> --help)\n\ncommands:\n");
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return EXIT_USAGE;
  }
  const char *name = argv[1];
  if (strcmp(name, "help") == 0 || strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
    if (argc > 2) {
      for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[2], commands[i].name) == 0) {
          char help[] = "--help";
          char *sub[] = {argv[2], help, NULL};
          return commands[i].fn(2, sub);
        }
      fail("unknown command '%s'", argv[2]);
      return EXIT_USAGE;
    }
    usage(stdout);
    return EXIT_OK;
  }
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
    if (strcmp(name, commands[i].name) != 0) continue;
    int rc = commands[i].fn(argc - 1, argv + 1);
    if (fflush(stdout) != 0 || ferror(stdout)) {
      fail("cannot write to standard output");
      return rc ? rc : EXIT_RUNTIME;
    }
    return rc;
  }
  fail("unknown command '%s' (see fp2bench help)", name);
  return EXIT_USAGE;
}
