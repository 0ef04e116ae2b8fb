#!/usr/bin/env bash
# Call 6 (2026-12-06, second session), after
# `VARIANTS="HEAD G4 G6 G7" bash results/h200/chunk-stage-2026-12-04/build.sh`: G7 (G6 with the
# page table read an item ahead and the paged split 64 / 216) against G6, G4 and HEAD. Each
# build's local-memory instructions in the paged kernel (cuobjdump), G7's gates, BF16 speedup
# with pages of 16 at 32K-128K alternated three times, pages of 64 G7 against HEAD twice, and
# ncu's source counters of G7 (call4/stalls.py).
source results/h200/chunk-stage-2026-12-04/steps.sh
source results/h200/paged-attention-2026-12-05/steps.sh
source results/h200/paged-gather-2026-12-05/steps.sh
for v in G6 G7; do
  step sass-$v 30 sh -c "cuobjdump -sass .carry/d4/$v/libfp2.so | \
    awk '/Function :/ { on = /attend_sm90_kernelILb0ELb1E/ } on'"
  echo "$v paged BF16 kernel: $(grep -c 'LDGSTS' $W/sass-$v.log) LDGSTS, $(grep -cE 'STL|LDL' $W/sass-$v.log) LDL/STL" \
    | tee -a $W/sass.txt
  grep -B3 -A1 "LDGSTS.E.BYPASS.128" $W/sass-$v.log | head -40 > $W/ldgsts-$v.txt; xz $W/sass-$v.log
done
gather_gates G7
S="speedup --backend gpu --peers none --dtype bf16 --len ${LENS:-32k,64k,128k}"
if grep -q "^gpu_paged-G7 rc=0" $W/steps.txt; then
  for r in 1 2 3; do
    for v in G7 G6 G4; do step speedup-$v-16-$r 40 .carry/d4/$v/fp2bench $S --paged 16 --out $W/speedup-$v-16-$r.json; done
    step speedup-HEAD-0-$r 40 $H/fp2bench $S --out $W/speedup-HEAD-0-$r.json
  done
  for r in 1 2; do
    for v in G7 HEAD; do step speedup-$v-64-$r 40 .carry/d4/$v/fp2bench $S --paged 64 --out $W/speedup-$v-64-$r.json; done
  done
  step ncu-G7-16 60 ncu --clock-control none --section SourceCounters -k regex:attend_sm90_kernel --launch-skip 1 \
    --launch-count 1 -o $W/g7 .carry/d4/G7/fp2bench run --backend gpu --dtype bf16 --len 32k --rows 1 --trials 1 --paged 16
  step stalls-G7-16 60 sh -c "ncu -i $W/g7.ncu-rep --page source --csv --print-source sass > $W/sass-src-G7.csv && \
    python3 results/h200/paged-gather-2026-12-05/call4/stalls.py $W/sass-src-G7.csv"
  rm -f $W/g7.ncu-rep; xz $W/sass-src-G7.csv
fi
cat $W/sass.txt
head -30 $W/stalls-G7-16.log 2>/dev/null
paged_finish
