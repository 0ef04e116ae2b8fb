#!/usr/bin/env bash
# Ran once, 2026-12-07, on an H100 (w-h100/: its logs and JSONs; kernels/NOTES.md, "W: the fresh blocks pooled inside the select by CTAs of their own", what it found).
# Branch w did not outlive its session: `VARIANTS="HEAD W W2 WD W2D" ../chunk-stage-2026-12-04/build.sh` rebuilds its builds from the patches here.
# Call 1 (2026-12-07, seventh session): W (fc7195a, branch w: with a pooled cache, the sm90
# select's grid starts with one CTA an SM that pools the chunk's fresh blocks by cp.async while
# the other CTAs score the prefix; a scoring CTA waits only before its first fresh stage, pooling
# what is left itself) against HEAD (main, 1e31f3c) and P (e45e33e). The carry: HEAD and P as
# `VARIANTS="HEAD P" ../chunk-stage-2026-12-04/build.sh` packs them, W built from fc7195a.
# In order of what each step decides: the card; W's GPU tests (gpu_pooled_cache: the cached
# passes equal the uncached ones bit for bit, sm90 with pages of 64 and 128, g = 3 and 4) and
# checks; chunked at 128K in 8K chunks alternated HEAD W three times; pages of 64 and 16K chunks
# once each; memcheck and synccheck of W's pooled-cache test. On an H200 also the records of main
# (HEAD's checks, `chunked-128k.json` and `breakdown.json` into w/res) and W's `chunked-128k.json`
# into w/res-W, in case W lands.
source results/h200/chunk-stage-2026-12-04/steps.sh
X=.carry/d4/W
variant_gates W gpu_pooled_cache gpu_kernels gpu_paged gpu_forward_graph gpu_neighbour_nan
C="chunked --backend gpu --len 128k"
if passed gpu_pooled_cache-W; then
  chunked_each HEAD W W HEAD HEAD W
  step chunked64-W-$SECONDS 50 $X/fp2bench $C --chunk 8k --paged 64 --out $W/chunked-p64W-$SECONDS.json
  step chunked16k-W-$SECONDS 50 $X/fp2bench $C --chunk 16k --out $W/chunked-16kW-$SECONDS.json
fi
sanitize_pooled W
h200_records W
finish
