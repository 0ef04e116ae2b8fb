#include "experiment.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "gpu_info.h"
#include "outfile.h"

/* The shared options, --data and --out, before any work. */
static int setup(const char *cmd, const fp2_opts *o, data_source *src) {
  char err[ERR_LEN];
  if (opts_validate(o, err) != 0 || source_parse(o->input.data, src, err) != 0) {
    fail("%s: %s", cmd, err);
    return EXIT_USAGE;
  }
  if (src->is_file && o->shape.requests.n) {
    fail("%s: --requests: a batch of requests is drawn from a synthetic source, but '%s' holds one sequence", cmd,
         src->path);
    return EXIT_USAGE;
  }
  const named_file input = {"--data", src->is_file ? src->path : NULL};
  if (outfile_check_option("--out", o->run.out, &input, 1, err) != 0) {
    fail("%s: %s", cmd, err);
    return EXIT_USAGE;
  }
  return 0;
}

/* BACKEND_CPU or BACKEND_GPU, or a negative exit code negated. */
static int pick_backend(const char *cmd, const fp2_opts *o) {
  char why[ERR_LEN] = "";
  int gpus = gpu_probe(why);
  if (o->run.backend == BACKEND_GPU && gpus == 0) {
    fail("%s: --backend gpu: no CUDA GPU found%s%s", cmd, why[0] ? ": " : "", why);
    return -EXIT_SKIP;
  }
  const int backend = opts_backend(o, gpus > 0);
  if (backend == BACKEND_CPU && o->run.paged) {
    fail("%s: --paged: no CUDA GPU found, and the cpu backend has no pages%s%s", cmd, why[0] ? ": " : "", why);
    return -EXIT_SKIP;
  }
  if (backend == BACKEND_CPU && o->run.kernel != KERNEL_AUTO)
    fprintf(stderr, "fp2bench: %s: note: --kernel picks a gpu kernel; the cpu backend ignores it\n", cmd);
  return backend;
}

/* A file's length, heads and dim (in pb) against the options the user gave; the ones not
   given take the file's, and the options are checked again with them. */
static int file_agrees(const data_source *src, fp2_opts *o, const problem *pb, char *err) {
  const int len = pb->lq[0];
  if (o->given.len && (o->shape.lens.n != 1 || o->shape.lens.v[0] != len)) {
    err_set(err, "'%s' holds %d positions but --len asks for %lld", src->path, len, (long long)o->shape.lens.v[0]);
    return -1;
  }
  if (o->given.heads && (o->shape.hq != pb->p.hq || o->shape.hkv != pb->p.hkv)) {
    err_set(err, "'%s' holds %d:%d heads but --heads asks for %d:%d", src->path, pb->p.hq, pb->p.hkv, o->shape.hq,
            o->shape.hkv);
    return -1;
  }
  if (o->given.dim && o->shape.dim != pb->p.dim) {
    err_set(err, "'%s' holds head dim %d but --dim asks for %d", src->path, pb->p.dim, o->shape.dim);
    return -1;
  }
  if (o->shape.batch != 1) {
    err_set(err, "'%s' holds one sequence: --batch must be 1", src->path);
    return -1;
  }
  o->shape.hq = pb->p.hq;
  o->shape.hkv = pb->p.hkv;
  o->shape.dim = pb->p.dim;
  o->shape.lens.n = 1;
  o->shape.lens.v[0] = len;
  return opts_validate(o, err);
}

/* A file source's shape into the options, so that every length, problem and config that
   follows is the file's. */
static int take_file_shape(const char *cmd, const data_source *src, fp2_opts *o) {
  if (!src->is_file) return 0;
  char err[ERR_LEN];
  problem pb;
  const source_request rq = experiment_request(o, o->shape.lens.v[0]);
  int rc = source_build(src, &rq, &pb, err);
  if (rc == 0) {
    rc = file_agrees(src, o, &pb, err);
    problem_free(&pb);
  }
  if (rc != 0) {
    fail("%s: %s", cmd, err);
    return EXIT_USAGE;
  }
  return 0;
}

static void cpu_small_size(const experiment_cmd *cmd, fp2_opts *o) {
  if (cmd->cpu_small_requests) {
    char err[ERR_LEN];
    if (o->given.requests || parse_request_list(cmd->cpu_small_requests, &o->shape.requests, err) != 0) return;
    fprintf(stderr, "fp2bench: %s: the cpu backend (fp64 oracle) runs at a small size, --requests %s\n", cmd->name,
            cmd->cpu_small_requests);
    return;
  }
  if (o->given.len || o->given.data) return;
  o->shape.lens.n = 1;
  o->shape.lens.v[0] = 1024;
  fprintf(stderr, "fp2bench: %s: the cpu backend (fp64 oracle) runs at a small size, --len 1k\n", cmd->name);
}

