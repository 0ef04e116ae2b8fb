/* The result document of an experiment: its config from the options, the paper's values
   beside it, the GPU's ceilings, and its writing. */
#include "experiment_report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ceilings.h"
#include "error.h"
#include "experiments_dir.h"
#include "infile.h"

void experiment_config(cJSON *config, const fp2_opts *o, const data_source *src, const char *backend) {
  /* A batch of requests replaces the lengths unless both were given (check runs both). */
  if (!o->shape.requests.n || o->given.len) report_put(config, "len", experiment_sizes_json(&o->shape.lens));
  if (o->shape.requests.n) report_put(config, "requests", experiment_requests_json(&o->shape.requests));
  report_put_number(config, "hq", o->shape.hq);
  report_put_number(config, "hkv", o->shape.hkv);
  report_put_number(config, "dim", o->shape.dim);
  report_put_number(config, "batch", o->shape.batch);
  report_put_string(config, "dtype", dtype_name(o->shape.dtype));
  report_put_number(config, "alpha", (float)o->select.alpha);
  report_put_number(config, "block", o->select.block);
  report_put_number(config, "qtile", o->select.qtile);
  report_put_number(config, "sink", o->select.sink);
  report_put_number(config, "window", o->select.window);
  report_put_number(config, "recent", o->select.recent);
  report_put(config, "correction", cJSON_CreateBool(!o->select.no_correction));
  report_put_string(config, "data", source_name(src));
  if (!src->is_file) report_put_number(config, "synth_version", SYNTH_VERSION);
  if (o->input.density >= 0)
    report_put_number(config, "forced_density", o->input.density);
  else
    report_put(config, "forced_density", cJSON_CreateNull());
  report_put_number(config, "seed", (double)o->input.seed);
  report_put_string(config, "backend", backend);
  char kernel[16]; /* what was asked; rows record what ran */
  choice_name(KERNEL_CHOICES, o->run.kernel, kernel, sizeof kernel);
  report_put_string(config, "kernel", kernel);
  report_put_number(config, "page_size", o->run.paged); /* 0: K and V contiguous */
}

/* The paper's own numbers for an experiment (experiments/<name>.json: source, gpu and
   paper_values) into config.paper, so that every result carries them beside ours. An
   experiment without a spec has none; a spec that cannot be read is a note on stderr. */
static void experiment_paper(cJSON *config, const char *name) {
  char path[1024], spec_name[128];
  snprintf(spec_name, sizeof spec_name, "%s.json", name);
  experiment_file(spec_name, path, sizeof path);
  if (access(path, F_OK) != 0) return;
  char err[ERR_LEN];
  size_t len;
  char *text = read_text_file(path, &len, err);
  cJSON *spec = text ? cJSON_Parse(text) : NULL;
  free(text);
  if (!spec) {
    fprintf(stderr, "fp2bench: note: no paper values: cannot read '%s'\n", path);
    return;
  }
  cJSON *paper = cJSON_CreateObject();
  static const char *const keys[] = {"source", "gpu", "paper_values"};
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(spec, keys[i]);
    if (x) report_put(paper, keys[i], cJSON_Duplicate(x, 1));
  }
  report_put(config, "paper", paper);
  cJSON_Delete(spec);
}

static void measure_ceilings(report *rep) {
  ceilings c;
  char err[ERR_LEN];
  fprintf(stderr, "fp2bench: measuring the GPU's ceilings (GEMM, copy) for the record\n");
  if (ceilings_measure(&c, err) != 0) {
    fprintf(stderr, "fp2bench: note: no ceilings in this result: %s\n", err);
    return;
  }
  ceilings_to_json(report_ceilings(rep), &c);
}

report *experiment_report(const char *name, int argc, char **argv, const fp2_opts *o, const data_source *src,
                          int backend) {
  if (!o->run.out) return NULL;
  report *rep = report_new(name, argc, argv);
  experiment_config(report_config(rep), o, src, backend == BACKEND_GPU ? "gpu" : "cpu");
  experiment_paper(report_config(rep), name);
  if (backend == BACKEND_GPU) measure_ceilings(rep);
  return rep;
}

void experiment_config_set(report *rep, const char *key, cJSON *item) {
  if (rep)
    report_set(report_config(rep), key, item);
  else
    cJSON_Delete(item);
}

void experiment_config_corrections(report *rep) {
  cJSON *both = cJSON_CreateArray();
  cJSON_AddItemToArray(both, cJSON_CreateTrue());
  cJSON_AddItemToArray(both, cJSON_CreateFalse());
  experiment_config_set(rep, "correction", both);
}

cJSON *experiment_sizes_json(const size_list *l) {
  cJSON *a = cJSON_CreateArray();
  for (int i = 0; i < l->n; i++) cJSON_AddItemToArray(a, cJSON_CreateNumber((double)l->v[i]));
  return a;
}

cJSON *experiment_requests_json(const request_list *r) {
  cJSON *a = cJSON_CreateArray();
  for (int b = 0; b < r->n; b++) {
    cJSON *item = cJSON_CreateObject();
    report_put_number(item, "lq", (double)r->lq[b]);
    report_put_number(item, "lk", (double)r->lk[b]);
    cJSON_AddItemToArray(a, item);
  }
  return a;
}

int experiment_write(const char *name, report *rep, const char *out, int rc) {
  char err[ERR_LEN];
  if (rep && rc == EXIT_OK && report_write(rep, out, err) != 0) {
    fail("%s: %s", name, err);
    rc = EXIT_RUNTIME;
  }
  report_free(rep);
  return rc;
}
