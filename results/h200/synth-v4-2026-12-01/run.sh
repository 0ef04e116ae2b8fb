#!/usr/bin/env bash
# Call 1: synth:llm v4 on the H200 (issue 18) + ncu source counters of the FP8 dense attention
# and the select (kernel work). Deadline 420 s.
set -u
tar xJf .carry/c1/v4.tar.xz
export LD_LIBRARY_PATH=$PWD/.carry:/usr/local/cuda/lib64 FP2_EXPERIMENTS_DIR=$PWD/experiments FP2_SOURCE_DIR=$PWD
export FP2_PYTHON=$(command -v python3)
export FP2_CUDNN_LIB=$(python3 -c "import nvidia.cudnn as c; print(list(c.__path__)[0] + '/lib')" 2>/dev/null)
W=/tmp/w R=$W/h200; mkdir -p $R; cp -r results/h200/. $R/
B=build/fp2bench
start=$SECONDS
left() { local l=$(( $1 - (SECONDS - start) )); [ "$l" -gt "$2" ] && l=$2; [ "$l" -lt 1 ] && l=1; echo "$l"; }
step() { local name=$1 cap=$2 dl=$3; shift 3; local t0=$SECONDS
  timeout "$(left "$dl" "$cap")" "$@" > "$W/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s (at $((SECONDS - start))s)" | tee -a $W/steps.txt; return $rc; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $W/gpu.txt 2>&1
echo "binary: synth-v4 42a0182 (main 53f7ec0 + synth v4)" > $W/commit.txt
step check-bf16 30 40 $B check --backend gpu --kernel sm90 --len 1k,2k+77 --rows 256
step check-fp8 30 75 $B check --backend gpu --kernel sm90 --dtype fp8 --len 1k,2k+77 --rows 256
t0=$SECONDS
for s in 1 2 3 4; do
  timeout $(left 230 150) $B density --backend gpu --seed $s --rows 256 --out $R/density-llm-v4-seed$s.json > $W/density-s$s.log 2>&1 &
done
wait; echo "density x4 $((SECONDS - t0))s (at $((SECONDS - start))s)" | tee -a $W/steps.txt
step reproduce-5 110 345 bash results/refresh.sh reproduce-5 build $R
step baseline 30 380 bash results/refresh.sh baseline build $R
N="ncu --clock-control none --section SpeedOfLight --section SourceCounters --section WarpStateStats --section ComputeWorkloadAnalysis --section LaunchStats --section Occupancy"
step ncu-fp8-dense 40 420 $N --kernel-name regex:attend_sm90 --launch-count 1 -o $W/fp8dense $B run --backend gpu --kernel sm90 --dtype fp8 --len 32k --density 1 --trials 1 --rows 8
step ncu-select 40 460 $N --kernel-name regex:select_kernel --launch-count 1 -o $W/select128k $B run --backend gpu --len 128k --trials 1 --rows 8
for r in fp8dense select128k; do
  [ -f $W/$r.ncu-rep ] || continue
  ncu --import $W/$r.ncu-rep --page source --csv --print-source sass > $W/$r-sass.csv 2> $W/$r-sass.err || ncu --import $W/$r.ncu-rep --page source --csv > $W/$r-src.csv 2>> $W/$r-sass.err
  ncu --import $W/$r.ncu-rep --page details > $W/$r-details.txt 2>&1
done
cuobjdump -sass build/fp2bench > $W/all.sass 2>&1; xz -T4 $W/all.sass
tar czf $OUT/call1.tgz -C $W .
cat $W/steps.txt; tail -4 $W/check-bf16.log $W/check-fp8.log; for s in 1 2 3 4; do tail -8 $W/density-s$s.log; done; tail -12 $R/reproduce-5.log; tail -4 $R/baseline.log; ls -la $W | head -40
