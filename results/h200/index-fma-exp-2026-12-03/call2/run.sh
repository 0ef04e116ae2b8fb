#!/usr/bin/env bash
# Call 2 (main with the amax v4): ncu's warp states and source counters of the FP8 select at
# 128K, for the next step; then the records: the perf baseline, reproduce-2 (FP8) and
# reproduce-1 (BF16, whose record was still dcfcd7f's). A record is copied out only when its
# step succeeded.
set -u
tar xJf .carry/s1/build.tar.xz
[ "$PWD" = /work/main ] || { mkdir -p /work; ln -sfn "$PWD" /work/main; }
export LD_LIBRARY_PATH=$PWD/.carry:/usr/local/cuda/lib64 FP2_EXPERIMENTS_DIR=$PWD/experiments \
  FP2_PLOTS_DIR=$PWD/plots FP2_PYTHON=$(command -v python3)
W=$OUT/w; mkdir -p $W
start=$SECONDS; deadline=575
step() { local name=$1 cap=$2; shift 2; local t0=$SECONDS l=$(( deadline - (SECONDS - start) ))
  [ $l -gt $cap ] && l=$cap; [ $l -lt 1 ] && l=1
  timeout "$l" "$@" > "$W/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s (at $((SECONDS - start))s)" | tee -a $W/steps.txt; return $rc; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > $W/gpu.txt 2>&1
step ncu-fp8-stalls 45 ncu --clock-control none -k regex:select_sm90_kernel --launch-count 1 --section WarpStateStats --section SchedulerStats --section SourceCounters build/fp2bench run --backend gpu --dtype fp8 --len 128k --rows 1 --trials 1
step baseline 60 bash results/refresh.sh baseline build results/h200 &&
  cp results/h200/baseline-speedup.json results/h200/regress-same.json results/h200/baseline.log $W/
step reproduce-2 270 bash results/refresh.sh reproduce-2 build results/h200 &&
  cp results/h200/speedup-llm-fp8.json results/h200/reproduce-2.log $W/
if [ $(( deadline - (SECONDS - start) )) -ge 200 ]; then
  step reproduce-1 240 bash results/refresh.sh reproduce-1 build results/h200 &&
    cp results/h200/speedup-llm-bf16.json results/h200/reproduce-1.log $W/
fi
cat $W/steps.txt
grep -E "Stall|Warp Cycles|Issued|Eligible|Active Warps" $W/ncu-fp8-stalls.log | head -30 | cut -c1-140
tail -3 $W/baseline.log 2>/dev/null | cut -c1-150; tail -4 $W/reproduce-2.log 2>/dev/null | cut -c1-150; tail -4 $W/reproduce-1.log 2>/dev/null | cut -c1-150
tar cJf $OUT/w.tar.xz -C $OUT w && rm -rf $W
