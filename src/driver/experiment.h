/* The experiment driver every experiment subcommand shares: parse -> checks -> backend -> the
   problem of each length -> the result (experiment_report.h). */
#ifndef FP2_EXPERIMENT_H
#define FP2_EXPERIMENT_H

#include <stdio.h>

#include "cli.h"
#include "experiment_report.h"
#include "pipeline.h"
#include "source.h"

/* What a command's callbacks are handed: the run so far. */
typedef struct experiment_run {
  const fp2_opts *o;       /* the options, with this row's dtype */
  const data_source *src;
  int backend;             /* BACKEND_CPU or BACKEND_GPU */
  report *rep;             /* the result document, NULL without --out */
  FILE *txt;               /* the human-readable table (experiment_text) */
} experiment_run;

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
  /* With cpu_small, a command that runs a batch (--requests) runs this one on the cpu backend
     when --requests is not given, and says so. NULL: --len 1k. */
  const char *cpu_small_requests;
  int one_len; /* --len takes one length, not a list */
  /* experiment_main's: */
  const char *experiment; /* the result's experiment name (NULL: name), naming its plot */
  int shape_only_on_cpu;  /* the cpu backend's rows need only the problem's geometry (source_shape) */
  int progress;           /* before each row, "fp2bench: <name>: [<dtype>, ]len <L>" on stderr */
  /* After the result document is made, before any row: the config's extras and the table's
     header. NULL: none. */
  void (*begin)(void *args, const experiment_run *x);
  /* One row per (dtype, length), on its problem (which the driver frees): EXIT_OK, or the
     exit code that ends the run, said on stderr. */
  int (*row)(void *args, const experiment_run *x, problem *pb);
  /* After the rows, whatever their outcome (NULL: none). */
  void (*end)(void *args, const experiment_run *x);
} experiment_cmd;

/* A command's check of a list option: each value v must have in_range(v); else says
   "<cmd>: <option>: v is outside <range>" and returns EXIT_USAGE. 0 when all are. */
int experiment_check_list(const char *cmd, const char *option, const double_list *l, int (*in_range)(double),
                          const char *range);

/* experiment_cmd.progress: none, the length, or the dtype and the length. */
enum { PROGRESS_NONE, PROGRESS_LEN, PROGRESS_DTYPE_LEN };

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

/* A whole experiment: experiment_start, then the result document (experiment_report; with
   dtypes, an fp2_dtype or DTYPES_BOTH, its config.dtype says which ran), begin, a row for each
   dtype (dtypes, or the options' one when NULL) and each length of the options, end, and the
   writing (experiment_write). Returns the exit code. */
int experiment_main(const experiment_cmd *cmd, int argc, char **argv, const opt_spec *specs, int nspecs,
                    fp2_opts *o, void *args, const int *dtypes);

/* The source request of the options at one length (or of their --requests, when given). */
source_request experiment_request(const fp2_opts *o, int64_t len);

/* Builds the problem of one length and prepares its operands (bf16_operands: see
   problem_prepare). Prints the error and returns EXIT_USAGE on failure. */
int experiment_problem(const char *cmd, const data_source *src, const fp2_opts *o, int64_t len, int bf16_operands,
                       problem *pb);

/* Where the human-readable table goes: stdout, or stderr when the JSON (--out) goes to stdout. */
FILE *experiment_text(const char *out);

#endif
