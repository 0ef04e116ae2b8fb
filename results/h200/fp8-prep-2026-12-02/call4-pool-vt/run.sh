#!/usr/bin/env bash
# Call 4, main with the pool writing the transposed values (FP8 sm90): the whole check grid,
# the direct kernel tests, compute-sanitizer on small FP8 checks, the breakdown against
# 4b2c4fc (base) and 8deb758 (prev) in the same call, ncu of the pool, then
# results/refresh.sh reproduce-2 when every check passed.
set -u
tar xJf .carry/s4/build.tar.xz
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
B=build/fp2bench; P=.carry/s4/prev-fp2bench; O=.carry/s1/base-fp2bench
step gpu-kernels 40 build/tests/gpu_kernels || bad=1
step gpu-check 160 bash tests/gpu_check.sh $B || bad=1
step check-fp8-16k 40 $B check --backend gpu --rows 512 --kernel sm90 --dtype fp8 --len 16k || bad=1
step check-fp8-density 30 $B check --backend gpu --rows 512 --kernel sm90 --dtype fp8 --len 2k+77 --density 0.05 || bad=1
for tool in memcheck racecheck; do
  step san-$tool 60 compute-sanitizer --tool $tool --error-exitcode 1 $B check --backend gpu --kernel sm90 --dtype fp8 --len 300 --heads 8:2 --rows 64 || bad=1
done
for bin in base:$O prev:$P new:$B; do n=${bin%%:*}; x=${bin#*:}
  step bd-$n 40 $x breakdown --backend gpu --dtype fp8 --len 32k,128k --trials 3 --out $W/bd-$n.json; done
step ncu-new 60 ncu --clock-control none --metrics gpu__time_duration.sum -k 'regex:pool_kernel|transpose_kernel' $B run --backend gpu --dtype fp8 --len 128k --rows 4 --trials 1
if [ $bad = 0 ]; then
  step reproduce-2 260 bash results/refresh.sh reproduce-2 build results/h200
  cp results/h200/speedup-llm-fp8.json results/h200/reproduce-2.log $W/ 2>/dev/null
fi
cat $W/steps.txt
for f in gpu-check check-fp8-16k check-fp8-density; do tail -1 $W/$f.log | cut -c1-120; done
tail -1 $W/gpu-kernels.log; grep -h "ERROR SUMMARY" $W/san-*.log
for f in bd-base bd-prev bd-new; do echo "== $f"; grep -E "^ +(32768|131072) " $W/$f.log | cut -c1-150; done
grep -E "pool_kernel|transpose_kernel|gpu__time" $W/ncu-new.log | grep -v PROF | cut -c1-90 | tail -6
tail -4 $W/reproduce-2.log 2>/dev/null | cut -c1-150
tar cJf $OUT/w.tar.xz -C $OUT w && rm -rf $W
