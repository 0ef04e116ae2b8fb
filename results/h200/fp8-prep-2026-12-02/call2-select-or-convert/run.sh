#!/usr/bin/env bash
# Call 2: A = main (select converts Q, codes by multiply + FMA), B = Q converted by its own pass;
# both with the fused pool and one amax pass. Checks, then timed against main 4b2c4fc (base).
# (Rewritten from the script as it ran; .carry/s2 held A's build, B's fp2bench and gpu_kernels.)
set -u
tar xJf .carry/s2/build.tar.xz
[ "$PWD" = /work/main ] || { mkdir -p /work; ln -sfn "$PWD" /work/main; }
export LD_LIBRARY_PATH=$PWD/.carry:/usr/local/cuda/lib64 FP2_EXPERIMENTS_DIR=$PWD/experiments \
  FP2_PLOTS_DIR=$PWD/plots FP2_PYTHON=$(command -v python3)
W=$OUT/w; mkdir -p $W
start=$SECONDS
step() { local name=$1 cap=$2; shift 2; local t0=$SECONDS l=$(( 570 - (SECONDS - start) ))
  [ $l -gt $cap ] && l=$cap; [ $l -lt 1 ] && l=1
  timeout "$l" "$@" > "$W/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s (at $((SECONDS - start))s)" | tee -a $W/steps.txt; }
A=build/fp2bench; B=.carry/s2/b-fp2bench; O=.carry/s1/base-fp2bench
step gpu-kernels-a 40 build/tests/gpu_kernels
step gpu-kernels-b 40 .carry/s2/b-gpu_kernels
step check-a-fp8 40 $A check --backend gpu --rows 512 --kernel sm90 --dtype fp8 --len 1k,2k+77
step check-a-density 30 $A check --backend gpu --rows 512 --kernel sm90 --dtype fp8 --len 2k+77 --density 0.05
step check-b-fp8 40 $B check --backend gpu --rows 512 --kernel sm90 --dtype fp8 --len 2k+77
for bin in base:$O a:$A b:$B; do n=${bin%%:*}; x=${bin#*:}
  step bd-$n 40 $x breakdown --backend gpu --dtype fp8 --len 32k,128k --trials 3 --out $W/bd-$n.json; done
step bd-base-bf16 40 $O breakdown --backend gpu --dtype bf16 --len 32k,128k --trials 3 --out $W/bd-base-bf16.json
step bd-a-bf16 40 $A breakdown --backend gpu --dtype bf16 --len 32k,128k --trials 3 --out $W/bd-a-bf16.json
step bd-base-2 40 $O breakdown --backend gpu --dtype fp8 --len 32k,128k --trials 3 --out $W/bd-base-2.json
K='regex:pool_kernel|select_kernel|amax_kernel|convert_kernel|transpose_kernel|scales_kernel|quantize_kernel'
for bin in a:$A b:$B base:$O; do n=${bin%%:*}; x=${bin#*:}
  step ncu-$n 60 ncu --clock-control none --metrics gpu__time_duration.sum -k "$K" $x run --backend gpu --dtype fp8 --len 128k --rows 4 --trials 1; done
cat $W/steps.txt
tar cJf $OUT/w.tar.xz -C $OUT w && rm -rf $W
