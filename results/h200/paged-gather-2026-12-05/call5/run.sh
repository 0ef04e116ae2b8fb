#!/usr/bin/env bash
# Call 5, for the next session (written 2026-12-06, not run), after
# `VARIANTS="HEAD G4 G6" bash results/h200/chunk-stage-2026-12-04/build.sh`: G6 (each copy's
# source address in its own register) against G4 and HEAD. Whether the SASS did what the
# source asks (cuobjdump: the LDGSTS of the paged kernel and the adds between them), G6's gates,
# BF16 speedup at 32K-128K alternated three times, ncu's source counters of G6 (call4/stalls.py).
source results/h200/chunk-stage-2026-12-04/steps.sh
source results/h200/paged-attention-2026-12-05/steps.sh
source results/h200/paged-gather-2026-12-05/steps.sh
G=.carry/d4/G6
step sass-G6 30 cuobjdump -sass $G/libfp2.so
grep -B2 -A1 "LDGSTS.E.BYPASS.128 desc" $W/sass-G6.log | head -60 > $W/ldgsts-G6.txt; rm -f $W/sass-G6.log
gather_gates G6
S="speedup --backend gpu --peers none --dtype bf16 --len ${LENS:-32k,64k,128k}"
if grep -q "^gpu_paged-G6 rc=0" $W/steps.txt; then
  for r in 1 2 3; do
    step speedup-G6-16-$r 40 $G/fp2bench $S --paged 16 --out $W/speedup-G6-16-$r.json
    step speedup-G4-16-$r 40 .carry/d4/G4/fp2bench $S --paged 16 --out $W/speedup-G4-16-$r.json
    step speedup-HEAD-0-$r 40 $H/fp2bench $S --out $W/speedup-HEAD-0-$r.json
  done
  step ncu-G6-16 60 ncu --clock-control none --section SourceCounters -k regex:attend_sm90_kernel --launch-skip 1 \
    --launch-count 1 -o $W/g6 $G/fp2bench run --backend gpu --dtype bf16 --len 32k --rows 1 --trials 1 --paged 16
  step stalls-G6-16 60 sh -c "ncu -i $W/g6.ncu-rep --page source --csv --print-source sass > $W/sass-src-G6.csv && \
    python3 results/h200/paged-gather-2026-12-05/call4/stalls.py $W/sass-src-G6.csv"
  rm -f $W/g6.ncu-rep
fi
head -24 $W/ldgsts-G6.txt
head -30 $W/stalls-G6-16.log 2>/dev/null
paged_finish
