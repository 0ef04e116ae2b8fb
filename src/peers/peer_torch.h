/* The peers that experiments/peers.py runs through PyTorch on the inputs and index this run
   used: FlashAttention-2 and cuDNN through SDPA, FlexAttention over our own index, and the
   block-sparse libraries users build (FlashPrefill V2, HPC-Ops). fp2bench writes the inputs to
   a safetensors file, the script times every peer after checking its output, and its JSON
   comes back as timings and skips. */
#ifndef FP2_PEER_TORCH_H
#define FP2_PEER_TORCH_H

#include "peer_timing.h"
#include "reference.h"

/* Runs the script's peers (its names, comma-separated: fa2,sdpa_cudnn,flex,fpv2,fpv2_kernel,
   hpc); appends its timings to out (*nout) and its skips to skipped (*nskipped). When the
   script cannot run (no python3, no torch, no GPU for it), one skip under skip_name (our names
   of those peers) says why. */
void peer_torch_run(const problem *pb, const csr_index *idx, int trials, const char *script_peers,
                    const char *skip_name, peer_timing *out, int *nout, peer_skip *skipped, int *nskipped);

#endif
