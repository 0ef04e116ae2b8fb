#!/usr/bin/env bash
# Call 2 (2026-12-07, fourth session): main with the select's Q read evict-first (HEAD, b23e871)
# against main before it (P, e45e33e), built by `VARIANTS="HEAD P"
# results/h200/chunk-stage-2026-12-04/build.sh`. On any card: HEAD's GPU tests and checks (g = 3:
# Q by cp.async; g = 4: by TMA, the hinted load); `chunked` at 128K in 8K chunks alternated P HEAD
# three times (mirrored); `breakdown` at 4K-128K in BF16 for both (at 4K-8K Q fits in L2, and the
# attention read it from there after the select; evict-first may lose that). On an H200 only, the
# records: `chunked-128k.json` (8K and 16K chunks) before the comparisons, `breakdown.json`
# (HEAD's breakdown) after them.
source results/h200/chunk-stage-2026-12-04/steps.sh
head_checks_for_records
if passed gpu_pooled_cache-HEAD check-g4-HEAD; then
  case "$gpu" in *H200*) # the record first, in case the device time ends during the comparisons
    step chunked-128k 60 $H/fp2bench chunked --backend gpu --len 128k --chunk 8k,16k --out $W/res/chunked-128k.json ;;
  esac
  chunked_each P HEAD HEAD P P HEAD
  for v in P HEAD; do
    step breakdown-$v 40 .carry/d4/$v/fp2bench breakdown --backend gpu --dtype bf16 --out $W/breakdown-$v.json
  done
  case "$gpu" in *H200*) cp $W/breakdown-HEAD.json $W/res/breakdown.json ;; esac
fi
breakdowns_side_by_side breakdown P HEAD
finish
cat $OUT/breakdown.txt
