#!/usr/bin/env bash
# Call 3: the threshold and CSR out of the scoring CTAs (select_csr.cu, first form: a CTA of
# 4 warps per segment). The direct kernel tests, the whole check grid, d = 64 portable, 128K
# FP8 g = 1, memcheck and racecheck of the CSR pass, the breakdown of 541b493 (base) and the
# new tree in the same call, ncu stalls. (Rewritten into this folder after the call from the
# session's copy; .carry/s3 held the build.)
set -u
tar xJf .carry/s3/build.tar.xz
[ "$PWD" = /work/main ] || { mkdir -p /work; ln -sfn "$PWD" /work/main; }
export LD_LIBRARY_PATH=$PWD/.carry:/usr/local/cuda/lib64 FP2_EXPERIMENTS_DIR=$PWD/experiments \
  FP2_PLOTS_DIR=$PWD/plots FP2_PYTHON=$(command -v python3)
W=$OUT/w; mkdir -p $W
start=$SECONDS; bad=0
step() { local name=$1 cap=$2; shift 2; local t0=$SECONDS l=$(( 570 - (SECONDS - start) ))
  [ $l -gt $cap ] && l=$cap; [ $l -lt 1 ] && l=1
  timeout "$l" "$@" > "$W/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s (at $((SECONDS - start))s)" | tee -a $W/steps.txt; return $rc; }
B=build/fp2bench; O=.carry/s1/base-fp2bench
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > $W/gpu.txt 2>&1
step gpu-kernels 40 build/tests/gpu_kernels || bad=1
for dt in bf16 fp8; do for bin in base:$O csr:$B; do n=${bin%%:*}; x=${bin#*:}
  step bd-$dt-$n 40 $x breakdown --backend gpu --dtype $dt --len 32k,128k --trials 3 --out $W/bd-$dt-$n.json; done; done
for bin in base:$O csr:$B; do n=${bin%%:*}; x=${bin#*:}
  step bd-random-$n 40 $x breakdown --backend gpu --data synth:random --len 128k --trials 3 --out $W/bd-random-$n.json; done
step gpu-check 150 bash tests/gpu_check.sh $B || bad=1
step check-d64 60 $B check --backend gpu --rows 256 --kernel portable --dim 64 --len 2k+77,8k || bad=1
step check-fp8-128k 60 $B check --backend gpu --rows 128 --kernel sm90 --dtype fp8 --len 128k --data synth:llm --heads 8:8 || bad=1
step san-memcheck 40 compute-sanitizer --tool memcheck --error-exitcode 1 $B check --backend gpu --kernel sm90 --len 2k+77 --batch 2 --heads 8:2 --rows 64 || bad=1
step san-racecheck 60 compute-sanitizer --tool racecheck --error-exitcode 1 $B check --backend gpu --kernel sm90 --len 1k+77 --heads 8:2 --rows 64 || bad=1
M="regex:smsp__average_warps?_.*issue_stalled_.*_per_issue_active\.ratio"
for dt in bf16 fp8; do
  step ncu-$dt 60 ncu --clock-control none -k regex:"select_sm90_kernel|count_kernel|write_kernel" --launch-count 3 --section SpeedOfLight \
    --section WarpStateStats --section SourceCounters --metrics "$M" -o $W/rep-$dt $B run --backend gpu --dtype $dt --len 128k --rows 1 --trials 1
  step src-$dt 60 bash -c "ncu -i $W/rep-$dt.ncu-rep --page details > $W/details-$dt.txt; ncu -i $W/rep-$dt.ncu-rep --page source --csv --print-source sass -k regex:select_sm90 > $W/source-$dt.csv"
done
cat $W/steps.txt
for f in gpu-check check-d64 check-fp8-128k; do tail -1 $W/$f.log | cut -c1-120; done
tail -1 $W/gpu-kernels.log; grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" $W/san-*.log
for dt in bf16 fp8 random; do for n in base csr; do echo "== $dt $n"; grep -E "^ +(32768|131072) " $W/bd-$dt-$n.log | cut -c1-112; done; done
for dt in bf16 fp8; do echo "== ncu $dt"; grep -E "^  [a-z_]+.*\(|Duration" $W/details-$dt.txt | cut -c1-100; done
rm -f $W/*.ncu-rep; tar cJf $OUT/w.tar.xz -C $OUT w && rm -rf $W
