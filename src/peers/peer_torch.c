#include "peer_torch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "experiments_dir.h"
#include "infile.h"
#include "numeric.h"
#include "report.h"
#include "run_choices.h"
#include "safetensors.h"
#include "subprocess.h"

#define TORCH_EXIT_ABSENT 77 /* peers.py: torch or a CUDA device is missing */

static void bf16_tensor(tensor *t, const char *name, const float *x, int64_t a, int64_t b, int64_t c) {
  int64_t shape[3] = {a, b, c};
  tensor_init(t, name, TENSOR_BF16, 3, shape);
  uint16_t *d = t->data;
  size_t n = tensor_numel(t);
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < n; i++) d[i] = bf16_from_f32(x[i]);
}

static void i32_tensor(tensor *t, const char *name, const int *x, int64_t n) {
  tensor_init(t, name, TENSOR_I32, 1, &n);
  memcpy(t->data, x, sizeof(int) * (size_t)n);
}

/* q, k, v (bf16 of the source, as the kernels read them) and the index, for the script. */
static int export_inputs(const char *path, const problem *pb, const csr_index *idx, int trials, char *err) {
  const fp2_params *p = &pb->p;
  const int len = pb->lq[0];
  tensor t[5];
  bf16_tensor(&t[0], "q", pb->q, len, p->hq, p->dim);
  bf16_tensor(&t[1], "k", pb->k, len, p->hkv, p->dim);
  bf16_tensor(&t[2], "v", pb->v, len, p->hkv, p->dim);
  i32_tensor(&t[3], "csr_offsets", idx->offsets, idx->nseg + 1);
  i32_tensor(&t[4], "csr_indices", idx->indices, idx->nnz);
  char block[16], qtile[16], ntrials[16], alpha[32], sink[16], window[16], recent[16];
  snprintf(block, sizeof block, "%d", p->block);
  snprintf(qtile, sizeof qtile, "%d", p->qtile);
  snprintf(ntrials, sizeof ntrials, "%d", trials);
  snprintf(alpha, sizeof alpha, "%.9g", p->alpha);
  snprintf(sink, sizeof sink, "%d", p->sink);
  snprintf(window, sizeof window, "%d", p->window);
  snprintf(recent, sizeof recent, "%d", p->recent);
  /* peer_dtype and the selection's parameters: for the block-sparse peers (fpv2's index builder) */
  const char *meta[] = {"block", block, "qtile", qtile, "trials", ntrials, "dtype", "bf16",
                        "peer_dtype", dtype_name(p->dtype), "alpha", alpha, "sink", sink,
                        "window", window, "recent", recent, NULL};
  const tensor *list[5] = {&t[0], &t[1], &t[2], &t[3], &t[4]};
  int rc = st_save_with_metadata(path, list, 5, meta, err);
  for (int i = 0; i < 5; i++) tensor_free(&t[i]);
  return rc;
}

static const char *string_item(const cJSON *e, const char *key) {
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(e, key);
  return cJSON_IsString(x) ? x->valuestring : NULL;
}

/* A timing's "pairs" (with "pairs_count" and "density" when counted) and "versus". */
static int read_kind(const cJSON *e, peer_timing *t, char *err) {
  const char *pairs = string_item(e, "pairs"), *versus = string_item(e, "versus");
  const cJSON *count = cJSON_GetObjectItemCaseSensitive(e, "pairs_count");
  const cJSON *density = cJSON_GetObjectItemCaseSensitive(e, "density");
  if (pairs && strcmp(pairs, "causal") == 0) {
    t->pairs = PAIRS_CAUSAL;
  } else if (pairs && strcmp(pairs, "index") == 0) {
    t->pairs = PAIRS_INDEX;
  } else if (pairs && strcmp(pairs, "counted") == 0 && cJSON_IsNumber(count) && count->valuedouble > 0 &&
             cJSON_IsNumber(density)) {
    t->pairs = PAIRS_COUNTED;
    t->pairs_count = count->valuedouble;
    t->density = density->valuedouble;
  } else {
    err_set(err, "peers.py did not say which pairs it computes (\"pairs\", with \"pairs_count\" and \"density\" "
                 "when counted)");
    return -1;
  }
  if (!versus || strcmp(versus, "total") == 0) {
    t->versus = VERSUS_TOTAL;
  } else if (strcmp(versus, "attend_nocorr") == 0) {
    t->versus = VERSUS_NOCORR;
  } else {
    err_set(err, "peers.py's \"versus\" '%.40s' is neither total nor attend_nocorr", versus);
    return -1;
  }
  return 0;
}

