#!/usr/bin/env bash
# Call 1: the sm90 select's reference on a tile's first row (v4a) and, on top, the stage
# released without a barrier (v4ab), against eda2a9d (base) in the same call; the ex2 rates
# (is ex2.approx.f16x2 one packed MUFU op on sm_90?); gpu_kernels (v4ab, with the wide-logit
# case); check at 16K/64K/128K on v4ab; ncu of the three selects at 128K.
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
S=.carry/s7; BINS="base:$S/base-fp2bench v4a:$S/v4a-fp2bench v4ab:$S/v4ab-fp2bench"; B=$S/v4ab-fp2bench
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > $W/gpu.txt 2>&1
step ex2rate 20 $S/ex2rate
cuobjdump -sass $S/ex2rate | grep -oE "MUFU\.[A-Z0-9.]+" | sort | uniq -c > $W/ex2rate-mufu.txt 2>&1
step gpu-kernels 60 build/tests/gpu_kernels || bad=1
for dt in fp8 bf16; do for bin in $BINS; do n=${bin%%:*}; x=${bin#*:}
  step bd-$dt-$n 40 $x breakdown --backend gpu --dtype $dt --len 32k,128k --trials 3 --out $W/bd-$dt-$n.json; done; done
step check-16k-64k 120 $B check --backend gpu --rows 256 --kernel sm90 --len 16k,64k --heads 32:8 || bad=1
step check-fp8-128k 60 $B check --backend gpu --rows 128 --kernel sm90 --dtype fp8 --len 128k --data synth:llm --heads 8:8 || bad=1
step check-bf16-128k 60 $B check --backend gpu --rows 128 --kernel sm90 --dtype bf16 --len 128k --data synth:llm || bad=1
M=sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,gpu__time_duration.sum
for dt in fp8 bf16; do for bin in $BINS; do n=${bin%%:*}; x=${bin#*:}
  step ncu-$dt-$n 40 ncu --clock-control none -k regex:select_sm90_kernel --launch-count 1 --metrics $M \
    $x run --backend gpu --dtype $dt --len 128k --rows 1 --trials 1; done; done
cat $W/steps.txt
cat $W/ex2rate.log $W/ex2rate-mufu.txt
tail -2 $W/gpu-kernels.log | cut -c1-160
for f in check-16k-64k check-fp8-128k check-bf16-128k; do tail -1 $W/$f.log | cut -c1-140; done
for dt in bf16 fp8; do for n in base v4a v4ab; do echo "== $dt $n"; grep -E "^ +(32768|131072) " $W/bd-$dt-$n.log | cut -c1-112; done; done
for dt in fp8 bf16; do for n in base v4a v4ab; do echo "== ncu $dt $n"; grep -E "sm__|smsp__|gpu__" $W/ncu-$dt-$n.log | awk '{print $1, $(NF-1), $NF}'; done; done
tar cJf $OUT/w.tar.xz -C $OUT w && rm -rf $W
