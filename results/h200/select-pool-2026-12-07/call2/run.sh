#!/usr/bin/env bash
# Ran once, 2026-12-07, on an H100 (w-h100/: its logs and JSONs; kernels/NOTES.md, "W: the fresh blocks pooled inside the select by CTAs of their own", what it found).
# Branch w did not outlive its session: `VARIANTS="HEAD W W2 WD W2D" ../chunk-stage-2026-12-04/build.sh` rebuilds its builds from the patches here.
# Call 2 (2026-12-07, seventh session). On any card: WD (W, fc7195a, with ../timeline.patch:
# each fresh-pooling CTA and each scoring CTA of the cached select of chunk 8 of 72K in 8K chunks
# prints its SM, its %globaltimer at start, at its fresh stage, after its wait and at its end,
# and what it pooled), one trial, into w/timeline.log. On an H200 also main's records, as
# ../../l2-policy-2026-12-07/call4/run.sh has them (HEAD's tests and checks, then
# `chunked-128k.json`, HEAD against P (e45e33e) alternated and `breakdown.json` into w/res).
source results/h200/chunk-stage-2026-12-04/steps.sh
step timeline-WD 40 .carry/d4/WD/fp2bench chunked --backend gpu --len 72k --chunk 8k --trials 1
mv $W/timeline-WD.log $W/timeline.log
case "$gpu" in *H200*)
  head_checks_for_records
  records P HEAD HEAD P ;;
esac
grep -c "^P " $W/timeline.log; grep -c "^S " $W/timeline.log
finish
