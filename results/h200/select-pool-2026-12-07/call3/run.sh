#!/usr/bin/env bash
# Ran once, 2026-12-07, on an H100 (w-h100/: its logs and JSONs; kernels/NOTES.md, "W: the fresh blocks pooled inside the select by CTAs of their own", what it found).
# Branch w did not outlive its session: `VARIANTS="HEAD W W2 WD W2D" ../chunk-stage-2026-12-04/build.sh` rebuilds its builds from the patches here.
# Call 3 (2026-12-07, seventh session): W2 (c9bc8bb, branch w: W with a fresh task's rows found
# once when it is taken, and one atomic a ticket; call 2's timeline found W's pooling CTAs at
# 15 us a task) against HEAD (main, 1e31f3c). The carry: HEAD and P as
# `VARIANTS="HEAD P" ../chunk-stage-2026-12-04/build.sh` packs them, W2 built from c9bc8bb and
# W2D from it with ../timeline2.patch (the same prints as call 2's).
# On any card: W2's GPU tests and g = 3 check, memcheck and synccheck of its pooled-cache test,
# chunked at 128K in 8K chunks alternated HEAD W2 three times, pages of 64 once, and W2D's
# timeline of chunk 8 of 72K. On an H200 also main's records (HEAD's tests and checks,
# `chunked-128k.json` and `breakdown.json` into w/res, HEAD against P once each) and W2's
# `chunked-128k.json` into w/res-W2.
source results/h200/chunk-stage-2026-12-04/steps.sh
X=.carry/d4/W2
variant_gates W2 gpu_pooled_cache gpu_kernels gpu_paged gpu_forward_graph
sanitize_pooled W2
C="chunked --backend gpu --len 128k"
if passed gpu_pooled_cache-W2; then
  chunked_each HEAD W2 W2 HEAD HEAD W2
  step chunked64-W2-$SECONDS 50 $X/fp2bench $C --chunk 8k --paged 64 --out $W/chunked-p64W2-$SECONDS.json
  step timeline-W2D 40 .carry/d4/W2D/fp2bench chunked --backend gpu --len 72k --chunk 8k --trials 1
  mv $W/timeline-W2D.log $W/timeline.log
fi
h200_records W2 P HEAD
finish
