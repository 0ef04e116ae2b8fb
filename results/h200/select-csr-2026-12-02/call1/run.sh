#!/usr/bin/env bash
# Call 1 (2026-12-02 second session): select_sm90 skips the exponentials of key halves whose
# bound cannot reach the threshold. The direct kernel tests, the whole check grid, 128K
# checks, memcheck, the breakdown of 541b493 (base) and the skip version in the same call on
# synth:llm and synth:random, ncu of the new select.
# (Rewritten into this folder after the call from the session's copy; .carry/s1 held the
# build of the skip tree and base-fp2bench, a build of 541b493.)
set -u
tar xJf .carry/s1/build.tar.xz
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
B=build/fp2bench; O=.carry/s1/base-fp2bench
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > $W/gpu.txt 2>&1
step gpu-kernels 40 build/tests/gpu_kernels || bad=1
for dt in fp8 bf16; do for bin in base:$O skip:$B; do n=${bin%%:*}; x=${bin#*:}
  step bd-$dt-$n 40 $x breakdown --backend gpu --dtype $dt --len 32k,128k --trials 3 --out $W/bd-$dt-$n.json; done; done
for bin in base:$O skip:$B; do n=${bin%%:*}; x=${bin#*:}
  step bd-random-$n 40 $x breakdown --backend gpu --data synth:random --len 128k --trials 3 --out $W/bd-random-$n.json; done
step gpu-check 150 bash tests/gpu_check.sh $B || bad=1
step check-fp8-128k 120 $B check --backend gpu --rows 128 --kernel sm90 --dtype fp8 --len 128k --data synth:llm --heads 8:8 || bad=1
step check-bf16-128k 120 $B check --backend gpu --rows 128 --kernel sm90 --len 128k --data synth:llm || bad=1
step san-memcheck 40 compute-sanitizer --tool memcheck --error-exitcode 1 $B check --backend gpu --kernel sm90 --len 300 --heads 8:2 --rows 64 || bad=1
M=sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum
for dt in fp8 bf16; do
  step ncu-$dt 60 ncu --clock-control none -k regex:select_sm90_kernel --launch-count 1 --section SpeedOfLight \
    --section Occupancy --section LaunchStats --section WarpStateStats --section SourceCounters --metrics $M \
    $B run --backend gpu --dtype $dt --len 128k --rows 1 --trials 1; done
cat $W/steps.txt
for f in gpu-check check-fp8-128k check-bf16-128k; do tail -1 $W/$f.log | cut -c1-120; done
tail -1 $W/gpu-kernels.log; grep -h "ERROR SUMMARY" $W/san-*.log
for dt in fp8 bf16 random; do for n in base skip; do echo "== $dt $n"; grep -E "^ +(32768|131072) " $W/bd-$dt-$n.log | cut -c1-150; done; done
for dt in fp8 bf16; do echo "== ncu $dt"; grep -E "Duration|Registers Per|pipe_xu|pipe_tensor|inst_executed.sum|Achieved Occupancy|Warp Cycles Per Issued" $W/ncu-$dt.log | cut -c1-100; done
tar cJf $OUT/w.tar.xz -C $OUT w && rm -rf $W
