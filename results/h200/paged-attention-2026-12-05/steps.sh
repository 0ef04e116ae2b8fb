# Sourced by call*/run.sh after ../chunk-stage-2026-12-04/steps.sh (step, $H, $W): HEAD's
# checks against the oracle with pages, and the times, M (main before the paged attention)
# and HEAD alternated, HEAD's speedup runs in both dtypes as the records.
M=.carry/d4/M/fp2bench HB=$H/fp2bench
paged_checks() {
  step check-paged16-sm90 60 $HB check --backend gpu --rows 512 --kernel sm90 --paged 16 --requests 1k,2x300/2k+77,640/4k+77,77
  step check-paged64-g3 60 $HB check --backend gpu --rows 256 --kernel sm90 --paged 64 --heads 24:8 --len 16k+77
  step check-paged256-portable 60 $HB check --backend gpu --rows 512 --kernel portable --paged 256 --len 2k+77 --batch 2 --heads 28:4
}
paged_times() {
  local S="speedup --backend gpu --peers none --len 32k,64k,128k"
  step speedup-M-16 60 $M $S --dtype bf16 --paged 16 --out $W/speedup-M-16.json
  step speedup-HEAD-16 80 $HB $S --dtype both --paged 16 --out $W/res/speedup-paged-16.json
  step speedup-M-0 60 $M $S --dtype bf16 --out $W/speedup-M-0.json
  step speedup-HEAD-0 80 $HB $S --dtype both --out $W/res/speedup-paged-contiguous.json
  step speedup-HEAD-64 80 $HB $S --dtype both --paged 64 --out $W/res/speedup-paged-64.json
  for v in M HEAD; do
    step breakdown-$v-16 30 .carry/d4/$v/fp2bench breakdown --backend gpu --dtype bf16 --len 128k --paged 16 --out $W/breakdown-$v-16.json
  done
  step breakdown-HEAD-0 30 $HB breakdown --backend gpu --dtype bf16 --len 128k --out $W/breakdown-HEAD-0.json
  for v in M HEAD; do
    step chunked-$v-64 50 .carry/d4/$v/fp2bench chunked --backend gpu --len 128k --chunk 8k --paged 64 --out $W/chunked-$v-64.json
  done
  step chunked-HEAD-0 45 $HB chunked --backend gpu --len 128k --chunk 8k --out $W/chunked-HEAD-0.json
}
# Calls 1 and 3: HEAD's GPU tests and checks, the checks with pages, the times if gpu_paged
# passed, memcheck of the two paged tests, the table.
paged_call() {
  head_checks
  paged_checks
  grep -q "^gpu_paged-HEAD rc=0" $W/steps.txt && paged_times
  step memcheck-paged-HEAD 60 compute-sanitizer --tool memcheck --error-exitcode 9 $H/gpu_paged
  step memcheck-pooled-HEAD 60 compute-sanitizer --tool memcheck --error-exitcode 9 $H/gpu_pooled_cache
  paged_finish
}
# The table printed last (verdicts, then summary.py), then $W packed for the fetch.
paged_finish() {
  verdicts
  python3 results/h200/paged-attention-2026-12-05/summary.py $W
  pack
}
