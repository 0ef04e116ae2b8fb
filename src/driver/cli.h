/* Option parsing shared by every subcommand: a table of option specs per command,
   the options common to all of them, sizes such as 4k or 128k, and shape checks. */
#ifndef FP2_CLI_H
#define FP2_CLI_H

#include <stdint.h>

#include "fp2.h"
#include "requests.h"
#include "run_choices.h"

typedef enum {
  OPT_FLAG,       /* int*: set to 1 when present */
  OPT_INT,        /* int*: a plain integer */
  OPT_SIZE,       /* int64_t*: 1000, 4k, 128k, 1m, 4k+77 */
  OPT_SIZE_LIST,  /* size_list*: comma-separated sizes */
  OPT_DOUBLE_LIST, /* double_list*: comma-separated numbers */
  OPT_DOUBLE,     /* double* */
  OPT_STRING,     /* const char**: NULL when unset */
  OPT_CHOICE,     /* int*: index into the '|'-separated choices in meta */
  OPT_HEADS,      /* shape_opts*: Hq:Hkv */
  OPT_REQUESTS,   /* request_list*: 64k,3x8k,8k/128k (requests.h) */
  OPT_POSITIONAL  /* const char**: the next bare argument */
} opt_kind;

typedef struct opt_spec {
  const char *name; /* "--len", or a label such as "RESULT.json" for OPT_POSITIONAL */
  opt_kind kind;
  void *dst;        /* holds the default before parsing */
  const char *meta; /* value placeholder, or the choices of OPT_CHOICE */
  const char *help;
  int *given;       /* optional: set to 1 when the option appears */
} opt_spec;

#define SIZE_LIST_MAX 32
typedef struct size_list {
  int n;
  int64_t v[SIZE_LIST_MAX];
} size_list;

typedef struct double_list {
  int n;
  double v[SIZE_LIST_MAX];
} double_list;


/* The options every experiment shares (issue: parsed once, the same everywhere), in the
   groups of their spec rows below: each part of the program takes the group it reads. */
typedef struct shape_opts { /* OPTS_SHAPE, OPT_REQUESTS */
  size_list lens;
  request_list requests; /* a batch of mixed lengths and chunks (n = 0: none) */
  int hq, hkv, dim, batch;
  int dtype; /* fp2_dtype */
} shape_opts;

typedef struct select_opts { /* OPTS_SELECT */
  double alpha;
  int block, qtile, sink, window, recent;
  int no_correction;
} select_opts;

typedef struct input_opts { /* OPTS_DATA */
  const char *data; /* synth:random | synth:llm | synth:niah | FILE.safetensors */
  double density;   /* forced mask density in (0,1]; < 0 when off */
  int64_t seed;
} input_opts;

typedef struct run_opts { /* OPTS_RUN, OPT_TRIALS */
  int backend;
  int kernel;      /* KERNEL_AUTO, KERNEL_PORTABLE or KERNEL_SM90: the gpu select and attention kernels */
  int paged;       /* --paged: K and V in pages of this many keys on the gpu; 0: contiguous */
  int trials;      /* timed repetitions after one warm-up (gpu) */
  const char *out; /* JSON destination; NULL: none, "-": stdout */
} run_opts;

typedef struct fp2_opts {
  shape_opts shape;
  select_opts select;
  input_opts input;
  run_opts run;
  /* Which options were given: a recorded file must agree with them, and grids such as
     check's take a given option as the only value of its axis. */
  struct {
    int len, heads, dim, dtype, data, correction, requests;
  } given;
} fp2_opts;

void opts_defaults(fp2_opts *o);

/* --dtype of the commands that run both precisions in turn: DTYPES_BOTH or an fp2_dtype. */
#define DTYPES_BOTH 2
static inline const char *dtypes_name(int dtypes) { return dtypes == DTYPES_BOTH ? "both" : dtype_name(dtypes); }
#define OPT_DTYPES(d) {"--dtype", OPT_CHOICE, (d), "bf16|fp8|both", "operand precision(s), both: one after the other"}

/* Spec rows for the shared options, to place inside a command's spec table. */
#define OPTS_SIZES(o)                                                                        \
  {"--len", OPT_SIZE_LIST, &(o)->shape.lens, "L[,L...]", "sequence length(s): 1000, 4k, 128k, 1m", &(o)->given.len}, \
  OPTS_HEAD_SHAPE(o),                                                                                    \
  {"--batch", OPT_INT, &(o)->shape.batch, "N", "sequences per batch"}
#define OPTS_HEAD_SHAPE(o)                                                                   \
  {"--heads", OPT_HEADS, &(o)->shape, "HQ:HKV", "query heads : KV heads", &(o)->given.heads},              \
  {"--dim", OPT_INT, &(o)->shape.dim, "D", "head dimension", &(o)->given.dim}
/* A batch of mixed lengths and chunked requests (the commands that take one: check, batch). */
#define OPT_REQUESTS(o, help)                                                                        \
  {"--requests", OPT_REQUESTS, &(o)->shape.requests, "R[,R...]",                                     \
   help ": L a whole prompt of L tokens, LQ/LK a chunk (its queries the last LQ of LK keys), "      \
   "NxR N such requests; e.g. 64k,3x8k,8k/128k", &(o)->given.requests}
