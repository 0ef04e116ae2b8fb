#!/usr/bin/env bash
# Call 3, main 8deb758 (FP8: amax per tensor, Q by the convert pass, K/V codes by the pool,
# transpose_values v2): checks, breakdown against main 4b2c4fc (base) in the same call, ncu
# times of the small kernels, then results/refresh.sh reproduce-2 when every check passed.
set -u
tar xJf .carry/s3/build.tar.xz
[ "$PWD" = /work/main ] || { mkdir -p /work; ln -sfn "$PWD" /work/main; }
export LD_LIBRARY_PATH=$PWD/.carry:/usr/local/cuda/lib64 FP2_EXPERIMENTS_DIR=$PWD/experiments \
  FP2_PLOTS_DIR=$PWD/plots FP2_PYTHON=$(command -v python3)
export FP2_CUDNN_LIB=$(python3 -c "import nvidia.cudnn as c; print(list(c.__path__)[0] + '/lib')")
W=$OUT/w; mkdir -p $W
start=$SECONDS; bad=0
step() { local name=$1 cap=$2; shift 2; local t0=$SECONDS l=$(( 575 - (SECONDS - start) ))
  [ $l -gt $cap ] && l=$cap; [ $l -lt 1 ] && l=1
  timeout "$l" "$@" > "$W/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s (at $((SECONDS - start))s)" | tee -a $W/steps.txt; return $rc; }
B=build/fp2bench; O=.carry/s1/base-fp2bench
step gpu-kernels 40 build/tests/gpu_kernels || bad=1
step check-fp8-sm90 60 $B check --backend gpu --rows 512 --kernel sm90 --dtype fp8 --len 1k,2k+77,16k || bad=1
step check-fp8-density 30 $B check --backend gpu --rows 512 --kernel sm90 --dtype fp8 --len 2k+77 --density 0.05 || bad=1
step check-fp8-batch 30 $B check --backend gpu --rows 512 --kernel sm90 --dtype fp8 --len 2k+77 --batch 2 --heads 24:8 || bad=1
step check-fp8-requests 60 $B check --backend gpu --rows 512 --kernel sm90 --dtype fp8 --requests 8k/64k,3x4k,1k/16k+77 --heads 28:4 || bad=1
step check-portable 40 $B check --backend gpu --rows 512 --kernel portable --len 2k+77 || bad=1
step check-bf16-sm90 40 $B check --backend gpu --rows 512 --kernel sm90 --dtype bf16 --len 1k,2k+77 || bad=1
step bd-base 40 $O breakdown --backend gpu --dtype fp8 --len 32k,128k --trials 3 --out $W/bd-base.json
step bd-new 40 $B breakdown --backend gpu --dtype fp8 --len 32k,128k --trials 3 --out $W/bd-new.json
step bd-new-bf16 40 $B breakdown --backend gpu --dtype bf16 --len 32k,128k --trials 3 --out $W/bd-new-bf16.json
K='regex:pool_kernel|amax_kernel|convert_kernel|transpose_kernel|scales_kernel'
step ncu-new 60 ncu --clock-control none --metrics gpu__time_duration.sum -k "$K" $B run --backend gpu --dtype fp8 --len 128k --rows 4 --trials 1
if [ $bad = 0 ]; then
  step reproduce-2 300 bash results/refresh.sh reproduce-2 build results/h200
  cp results/h200/speedup-llm-fp8.json results/h200/REPORT.md results/h200/reproduce-2.log $W/ 2>/dev/null
fi
cat $W/steps.txt
for f in check-fp8-sm90 check-fp8-density check-fp8-batch check-fp8-requests check-portable check-bf16-sm90; do tail -1 $W/$f.log | cut -c1-120; done
tail -1 $W/gpu-kernels.log
for f in bd-base bd-new bd-new-bf16; do echo "== $f"; grep -E "^ +(32768|131072) " $W/$f.log | cut -c1-150; done
grep -oE "(pool|amax|convert|transpose|scales)_kernel|gpu__time_duration.sum +[a-z]+ +[0-9.,]+" $W/ncu-new.log | paste - - | awk '{print $1, $(NF-1), $NF}' | head -14
tail -12 $W/reproduce-2.log 2>/dev/null | cut -c1-150
tar cJf $OUT/w.tar.xz -C $OUT w && rm -rf $W
