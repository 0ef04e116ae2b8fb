#!/usr/bin/env bash
# Call 1: the fused FP8 preprocessing (scales in one amax pass, K/V codes written by the pool,
# Q's by the select) checked, then timed against main 4b2c4fc in the same call.
set -u
tar xJf .carry/s1/build.tar.xz
[ "$PWD" = /work/main ] || { mkdir -p /work; ln -sfn "$PWD" /work/main; }
export LD_LIBRARY_PATH=$PWD/.carry:/usr/local/cuda/lib64 FP2_EXPERIMENTS_DIR=$PWD/experiments \
  FP2_PLOTS_DIR=$PWD/plots FP2_PYTHON=$(command -v python3)
W=$OUT/w; mkdir -p $W
start=$SECONDS
step() { local name=$1 cap=$2; shift 2; local t0=$SECONDS l=$(( 570 - (SECONDS - start) ))
  [ $l -gt $cap ] && l=$cap; [ $l -lt 1 ] && l=1
  timeout "$l" "$@" > "$W/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s (at $((SECONDS - start))s)" | tee -a $W/steps.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/gpu.txt 2>&1
B=build/fp2bench; O=.carry/s1/base-fp2bench
step gpu-kernels 40 build/tests/gpu_kernels
step check-fp8-sm90 60 $B check --backend gpu --rows 512 --kernel sm90 --dtype fp8 --len 1k,2k+77,16k
step check-fp8-density 30 $B check --backend gpu --rows 512 --kernel sm90 --dtype fp8 --len 2k+77 --density 0.05
step check-bf16-sm90 40 $B check --backend gpu --rows 512 --kernel sm90 --dtype bf16 --len 1k,2k+77
step check-dim64 40 $B check --backend gpu --rows 512 --kernel portable --dim 64 --len 2k+77
step check-batch2-fp8 30 $B check --backend gpu --rows 512 --kernel sm90 --dtype fp8 --len 2k+77 --batch 2 --heads 24:8
step time-base-1 60 $O speedup --dtype both --len 32k,128k --peers none --trials 5 --out $W/time-base-1.json
step time-new-1 60 $B speedup --dtype both --len 32k,128k --peers none --trials 5 --out $W/time-new-1.json
step bd-base 60 $O breakdown --backend gpu --dtype fp8 --len 32k,128k --trials 3 --out $W/bd-base.json
step bd-new 60 $B breakdown --backend gpu --dtype fp8 --len 32k,128k --trials 3 --out $W/bd-new.json
step time-base-2 60 $O speedup --dtype both --len 32k,128k --peers none --trials 5 --out $W/time-base-2.json
cat $W/steps.txt
for f in check-fp8-sm90 check-fp8-density check-bf16-sm90 check-dim64 check-batch2-fp8; do tail -1 $W/$f.log | cut -c1-160; done
tail -2 $W/gpu-kernels.log
for f in time-base-1 time-new-1 time-base-2; do echo "== $f"; tail -n 9 $W/$f.log | cut -c1-170; done
for f in bd-base bd-new; do echo "== $f"; tail -6 $W/$f.log | cut -c1-170; done
