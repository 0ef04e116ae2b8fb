#!/usr/bin/env bash
# Call 5 (2026-12-05): the rest of LV's records once call 4 picks it (the same carry): the perf
# baseline with its regress against a fresh run (refresh.sh baseline), gpu_check.sh (every
# case), memcheck of gpu_pooled_cache and of a small sm90 check.
source results/h200/chunk-stage-2026-12-04/steps.sh
mkdir -p $W/res
B=.carry/d4/LV
step baseline 70 bash results/refresh.sh baseline $B $W/res
step gpu_check 200 bash tests/gpu_check.sh $B/fp2bench
step memcheck-cache 60 compute-sanitizer --tool memcheck --error-exitcode 9 $B/gpu_pooled_cache
step memcheck-check 90 compute-sanitizer --tool memcheck --error-exitcode 9 $B/fp2bench check --backend gpu --kernel sm90 --len 8k --heads 24:8 --dtype bf16 --rows 256
grep -hE "SLOWER|FASTER|SAME" $W/res/baseline.log | cut -c1-160 | tail -12
finish
