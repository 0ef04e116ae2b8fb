#include "peers.h"

#include <stdio.h>
#include <string.h>

#include "peer_cudnn_run.h"
#include "peer_torch.h"

/* Every peer by the name --peers takes: cudnn runs here, from C; the others are peers.py's
   (its names of them), gathered for one run of the script (one export of the inputs). fpv2 is
   its whole pass and its attention alone on our index. */
static const struct peer_entry {
  const char *name;
  const char *script; /* peers.py's peers, NULL: run from C */
} peers[] = {
    {"cudnn", NULL},
    {"torch", "fa2,sdpa_cudnn,flex"},
    {"fpv2", "fpv2,fpv2_kernel"},
    {"hpc", "hpc"},
};

static const struct peer_entry *find_peer(const char *name) {
  for (size_t i = 0; i < sizeof peers / sizeof peers[0]; i++)
    if (strcmp(name, peers[i].name) == 0) return &peers[i];
  return NULL;
}

/* Calls fn(name, ctx) for each name of the list; stops at the first non-zero. */
static int each_peer(const char *list, int (*fn)(const char *name, void *ctx), void *ctx) {
  if (strcmp(list, "none") == 0) return 0;
  const char *p = list;
  for (;;) {
    char name[32];
    size_t n = strcspn(p, ",");
    snprintf(name, sizeof name, "%.*s", (int)(n < sizeof name ? n : sizeof name - 1), p);
    int rc = fn(name, ctx);
    if (rc) return rc;
    if (!p[n]) return 0;
    p += n + 1;
  }
}

static int check_name(const char *name, void *err) {
  if (find_peer(name)) return 0;
  err_set(err, "unknown peer '%s' (%s, or none)", name, PEERS_CHOICES);
  return -1;
}

int peers_parse(const char *list, char *err) { return each_peer(list, check_name, err); }

int peers_check_option(const char *cmd, const char *list) {
  char err[ERR_LEN];
  if (peers_parse(list, err) == 0) return 0;
  fail("%s: --peers: %s", cmd, err);
  return EXIT_USAGE;
}

typedef struct run_ctx {
  const problem *pb;
  int trials;
  peer_timing *out;
  int *nout;
  peer_skip *skipped;
  int *nskipped;
  char groups[64];        /* the list's names that peers.py runs: torch, fpv2, hpc */
  char script_peers[128]; /* their peers in peers.py's names */
} run_ctx;

static void append(char *list, size_t size, const char *item) {
  size_t n = strlen(list);
  snprintf(list + n, size - n, "%s%s", n ? "," : "", item);
}

static int run_peer(const char *name, void *ctx) {
  run_ctx *c = ctx;
  const struct peer_entry *e = find_peer(name);
  if (!e) return 0;
  if (!e->script) {
    peer_cudnn_run(c->pb, c->trials, c->out, c->nout, c->skipped, c->nskipped);
    return 0;
  }
  append(c->groups, sizeof c->groups, name);
  append(c->script_peers, sizeof c->script_peers, e->script);
  return 0;
}

int peers_run(const char *list, const problem *pb, const csr_index *idx, int trials, peer_timing *out,
              peer_skip *skipped, int *nskipped) {
  int nout = 0;
  run_ctx c = {pb, trials, out, &nout, skipped, nskipped, "", ""};
  *nskipped = 0;
  each_peer(list, run_peer, &c);
  if (c.groups[0]) peer_torch_run(pb, idx, trials, c.script_peers, c.groups, out, &nout, skipped, nskipped);
  return nout;
}
