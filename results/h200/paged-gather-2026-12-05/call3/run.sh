#!/usr/bin/env bash
# Call 3 (2026-12-06): G4 (gather3 and gather4.patch: all four producer warps gathering, warp 1 also
# planning; full barriers counting lanes, cp.async arriving with .noinc) against G3 (call 1, on
# an H100: 79 % of contiguous) and HEAD (the pool's copy). G4's gates and synccheck (G3's failed
# on its non-.noinc arrivals), BF16 speedup at 32K-128K, ncu of the attention at 32K (full set
# with source counters for the best gather, sections for HEAD contiguous), then HEAD's paged
# test under synccheck, which it had not run (racecheck left out: the session's device time).
source results/h200/chunk-stage-2026-12-04/steps.sh
G=.carry/d4/G4
step gpu_paged-G4 40 $G/gpu_paged
step gpu_pooled_cache-G4 40 $G/gpu_pooled_cache
step gpu_kernels-G4 40 $G/gpu_kernels
step check-paged16-G4 60 $G/fp2bench check --backend gpu --rows 512 --kernel sm90 --paged 16 \
  --requests 1k,2x300/2k+77,640/4k+77,77
step check-paged16-g3-G4 60 $G/fp2bench check --backend gpu --rows 256 --kernel sm90 --paged 16 --heads 24:8 --len 16k+77
step synccheck-paged-G4 60 compute-sanitizer --tool synccheck --error-exitcode 9 $G/gpu_paged
step memcheck-paged-G4 60 compute-sanitizer --tool memcheck --error-exitcode 9 $G/gpu_paged
best=G3; grep -q "^gpu_paged-G4 rc=0" $W/steps.txt && best=G4
S="speedup --backend gpu --peers none --dtype bf16 --len 32k,64k,128k"
for v in G4 G3 HEAD; do
  [ $v = G4 ] && [ $best = G3 ] && continue
  step speedup-$v-16 40 .carry/d4/$v/fp2bench $S --paged 16 --out $W/speedup-$v-16.json
done
step speedup-HEAD-0 40 $H/fp2bench $S --out $W/speedup-HEAD-0.json
R="run --backend gpu --dtype bf16 --len 32k --rows 1 --trials 1"
K="-k regex:attend_sm90_kernel --launch-skip 1 --launch-count 1"
step ncu-$best-16 90 ncu --clock-control none --set full --import-source yes $K -o $W/gather .carry/d4/$best/fp2bench $R --paged 16
step ncu-HEAD-0 45 ncu --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis \
  --section WarpStateStats --section SchedulerStats $K $H/fp2bench $R
step details-$best-16 30 ncu -i $W/gather.ncu-rep --page details
step source-$best-16 60 ncu -i $W/gather.ncu-rep --page source --csv --print-source cuda
rm -f $W/gather.ncu-rep
step synccheck-paged-HEAD 40 compute-sanitizer --tool synccheck --error-exitcode 9 $H/gpu_paged
cat $W/steps.txt
for f in $W/gpu_*.log $W/check-*.log $W/*check-paged-*.log; do
  [ -f $f ] && echo "$(basename $f .log): $(grep -E 'ERROR SUMMARY|ok|FAIL|fail|mismatch|cases' $f | tail -2 | tr '\n' ' ' | cut -c1-150)"
done
python3 results/h200/paged-attention-2026-12-05/summary.py $W
for f in $W/ncu-HEAD-0.log $W/details-*.log; do
  echo "== $(basename $f .log)"
  grep -E "Duration|DRAM Throughput|L2 Hit Rate|L1/TEX Hit|Compute \(SM\) Thr|Warp Cycles Per Issued|No Eligible|Registers Per" $f | head -12
done
tar cJf $OUT/w.tar.xz -C $OUT w && rm -rf $W
