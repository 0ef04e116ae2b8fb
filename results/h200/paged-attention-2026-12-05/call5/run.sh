#!/usr/bin/env bash
# Call 5 of the paged attention (issue 14, sixth session of 2026-12-05): the page table read
# before the stage is free (HEAD) against the read after it (P = ba5bec3), and pages of 16 read
# by the attention (D16 = HEAD with FP2_ATTEND_PAGE_MIN 16) against the pool's copy (P), built by
# `VARIANTS="P D16 HEAD" ../../chunk-stage-2026-12-04/build.sh`. Gates: the paged tests of HEAD
# and D16 and their checks against the oracle; then BF16 speedup without peers, alternated, twice;
# chunked 128K in 8K chunks with pages of 64, P and HEAD; memcheck of D16's gpu_paged.
source results/h200/chunk-stage-2026-12-04/steps.sh
source results/h200/paged-attention-2026-12-05/steps.sh
D=.carry/d4/D16 P=.carry/d4/P
for v in HEAD D16; do
  step gpu_paged-$v 40 .carry/d4/$v/gpu_paged
  step gpu_pooled_cache-$v 40 .carry/d4/$v/gpu_pooled_cache
done
step gpu_kernels-HEAD 40 $H/gpu_kernels
step check-paged64-g3 60 $HB check --backend gpu --rows 256 --kernel sm90 --paged 64 --heads 24:8 --len 16k+77
step check-paged16-sm90-D16 60 $D/fp2bench check --backend gpu --rows 512 --kernel sm90 --paged 16 \
  --requests 1k,2x300/2k+77,640/4k+77,77
if grep -q "^gpu_paged-HEAD rc=0" $W/steps.txt && grep -q "^gpu_paged-D16 rc=0" $W/steps.txt; then
  S="speedup --backend gpu --peers none --len 32k,64k,128k --dtype bf16"
  for r in 1 2; do
    step speedup-P-0-$r 40 $P/fp2bench $S --out $W/speedup-P-0-$r.json
    step speedup-P-64-$r 40 $P/fp2bench $S --paged 64 --out $W/speedup-P-64-$r.json
    step speedup-HEAD-64-$r 40 $HB $S --paged 64 --out $W/speedup-HEAD-64-$r.json
    step speedup-P-16-$r 40 $P/fp2bench $S --paged 16 --out $W/speedup-P-16-$r.json
    step speedup-D16-16-$r 40 $D/fp2bench $S --paged 16 --out $W/speedup-D16-16-$r.json
    step speedup-HEAD-0-$r 40 $HB $S --out $W/speedup-HEAD-0-$r.json
  done
  for v in P HEAD; do
    step chunked-$v-64 50 .carry/d4/$v/fp2bench chunked --backend gpu --len 128k --chunk 8k --paged 64 \
      --out $W/chunked-$v-64.json
  done
fi
step memcheck-paged-D16 60 compute-sanitizer --tool memcheck --error-exitcode 9 $D/gpu_paged
paged_finish
