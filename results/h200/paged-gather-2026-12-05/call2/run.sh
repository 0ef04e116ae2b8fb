#!/usr/bin/env bash
# Call 2: call 1 cut to what 250 s of device time hold, late in the session after six refused
# starts: G3's paged gates, then BF16 speedup with pages of 16 on G3 and HEAD, and contiguous.
source results/h200/chunk-stage-2026-12-04/steps.sh
source results/h200/paged-attention-2026-12-05/steps.sh
G=.carry/d4/G3; GB=$G/fp2bench
step gpu_paged-G3 40 $G/gpu_paged
step gpu_pooled_cache-G3 40 $G/gpu_pooled_cache
step check-paged16-G3 60 $GB check --backend gpu --rows 512 --kernel sm90 --paged 16 \
  --requests 1k,2x300/2k+77,640/4k+77,77
step memcheck-paged-G3 30 compute-sanitizer --tool memcheck --error-exitcode 9 $G/gpu_paged
S="speedup --backend gpu --peers none --dtype bf16 --len 32k,64k,128k"
step speedup-G3-16-1 40 $GB $S --paged 16 --out $W/speedup-G3-16-1.json
step speedup-HEAD-16-1 40 $HB $S --paged 16 --out $W/speedup-HEAD-16-1.json
step speedup-HEAD-0-1 40 $HB $S --out $W/speedup-HEAD-0-1.json
paged_finish
