/* The JSON result document every run writes (DESIGN.md's Results and plots):

     {"schema": "fp2bench/1", "experiment": "density",
      "provenance": {git_commit, git_dirty, command, argv, date_utc, host, cpu,
                     fp2bench_version, cuda_runtime, cuda_driver, gpu, ceilings},
      "config": {...}, "rows": [{...}, ...]}

   provenance.gpu is null without a GPU, else {name, sm_count, cc, memory_bytes,
   l2_bytes, clock_max_sm_mhz, clock_max_mem_mhz, clocks_start: {sm_mhz, mem_mhz},
   clocks_end: {...}}; clocks are read when the report is created and when it is written
   (null where NVML cannot say). ceilings is null until report_ceilings is called.
   Values that are unknown are null, never invented.

   Building the document cannot fail except by running out of memory, which exits with
   EXIT_RUNTIME as xmalloc does; only writing and loading return errors. */
#ifndef FP2_REPORT_H
#define FP2_REPORT_H

#include <cjson/cJSON.h>

#include "gpu_info.h"

#define REPORT_SCHEMA "fp2bench/1"

typedef struct report report;

/* A new document for `experiment` (letters, digits, '_' and '-': it names the plot
   script). argc/argv are the subcommand's own (argv[0] is its name, as commands get
   them); the recorded command line is "fp2bench" followed by them. Describes the current
   CUDA device (gpu_current), so create the report after choosing the device. */
report *report_new(const char *experiment, int argc, char **argv);

/* The document's objects, owned by the report, for the caller to fill (report_put*). */
cJSON *report_config(report *r);
cJSON *report_provenance(report *r);

/* provenance.ceilings as an object (replacing its null on the first call). */
cJSON *report_ceilings(report *r);

/* Checked additions to any object of the document: they exit as xmalloc does when out
   of memory, so callers need not test each cJSON_Add* result. report_put takes
   ownership of item; a NaN or infinite number is written as null; a NULL string too. */
void report_put(cJSON *obj, const char *key, cJSON *item);
/* report_put, replacing the key's value where it has one. */
void report_set(cJSON *obj, const char *key, cJSON *item);
void report_put_number(cJSON *obj, const char *key, double v);
void report_put_string(cJSON *obj, const char *key, const char *s);

/* Appends an empty object to rows and returns it. */
cJSON *report_add_row(report *r);

/* Adds key: {"trials_ms": [...], "median_ms", "min_ms", "max_ms", "n"} to `row`
   (the summaries are null when n is 0). */
void report_add_times(cJSON *row, const char *key, const double *trials_ms, int n);

/* Records the end clocks and writes the document to `path` ("-": stdout). A file is
   written under a temporary name beside it and renamed into place, so a failed run
   never leaves half a file. 0, or -1 with the reason in err. */
int report_write(report *r, const char *path, char *err);

void report_free(report *r);

/* The GPU fields of provenance.gpu (name .. clock_max_mem_mhz) added to obj, and a
   clocks object {sm_mhz, mem_mhz}: shared with `info`, which reports every GPU. */
void report_add_gpu_fields(cJSON *obj, const gpu_desc *d);
cJSON *report_clocks_json(gpu_clocks c);

/* Reads a result file and checks its shape: schema == REPORT_SCHEMA, experiment a
   string naming a plot script, provenance and config objects, rows an array of
   objects. 0 with *doc owned by the caller (cJSON_Delete), or -1 with err. */
int report_load(const char *path, cJSON **doc, char *err);

#endif
