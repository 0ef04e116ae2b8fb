/* Synthetic Q/K/V sources (DESIGN.md section 4). Values are rounded to bf16, as a model
   running in bf16 would hand them over.

   synth:random  i.i.d. standard normal: near-uniform attention, the worst case for
                 sparsity.
   synth:llm     a statistical model of post-RoPE attention in an LLM (see synth.c):
                 rotary local decay, attention sinks (dominant in half of the KV heads),
                 "vertical" heavy-hitter tokens, and relevant passages of text-like segments
                 whose salience is normal over a low exponential background. The number of
                 relevant passages grows as ln L (7.4 at 4K plus 9.23 ln(L / 4K), per head
                 x0.3..1.7), so the number of blocks within a factor 1/alpha of the best grows
                 slowly and the selected density falls roughly as 1/L, while the relevant
                 blocks run out a few logits below the best (the density grows ever more
                 slowly as alpha falls, as in Tab. 9). Queries beyond 4K gain
                 eta = ln(pos / 4K) on the relevant keys and widen the spread of their
                 salience by 1 + 0.3 ln(1 + eta) (log-length scaling); their sinks gain 4 eta
                 (6 eta in the sink-dominated heads), so that the mass outside the selection
                 does not grow with the context (synth.c says why it would). Calibrated to
                 (synth_llm_target; sources in synth.c and the README's Data section):
                 density 74 / 53 / 32.2 / 17.8 / 9 / 4.5% at 4K-128K (the paper's benchmark
                 targets), mass recall 0.80-0.85 at 16K-128K (MInference, XAttention), the
                 alpha slope of Tab. 9 at 64K, sink-dominated heads (Barbero et al.). What
                 version 4 reaches is in the README.
   synth:niah    synth:llm plus needles (short spans with a distinct key direction) and a
                 question at the end of the prompt whose rows look for them. */
#ifndef FP2_SYNTH_H
#define FP2_SYNTH_H

#include <stdint.h>

#include "problem.h"

typedef enum { SYNTH_RANDOM, SYNTH_LLM, SYNTH_NIAH } synth_kind;

/* The generator's version, recorded in the config of every result on synthetic data
   (config.synth_version; results that predate it are version 1), so that timings and
   metrics on different data are never compared as if they were the same. Version 3: fewer
   relevant passages, a flatter alpha slope, sinks that hold the recall up at 64K-128K.
   Version 4: relevant passages that grow as ln L instead of saturating, a salience spread
   that widens by 0.3 ln(1 + eta) (0.15 eta), sinks from lower logits at 4K with more gain. */
#define SYNTH_VERSION 4

/* What synth:llm is calibrated to at one length under the default shape and selection
   (32:8 heads, d = 128, block and tile 128, sink 2, window 4, recent 2; synth.c says where
   each number comes from): the selected density at the params' alpha and the range of the
   attention-mass recall, NaN where there is no target. */
typedef struct synth_target {
  double density, recall_min, recall_max;
} synth_target;

synth_target synth_llm_target(const fp2_params *p, int len);

/* What synth:llm is calibrated to and where each statistic comes from, as one Markdown
   sentence for reports (the same list as synth.c's header and the README's Data section). */
extern const char synth_llm_calibration[];

/* Fills pb->q, pb->k, pb->v (and pb->niah for SYNTH_NIAH) for every sequence.
   Returns 0, or -1 when the shape does not suit the model (err says why). */
int synth_fill(problem *pb, synth_kind kind, uint64_t seed, char *err);

#endif
