/* Attention peers timed beside our kernels in the same run, on the same inputs and index:
   cudnn (cuDNN's fused SDPA through its backend API, from C), and through experiments/peers.py
   torch (FlashAttention-2, cuDNN and FlexAttention through PyTorch), fpv2 (FlashPrefill V2's
   whole pass, and its attention alone on our index) and hpc (HPC-Ops' block-sparse FP8
   prefill on our index), the last two from the libraries users build. */
#ifndef FP2_PEERS_H
#define FP2_PEERS_H

#include "peer_timing.h"
#include "reference.h"

/* The names --peers takes, as peers.c's table lists them. */
#define PEERS_CHOICES "cudnn,torch,fpv2,hpc"
#define PEERS_DEFAULT "cudnn,torch"

/* Checks a comma-separated list of peer names ("none" for none). */
int peers_parse(const char *list, char *err);

/* A command's check of its --peers list: 0, or EXIT_USAGE after saying "<cmd>: --peers: why". */
int peers_check_option(const char *cmd, const char *list);

/* Times every peer of the list on the problem's operands (BF16; FP8 where the peer has it),
   after checking its output against the oracle. Peers that cannot run are listed in skipped
   with the reason. Returns the number of timings. */
int peers_run(const char *list, const problem *pb, const csr_index *idx, int trials, peer_timing *out,
              peer_skip *skipped, int *nskipped);

#endif
