/* The tensors of one forward pass in a safetensors file (fp2bench run --dump): the layout the
   README's run section and kernels/README.md give. */
#ifndef FP2_PASS_DUMP_H
#define FP2_PASS_DUMP_H

#include "pipeline_result.h"

/* Writes o, k_mean, v_mean, csr_offsets, csr_indices, and score when present, for the one
   sequence of pb. 0, or -1 with err. */
int pass_dump(const char *path, const problem *pb, const pipeline_result *r, char *err);

#endif
