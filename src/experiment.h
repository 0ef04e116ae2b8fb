/* Pieces every experiment subcommand shares: checked options, the problem of one length,
   the config block of the result, and the dump of one forward pass. */
#ifndef FP2_EXPERIMENT_H
#define FP2_EXPERIMENT_H

#include <cjson/cJSON.h>
#include <stdio.h>

#include "cli.h"
#include "pipeline.h"
#include "source.h"

/* Validates the shared options, parses --data and checks --out before any work (writable,
   not the input file); prints the error and returns EXIT_USAGE, or 0. `cmd` prefixes the
   message. */
int experiment_setup(const char *cmd, fp2_opts *o, data_source *src);

/* The backend to run: resolves auto, refuses gpu where no GPU is present (EXIT_SKIP with the
   reason), returns BACKEND_CPU or BACKEND_GPU, or a negative exit code negated. */
int experiment_backend(const char *cmd, const fp2_opts *o);

/* The cpu backend's size: the fp64 oracle takes minutes to hours at the GPU defaults, so
   without --len (and without a --data file, which has its own length) it runs at 1K, and
   says so on stderr. */
void experiment_cpu_size(const char *cmd, fp2_opts *o, int backend);

/* Builds the problem of one length and prepares its operands (round: see problem_prepare).
   Prints the error and returns EXIT_USAGE on failure. */
int experiment_problem(const char *cmd, const data_source *src, fp2_opts *o, int64_t len, int round, problem *pb);

/* Where the human-readable table goes: stdout, or stderr when the JSON goes to stdout. */
FILE *experiment_text(const fp2_opts *o);

/* The options as the result's config object. */
void experiment_config(cJSON *config, const fp2_opts *o, const data_source *src, const char *backend);

/* The result document of experiment `name` when --out was given (NULL otherwise): the
   config, the paper's values from experiments/<name>.json where it exists, and, on the gpu
   backend, the GPU's measured ceilings (ceilings.h; a failed measurement is a note on stderr). */
struct report;
struct report *experiment_report(const char *name, int argc, char **argv, const fp2_opts *o, const data_source *src,
                                 int backend);

/* Replaces config.<key> of the document (when there is one) by item: what the command ran
   where the shared options do not say it (--dtype both, a list of alphas). Takes item. */
void experiment_config_set(struct report *rep, const char *key, cJSON *item);

/* Writes the document (when there is one and rc is EXIT_OK) and frees it; returns rc, or
   EXIT_RUNTIME when the writing failed (said on stderr, prefixed by name). */
int experiment_write(const char *name, struct report *rep, const fp2_opts *o, int rc);

/* Writes the tensors of DESIGN.md section 4 (o, k_mean, v_mean, csr_offsets, csr_indices,
   and score when present) for the one sequence of pb. */
int experiment_dump(const char *path, const problem *pb, const pipeline_result *r, char *err);

#endif
