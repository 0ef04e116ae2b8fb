#!/usr/bin/env bash
# Call 2: the select's pipeline depth against the skip, in one call: 541b493 (base), skip
# (call 1), deep (BF16 3 stages at 2 CTAs/SM, FP8 6 stages, no skip), skip-deep; then ncu's
# stall reasons, per instruction, for skip and base.
set -u
[ "$PWD" = /work/main ] || { mkdir -p /work; ln -sfn "$PWD" /work/main; }
export LD_LIBRARY_PATH=$PWD/.carry:/usr/local/cuda/lib64 FP2_EXPERIMENTS_DIR=$PWD/experiments \
  FP2_PLOTS_DIR=$PWD/plots FP2_PYTHON=$(command -v python3)
W=$OUT/w; mkdir -p $W
start=$SECONDS
step() { local name=$1 cap=$2; shift 2; local t0=$SECONDS l=$(( 570 - (SECONDS - start) ))
  [ $l -gt $cap ] && l=$cap; [ $l -lt 1 ] && l=1
  timeout "$l" "$@" > "$W/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s (at $((SECONDS - start))s)" | tee -a $W/steps.txt; return $rc; }
S=.carry/s2; BINS="base:.carry/s1/base-fp2bench skip:$S/skip-fp2bench deep:$S/deep-fp2bench skipdeep:$S/skip-deep-fp2bench"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > $W/gpu.txt 2>&1
for dt in bf16 fp8; do for bin in $BINS; do n=${bin%%:*}; x=${bin#*:}
  step bd-$dt-$n 40 $x breakdown --backend gpu --dtype $dt --len 32k,128k --trials 3 --out $W/bd-$dt-$n.json; done; done
for bin in $BINS; do n=${bin%%:*}; x=${bin#*:}
  step bd-random-$n 40 $x breakdown --backend gpu --data synth:random --len 128k --trials 3 --out $W/bd-random-$n.json; done
M="regex:smsp__average_warps?_.*issue_stalled_.*_per_issue_active\.ratio"
for v in skip:bf16 skip:fp8 base:bf16; do n=${v%%:*}; dt=${v#*:}; x=$S/$n-fp2bench; [ $n = base ] && x=.carry/s1/base-fp2bench
  step ncu-$n-$dt 60 ncu --clock-control none -k regex:select_sm90_kernel --launch-count 1 --section WarpStateStats \
    --section SourceCounters --metrics "$M" -o $W/rep-$n-$dt $x run --backend gpu --dtype $dt --len 128k --rows 1 --trials 1
  step src-$n-$dt 60 bash -c "ncu -i $W/rep-$n-$dt.ncu-rep --page details --print-details all > $W/details-$n-$dt.txt; ncu -i $W/rep-$n-$dt.ncu-rep --page source --csv --print-source sass > $W/source-$n-$dt.csv"
done
cat $W/steps.txt
for dt in bf16 fp8 random; do for n in base skip deep skipdeep; do echo "== $dt $n"; grep -E "^ +(32768|131072) " $W/bd-$dt-$n.log | cut -c1-112; done; done
for v in skip-bf16 skip-fp8 base-bf16; do echo "== stalls $v"; grep -iE "stalled" $W/details-$v.txt | awk '{print $1, $NF}' | sort -k2 -gr | head -8; wc -l < $W/source-$v.csv; done
rm -f $W/*.ncu-rep; tar cJf $OUT/w.tar.xz -C $OUT w && rm -rf $W
