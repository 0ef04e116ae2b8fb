#!/usr/bin/env bash
# Ran once, 2026-12-05, on an H100 (w/: its logs and JSONs; kernels/NOTES.md, "Call 7", what it found).
# Call 7 (2026-12-05): select v19 (HEAD = 96cbe66: BF16 releases a stage warp by warp, the last
# of four refilling it) against N (main's select before it, 3a44014), built by
# `VARIANTS="N HEAD" ../build.sh`. In order of what each step decides: HEAD's GPU tests and
# checks (hkv odd, g = 3), chunked at 128K in 8K chunks alternated N HEAD twice, synccheck and
# racecheck of the release, ncu (the one-pass select of both; HEAD's warp states at chunk 8 as
# call 6's), HEAD's records, and gpu_check.sh with what time is left.
source results/h200/chunk-stage-2026-12-04/steps.sh
head_checks
for v in N HEAD N HEAD; do
  step chunked-$v-$SECONDS 45 .carry/d4/$v/fp2bench chunked --backend gpu --len 128k --chunk 8k --out $W/chunked-$v-$SECONDS.json
done
step synccheck-HEAD 50 compute-sanitizer --tool synccheck --error-exitcode 9 $H/fp2bench check --backend gpu --kernel sm90 --dtype bf16 --heads 12:3 --len 12k+77 --rows 64
step racecheck-HEAD 50 compute-sanitizer --tool racecheck --error-exitcode 9 $H/fp2bench check --backend gpu --kernel sm90 --dtype bf16 --heads 12:3 --len 2k+77 --rows 256
ncu_one_pass N HEAD
step ncu-chunk8-HEAD 40 ncu --clock-control none --csv --page raw --section WarpStateStats -k regex:select_sm90_kernel \
  --launch-skip 52 --launch-count 1 --metrics $M $H/fp2bench chunked --backend gpu --len 72k --chunk 8k --trials 1
step chunked-128k 70 $H/fp2bench chunked --backend gpu --len 128k --chunk 8k,16k --out $W/res/chunked-128k.json
step chunked 50 $H/fp2bench chunked --backend gpu --out $W/res/chunked.json
step breakdown 40 $H/fp2bench breakdown --backend gpu --out $W/res/breakdown.json
step baseline 60 bash results/refresh.sh baseline $H $W/res
step gpu_check 200 bash tests/gpu_check.sh $H/fp2bench
finish
