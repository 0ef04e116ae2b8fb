#!/usr/bin/env bash
# Call 1: the select's warp skip past the last scored key (skip, c0bbdf7) and the quad sums of
# both keys in two shuffles with one lg2 (v2, the working tree on c0bbdf7) against main's
# a08cd1f (base) in the same call: breakdown twice in mirrored order, FP8 then BF16. Then
# three diagnostics of v2's FP8 select, not for landing (where its time goes): d1, the
# exponentials of the energies replaced by one FMA each; d2, Q's tile converted from constants
# (no load of bf16 Q, no write of its codes); d12, both. Then v2's checks (gpu_kernels, the
# check grid, 128K in both dtypes, memcheck) and ncu's source counters of its FP8 select.
set -u
tar xJf .carry/c1/build.tar.xz; tar xJf .carry/c1/variants.tar.xz -C .carry/c1
[ "$PWD" = /work/main ] || { mkdir -p /work; ln -sfn "$PWD" /work/main; }
export LD_LIBRARY_PATH=$PWD/.carry:/usr/local/cuda/lib64 FP2_EXPERIMENTS_DIR=$PWD/experiments \
  FP2_PLOTS_DIR=$PWD/plots FP2_PYTHON=$(command -v python3)
W=$OUT/w; mkdir -p $W
start=$SECONDS; deadline=570; bad=0
step() { local name=$1 cap=$2; shift 2; local t0=$SECONDS l=$(( deadline - (SECONDS - start) ))
  [ $l -gt $cap ] && l=$cap; [ $l -lt 1 ] && l=1
  timeout "$l" "$@" > "$W/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s (at $((SECONDS - start))s)" | tee -a $W/steps.txt; return $rc; }
declare -A BIN=([base]=.carry/c1/base/fp2bench [skip]=.carry/c1/skip/fp2bench [v2]=build/fp2bench
  [d1]=.carry/c1/d1/fp2bench [d2]=.carry/c1/d2/fp2bench [d12]=.carry/c1/d12/fp2bench)
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > $W/gpu.txt 2>&1
bd() { local dt=$1 n=$2 lens=$3 r=1; [ -e $W/bd-$dt-$n-1.json ] && r=2
  step bd-$dt-$n-$r 45 ${BIN[$n]} breakdown --backend gpu --dtype $dt --len $lens --trials 3 --out $W/bd-$dt-$n-$r.json; }
for n in base skip v2 v2 skip base; do bd fp8 $n 32k,128k; done
for n in d1 d2 d12; do bd fp8 $n 128k; done
for n in base v2 v2 base; do bd bf16 $n 32k,128k; done
X=build/fp2bench
step gpu-kernels 60 build/tests/gpu_kernels || bad=1
for dt in fp8 bf16; do
  step check-$dt-128k 60 $X check --backend gpu --rows 128 --kernel sm90 --dtype $dt --len 128k --data synth:llm --heads 8:8 || bad=1; done
step san-memcheck 40 compute-sanitizer --tool memcheck --error-exitcode 1 $X check --backend gpu --kernel sm90 --dtype fp8 --len 2k+77 --batch 2 --heads 24:8 --rows 64 || bad=1
step ncu-fp8 60 ncu --clock-control none -k regex:select_sm90_kernel --launch-count 1 --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section SourceCounters --section InstructionStats --metrics sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,launch__registers_per_thread -o $W/sel-fp8 $X run --backend gpu --dtype fp8 --len 128k --rows 1 --trials 1
step ncu-src 60 ncu -i $W/sel-fp8.ncu-rep --page source --csv --print-source sass
step gpu-check 150 bash tests/gpu_check.sh $X || bad=1
cat $W/steps.txt
tail -1 $W/gpu-kernels.log; tail -1 $W/gpu-check.log | cut -c1-120
for dt in fp8 bf16; do tail -2 $W/check-$dt-128k.log | cut -c1-140; done
grep -h "ERROR SUMMARY" $W/san-*.log
grep -E "Duration|pipe_|inst_executed.sum|registers|Eligible|Issued Warp" $W/ncu-fp8.log | cut -c1-120
for f in $W/bd-*-*.log; do echo "== $(basename $f .log)"; grep -E "^ +(32768|131072) " $f | cut -c1-112; done
rm -f $W/sel-fp8.ncu-rep; xz -9 $W/ncu-src.log 2>/dev/null
tar cJf $OUT/w.tar.xz -C $OUT w && rm -rf $W
