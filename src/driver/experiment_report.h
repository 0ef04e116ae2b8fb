/* The result document of an experiment (report.h): the config recording what ran, the
   paper's values beside it, the GPU's measured ceilings, and its writing. */
#ifndef FP2_EXPERIMENT_REPORT_H
#define FP2_EXPERIMENT_REPORT_H

#include <cjson/cJSON.h>

#include "cli.h"
#include "report.h"
#include "source.h"

/* The options as the result's config object. */
void experiment_config(cJSON *config, const fp2_opts *o, const data_source *src, const char *backend);

/* The result document of experiment `name` when --out was given (NULL otherwise): the
   config, the paper's values from experiments/<name>.json where it exists, and, on the gpu
   backend, the GPU's measured ceilings (ceilings.h; a failed measurement is a note on stderr). */
report *experiment_report(const char *name, int argc, char **argv, const fp2_opts *o, const data_source *src,
                          int backend);

/* Replaces config.<key> of the document (when there is one) by item: what the command ran
   where the shared options do not say it (--dtype both, a list of alphas). Takes item. */
void experiment_config_set(report *rep, const char *key, cJSON *item);

/* config.correction of a command that runs each pass both with and without the correction,
   whatever --no-correction says: [true, false]. */
void experiment_config_corrections(report *rep);

/* A list of sizes or numbers as a JSON array, for experiment_config_set. */
cJSON *experiment_sizes_json(const size_list *l);

/* A batch of requests as a JSON array of {"lq", "lk"} (queries, keys), in order. */
cJSON *experiment_requests_json(const request_list *r);

/* Writes the document to out (--out; when there is one and rc is EXIT_OK) and frees it;
   returns rc, or EXIT_RUNTIME when the writing failed (said on stderr, prefixed by name). */
int experiment_write(const char *name, report *rep, const char *out, int rc);

#endif
