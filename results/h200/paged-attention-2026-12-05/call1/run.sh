#!/usr/bin/env bash
# Call 1 of the paged attention (issue 14, 2026-12-05): HEAD = b768585 (BF16 attention reads
# the pages: sm90 one TMA box a page, portable through the table; no copy of K and V; the
# pooled cache takes pages) against M = b9b03d2 (the pool copies paged K and V contiguous for
# the attention), built by `VARIANTS="M HEAD" ../../chunk-stage-2026-12-04/build.sh`. In order
# of what each step decides: HEAD's GPU tests (gpu_paged: paged bit for bit against contiguous,
# the sm90 paged kernel included; gpu_pooled_cache: the cache with pages of 16 and 64) and
# checks against the oracle with pages; then, only if gpu_paged passed, the times (speedup
# BF16 32K-128K, M and HEAD alternated, HEAD's in both dtypes as the records; breakdown at
# 128K; chunked at 128K in 8K chunks with pages of 64, where HEAD adds the cache's rows; HEAD's
# contiguous chunked for the ratio on this card); memcheck last.
source results/h200/chunk-stage-2026-12-04/steps.sh
here=results/h200/paged-attention-2026-12-05
M=.carry/d4/M/fp2bench HB=$H/fp2bench
head_checks
step check-paged16-sm90 60 $HB check --backend gpu --rows 512 --kernel sm90 --paged 16 --requests 1k,2x300/2k+77,640/4k+77,77
step check-paged64-g3 60 $HB check --backend gpu --rows 256 --kernel sm90 --paged 64 --heads 24:8 --len 16k+77
step check-paged256-portable 60 $HB check --backend gpu --rows 512 --kernel portable --paged 256 --len 2k+77 --batch 2 --heads 28:4
if grep -q "^gpu_paged-HEAD rc=0" $W/steps.txt; then
  S="speedup --backend gpu --peers none --len 32k,64k,128k"
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
fi
step memcheck-paged-HEAD 60 compute-sanitizer --tool memcheck --error-exitcode 9 $H/gpu_paged
step memcheck-pooled-HEAD 60 compute-sanitizer --tool memcheck --error-exitcode 9 $H/gpu_pooled_cache
cat $W/steps.txt
for f in $W/gpu_*.log $W/check-*.log $W/memcheck-*.log; do
  [ -f $f ] && echo "$(basename $f .log): $(grep -E 'ERROR SUMMARY|ok|FAIL|fail|mismatch|flips|cases' $f | tail -2 | tr '\n' ' ' | cut -c1-160)"
done
python3 $here/summary.py $W
tar cJf $OUT/w.tar.xz -C $OUT w && rm -rf $W
