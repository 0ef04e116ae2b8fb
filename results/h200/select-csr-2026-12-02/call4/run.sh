#!/usr/bin/env bash
# Call 4: the CSR pass a warp per segment with batched loads (csr2, 9e3d7e7), against 541b493
# (base) and call 3's CTA-per-segment pass (csr1) in the same call; the direct kernel tests,
# the whole check grid, 128K FP8 g = 1, memcheck and racecheck, ncu durations of the CSR
# kernels; then, when every check passed, regress against the committed baseline, the perf
# baseline and reproduce-2 (speedup FP8). (Rewritten into this folder after the call from the
# session's copy; .carry/s4 held the build and csr1-fp2bench.)
set -u
tar xJf .carry/s4/build.tar.xz
[ "$PWD" = /work/main ] || { mkdir -p /work; ln -sfn "$PWD" /work/main; }
export LD_LIBRARY_PATH=$PWD/.carry:/usr/local/cuda/lib64 FP2_EXPERIMENTS_DIR=$PWD/experiments \
  FP2_PLOTS_DIR=$PWD/plots FP2_PYTHON=$(command -v python3)
W=$OUT/w; mkdir -p $W
start=$SECONDS; bad=0
step() { local name=$1 cap=$2; shift 2; local t0=$SECONDS l=$(( 570 - (SECONDS - start) ))
  [ $l -gt $cap ] && l=$cap; [ $l -lt 1 ] && l=1
  timeout "$l" "$@" > "$W/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s (at $((SECONDS - start))s)" | tee -a $W/steps.txt; return $rc; }
B=build/fp2bench; BINS="base:.carry/s1/base-fp2bench csr1:.carry/s4/csr1-fp2bench csr2:$B"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > $W/gpu.txt 2>&1
step gpu-kernels 40 build/tests/gpu_kernels || bad=1
for dt in bf16 fp8; do for bin in $BINS; do n=${bin%%:*}; x=${bin#*:}
  step bd-$dt-$n 40 $x breakdown --backend gpu --dtype $dt --len 32k,128k --trials 3 --out $W/bd-$dt-$n.json; done; done
step gpu-check 150 bash tests/gpu_check.sh $B || bad=1
step check-fp8-128k 60 $B check --backend gpu --rows 128 --kernel sm90 --dtype fp8 --len 128k --data synth:llm --heads 8:8 || bad=1
step san-memcheck 40 compute-sanitizer --tool memcheck --error-exitcode 1 $B check --backend gpu --kernel sm90 --len 2k+77 --batch 2 --heads 8:2 --rows 64 || bad=1
step san-racecheck 60 compute-sanitizer --tool racecheck --error-exitcode 1 $B check --backend gpu --kernel portable --len 1k+77 --heads 8:2 --rows 64 || bad=1
for dt in bf16 fp8; do
  step ncu-$dt 60 ncu --clock-control none -k regex:"select_sm90_kernel|count_kernel|write_kernel" --launch-count 3 --section SpeedOfLight \
    $B run --backend gpu --dtype $dt --len 128k --rows 1 --trials 1; done
if [ $bad = 0 ]; then
  step regress-old 60 $B regress --baseline results/h200/baseline-speedup.json --out $W/regress-old.json
  step baseline 60 bash results/refresh.sh baseline build results/h200
  step reproduce-2 300 bash results/refresh.sh reproduce-2 build results/h200
  cp results/h200/baseline-speedup.json results/h200/regress-same.json results/h200/baseline.log \
    results/h200/speedup-llm-fp8.json results/h200/reproduce-2.log results/h200/REPORT.md $W/ 2>/dev/null
fi
cat $W/steps.txt
for f in gpu-check check-fp8-128k; do tail -1 $W/$f.log | cut -c1-120; done
tail -1 $W/gpu-kernels.log; grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" $W/san-*.log
for dt in bf16 fp8; do for n in base csr1 csr2; do echo "== $dt $n"; grep -E "^ +(32768|131072) " $W/bd-$dt-$n.log | cut -c1-112; done; done
for dt in bf16 fp8; do echo "== ncu $dt"; grep -E "^  [a-z_]+.*\(|Duration" $W/ncu-$dt.log | cut -c1-100; done
tail -6 $W/regress-old.log | cut -c1-150; tail -3 $W/baseline.log 2>/dev/null | cut -c1-150; tail -4 $W/reproduce-2.log 2>/dev/null | cut -c1-150
tar cJf $OUT/w.tar.xz -C $OUT w && rm -rf $W
