#!/usr/bin/env bash
# Call 3: v4f (6f54e50: Q converted in the sm90 select, codes by multiplication with the
# correctly rounded reciprocal) against 3f58d66 (v4a) in the same call; gpu_kernels (codes
# bit for bit against the host's new rule), the whole check grid, 128K FP8 g = 1, memcheck on
# the converting select, ncu; then, when every check passed, regress against the committed
# baseline, the perf baseline and reproduce-2 (speedup FP8).
set -u
tar xJf .carry/s7/build.tar.xz
[ "$PWD" = /work/main ] || { mkdir -p /work; ln -sfn "$PWD" /work/main; }
export LD_LIBRARY_PATH=$PWD/.carry:/usr/local/cuda/lib64 FP2_EXPERIMENTS_DIR=$PWD/experiments \
  FP2_PLOTS_DIR=$PWD/plots FP2_PYTHON=$(command -v python3)
W=$OUT/w; mkdir -p $W
start=$SECONDS; bad=0
step() { local name=$1 cap=$2; shift 2; local t0=$SECONDS l=$(( 575 - (SECONDS - start) ))
  [ $l -gt $cap ] && l=$cap; [ $l -lt 1 ] && l=1
  timeout "$l" "$@" > "$W/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s (at $((SECONDS - start))s)" | tee -a $W/steps.txt; return $rc; }
B=build/fp2bench; BINS="v4a:.carry/s7/v4a-fp2bench v4f:$B"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > $W/gpu.txt 2>&1
step gpu-kernels 60 build/tests/gpu_kernels || bad=1
for bin in $BINS; do n=${bin%%:*}; x=${bin#*:}
  step bd-fp8-$n 40 $x breakdown --backend gpu --dtype fp8 --len 32k,128k --trials 3 --out $W/bd-fp8-$n.json; done
step gpu-check 150 bash tests/gpu_check.sh $B || bad=1
step check-fp8-128k 60 $B check --backend gpu --rows 128 --kernel sm90 --dtype fp8 --len 128k --data synth:llm --heads 8:8 || bad=1
step san-memcheck 40 compute-sanitizer --tool memcheck --error-exitcode 1 $B check --backend gpu --kernel sm90 --dtype fp8 --len 2k+77 --batch 2 --heads 24:8 --rows 64 || bad=1
M=sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,gpu__time_duration.sum,smsp__issue_active.avg.pct_of_peak_sustained_active
step ncu-fp8-v4f 40 ncu --clock-control none -k regex:select_sm90_kernel --launch-count 1 --metrics $M $B run --backend gpu --dtype fp8 --len 128k --rows 1 --trials 1
if [ $bad = 0 ]; then
  step regress-old 40 $B regress --baseline results/h200/baseline-speedup.json --out $W/regress-old.json
  step baseline 60 bash results/refresh.sh baseline build results/h200
  step reproduce-2 300 bash results/refresh.sh reproduce-2 build results/h200
  cp results/h200/baseline-speedup.json results/h200/regress-same.json results/h200/baseline.log \
    results/h200/speedup-llm-fp8.json results/h200/reproduce-2.log results/h200/REPORT.md $W/ 2>/dev/null
fi
cat $W/steps.txt
tail -1 $W/gpu-kernels.log; tail -1 $W/gpu-check.log | cut -c1-120; tail -1 $W/check-fp8-128k.log
grep -h "ERROR SUMMARY" $W/san-*.log
for n in v4a v4f; do echo "== fp8 $n"; grep -E "^ +(32768|131072) " $W/bd-fp8-$n.log | cut -c1-112; done
grep -E "sm__|smsp__|gpu__" $W/ncu-fp8-v4f.log | awk '{print $1, $(NF-1), $NF}'
tail -6 $W/regress-old.log | cut -c1-150; tail -3 $W/baseline.log 2>/dev/null | cut -c1-150; tail -4 $W/reproduce-2.log 2>/dev/null | cut -c1-150
tar cJf $OUT/w.tar.xz -C $OUT w && rm -rf $W
