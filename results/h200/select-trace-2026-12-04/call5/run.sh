#!/usr/bin/env bash
# Call 5: V = 5c19f0a (select_sm90 v14 on main: BF16 on one whole-tile product a stage). V's GPU
# tests, gpu_check.sh, check at 128K (BF16, 32:8), memcheck of a g = 3 check (Q by
# cp.async); ncu of the FP8 select at 128K, M (e7651ff) and V (FP8's code is unchanged); then on
# V the perf baseline with its regress and the chunked records (64K, and 128K in 8K and 16K chunks).
set -u
[ -x .carry/d4/V/fp2bench ] || tar xJf .carry/d4/variants.tar.xz -C .carry/d4
[ "$PWD" = /work/main ] || { mkdir -p /work; ln -sfn "$PWD" /work/main; }
export LD_LIBRARY_PATH=$PWD/.carry:/usr/local/cuda/lib64 FP2_EXPERIMENTS_DIR=$PWD/experiments \
  FP2_PLOTS_DIR=$PWD/plots FP2_PYTHON=$(command -v python3)
W=$OUT/w; mkdir -p $W/res
start=$SECONDS; deadline=${DEADLINE:-570}
step() { local name=$1 cap=$2; shift 2; local t0=$SECONDS l=$(( deadline - (SECONDS - start) ))
  [ $l -gt $cap ] && l=$cap; [ $l -lt 1 ] && l=1
  timeout "$l" "$@" > "$W/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s (at $((SECONDS - start))s)" | tee -a $W/steps.txt; return $rc; }
V=.carry/d4/V
for t in gpu_kernels gpu_pooled_cache gpu_paged gpu_forward_graph gpu_neighbour_nan; do step $t 40 $V/$t; done
step gpu_check 200 bash tests/gpu_check.sh $V/fp2bench
step check128k 150 $V/fp2bench check --backend gpu --len 128k --dtype bf16
step memcheck-g3 90 compute-sanitizer --tool memcheck --error-exitcode 9 $V/fp2bench check --backend gpu --kernel sm90 --len 2k+77 --heads 24:8 --dtype bf16
M=gpu__time_duration.sum,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread
for v in M V; do
  step ncu128-fp8-$v 30 ncu --clock-control none --csv --page raw -k regex:select_sm90 --launch-skip 1 --launch-count 1 --metrics $M \
    .carry/d4/$v/fp2bench breakdown --backend gpu --len 128k --trials 1 --dtype fp8
done
step baseline 60 bash results/refresh.sh baseline $V $W/res
step chunked 60 $V/fp2bench chunked --backend gpu --out $W/res/chunked.json
step chunked-128k 90 $V/fp2bench chunked --backend gpu --len 128k --chunk 8k,16k --out $W/res/chunked-128k.json
cat $W/steps.txt
for t in gpu_kernels gpu_pooled_cache gpu_paged gpu_forward_graph gpu_neighbour_nan gpu_check check128k memcheck-g3; do
  echo "$t: $(grep -E 'ERROR SUMMARY|ok|FAIL|fail|mismatch|flips' $W/$t.log | tail -3 | tr '\n' ' ' | cut -c1-300)"; done
grep -h "select_sm90" $W/ncu128-fp8-*.log | cut -c1-40 >/dev/null
for v in M V; do echo "ncu fp8 $v: $(grep -o '"gpu__time_duration.sum","[^"]*","[^"]*"\|select_sm90[^,]*' $W/ncu128-fp8-$v.log | head -2 | tr '\n' ' ')"; tail -1 $W/ncu128-fp8-$v.log | cut -c1-300; done
grep -hE "SLOWER|FASTER|SAME|UNCLEAR|summary|exit" $W/res/*.log | cut -c1-160 | tail -20
tail -8 $W/chunked-128k.log
tar cJf $OUT/w.tar.xz -C $OUT w && rm -rf $W