int experiment_start(const experiment_cmd *cmd, int argc, char **argv, const opt_spec *specs, int nspecs,
                     fp2_opts *o, void *args, data_source *src, int *backend) {
  int rc = cli_parse(argc, argv, cmd->usage, cmd->summary, specs, nspecs);
  if (rc) return rc == 1 ? EXIT_OK : rc;
  if ((rc = setup(cmd->name, o, src))) return rc;
  if (cmd->one_len && o->shape.lens.n != 1) {
    fail("%s: --len takes one length (density, speedup and breakdown take several)", cmd->name);
    return EXIT_USAGE;
  }
  if (cmd->check && (rc = cmd->check(args, src))) return rc;
  *backend = pick_backend(cmd->name, o);
  if (*backend < 0) return -*backend;
  if ((rc = take_file_shape(cmd->name, src, o))) return rc;
  if (*backend == BACKEND_CPU) {
    if (cmd->cpu_note) fprintf(stderr, "fp2bench: %s: %s\n", cmd->name, cmd->cpu_note);
    if (cmd->cpu_small) cpu_small_size(cmd, o);
  }
  return EXPERIMENT_GO;
}

int experiment_main(const experiment_cmd *cmd, int argc, char **argv, const opt_spec *specs, int nspecs,
                    fp2_opts *o, void *args, const int *dtypes) {
  data_source src;
  int backend;
  int rc = experiment_start(cmd, argc, argv, specs, nspecs, o, args, &src, &backend);
  if (rc != EXPERIMENT_GO) return rc;
  rc = EXIT_OK;
  const char *experiment = cmd->experiment ? cmd->experiment : cmd->name;
  experiment_run x = {o, &src, backend, experiment_report(experiment, argc, argv, o, &src, backend),
                      experiment_text(o->run.out)};
  if (dtypes) experiment_config_set(x.rep, "dtype", cJSON_CreateString(dtypes_name(*dtypes)));
  if (cmd->begin) cmd->begin(args, &x);
  const int shape_only = cmd->shape_only_on_cpu && backend == BACKEND_CPU;
  for (int dt = FP2_BF16; dt <= FP2_FP8 && rc == EXIT_OK; dt++) {
    if (dtypes ? *dtypes != DTYPES_BOTH && *dtypes != dt : o->shape.dtype != dt) continue;
    fp2_opts row = *o;
    row.shape.dtype = dt;
    x.o = &row;
    for (int li = 0; li < o->shape.lens.n && rc == EXIT_OK; li++) {
      if (cmd->progress == PROGRESS_LEN)
        fprintf(stderr, "fp2bench: %s: len %lld\n", cmd->name, (long long)o->shape.lens.v[li]);
      else if (cmd->progress == PROGRESS_DTYPE_LEN)
        fprintf(stderr, "fp2bench: %s: %s, len %lld\n", cmd->name, dtype_name(dt), (long long)o->shape.lens.v[li]);
      problem pb;
      if (shape_only)
        source_shape((const source_request[]){experiment_request(&row, o->shape.lens.v[li])}, &pb);
      else if ((rc = experiment_problem(cmd->name, &src, &row, o->shape.lens.v[li], backend == BACKEND_GPU, &pb)))
        break;
      rc = cmd->row(args, &x, &pb);
      problem_free(&pb);
    }
  }
  x.o = o;
  if (cmd->end) cmd->end(args, &x);
  return experiment_write(cmd->name, x.rep, o->run.out, rc);
}

int experiment_check_list(const char *cmd, const char *option, const double_list *l, int (*in_range)(double),
                          const char *range) {
  for (int i = 0; i < l->n; i++)
    if (!in_range(l->v[i])) {
      fail("%s: %s: %g is outside %s", cmd, option, l->v[i], range);
      return EXIT_USAGE;
    }
  return 0;
}

source_request experiment_request(const fp2_opts *o, int64_t len) {
  source_request rq = {.p = opts_params(o), .kernel_auto = o->run.kernel == KERNEL_AUTO, .batch = o->shape.batch,
                       .len = len, .requests = o->shape.requests.n ? &o->shape.requests : NULL,
                       .seed = (uint64_t)o->input.seed};
  return rq;
}

int experiment_problem(const char *cmd, const data_source *src, const fp2_opts *o, int64_t len, int bf16_operands,
                       problem *pb) {
  char err[ERR_LEN];
  fp2_opts shape = *o;
  const source_request rq = experiment_request(o, len);
  if (source_build(src, &rq, pb, err) != 0) {
    fail("%s: %s", cmd, err);
    return EXIT_USAGE;
  }
  if (src->is_file && file_agrees(src, &shape, pb, err) != 0) { /* the file changed since experiment_start */
    problem_free(pb);
    fail("%s: %s", cmd, err);
    return EXIT_USAGE;
  }
  problem_prepare(pb, bf16_operands);
  return 0;
}

FILE *experiment_text(const char *out) { return out && strcmp(out, "-") == 0 ? stderr : stdout; }
