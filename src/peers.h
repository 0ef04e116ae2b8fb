/* Dense attention peers timed beside our kernels in the same run, on the same inputs:
   cudnn (cuDNN's fused SDPA through its backend API, from C) and torch (FlashAttention-2,
   cuDNN and FlexAttention through PyTorch, run by experiments/peers.py). */
#ifndef FP2_PEERS_H
#define FP2_PEERS_H

#include "density.h"
#include "error.h"
#include "reference.h"

#define PEERS_MAX 8
#define PEERS_CHOICES "cudnn,torch"
#define PEERS_DEFAULT "cudnn,torch"

typedef struct peer_timing {
  char name[32];
  double *trials_ms; /* owned by the caller after peers_run */
  int trials;
  int sparse;        /* computes the index's pairs without correction (flex), not every causal pair */
} peer_timing;

typedef struct peer_skip {
  char name[32];
  char why[ERR_LEN];
} peer_skip;

/* The FLOPs the peer computes: the index's sparse pairs (without the correction's virtual
   keys) for a sparse peer, every causal pair for a dense one. */
double peer_flops(const peer_timing *t, const density_stats *d);

/* Appends a skipped peer (the reason cut to 300 characters) and says so on stderr. */
void peers_skip(peer_skip *skipped, int *nskipped, const char *name, const char *why);

/* Checks a comma-separated list of peer names ("none" for none). */
int peers_parse(const char *list, char *err);

/* Times every peer of the list on the problem's operands (BF16; FP8 where the peer has it),
   after checking its output against the oracle. Peers that cannot run are listed in skipped
   with the reason. Returns the number of timings. */
int peers_run(const char *list, const problem *pb, const csr_index *idx, int trials, peer_timing *out,
              peer_skip *skipped, int *nskipped);

#endif
