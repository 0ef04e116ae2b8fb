#!/usr/bin/env bash
# Call 3 (2026-12-07, fifth session): E3 (../chunk-stage-2026-12-04/build.sh: the select's Q evict-first
# on its cp.async path, g not dividing 128, and in FP8's conversion too) against HEAD (main,
# cfa9141: Q evict-first on the TMA path only), and on an H200 first the records call 2 could
# not write (P = e45e33e against HEAD). Built by `VARIANTS="HEAD P E3"
# results/h200/chunk-stage-2026-12-04/build.sh`.
# - On an H200: HEAD's checks, `chunked-128k.json` (8K and 16K chunks), P HEAD alternated in
#   8K chunks (mirrored), `breakdown.json` (HEAD, BF16), then what any card runs.
# - On any card: E3's GPU tests and checks (28:4, g = 7: Q by cp.async; FP8 at 32:8 and 28:4),
#   memcheck of E3's pooled-cache test, `chunked` at 128K in 8K chunks with 28:4 alternated
#   HEAD E3 (mirrored), `breakdown --dtype fp8` for both.
source results/h200/chunk-stage-2026-12-04/steps.sh
E=.carry/d4/E3
case "$gpu" in *H200*)
  head_checks_for_records
  records P HEAD HEAD P ;;
esac
for t in gpu_kernels gpu_pooled_cache gpu_paged gpu_forward_graph gpu_neighbour_nan; do step $t-E3 40 $E/$t; done
step check-g7-E3 60 $E/fp2bench check --backend gpu --kernel sm90 --dtype bf16 --heads 28:4 --len 16k --rows 256
step check-fp8-E3 60 $E/fp2bench check --backend gpu --kernel sm90 --dtype fp8 --len 16k --rows 256
step check-fp8-g7-E3 60 $E/fp2bench check --backend gpu --kernel sm90 --dtype fp8 --heads 28:4 --len 13k+77 --rows 256
step memcheck-pooled-E3 90 compute-sanitizer --tool memcheck $E/gpu_pooled_cache
if passed gpu_pooled_cache-E3 check-g7-E3; then
  for v in HEAD E3 E3 HEAD HEAD E3; do
    step chunked-$v-$SECONDS 50 .carry/d4/$v/fp2bench chunked --backend gpu --heads 28:4 --len 128k --chunk 8k \
      --out $W/chunked-$v-$SECONDS.json
  done
fi
if passed check-fp8-E3; then
  for v in HEAD E3; do
    step breakdown-fp8-$v 40 .carry/d4/$v/fp2bench breakdown --backend gpu --dtype fp8 --out $W/breakdown-fp8-$v.json
  done
fi
breakdowns_side_by_side breakdown-fp8 HEAD E3
finish
cat $OUT/breakdown.txt
