#!/usr/bin/env bash
# Call 1 of the three-warp gather (issue 14), after `VARIANTS="HEAD B" ../../chunk-stage-2026-12-04/build.sh`:
# HEAD (98a1fbd) gathers pages of 16 by cp.async in warp 0 and warps 2-3 of the producer warpgroup,
# without the pool's copy; B (7b54a38) is main before it, pages of 16 copied by the pool.
# Gates: HEAD's paged, pooled-cache and kernel tests, its checks against the oracle with pages of
# 16 and 64, the sanitizers on the paged tests, the binding's GPU test. Then the speedup runs:
# HEAD's in both dtypes as the records (contiguous, pages of 16, pages of 64), B's BF16 beside
# them; chunked at 128K in 8K chunks with pages of 16 and the pooled cache (which only HEAD
# allows); 128K again, alternated. The table printed last.
source results/h200/chunk-stage-2026-12-04/steps.sh
source results/h200/paged-attention-2026-12-05/steps.sh
B=.carry/d4/B/fp2bench
step gpu_paged-HEAD 40 $H/gpu_paged
step gpu_pooled_cache-HEAD 40 $H/gpu_pooled_cache
step gpu_kernels-HEAD 40 $H/gpu_kernels
step check-paged16-HEAD 60 $HB check --backend gpu --rows 512 --kernel sm90 --paged 16 \
  --requests 1k,2x300/2k+77,640/4k+77,77
step check-paged16-g3-HEAD 60 $HB check --backend gpu --rows 256 --kernel sm90 --paged 16 --heads 24:8 --len 16k+77
step check-paged64-HEAD 60 $HB check --backend gpu --rows 256 --kernel sm90 --paged 64 --heads 24:8 --len 16k+77
ok=1
for t in gpu_paged-HEAD gpu_pooled_cache-HEAD check-paged16-HEAD check-paged16-g3-HEAD; do
  grep -q "^$t rc=0" $W/steps.txt || ok=0
done
step memcheck-paged-HEAD 60 compute-sanitizer --tool memcheck --error-exitcode 9 $H/gpu_paged
step synccheck-paged-HEAD 60 compute-sanitizer --tool synccheck --error-exitcode 9 $H/gpu_paged
step racecheck-paged-HEAD 60 compute-sanitizer --tool racecheck --error-exitcode 9 $H/gpu_paged
step gpu_binding-HEAD 90 env FP2_LIB=$H/libfp2.so python3 tests/gpu_binding.py
if [ $ok = 1 ]; then
  S="speedup --backend gpu --peers none --len 32k,64k,128k"
  step speedup-B-16-1 40 $B $S --dtype bf16 --paged 16 --out $W/speedup-B-16-1.json
  step speedup-HEAD-16 80 $HB $S --dtype both --paged 16 --out $W/res/speedup-paged-16.json
  step speedup-B-0-1 40 $B $S --dtype bf16 --out $W/speedup-B-0-1.json
  step speedup-HEAD-0 80 $HB $S --dtype both --out $W/res/speedup-paged-contiguous.json
  step chunked-HEAD-16 50 $HB chunked --backend gpu --len 128k --chunk 8k --paged 16 --out $W/chunked-HEAD-16.json
  step speedup-HEAD-64 80 $HB $S --dtype both --paged 64 --out $W/res/speedup-paged-64.json
  S="speedup --backend gpu --peers none --dtype bf16 --len 128k"
  for r in 2 3; do
    step speedup-HEAD-16-$r 30 $HB $S --paged 16 --out $W/speedup-HEAD-16-$r.json
    step speedup-B-16-$r 30 $B $S --paged 16 --out $W/speedup-B-16-$r.json
    step speedup-HEAD-0-$r 30 $HB $S --out $W/speedup-HEAD-0-$r.json
  done
fi
paged_finish
