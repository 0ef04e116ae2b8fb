#!/usr/bin/env bash
# Call 2: the sm90 select's masked stages only where a row does not count a scored key (v5b:
# every full tile of g = 1, 2, 4, 8 lies inside one block, so its last stage needed no mask),
# and FP8's select on one accumulator at 4 CTAs per SM, 128 registers (v5ab = v5b + v5a),
# against dcfcd7f (base) in the same call: breakdown twice in alternating order, then on v5ab
# (the build's tests): gpu_kernels, the check grid, 128K FP8 and BF16, 16K/64K 32:8, memcheck,
# ncu of each select, and the select's SASS.
set -u
tar xJf .carry/s8/build.tar.xz
[ "$PWD" = /work/main ] || { mkdir -p /work; ln -sfn "$PWD" /work/main; }
export LD_LIBRARY_PATH=$PWD/.carry:/usr/local/cuda/lib64 FP2_EXPERIMENTS_DIR=$PWD/experiments \
  FP2_PLOTS_DIR=$PWD/plots FP2_PYTHON=$(command -v python3)
W=$OUT/w; mkdir -p $W
start=$SECONDS; bad=0
step() { local name=$1 cap=$2; shift 2; local t0=$SECONDS l=$(( 480 - (SECONDS - start) ))
  [ $l -gt $cap ] && l=$cap; [ $l -lt 1 ] && l=1
  timeout "$l" "$@" > "$W/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s (at $((SECONDS - start))s)" | tee -a $W/steps.txt; return $rc; }
S=.carry/s8; B=build/fp2bench
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > $W/gpu.txt 2>&1
step gpu-kernels 60 build/tests/gpu_kernels || bad=1
for round in 1 2; do
  order="base v5b v5ab"; [ $round = 2 ] && order="v5ab v5b base"
  for n in $order; do x=$S/$n-fp2bench; [ $n = v5ab ] && x=$B
    step bd-fp8-$n-$round 40 $x breakdown --backend gpu --dtype fp8 --len 32k,128k --trials 3 --out $W/bd-fp8-$n-$round.json; done
done
for n in base v5b; do x=$S/$n-fp2bench
  step bd-bf16-$n 40 $x breakdown --backend gpu --dtype bf16 --len 32k,128k --trials 3 --out $W/bd-bf16-$n.json; done
step gpu-check 120 bash tests/gpu_check.sh $B || bad=1
step check-128k 90 $B check --backend gpu --rows 128 --kernel sm90 --len 128k --data synth:llm --heads 8:8 || bad=1
step check-grid 90 $B check --backend gpu --rows 128 --kernel sm90 --len 16k,64k --heads 32:8 || bad=1
step san-memcheck 40 compute-sanitizer --tool memcheck --error-exitcode 1 $B check --backend gpu --kernel sm90 --dtype fp8 --len 2k+77 --batch 2 --heads 32:8 --rows 64 || bad=1
M=sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,gpu__time_duration.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem
for v in base:$S/base-fp2bench v5b:$S/v5b-fp2bench v5ab:$B; do n=${v%%:*}; x=${v#*:}
  for dt in fp8 bf16; do [ $n = v5ab ] && [ $dt = bf16 ] && continue
    step ncu-$dt-$n 40 ncu --clock-control none -k regex:select_sm90_kernel --launch-count 1 --metrics $M $x run --backend gpu --dtype $dt --len 128k --rows 1 --trials 1; done; done
cuobjdump -sass -fun select_sm90_kernel $B > $W/sass-v5ab.txt 2>&1; cuobjdump -sass -fun select_sm90_kernel $S/base-fp2bench > $W/sass-base.txt 2>&1
cat $W/steps.txt
tail -1 $W/gpu-kernels.log; tail -1 $W/gpu-check.log | cut -c1-120; tail -3 $W/check-128k.log | cut -c1-140; tail -1 $W/check-grid.log
grep -h "ERROR SUMMARY" $W/san-*.log
for f in $W/bd-*-*.log; do echo "== $(basename $f .log)"; grep -E "^ +(32768|131072) " $f | cut -c1-112; done
for f in $W/ncu-*.log; do echo "== $(basename $f .log)"; grep -E "sm__|smsp__|gpu__|launch__" $f | awk '{print $1, $(NF-1), $NF}'; done
tar cJf $OUT/w.tar.xz -C $OUT w && rm -rf $W
