/* What a peer's run gives back: its per-trial times and the pairs it computes, or the reason it
   was skipped; and how both go into a result row. Shared by every peer runner (peer_cudnn_run.h,
   peer_torch.h) and by the commands that time peers. */
#ifndef FP2_PEER_TIMING_H
#define FP2_PEER_TIMING_H

#include <cjson/cJSON.h>

#include "density.h"
#include "error.h"

#define PEERS_MAX 8

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

/* The peer's median against our times, the one rule the table and the row share: over total_ms
   (*vs_total, RATIO_TOTAL) when the peer is set against the whole pass, over nocorr_ms
   (*vs_nocorr, RATIO_NOCORR) when it computes our index's pairs or is set against our attention
   without correction. Returns which of the two apply; the other is NaN. */
enum { RATIO_TOTAL = 1, RATIO_NOCORR = 2 };
int peer_ratios(const peer_timing *t, double total_ms, double nocorr_ms, double *vs_total, double *vs_nocorr);

/* Adds the peer's fields to a result row: its times under its name, <name>_tflops,
   speedup_<name> (its median over total_ms or nocorr_ms, as t->versus says), for a peer on
   our index set against the total speedup_<name>_kernel (over nocorr_ms) too, and for
   counted pairs <name>_density. */
void peer_put(cJSON *row, const peer_timing *t, const density_stats *d, double total_ms, double nocorr_ms);

/* Adds peers_skipped to a result row: [{"peer", "why"}]. */
void peers_put_skipped(cJSON *row, const peer_skip *skipped, int nskipped);

/* Appends a skipped peer (the reason cut to 300 characters) and says so on stderr. */
void peers_skip(peer_skip *skipped, int *nskipped, const char *name, const char *why);

#endif
