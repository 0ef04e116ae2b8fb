#!/usr/bin/env bash
# Call 4 (2026-12-06): G5 (G4 with stages3.patch: three BF16 stages, contiguous too) against G4
# (call 3, H100: pages of 16 at 83-84 % of contiguous at 32K-64K) and HEAD: does the gather want
# a deeper pipeline? G5's gates, BF16 speedup (LENS, default 32K-128K), ncu's source counters
# per SASS instruction of the better gather's attention at 32K with pages of 16 (call 3's source
# page needed the patched tree, which the device does not have), then 128K twice more,
# alternated. Cut to what the session's last device time holds: DEADLINE short, the steps in
# the order they matter.
source results/h200/chunk-stage-2026-12-04/steps.sh
for t in gpu_paged gpu_kernels gpu_pooled_cache; do step $t-G5 40 .carry/d4/G5/$t; done
step check-paged16-G5 60 .carry/d4/G5/fp2bench check --backend gpu --rows 512 --kernel sm90 --paged 16 \
  --requests 1k,2x300/2k+77,640/4k+77,77
S="speedup --backend gpu --peers none --dtype bf16"
ok=0; grep -q "^gpu_paged-G5 rc=0" $W/steps.txt && grep -q "^gpu_kernels-G5 rc=0" $W/steps.txt && ok=1
for v in G5-16 G4-16 HEAD-0 G5-0; do
  b=${v%-*} pg=${v#*-}; [ $b = G5 ] && [ $ok = 0 ] && continue
  P=""; [ $pg = 16 ] && P="--paged 16"
  step speedup-$v 40 .carry/d4/$b/fp2bench $S --len ${LENS:-32k,64k,128k} $P --out $W/speedup-$v.json
done
best=G4; [ $ok = 1 ] && best=G5
R="run --backend gpu --dtype bf16 --len 32k --rows 1 --trials 1"
K="-k regex:attend_sm90_kernel --launch-skip 1 --launch-count 1"
N="ncu --clock-control none --section SourceCounters --section WarpStateStats $K"
step ncu-$best-16 60 $N -o $W/gather .carry/d4/$best/fp2bench $R --paged 16
step sass-$best-16 60 ncu -i $W/gather.ncu-rep --page source --csv --print-source sass
rm -f $W/*.ncu-rep
builds="G4-16 HEAD-0"; [ $best = G5 ] && builds="G5-16 $builds"
for r in 2 3; do
  for v in $builds; do
    b=${v%-*} pg=${v#*-}; P=""; [ $pg = 16 ] && P="--paged 16"
    step speedup-$v-$r 30 .carry/d4/$b/fp2bench $S --len 128k $P --out $W/speedup-$v-$r.json
  done
done
cat $W/steps.txt
for f in $W/gpu_*.log $W/check-*.log $W/synccheck-*.log; do
  [ -f $f ] && echo "$(basename $f .log): $(grep -E 'ERROR SUMMARY|ok|FAIL|fail|mismatch|cases' $f | tail -2 | tr '\n' ' ' | cut -c1-150)"
done
python3 results/h200/paged-attention-2026-12-05/summary.py $W
for f in $W/sass-*.log; do echo "== $(basename $f .log)"; python3 results/h200/paged-gather-2026-12-05/call4/stalls.py $f | head -32; done
tar cJf $OUT/w.tar.xz -C $OUT w && rm -rf $W
