/* The torch peers (FlashAttention-2 and cuDNN through SDPA, FlexAttention over our own block
   index), run by experiments/peers.py on the inputs and index this run used: fp2bench writes
   them to a safetensors file, the script times every peer after checking its output, and its
   JSON comes back as timings and skips. */
#ifndef FP2_PEER_TORCH_H
#define FP2_PEER_TORCH_H

#include "peers.h"

/* Appends the script's timings to out (*nout) and its skips to skipped (*nskipped). When the
   script cannot run (no python3, no torch, no GPU for it), one skip names the reason. */
void peer_torch_run(const problem *pb, const csr_index *idx, int trials, peer_timing *out, int *nout,
                    peer_skip *skipped, int *nskipped);

#endif
