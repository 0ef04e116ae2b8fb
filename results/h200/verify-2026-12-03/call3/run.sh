#!/usr/bin/env bash
# Call 3: FP8's select on one accumulator at 4 CTAs per SM (v5a, 495da97) against 897da3a
# (v5b, the mask only where needed) in the same call, breakdown twice in alternating order;
# the faster one's gpu_kernels, and for v5a (not yet checked) the check grid, 128K FP8,
# memcheck and ncu; then the perf baseline and reproduce-2 (speedup FP8) with the faster one.
set -u
tar xJf .carry/s8/build.tar.xz
[ "$PWD" = /work/main ] || { mkdir -p /work; ln -sfn "$PWD" /work/main; }
export LD_LIBRARY_PATH=$PWD/.carry:/usr/local/cuda/lib64 FP2_EXPERIMENTS_DIR=$PWD/experiments \
  FP2_PLOTS_DIR=$PWD/plots FP2_PYTHON=$(command -v python3)
W=$OUT/w; mkdir -p $W
start=$SECONDS; bad=0
step() { local name=$1 cap=$2; shift 2; local t0=$SECONDS l=$(( 520 - (SECONDS - start) ))
  [ $l -gt $cap ] && l=$cap; [ $l -lt 1 ] && l=1
  timeout "$l" "$@" > "$W/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s (at $((SECONDS - start))s)" | tee -a $W/steps.txt; return $rc; }
declare -A DIR=([v5b]=.carry/s8/v5b [v5a]=build)
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > $W/gpu.txt 2>&1
for n in v5b v5a v5a v5b; do r=1; [ -e $W/bd-fp8-$n-1.json ] && r=2
  step bd-fp8-$n-$r 40 ${DIR[$n]}/fp2bench breakdown --backend gpu --dtype fp8 --len 32k,128k --trials 3 --out $W/bd-fp8-$n-$r.json; done
win=$(python3 - "$W" <<'PY'
import json, sys
w = sys.argv[1]
t = {n: sum(json.load(open(f"{w}/bd-fp8-{n}-{r}.json"))["rows"][-1]["select"]["median_ms"] for r in (1, 2)) for n in ("v5b", "v5a")}
print("v5a" if t["v5a"] < t["v5b"] else "v5b")
PY
)
echo "faster: ${win:-none}" | tee -a $W/steps.txt
[ -n "$win" ] || exit 1
X=${DIR[$win]}/fp2bench
step gpu-kernels 60 ${DIR[$win]}/tests/gpu_kernels || bad=1
if [ $win = v5a ]; then
  step gpu-check 130 bash tests/gpu_check.sh $X || bad=1
  step check-fp8-128k 60 $X check --backend gpu --rows 128 --kernel sm90 --dtype fp8 --len 128k --data synth:llm --heads 8:8 || bad=1
  step san-memcheck 40 compute-sanitizer --tool memcheck --error-exitcode 1 $X check --backend gpu --kernel sm90 --dtype fp8 --len 2k+77 --batch 2 --heads 24:8 --rows 64 || bad=1
  M=sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,gpu__time_duration.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem
  step ncu-fp8-v5a 40 ncu --clock-control none -k regex:select_sm90_kernel --launch-count 1 --metrics $M $X run --backend gpu --dtype fp8 --len 128k --rows 1 --trials 1
fi
if [ $bad = 0 ]; then
  step baseline 60 bash results/refresh.sh baseline ${DIR[$win]} results/h200
  step reproduce-2 300 bash results/refresh.sh reproduce-2 ${DIR[$win]} results/h200
  cp results/h200/baseline-speedup.json results/h200/regress-same.json results/h200/baseline.log \
    results/h200/speedup-llm-fp8.json results/h200/reproduce-2.log results/h200/REPORT.md $W/ 2>/dev/null
fi
cat $W/steps.txt
tail -1 $W/gpu-kernels.log; tail -1 $W/gpu-check.log 2>/dev/null | cut -c1-120; tail -2 $W/check-fp8-128k.log 2>/dev/null | cut -c1-140
grep -h "ERROR SUMMARY" $W/san-*.log 2>/dev/null
for f in $W/bd-*-*.log; do echo "== $(basename $f .log)"; grep -E "^ +(32768|131072) " $f | cut -c1-112; done
for f in $W/ncu-*.log; do [ -e $f ] && { echo "== $(basename $f .log)"; grep -E "sm__|smsp__|gpu__|launch__" $f | awk '{print $1, $(NF-1), $NF}'; }; done
tail -3 $W/baseline.log 2>/dev/null | cut -c1-150; tail -3 $W/reproduce-2.log 2>/dev/null | cut -c1-150
tar cJf $OUT/w.tar.xz -C $OUT w && rm -rf $W