/* The script's JSON: peers -> timings, skipped -> skips. */
static int read_result(const char *path, peer_timing *out, int *nout, peer_skip *skipped, int *nskipped, char *err) {
  size_t len;
  char *text = read_text_file(path, &len, err);
  if (!text) {
    err_set(err, "peers.py wrote no result '%s'", path);
    return -1;
  }
  cJSON *doc = cJSON_Parse(text);
  free(text);
  const cJSON *schema = cJSON_GetObjectItemCaseSensitive(doc, "schema");
  if (!cJSON_IsString(schema) || strcmp(schema->valuestring, "fp2bench-peers/1") != 0) {
    err_set(err, "'%s' is not a result of peers.py (schema fp2bench-peers/1)", path);
    cJSON_Delete(doc);
    return -1;
  }
  const cJSON *e;
  cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(doc, "peers")) {
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name"), *trials = cJSON_GetObjectItemCaseSensitive(e, "trials_ms");
    int n = cJSON_GetArraySize(trials);
    if (!cJSON_IsString(name) || n <= 0 || *nout >= PEERS_MAX) continue;
    peer_timing t = {.trials = 0};
    if (read_kind(e, &t, err) != 0) {
      peers_skip(skipped, nskipped, name->valuestring, err);
      continue;
    }
    snprintf(t.name, sizeof t.name, "%s", name->valuestring);
    t.trials_ms = xmalloc(sizeof(double) * (size_t)n);
    const cJSON *x;
    cJSON_ArrayForEach(x, trials) if (cJSON_IsNumber(x)) t.trials_ms[t.trials++] = x->valuedouble;
    out[(*nout)++] = t;
  }
  cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(doc, "skipped")) {
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name"), *why = cJSON_GetObjectItemCaseSensitive(e, "why");
    if (cJSON_IsString(name)) peers_skip(skipped, nskipped, name->valuestring, cJSON_IsString(why) ? why->valuestring : "?");
  }
  cJSON_Delete(doc);
  return 0;
}

void peer_torch_run(const problem *pb, const csr_index *idx, int trials, const char *script_peers,
                    const char *skip_name, peer_timing *out, int *nout, peer_skip *skipped, int *nskipped) {
  char python[1024], script[1024], in[64], result[64], err[ERR_LEN], why[ERR_LEN + 64];
  const char *py = getenv("FP2_PYTHON");
  if (pb->batch != 1) {
    peers_skip(skipped, nskipped, skip_name, "the torch peers take one sequence (--batch 1)");
    return;
  }
  if (find_in_path(py ? py : "python3", python, sizeof python) != 0) {
    snprintf(why, sizeof why, "'%.250s' not found%s", py ? py : "python3", py ? "" : " (set FP2_PYTHON)");
    peers_skip(skipped, nskipped, skip_name, why);
    return;
  }
  if (access(experiment_file("peers.py", script, sizeof script), R_OK) != 0) {
    snprintf(why, sizeof why, "cannot read '%.250s' (set FP2_EXPERIMENTS_DIR)", script);
    peers_skip(skipped, nskipped, skip_name, why);
    return;
  }
  snprintf(in, sizeof in, "/tmp/fp2bench-peers-%ld.safetensors", (long)getpid());
  snprintf(result, sizeof result, "/tmp/fp2bench-peers-%ld.json", (long)getpid());
  if (export_inputs(in, pb, idx, trials, err) != 0) {
    peers_skip(skipped, nskipped, skip_name, err);
    return;
  }
  char ntrials[16];
  snprintf(ntrials, sizeof ntrials, "%d", trials);
  char peers[128];
  snprintf(peers, sizeof peers, "%s", script_peers);
  char *args[] = {python, script, "--in", in, "--out", result, "--trials", ntrials, "--peers", peers, NULL};
  int status = spawn_wait(python, args, 0, err);
  if (status == 0) {
    if (read_result(result, out, nout, skipped, nskipped, err) != 0) peers_skip(skipped, nskipped, skip_name, err);
  } else if (status == TORCH_EXIT_ABSENT) {
    peers_skip(skipped, nskipped, skip_name, "python3 has no torch or no CUDA device (peers.py says why above)");
  } else {
    if (status > 0) snprintf(err, ERR_LEN, "peers.py failed (exit status %d)", status);
    peers_skip(skipped, nskipped, skip_name, err);
  }
  remove(in);
  remove(result);
}
