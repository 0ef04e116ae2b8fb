#!/usr/bin/env bash
# Call 2: FP8's Q converted by the sm90 select as it stages its tiles (v4c, the convert pass
# gone), then one exponential in 8 (v4d) or in 4 (v4e) of an unmasked stage on the FMA pipe,
# against 3f58d66 (v4a) in the same call; gpu_kernels (v4d tree: codes written by the
# select, bit for bit); check at 16K/64K (v4d) and 128K (v4d, v4e); ncu of the selects.
set -u
tar xJf .carry/s7/build.tar.xz
[ "$PWD" = /work/main ] || { mkdir -p /work; ln -sfn "$PWD" /work/main; }
export LD_LIBRARY_PATH=$PWD/.carry:/usr/local/cuda/lib64 FP2_EXPERIMENTS_DIR=$PWD/experiments \
  FP2_PLOTS_DIR=$PWD/plots FP2_PYTHON=$(command -v python3)
W=$OUT/w; mkdir -p $W
start=$SECONDS; bad=0
step() { local name=$1 cap=$2; shift 2; local t0=$SECONDS l=$(( 570 - (SECONDS - start) ))
  [ $l -gt $cap ] && l=$cap; [ $l -lt 1 ] && l=1
  timeout "$l" "$@" > "$W/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s (at $((SECONDS - start))s)" | tee -a $W/steps.txt; return $rc; }
S=.carry/s7
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > $W/gpu.txt 2>&1
step gpu-kernels 60 build/tests/gpu_kernels || bad=1
for n in v4a v4c v4d v4e; do
  step bd-fp8-$n 40 $S/$n-fp2bench breakdown --backend gpu --dtype fp8 --len 32k,128k --trials 3 --out $W/bd-fp8-$n.json; done
for n in v4a v4d v4e; do
  step bd-bf16-$n 40 $S/$n-fp2bench breakdown --backend gpu --dtype bf16 --len 32k,128k --trials 3 --out $W/bd-bf16-$n.json; done
step check-16k-64k 120 $S/v4d-fp2bench check --backend gpu --rows 256 --kernel sm90 --len 16k,64k --heads 32:8 || bad=1
for n in v4d v4e; do
  step check-fp8-128k-$n 60 $S/$n-fp2bench check --backend gpu --rows 128 --kernel sm90 --dtype fp8 --len 128k --heads 8:8 || bad=1
  step check-bf16-128k-$n 60 $S/$n-fp2bench check --backend gpu --rows 128 --kernel sm90 --dtype bf16 --len 128k --heads 32:8 || bad=1
done
M=sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,gpu__time_duration.sum,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active
for n in v4c v4d v4e; do
  step ncu-fp8-$n 40 ncu --clock-control none -k regex:select_sm90_kernel --launch-count 1 --metrics $M \
    $S/$n-fp2bench run --backend gpu --dtype fp8 --len 128k --rows 1 --trials 1; done
step ncu-bf16-v4d 40 ncu --clock-control none -k regex:select_sm90_kernel --launch-count 1 --metrics $M \
    $S/v4d-fp2bench run --backend gpu --dtype bf16 --len 128k --rows 1 --trials 1
cat $W/steps.txt
tail -2 $W/gpu-kernels.log | cut -c1-160; grep -c "converting q" $W/gpu-kernels.log
for f in $W/check-*.log; do echo "== $(basename $f)"; grep -E "^ +[0-9]+ " $f | cut -c1-120; tail -1 $f; done
for dt in fp8 bf16; do for n in v4a v4c v4d v4e; do [ -f $W/bd-$dt-$n.log ] || continue; echo "== $dt $n"; grep -E "^ +(32768|131072) " $W/bd-$dt-$n.log | cut -c1-112; done; done
for f in $W/ncu-*.log; do echo "== $(basename $f)"; grep -E "sm__|smsp__|gpu__" $f | awk '{print $1, $(NF-1), $NF}'; done
tar cJf $OUT/w.tar.xz -C $OUT w && rm -rf $W
