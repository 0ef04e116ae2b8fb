/* Attention peers timed beside our kernels in the same run, on the same inputs and index:
   cudnn (cuDNN's fused SDPA through its backend API, from C), and through experiments/peers.py
   torch (FlashAttention-2, cuDNN and FlexAttention through PyTorch), fpv2 (FlashPrefill V2's
   whole pass, and its attention alone on our index) and hpc (HPC-Ops' block-sparse FP8
   prefill on our index), the last two from the libraries users build. */
#ifndef FP2_PEERS_H
#define FP2_PEERS_H

#include <cjson/cJSON.h>

#include "density.h"
#include "error.h"
#include "reference.h"

#define PEERS_MAX 8
#define PEERS_CHOICES "cudnn,torch,fpv2,hpc"
#define PEERS_DEFAULT "cudnn,torch"

/* The pairs a peer computes, for its TFLOP/s. */
typedef enum peer_pairs {
  PAIRS_CAUSAL,  /* every causal pair (dense attention) */
  PAIRS_INDEX,   /* our index's pairs, without the correction's virtual keys */
  PAIRS_COUNTED, /* pairs_count, which the peer gives (its own index, or a coarser mask of ours) */
} peer_pairs;

/* Which of our times a peer's ratio is taken against. */
typedef enum peer_versus {
  VERSUS_TOTAL,  /* the index stage plus the sparse attention: dense attention, whole passes */
  VERSUS_NOCORR, /* our sparse attention without correction on the same index: kernel for kernel */
} peer_versus;

typedef struct peer_timing {
  char name[32];
  double *trials_ms; /* owned by the caller after peers_run */
  int trials;
  peer_pairs pairs;
  double pairs_count; /* PAIRS_COUNTED: (query, key) pairs over all query heads */
  double density;     /* PAIRS_COUNTED: pairs_count over the causal pairs */
  peer_versus versus;
} peer_timing;

typedef struct peer_skip {
  char name[32];
  char why[ERR_LEN];
} peer_skip;

/* The FLOPs the peer computes (4 D per pair it computes). */
double peer_flops(const peer_timing *t, const density_stats *d);

/* Adds the peer's fields to a result row: its times under its name, <name>_tflops,
   speedup_<name> (its median over total_ms or nocorr_ms, as t->versus says), for a peer on
   our index set against the total speedup_<name>_kernel (over nocorr_ms) too, and for
   counted pairs <name>_density. */
void peer_put(cJSON *row, const peer_timing *t, const density_stats *d, double total_ms, double nocorr_ms);

/* Adds peers_skipped to a result row: [{"peer", "why"}]. */
void peers_put_skipped(cJSON *row, const peer_skip *skipped, int nskipped);

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
