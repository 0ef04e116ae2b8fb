/* The experiment driver every experiment subcommand shares: parse -> checks -> backend -> the
   problem of each length -> the result (experiment_report.h). */
#ifndef FP2_EXPERIMENT_H
#define FP2_EXPERIMENT_H

#include <stdio.h>

#include "cli.h"
#include "experiment_report.h"
#include "pipeline.h"
#include "source.h"

/* What a subcommand tells the driver about itself. */
typedef struct experiment_cmd {
  const char *name;             /* the subcommand, prefixing its messages */
  const char *usage, *summary;  /* for --help */
  /* The command's own checks after the shared ones: 0, or EXIT_USAGE after saying why (fail).
     NULL: none. */
  int (*check)(void *args, const data_source *src);
  const char *cpu_note; /* said on stderr when the cpu backend runs (NULL: nothing) */
  /* The cpu backend's size: the fp64 oracle takes minutes to hours at the GPU defaults, so
     without --len (and without a --data file, which has its own length) it runs at 1K, and
     says so on stderr. */
  int cpu_small;
} experiment_cmd;

/* experiment_start's "carry on": any other value is the exit code to return. */
#define EXPERIMENT_GO (-1)

/* Parses argv (argv[0] is the subcommand) by specs; checks the shared options, --data and
   --out (writable, not the input file), then the command's own (cmd->check, given args);
   picks the backend (resolving auto; EXIT_SKIP with the reason where the gpu was asked for
   and no GPU is present); takes a file source's length, heads and dim into o (those the user
   gave must agree with the file's); and sizes the cpu backend's run (cmd->cpu_small). Every
   refusal is one line and EXIT_USAGE. Returns EXPERIMENT_GO with *src and *backend
   (BACKEND_CPU or BACKEND_GPU) set, or the exit code: EXIT_OK after --help. */
int experiment_start(const experiment_cmd *cmd, int argc, char **argv, const opt_spec *specs, int nspecs,
                     fp2_opts *o, void *args, data_source *src, int *backend);

/* The source request of the options at one length. */
source_request experiment_request(const fp2_opts *o, int64_t len);

/* Builds the problem of one length and prepares its operands (bf16_operands: see
   problem_prepare). Prints the error and returns EXIT_USAGE on failure. */
int experiment_problem(const char *cmd, const data_source *src, const fp2_opts *o, int64_t len, int bf16_operands,
                       problem *pb);

/* Where the human-readable table goes: stdout, or stderr when the JSON goes to stdout. */
FILE *experiment_text(const fp2_opts *o);

#endif
