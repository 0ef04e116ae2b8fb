#!/usr/bin/env bash
# Call 19 of issue 14: P = a7ed528 (pool.cu: one walk over the sequences for the pooled cache's
# fresh and prefix blocks; the kernels otherwise main's). P's GPU tests, the pooled cache under
# memcheck; then on P the perf job's baseline (refresh.sh baseline: speedup both dtypes at 16K
# and 32K, and regress against a fresh run) and the 5 %-density records (reproduce-3, -4).
set -u
[ -x .carry/d4/P/fp2bench ] || tar xJf .carry/d4/variants.tar.xz -C .carry/d4
[ "$PWD" = /work/main ] || { mkdir -p /work; ln -sfn "$PWD" /work/main; }
export LD_LIBRARY_PATH=$PWD/.carry:/usr/local/cuda/lib64 FP2_EXPERIMENTS_DIR=$PWD/experiments \
  FP2_PLOTS_DIR=$PWD/plots FP2_PYTHON=$(command -v python3)
W=$OUT/w; mkdir -p $W/res
start=$SECONDS; deadline=${DEADLINE:-580}
step() { local name=$1 cap=$2; shift 2; local t0=$SECONDS l=$(( deadline - (SECONDS - start) ))
  [ $l -gt $cap ] && l=$cap; [ $l -lt 1 ] && l=1
  timeout "$l" "$@" > "$W/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s (at $((SECONDS - start))s)" | tee -a $W/steps.txt; return $rc; }
P=.carry/d4/P
for t in gpu_kernels gpu_pooled_cache gpu_paged gpu_forward_graph; do step $t 40 $P/$t; done
step memcheck-pooled 60 compute-sanitizer --tool memcheck --error-exitcode 9 $P/gpu_pooled_cache
step baseline 60 bash results/refresh.sh baseline $P $W/res
step reproduce-3 240 bash results/refresh.sh reproduce-3 $P $W/res
step reproduce-4 240 bash results/refresh.sh reproduce-4 $P $W/res
cat $W/steps.txt
for t in gpu_kernels gpu_pooled_cache gpu_paged gpu_forward_graph memcheck-pooled; do
  echo "$t: $(grep -E 'ERROR SUMMARY|ok|FAIL|fail' $W/$t.log | tail -2 | tr '\n' ' ' | cut -c1-200)"; done
grep -hE "SLOWER|FASTER|SAME|UNCLEAR|summary|exit" $W/res/*.log | cut -c1-160 | tail -30
tar cJf $OUT/w.tar.xz -C $OUT w && rm -rf $W
