#!/usr/bin/env bash
# Call 1 of the three-warp gather (issue 14), after `VARIANTS="HEAD G3" ../../chunk-stage-2026-12-04/build.sh`:
# G3 (HEAD with gather3.patch) gathers pages of 16 by cp.async in warp 0 and warps 2-3 of the
# producer warpgroup, without the pool's copy; HEAD copies pages of 16 in the pool. Written in
# the seventh session of 2026-12-05 and not run (no device was lent: seven starts refused).
# Gates: G3's paged, pooled-cache and kernel tests, its checks against the oracle with pages of
# 16 and 64, the sanitizers on its paged test (the binding's GPU test once landed: G3 changes
# fp2.py). Then BF16 speedup at 32K-128K: pages of 16 on both, contiguous on both, pages of 64 on G3; chunked at
# 128K in 8K chunks with pages of 16 and the pooled cache (which only G3 allows); 128K again,
# alternated. If G3 wins, land gather3.patch and make the records from the landed commit.
source results/h200/chunk-stage-2026-12-04/steps.sh
source results/h200/paged-attention-2026-12-05/steps.sh
G=.carry/d4/G3; GB=$G/fp2bench
step gpu_paged-G3 40 $G/gpu_paged
step gpu_pooled_cache-G3 40 $G/gpu_pooled_cache
step gpu_kernels-G3 40 $G/gpu_kernels
step check-paged16-G3 60 $GB check --backend gpu --rows 512 --kernel sm90 --paged 16 \
  --requests 1k,2x300/2k+77,640/4k+77,77
step check-paged16-g3-G3 60 $GB check --backend gpu --rows 256 --kernel sm90 --paged 16 --heads 24:8 --len 16k+77
step check-paged64-G3 60 $GB check --backend gpu --rows 256 --kernel sm90 --paged 64 --heads 24:8 --len 16k+77
ok=1
for t in gpu_paged-G3 gpu_pooled_cache-G3 check-paged16-G3 check-paged16-g3-G3; do
  grep -q "^$t rc=0" $W/steps.txt || ok=0
done
step memcheck-paged-G3 60 compute-sanitizer --tool memcheck --error-exitcode 9 $G/gpu_paged
step synccheck-paged-G3 60 compute-sanitizer --tool synccheck --error-exitcode 9 $G/gpu_paged
step racecheck-paged-G3 60 compute-sanitizer --tool racecheck --error-exitcode 9 $G/gpu_paged
if [ $ok = 1 ]; then
  S="speedup --backend gpu --peers none --dtype bf16 --len 32k,64k,128k"
  step speedup-HEAD-16-1 40 $HB $S --paged 16 --out $W/speedup-HEAD-16-1.json
  step speedup-G3-16-1 40 $GB $S --paged 16 --out $W/speedup-G3-16-1.json
  step speedup-HEAD-0-1 40 $HB $S --out $W/speedup-HEAD-0-1.json
  step speedup-G3-0-1 40 $GB $S --out $W/speedup-G3-0-1.json
  step speedup-G3-64-1 40 $GB $S --paged 64 --out $W/speedup-G3-64-1.json
  step chunked-G3-16 50 $GB chunked --backend gpu --len 128k --chunk 8k --paged 16 --out $W/chunked-G3-16.json
  S="speedup --backend gpu --peers none --dtype bf16 --len 128k"
  for r in 2 3; do
    for v in G3 HEAD; do step speedup-$v-16-$r 30 .carry/d4/$v/fp2bench $S --paged 16 --out $W/speedup-$v-16-$r.json; done
    step speedup-HEAD-0-$r 30 $HB $S --out $W/speedup-HEAD-0-$r.json
  done
fi
paged_finish
