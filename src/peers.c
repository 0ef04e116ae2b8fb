#include "peers.h"

#include "peer_torch.h"

#include <stdio.h>
#include <string.h>

static const char *const known[] = {"cudnn", "torch"};

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
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
    if (strcmp(name, known[i]) == 0) return 0;
  err_set(err, "unknown peer '%s' (%s, or none)", name, PEERS_CHOICES);
  return -1;
}

int peers_parse(const char *list, char *err) { return each_peer(list, check_name, err); }

typedef struct run_ctx {
  const problem *pb;
  const csr_index *idx;
  int trials;
  peer_timing *out;
  int *nout;
  peer_skip *skipped;
  int *nskipped;
} run_ctx;

static int run_peer(const char *name, void *ctx) {
  run_ctx *c = ctx;
  if (strcmp(name, "torch") == 0) {
    peer_torch_run(c->pb, c->idx, c->trials, c->out, c->nout, c->skipped, c->nskipped);
  } else if (*c->nskipped < PEERS_MAX) {
    peer_skip *s = &c->skipped[(*c->nskipped)++];
    snprintf(s->name, sizeof s->name, "%s", name);
    err_set(s->why, "the cuDNN peer is not built into this version yet");
    fprintf(stderr, "fp2bench: peer %s skipped: %s\n", name, s->why);
  }
  return 0;
}

int peers_run(const char *list, const problem *pb, const csr_index *idx, int trials, peer_timing *out,
              peer_skip *skipped, int *nskipped) {
  int nout = 0;
  run_ctx c = {pb, idx, trials, out, &nout, skipped, nskipped};
  *nskipped = 0;
  each_peer(list, run_peer, &c);
  return nout;
}
