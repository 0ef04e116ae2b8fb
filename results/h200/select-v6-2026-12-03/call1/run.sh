#!/usr/bin/env bash
# Call 1: select v6 (99c98de: a stage as two half-tile products, one half's product under the
# other's exponentials) against 90ab75b (v5) in the same call, breakdown twice in alternating
# order in each dtype; then for v6 gpu_kernels, the check grid, 128K checks in both dtypes,
# memcheck of an FP8 g = 3 batch, and ncu of both selects at 128K.
set -u
tar xJf .carry/s1/build.tar.xz  # and .carry/s1/v5 (90ab75b: fp2bench, tests/gpu_kernels)
[ "$PWD" = /work/main ] || { mkdir -p /work; ln -sfn "$PWD" /work/main; }
export LD_LIBRARY_PATH=$PWD/.carry:/usr/local/cuda/lib64 FP2_EXPERIMENTS_DIR=$PWD/experiments \
  FP2_PLOTS_DIR=$PWD/plots FP2_PYTHON=$(command -v python3)
W=$OUT/w; mkdir -p $W
start=$SECONDS; bad=0
step() { local name=$1 cap=$2; shift 2; local t0=$SECONDS l=$(( 540 - (SECONDS - start) ))
  [ $l -gt $cap ] && l=$cap; [ $l -lt 1 ] && l=1
  timeout "$l" "$@" > "$W/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s (at $((SECONDS - start))s)" | tee -a $W/steps.txt; return $rc; }
declare -A DIR=([v5]=.carry/s1/v5 [v6]=build)
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > $W/gpu.txt 2>&1
for dt in fp8 bf16; do for n in v5 v6 v6 v5; do r=1; [ -e $W/bd-$dt-$n-1.json ] && r=2
  step bd-$dt-$n-$r 40 ${DIR[$n]}/fp2bench breakdown --backend gpu --dtype $dt --len 32k,128k --trials 3 --out $W/bd-$dt-$n-$r.json; done; done
X=build/fp2bench
step gpu-kernels 60 build/tests/gpu_kernels || bad=1
step gpu-check 130 bash tests/gpu_check.sh $X || bad=1
for dt in fp8 bf16; do
  step check-$dt-128k 60 $X check --backend gpu --rows 128 --kernel sm90 --dtype $dt --len 128k --data synth:llm --heads 8:8 || bad=1; done
step san-memcheck 40 compute-sanitizer --tool memcheck --error-exitcode 1 $X check --backend gpu --kernel sm90 --dtype fp8 --len 2k+77 --batch 2 --heads 24:8 --rows 64 || bad=1
M=sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,gpu__time_duration.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem
for dt in fp8 bf16; do
  step ncu-$dt-v6 40 ncu --clock-control none -k regex:select_sm90_kernel --launch-count 1 --metrics $M $X run --backend gpu --dtype $dt --len 128k --rows 1 --trials 1; done
cat $W/steps.txt
tail -1 $W/gpu-kernels.log; tail -1 $W/gpu-check.log 2>/dev/null | cut -c1-120; for f in $W/check-*-128k.log; do tail -2 $f | cut -c1-140; done
grep -h "ERROR SUMMARY" $W/san-*.log 2>/dev/null
for f in $W/bd-*-*.log; do echo "== $(basename $f .log)"; grep -E "^ +(32768|131072) " $f | cut -c1-112; done
for f in $W/ncu-*.log; do [ -e $f ] && { echo "== $(basename $f .log)"; grep -E "sm__|smsp__|gpu__|launch__" $f | awk '{print $1, $(NF-1), $NF}'; }; done
tar cJf $OUT/w.tar.xz -C $OUT w && rm -rf $W
