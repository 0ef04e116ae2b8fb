#!/usr/bin/env bash
# Call 4 of index v10 (run as: run.sh WINNER, call 3's): the winner's BF16 record
# (reproduce-1), the perf baseline, and check at 16K and 64K, 32:8, in both dtypes.
# Run with deadline=280 (the session had 322 s of device time left); the 64K BF16 check was cut.
set -u
[ -x .carry/d3/G/fp2bench ] || tar xJf .carry/d3/variants.tar.xz -C .carry/d3
[ "$PWD" = /work/main ] || { mkdir -p /work; ln -sfn "$PWD" /work/main; }
export LD_LIBRARY_PATH=$PWD/.carry:/usr/local/cuda/lib64 FP2_EXPERIMENTS_DIR=$PWD/experiments \
  FP2_PLOTS_DIR=$PWD/plots FP2_PYTHON=$(command -v python3)
W=$OUT/w; mkdir -p $W
start=$SECONDS; deadline=280; bad=0
step() { local name=$1 cap=$2; shift 2; local t0=$SECONDS l=$(( deadline - (SECONDS - start) ))
  [ $l -gt $cap ] && l=$cap; [ $l -lt 1 ] && l=1
  timeout "$l" "$@" > "$W/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s (at $((SECONDS - start))s)" | tee -a $W/steps.txt; return $rc; }
win=${1:?winner}; X=.carry/d3/$win/fp2bench
step reproduce-1 260 bash results/refresh.sh reproduce-1 .carry/d3/$win results/h200 &&
  cp results/h200/speedup-llm-bf16.json results/h200/reproduce-1.log results/h200/REPORT.md $W/
step baseline 40 bash results/refresh.sh baseline .carry/d3/$win results/h200 && cp results/h200/baseline-speedup.json results/h200/regress-same.json $W/
for dt in fp8 bf16; do
  step check-$dt-16k64k 60 $X check --backend gpu --rows 128 --kernel sm90 --dtype $dt --len 16k,64k --data synth:llm --heads 32:8; done
cat $W/steps.txt
for dt in fp8 bf16; do tail -3 $W/check-$dt-16k64k.log | cut -c1-140; done
tail -3 $W/reproduce-1.log 2>/dev/null | cut -c1-150; tail -5 $W/baseline.log | cut -c1-150
tar cJf $OUT/w.tar.xz -C $OUT w && rm -rf $W