#define OPTS_SHAPE(o) \
  OPTS_SIZES(o), {"--dtype", OPT_CHOICE, &(o)->shape.dtype, DTYPE_CHOICES, "operand precision", &(o)->given.dtype}
#define OPTS_SELECT(o) \
  {"--alpha", OPT_DOUBLE, &(o)->select.alpha, "A", "threshold: keep E >= A * max E, A in [0,1]"}, OPTS_BLOCKS(o)
#define OPTS_BLOCKS(o)                                                                       \
  {"--block", OPT_INT, &(o)->select.block, "B", "key block size (tokens)"},                         \
  {"--qtile", OPT_INT, &(o)->select.qtile, "M", "query tile (packed rows)"},                        \
  {"--sink", OPT_INT, &(o)->select.sink, "N", "sink blocks always kept"},                           \
  {"--window", OPT_INT, &(o)->select.window, "N", "local window in blocks always kept"},            \
  {"--recent", OPT_INT, &(o)->select.recent, "N", "last tiles of a sequence kept dense"},           \
  {"--no-correction", OPT_FLAG, &(o)->select.no_correction, NULL, "drop unselected blocks (no mean correction)", \
   &(o)->given.correction}
#define OPT_DATA(o)                                                                                  \
  {"--data", OPT_STRING, &(o)->input.data, "SRC", "synth:random | synth:llm | synth:niah | FILE.safetensors", \
   &(o)->given.data}
#define OPTS_DATA(o)                                                                                 \
  OPT_DATA(o),                                                                                       \
  {"--density", OPT_DOUBLE, &(o)->input.density, "X", "force a random block mask of density X (off: score)"},  \
  {"--seed", OPT_SIZE, &(o)->input.seed, "N", "random seed"}
/* The data and seed rows of experiments over forced block masks (the seed draws both). */
#define OPTS_MASKED_DATA(o) \
  OPT_DATA(o), {"--seed", OPT_SIZE, &(o)->input.seed, "N", "random seed (inputs and masks)"}
#define OPT_TRIALS(o) {"--trials", OPT_INT, &(o)->run.trials, "N", "timed repetitions after one warm-up (gpu)"}
#define OPTS_RUN(o)                                                         \
  {"--backend", OPT_CHOICE, &(o)->run.backend, BACKEND_CHOICES, "auto: gpu when present"}, \
  {"--kernel", OPT_CHOICE, &(o)->run.kernel, KERNEL_CHOICES,                              \
   "gpu selection and attention kernels: sm90 (wgmma; --dim 128, --block 128 --qtile 128) " \
   "or portable (mma.sync); auto: sm90 on an sm_90 GPU for the shapes it takes, portable elsewhere"}, \
  {"--paged", OPT_INT, &(o)->run.paged, "PAGE_SIZE",                                        \
   "gpu: K and V in a page cache of 16, 64, 128 or 256 keys a page, drawn shuffled, as a "   \
   "serving engine holds them (default: contiguous)"},                                       \
  {"--out", OPT_STRING, &(o)->run.out, "FILE.json", "write the JSON result (- for stdout)"}

/* Every shared option: the start of each experiment's spec table. */
#define OPTS_EXPERIMENT(o) OPTS_SHAPE(o), OPTS_SELECT(o), OPTS_DATA(o), OPTS_RUN(o)

#define NOPTS(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* Replaces the help text of the row named name (a shared row whose default a command
   computes itself, so that --help says the command's default and not the shared one). */
void cli_set_help(opt_spec *specs, int nspecs, const char *name, const char *help);

/* Parses argv[1..argc-1] (argv[0] is the subcommand). Returns 0 when parsed, 1 when
   --help was printed (the caller exits 0), EXIT_USAGE after printing a one-line error. */
int cli_parse(int argc, char **argv, const char *usage, const char *summary, const opt_spec *specs,
              int nspecs);

/* "4k" -> 4096; returns 0, or -1 with the reason in err. */
int parse_size(const char *s, int64_t *out, char *err);
int parse_size_list(const char *s, size_list *out, char *err);

/* "64k,3x8k,8k/128k" (OPT_REQUESTS) -> the requests, at most REQUESTS_MAX; sizes as
   parse_size takes them. Returns 0, or -1 with the reason in err. Ranges are opts_validate's. */
int parse_request_list(const char *s, request_list *out, char *err);

/* The name of choice `index` of an OPT_CHOICE list such as KERNEL_CHOICES ("?" past its end). */
void choice_name(const char *choices, int index, char *buf, size_t len);

int parse_double_list(const char *s, double_list *out, char *err);

/* Shape and parameter checks common to all experiments; 0 or -1 with err naming the option. */
int opts_validate(const fp2_opts *o, char *err);

/* Algorithm parameters of the library API from the options (--kernel auto gives portable
   here; the gpu backend picks per GPU with kernel_auto_pick). */
fp2_params opts_params(const fp2_opts *o);

/* Resolves --backend auto; prints why when the gpu was asked for but is absent. */
int opts_backend(const fp2_opts *o, int gpu_present);

#endif
