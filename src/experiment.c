#include "experiment.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ceilings.h"
#include "error.h"
#include "experiments_dir.h"
#include "gpu_info.h"
#include "infile.h"
#include "outfile.h"
#include "report.h"
#include "safetensors.h"

int experiment_setup(const char *cmd, fp2_opts *o, data_source *src) {
  char err[ERR_LEN];
  if (opts_validate(o, err) != 0 || source_parse(o->data, src, err) != 0) {
    fail("%s: %s", cmd, err);
    return EXIT_USAGE;
  }
  const named_file input = {"--data", src->is_file ? src->path : NULL};
  if (outfile_check_option("--out", o->out, &input, 1, err) != 0) {
    fail("%s: %s", cmd, err);
    return EXIT_USAGE;
  }
  return 0;
}

int experiment_backend(const char *cmd, const fp2_opts *o) {
  char why[ERR_LEN] = "";
  int gpus = gpu_probe(why);
  if (o->backend == BACKEND_GPU && gpus == 0) {
    fail("%s: --backend gpu: no CUDA GPU found%s%s", cmd, why[0] ? ": " : "", why);
    return -EXIT_SKIP;
  }
  const int backend = opts_backend(o, gpus > 0);
  if (backend == BACKEND_CPU && o->kernel != KERNEL_AUTO)
    fprintf(stderr, "fp2bench: %s: note: --kernel picks a gpu kernel; the cpu backend ignores it\n", cmd);
  return backend;
}

void experiment_cpu_size(const char *cmd, fp2_opts *o, int backend) {
  if (backend != BACKEND_CPU || o->len_given || o->data_given) return;
  o->lens.n = 1;
  o->lens.v[0] = 1024;
  fprintf(stderr, "fp2bench: %s: the cpu backend (fp64 oracle) runs at a small size, --len 1k\n", cmd);
}

int experiment_problem(const char *cmd, const data_source *src, fp2_opts *o, int64_t len, int round, problem *pb) {
  char err[ERR_LEN];
  if (source_build(src, o, len, (uint64_t)o->seed, pb, err) != 0) {
    fail("%s: %s", cmd, err);
    return EXIT_USAGE;
  }
  problem_prepare(pb, round);
  return 0;
}

FILE *experiment_text(const fp2_opts *o) { return o->out && strcmp(o->out, "-") == 0 ? stderr : stdout; }

void experiment_config(cJSON *config, const fp2_opts *o, const data_source *src, const char *backend) {
  cJSON *lens = cJSON_CreateArray();
  for (int i = 0; i < o->lens.n; i++) cJSON_AddItemToArray(lens, cJSON_CreateNumber((double)o->lens.v[i]));
  report_put(config, "len", lens);
  report_put_number(config, "hq", o->hq);
  report_put_number(config, "hkv", o->hkv);
  report_put_number(config, "dim", o->dim);
  report_put_number(config, "batch", o->batch);
  report_put_string(config, "dtype", dtype_name(o->dtype));
  report_put_number(config, "alpha", (float)o->alpha);
  report_put_number(config, "block", o->block);
  report_put_number(config, "qtile", o->qtile);
  report_put_number(config, "sink", o->sink);
  report_put_number(config, "window", o->window);
  report_put_number(config, "recent", o->recent);
  report_put(config, "correction", cJSON_CreateBool(!o->no_correction));
  report_put_string(config, "data", source_name(src));
  if (!src->is_file) report_put_number(config, "synth_version", SYNTH_VERSION);
  if (o->density >= 0)
    report_put_number(config, "forced_density", o->density);
  else
    report_put(config, "forced_density", cJSON_CreateNull());
  report_put_number(config, "seed", (double)o->seed);
  report_put_string(config, "backend", backend);
  char kernel[16]; /* what was asked; rows record what ran */
  choice_name(KERNEL_CHOICES, o->kernel, kernel, sizeof kernel);
  report_put_string(config, "kernel", kernel);
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
  if (!o->out) return NULL;
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

int experiment_write(const char *name, report *rep, const fp2_opts *o, int rc) {
  char err[ERR_LEN];
  if (rep && rc == EXIT_OK && report_write(rep, o->out, err) != 0) {
    fail("%s: %s", name, err);
    rc = EXIT_RUNTIME;
  }
  report_free(rep);
  return rc;
}



static void shape_tensor(tensor *t, const char *name, tensor_dtype dt, int ndim, int64_t a, int64_t b, int64_t c) {
  int64_t shape[3] = {a, b, c};
  tensor_init(t, name, dt, ndim, shape);
}

int experiment_dump(const char *path, const problem *pb, const pipeline_result *r, char *err) {
  const fp2_params *p = &pb->p;
  const int len = pb->lq[0], nblk = pb->cu_blocks[1], ntiles = pb->cu_tiles[1];
  const size_t pooled = (size_t)p->hkv * nblk * p->dim;
  if (pb->batch != 1) {
    err_set(err, "--dump: writes one sequence, but the batch holds %d", pb->batch);
    return -1;
  }
  if (!r->o) {
    err_set(err, "--dump: the output was not computed for every row");
    return -1;
  }
  tensor t[6];
  int n = 0;
  shape_tensor(&t[n], "o", TENSOR_F32, 3, len, p->hq, p->dim);
  memcpy(t[n++].data, r->o, sizeof(float) * (size_t)len * p->hq * p->dim);
  shape_tensor(&t[n], "k_mean", TENSOR_F32, 3, p->hkv, nblk, p->dim);
  memcpy(t[n++].data, r->k_mean, sizeof(float) * pooled);
  shape_tensor(&t[n], "v_mean", TENSOR_F32, 3, p->hkv, nblk, p->dim);
  memcpy(t[n++].data, r->v_mean, sizeof(float) * pooled);
  shape_tensor(&t[n], "csr_offsets", TENSOR_I32, 1, r->index.nseg + 1, 0, 0);
  memcpy(t[n++].data, r->index.offsets, sizeof(int) * (size_t)(r->index.nseg + 1));
  shape_tensor(&t[n], "csr_indices", TENSOR_I32, 1, r->index.nnz, 0, 0);
  memcpy(t[n++].data, r->index.indices, sizeof(int) * (size_t)r->index.nnz);
  if (r->score) {
    shape_tensor(&t[n], "score", TENSOR_F32, 3, p->hkv, ntiles, nblk);
    memcpy(t[n++].data, r->score, sizeof(float) * (size_t)p->hkv * ntiles * nblk);
  }
  const tensor *list[6];
  for (int i = 0; i < n; i++) list[i] = &t[i];
  int rc = st_save(path, list, n, err);
  for (int i = 0; i < n; i++) tensor_free(&t[i]);
  return rc;
}
