#!/usr/bin/env bash
# Call 2, select_sm90 v2 (stages of 64 keys, the next product issued before the exponentials, 3 CTAs per SM) and the FP8 flip tolerance 2e-3: the direct
# kernel tests (both selects against ref_select_tile), the whole check grid, a 64K FP8 check
# on synth:llm, compute-sanitizer, the breakdown against c04413d (base) in the same call, ncu
# of both select kernels at 128K, the SASS of select_sm90.
set -u
tar xJf .carry/s2/build.tar.xz
[ "$PWD" = /work/main ] || { mkdir -p /work; ln -sfn "$PWD" /work/main; }
export LD_LIBRARY_PATH=$PWD/.carry:/usr/local/cuda/lib64 FP2_EXPERIMENTS_DIR=$PWD/experiments \
  FP2_PLOTS_DIR=$PWD/plots FP2_PYTHON=$(command -v python3)
W=$OUT/w; mkdir -p $W
start=$SECONDS; bad=0
step() { local name=$1 cap=$2; shift 2; local t0=$SECONDS l=$(( 560 - (SECONDS - start) ))
  [ $l -gt $cap ] && l=$cap; [ $l -lt 1 ] && l=1
  timeout "$l" "$@" > "$W/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s (at $((SECONDS - start))s)" | tee -a $W/steps.txt; return $rc; }
B=build/fp2bench; O=.carry/s1/base-fp2bench
step gpu-kernels 40 build/tests/gpu_kernels || bad=1
step gpu-check 170 bash tests/gpu_check.sh $B || bad=1
step check-fp8-64k 70 $B check --backend gpu --rows 256 --kernel sm90 --dtype fp8 --len 64k --data synth:llm || bad=1
for tool in memcheck racecheck; do
  step san-$tool 40 compute-sanitizer --tool $tool --error-exitcode 1 $B check --backend gpu --kernel sm90 --len 300 --heads 8:2 --rows 64 || bad=1
done
step san-memcheck-34k 50 compute-sanitizer --tool memcheck --error-exitcode 1 $B run --backend gpu --kernel sm90 --dtype fp8 --len 34k --heads 4:1 --trials 1 || bad=1
for dt in fp8 bf16; do for bin in base:$O new:$B; do n=${bin%%:*}; x=${bin#*:}
  step bd-$dt-$n 40 $x breakdown --backend gpu --dtype $dt --len 32k,128k --trials 3 --out $W/bd-$dt-$n.json; done; done
M=sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum
for dt in fp8 bf16; do
  step ncu-$dt 60 ncu --clock-control none -k regex:select_sm90_kernel --launch-count 1 --section SpeedOfLight \
    --section Occupancy --section LaunchStats --section WarpStateStats --metrics $M \
    $B run --backend gpu --dtype $dt --len 128k --rows 1 --trials 1; done
step sass 40 bash -c "cuobjdump -sass build/fp2bench | awk '/Function : /{p = /select_sm90/} p' > $W/select-sm90.sass"
cat $W/steps.txt
for f in gpu-check check-fp8-64k; do tail -1 $W/$f.log | cut -c1-120; done
tail -1 $W/gpu-kernels.log; grep -h "near-threshold" $W/gpu-kernels.log | sort | uniq -c | head -4
grep -h "ERROR SUMMARY" $W/san-*.log
for f in bd-fp8-base bd-fp8-new bd-bf16-base bd-bf16-new; do echo "== $f"; grep -E "^ +(32768|131072) " $W/$f.log | cut -c1-150; done
for dt in fp8 bf16; do echo "== ncu $dt"; grep -E "Duration|Registers Per|pipe_xu|pipe_tensor|inst_executed.sum|Achieved Occupancy|Theoretical Occ|Issue Slots|Warp Cycles Per Issued" $W/ncu-$dt.log | cut -c1-100; done
tar cJf $OUT/w.tar.xz -C $OUT w && rm -rf $W
