#!/usr/bin/env bash
# Call 3, select_sm90 v3 (Q by TMA where g divides 128) and the FP8 flip tolerance 5e-3: the
# direct kernel tests, the whole check grid, 128K FP8 on synth:llm at g = 1 (the largest flip
# distances at 64K), compute-sanitizer, the breakdown of c04413d (base), v2 and v3 in the
# same call; then, when every check passed, the perf baseline and reproduce-2 (speedup FP8).
set -u
tar xJf .carry/s3/build.tar.xz
[ "$PWD" = /work/main ] || { mkdir -p /work; ln -sfn "$PWD" /work/main; }
export LD_LIBRARY_PATH=$PWD/.carry:/usr/local/cuda/lib64 FP2_EXPERIMENTS_DIR=$PWD/experiments \
  FP2_PLOTS_DIR=$PWD/plots FP2_PYTHON=$(command -v python3)
export FP2_CUDNN_LIB=$(python3 -c "import nvidia.cudnn as c; print(list(c.__path__)[0] + '/lib')")
W=$OUT/w; mkdir -p $W
start=$SECONDS; bad=0
step() { local name=$1 cap=$2; shift 2; local t0=$SECONDS l=$(( 570 - (SECONDS - start) ))
  [ $l -gt $cap ] && l=$cap; [ $l -lt 1 ] && l=1
  timeout "$l" "$@" > "$W/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s (at $((SECONDS - start))s)" | tee -a $W/steps.txt; return $rc; }
B=build/fp2bench; O=.carry/s1/base-fp2bench; V2=.carry/s3/v2-fp2bench
step gpu-kernels 40 build/tests/gpu_kernels || bad=1
step gpu-check 150 bash tests/gpu_check.sh $B || bad=1
step check-fp8-128k 120 $B check --backend gpu --rows 128 --kernel sm90 --dtype fp8 --len 128k --data synth:llm --heads 8:8 || bad=1
step san-memcheck 40 compute-sanitizer --tool memcheck --error-exitcode 1 $B check --backend gpu --kernel sm90 --len 300 --heads 8:2 --rows 64 || bad=1
step san-memcheck-34k 50 compute-sanitizer --tool memcheck --error-exitcode 1 $B run --backend gpu --kernel sm90 --dtype fp8 --len 34k --heads 4:1 --trials 1 || bad=1
for dt in fp8 bf16; do for bin in base:$O v2:$V2 v3:$B; do n=${bin%%:*}; x=${bin#*:}
  step bd-$dt-$n 40 $x breakdown --backend gpu --dtype $dt --len 32k,128k --trials 3 --out $W/bd-$dt-$n.json; done; done
if [ $bad = 0 ]; then
  step baseline 60 bash results/refresh.sh baseline build results/h200
  step reproduce-2 300 bash results/refresh.sh reproduce-2 build results/h200
  cp results/h200/baseline-speedup.json results/h200/regress-same.json results/h200/baseline.log \
    results/h200/speedup-llm-fp8.json results/h200/reproduce-2.log results/h200/REPORT.md $W/ 2>/dev/null
fi
cat $W/steps.txt
for f in gpu-check check-fp8-128k; do tail -1 $W/$f.log | cut -c1-120; done
grep -h "synth:llm    fp8" $W/check-fp8-128k.log | cut -c1-140
tail -1 $W/gpu-kernels.log; grep -h "ERROR SUMMARY" $W/san-*.log
for dt in fp8 bf16; do for n in base v2 v3; do echo "== $dt $n"; grep -E "^ +(32768|131072) " $W/bd-$dt-$n.log | cut -c1-150; done; done
tail -3 $W/baseline.log 2>/dev/null | cut -c1-150; tail -4 $W/reproduce-2.log 2>/dev/null | cut -c1-150
tar cJf $OUT/w.tar.xz -C $OUT w && rm -rf $W
