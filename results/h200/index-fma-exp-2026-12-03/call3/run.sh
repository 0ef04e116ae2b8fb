#!/usr/bin/env bash
# Call 3: the pool without V's row-major codes on the sm90 FP8 path (cb18d45, build) against
# c7932de (base) in the same call, breakdown FP8 twice in mirrored order; then gpu_kernels, the
# check grid (check now reads V's codes back from V^T), a 128K FP8 check, memcheck of an FP8
# g = 3 batch, and ncu's stall reasons of the FP8 select.
set -u
tar xJf .carry/s1/build.tar.xz; tar xJf .carry/s1/variants.tar.xz -C .carry/s1
[ "$PWD" = /work/main ] || { mkdir -p /work; ln -sfn "$PWD" /work/main; }
export LD_LIBRARY_PATH=$PWD/.carry:/usr/local/cuda/lib64 FP2_EXPERIMENTS_DIR=$PWD/experiments \
  FP2_PLOTS_DIR=$PWD/plots FP2_PYTHON=$(command -v python3)
W=$OUT/w; mkdir -p $W
start=$SECONDS; bad=0
step() { local name=$1 cap=$2; shift 2; local t0=$SECONDS l=$(( 500 - (SECONDS - start) ))
  [ $l -gt $cap ] && l=$cap; [ $l -lt 1 ] && l=1
  timeout "$l" "$@" > "$W/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s (at $((SECONDS - start))s)" | tee -a $W/steps.txt; return $rc; }
declare -A DIR=([base]=.carry/s1/base [vt]=build)
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > $W/gpu.txt 2>&1
bd() { local n=$1 r=1; [ -e $W/bd-fp8-$n-1.json ] && r=2
  step bd-fp8-$n-$r 40 ${DIR[$n]}/fp2bench breakdown --backend gpu --dtype fp8 --len 32k,128k --trials 3 --out $W/bd-fp8-$n-$r.json; }
for n in base vt vt base; do bd $n; done
X=build/fp2bench
step gpu-kernels 60 build/tests/gpu_kernels || bad=1
step gpu-check 180 bash tests/gpu_check.sh $X || bad=1
step check-fp8-128k 60 $X check --backend gpu --rows 128 --kernel sm90 --dtype fp8 --len 128k --data synth:llm --heads 8:8 || bad=1
step san-memcheck 40 compute-sanitizer --tool memcheck --error-exitcode 1 $X check --backend gpu --kernel sm90 --dtype fp8 --len 2k+77 --batch 2 --heads 24:8 --rows 64 || bad=1
step ncu-fp8-stalls 45 ncu --clock-control none -k regex:select_sm90_kernel --launch-count 1 --metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio' $X run --backend gpu --dtype fp8 --len 128k --rows 1 --trials 1
cat $W/steps.txt
tail -1 $W/gpu-kernels.log; tail -1 $W/gpu-check.log 2>/dev/null | cut -c1-120; tail -2 $W/check-fp8-128k.log | cut -c1-140
grep -h "ERROR SUMMARY" $W/san-*.log 2>/dev/null
for f in $W/bd-*-*.log; do echo "== $(basename $f .log)"; grep -E "^ +(32768|131072) " $f | cut -c1-112; done
grep -E "stalled" $W/ncu-fp8-stalls.log | awk '{print $1, $NF}' | sed 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//' | sort -k2 -gr | head -12
tar cJf $OUT/w.tar.xz -C $OUT w && rm -rf $W
