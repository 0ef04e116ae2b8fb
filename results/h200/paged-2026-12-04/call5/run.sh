#!/usr/bin/env bash
# Call 5 of paged K/V (issue 14): main as it lands (F = a468c27: the tests' shared byte compare,
# the pool's cache write through a named row): the GPU tests it touched, memcheck, and chunked
# at 64K once more.
set -u
[ -x .carry/d4/F/fp2bench ] || tar xJf .carry/d4/variants.tar.xz -C .carry/d4
[ "$PWD" = /work/main ] || { mkdir -p /work; ln -sfn "$PWD" /work/main; }
export LD_LIBRARY_PATH=$PWD/.carry:/usr/local/cuda/lib64 FP2_EXPERIMENTS_DIR=$PWD/experiments \
  FP2_PLOTS_DIR=$PWD/plots FP2_PYTHON=$(command -v python3)
W=$OUT/w; mkdir -p $W
start=$SECONDS; deadline=${DEADLINE:-570}
step() { local name=$1 cap=$2; shift 2; local t0=$SECONDS l=$(( deadline - (SECONDS - start) ))
  [ $l -gt $cap ] && l=$cap; [ $l -lt 1 ] && l=1
  timeout "$l" "$@" > "$W/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s (at $((SECONDS - start))s)" | tee -a $W/steps.txt; return $rc; }
F=.carry/d4/F
step gpu_pooled_cache 60 $F/gpu_pooled_cache
step memcheck-pooled 120 compute-sanitizer --tool memcheck --error-exitcode 9 $F/gpu_pooled_cache
step gpu_paged 60 $F/gpu_paged
step gpu_kernels 60 $F/gpu_kernels
step gpu_forward_graph 60 $F/gpu_forward_graph
step gpu_neighbour_nan 60 $F/gpu_neighbour_nan
step chunked 40 $F/fp2bench chunked --backend gpu --out $W/chunked.json
cat $W/steps.txt
grep -v "^fp2bench:" $W/chunked.log | cut -c1-120
for f in gpu_pooled_cache memcheck-pooled gpu_paged gpu_kernels gpu_forward_graph gpu_neighbour_nan; do echo "== $f"; tail -2 $W/$f.log | cut -c1-160; done
tar cJf $OUT/w.tar.xz -C $OUT w && rm -rf $W
