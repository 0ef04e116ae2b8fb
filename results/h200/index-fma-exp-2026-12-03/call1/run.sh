#!/usr/bin/env bash
# Call 1: the amax with four loads in flight (p0: that alone), and the select taking every
# 8th (p8), 4th (p4) or 2nd (p2) row pair's exp2 of an unmasked half on the FMA pipe
# (ex2_poly.h), against main's 5d37a48 (base) in the same call: breakdown twice in mirrored
# order per dtype. Then for the FP8 winner by its 128K index (quantise + pool + select):
# gpu_kernels, the check grid, 128K checks in both dtypes, 16K/64K 32:8 FP8, memcheck, ncu
# of the selects (the winner's and base's FP8, the winner's BF16), and the SASS counts.
set -u
tar xJf .carry/s1/build.tar.xz; tar xJf .carry/s1/variants.tar.xz -C .carry/s1
[ "$PWD" = /work/main ] || { mkdir -p /work; ln -sfn "$PWD" /work/main; }
export LD_LIBRARY_PATH=$PWD/.carry:/usr/local/cuda/lib64 FP2_EXPERIMENTS_DIR=$PWD/experiments \
  FP2_PLOTS_DIR=$PWD/plots FP2_PYTHON=$(command -v python3)
W=$OUT/w; mkdir -p $W
start=$SECONDS; bad=0
step() { local name=$1 cap=$2; shift 2; local t0=$SECONDS l=$(( 560 - (SECONDS - start) ))
  [ $l -gt $cap ] && l=$cap; [ $l -lt 1 ] && l=1
  timeout "$l" "$@" > "$W/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s (at $((SECONDS - start))s)" | tee -a $W/steps.txt; return $rc; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > $W/gpu.txt 2>&1
bd() { local dt=$1 n=$2 r=1; [ -e $W/bd-$dt-$n-1.json ] && r=2
  step bd-$dt-$n-$r 40 .carry/s1/$n/fp2bench breakdown --backend gpu --dtype $dt --len 32k,128k --trials 3 --out $W/bd-$dt-$n-$r.json; }
for n in base p0 p8 p4 p2 p2 p4 p8 p0 base; do bd fp8 $n; done
for n in base p8 p4 p4 p8 base; do bd bf16 $n; done
win=$(python3 - "$W" <<'PY'
import json, sys
w = sys.argv[1]
def idx(n, r):
    row = json.load(open(f"{w}/bd-fp8-{n}-{r}.json"))["rows"][-1]
    return sum(row[k]["median_ms"] for k in ("quantise", "pool", "select"))
t = {n: idx(n, 1) + idx(n, 2) for n in ("p8", "p4", "p2")}
print(min(t, key=t.get))
PY
)
echo "faster: ${win:-none}" | tee -a $W/steps.txt
[ -n "$win" ] || win=p8
D=.carry/s1/$win; X=$D/fp2bench
step gpu-kernels 60 $D/gpu_kernels || bad=1
step gpu-check 180 bash tests/gpu_check.sh $X || bad=1
for dt in fp8 bf16; do
  step check-$dt-128k 60 $X check --backend gpu --rows 128 --kernel sm90 --dtype $dt --len 128k --data synth:llm --heads 8:8 || bad=1; done
step check-fp8-16k-64k 90 $X check --backend gpu --rows 64 --kernel sm90 --dtype fp8 --len 16k,64k --data synth:llm --heads 32:8 || bad=1
step san-memcheck 40 compute-sanitizer --tool memcheck --error-exitcode 1 $X check --backend gpu --kernel sm90 --dtype fp8 --len 2k+77 --batch 2 --heads 24:8 --rows 64 || bad=1
M=sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,gpu__time_duration.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread
for v in $win base; do
  step ncu-fp8-$v 40 ncu --clock-control none -k regex:select_sm90_kernel --launch-count 1 --metrics $M .carry/s1/$v/fp2bench run --backend gpu --dtype fp8 --len 128k --rows 1 --trials 1; done
step ncu-bf16-$win 40 ncu --clock-control none -k regex:select_sm90_kernel --launch-count 1 --metrics $M $X run --backend gpu --dtype bf16 --len 128k --rows 1 --trials 1
step ncu-amax-p0 40 ncu --clock-control none -k regex:amax_kernel --launch-count 3 --metrics gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed .carry/s1/p0/fp2bench run --backend gpu --dtype fp8 --len 128k --rows 1 --trials 1
step sass 30 bash -c "cuobjdump -sass -fun select_sm90_kernel $X | grep -oE '(MUFU\.EX2|FMNMX(\.NAN)?|LEA|FFMA)' | sort | uniq -c"
cat $W/steps.txt
tail -1 $W/gpu-kernels.log; tail -1 $W/gpu-check.log 2>/dev/null | cut -c1-120; for f in $W/check-*.log; do tail -2 $f | cut -c1-140; done
grep -h "ERROR SUMMARY" $W/san-*.log 2>/dev/null
for f in $W/bd-*-*.log; do echo "== $(basename $f .log)"; grep -E "^ +(32768|131072) " $f | cut -c1-112; done
for f in $W/ncu-*.log; do [ -e $f ] && { echo "== $(basename $f .log)"; grep -E "sm__|smsp__|gpu__|launch__|dram__" $f | awk '{print $1, $(NF-1), $NF}'; }; done
cat $W/sass.log
tar cJf $OUT/w.tar.xz -C $OUT w && rm -rf $W
