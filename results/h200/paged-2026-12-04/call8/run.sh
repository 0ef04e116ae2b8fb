#!/usr/bin/env bash
# Call 8 of paged K/V (issue 14): the final main (Z = 2081b19): tests/gpu_check.sh (its last run
# was on the paged build, before the pooled cache), gpu_pooled_cache, gpu_paged, gpu_kernels.
set -u
[ -x .carry/d4/Z/fp2bench ] || tar xJf .carry/d4/variants.tar.xz -C .carry/d4
[ "$PWD" = /work/main ] || { mkdir -p /work; ln -sfn "$PWD" /work/main; }
export LD_LIBRARY_PATH=$PWD/.carry:/usr/local/cuda/lib64 FP2_EXPERIMENTS_DIR=$PWD/experiments \
  FP2_PLOTS_DIR=$PWD/plots FP2_PYTHON=$(command -v python3)
W=$OUT/w; mkdir -p $W
start=$SECONDS; deadline=${DEADLINE:-200}
step() { local name=$1 cap=$2; shift 2; local t0=$SECONDS l=$(( deadline - (SECONDS - start) ))
  [ $l -gt $cap ] && l=$cap; [ $l -lt 1 ] && l=1
  timeout "$l" "$@" > "$W/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s (at $((SECONDS - start))s)" | tee -a $W/steps.txt; return $rc; }
Z=.carry/d4/Z
step gpu_pooled_cache 30 $Z/gpu_pooled_cache
step gpu_paged 30 $Z/gpu_paged
step gpu_kernels 30 $Z/gpu_kernels
step gpu_check 170 bash tests/gpu_check.sh $Z/fp2bench
cat $W/steps.txt
grep -h "cases passed\|FAIL\|mismatch" $W/gpu_check.log | sort | uniq -c | head
for f in gpu_pooled_cache gpu_paged gpu_kernels; do tail -1 $W/$f.log; done
tar cJf $OUT/w.tar.xz -C $OUT w && rm -rf $W
