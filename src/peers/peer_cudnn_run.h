/* The cudnn peer: cuDNN's fused SDPA through its backend API, from C (peer_cudnn.h), on the
   problem's operands (BF16, or FP8 with the problem's scales). */
#ifndef FP2_PEER_CUDNN_RUN_H
#define FP2_PEER_CUDNN_RUN_H

#include "peer_timing.h"
#include "reference.h"

/* Checks cuDNN's output against the oracle on sampled rows, then times it `trials` times;
   appends the timing to out (*nout), or a skip saying why to skipped (*nskipped). */
void peer_cudnn_run(const problem *pb, int trials, peer_timing *out, int *nout, peer_skip *skipped, int *nskipped);

#endif
