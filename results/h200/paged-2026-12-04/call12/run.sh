#!/usr/bin/env bash
# Call 12 of issue 14: F = c78d30a (N's CSR and pool, S's select v11, regress's page_size fix),
# the commit that lands: its GPU tests, memcheck of gpu_pooled_cache and of an sm90 BF16 check
# with g = 3, the perf baselines' regress, and the records chunked.json (64K) and
# chunked-128k.json (8K and 16K chunks).
set -u
[ -x .carry/d4/F/fp2bench ] || tar xJf .carry/d4/variants.tar.xz -C .carry/d4
[ "$PWD" = /work/main ] || { mkdir -p /work; ln -sfn "$PWD" /work/main; }
export LD_LIBRARY_PATH=$PWD/.carry:/usr/local/cuda/lib64 FP2_EXPERIMENTS_DIR=$PWD/experiments \
  FP2_PLOTS_DIR=$PWD/plots FP2_PYTHON=$(command -v python3)
W=$OUT/w; mkdir -p $W
start=$SECONDS; deadline=${DEADLINE:-400}
step() { local name=$1 cap=$2; shift 2; local t0=$SECONDS l=$(( deadline - (SECONDS - start) ))
  [ $l -gt $cap ] && l=$cap; [ $l -lt 1 ] && l=1
  timeout "$l" "$@" > "$W/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s (at $((SECONDS - start))s)" | tee -a $W/steps.txt; return $rc; }
F=.carry/d4/F
for t in gpu_kernels gpu_pooled_cache gpu_paged gpu_forward_graph gpu_neighbour_nan; do step $t 40 $F/$t; done
step memcheck-gpu_pooled_cache 60 compute-sanitizer --tool memcheck --error-exitcode 9 $F/gpu_pooled_cache
step memcheck-check-bf16 90 compute-sanitizer --tool memcheck --error-exitcode 9 $F/fp2bench check --backend gpu \
  --kernel sm90 --len 2k+77 --batch 2 --heads 24:8 --rows 64
step perf_regress 120 bash tests/perf_regress.sh $F/fp2bench
step chunked 60 $F/fp2bench chunked --backend gpu --out $W/chunked.json
step chunked-128k 90 $F/fp2bench chunked --backend gpu --len 128k --chunk 8k,16k --out $W/chunked-128k.json
cat $W/steps.txt
for t in gpu_kernels gpu_pooled_cache gpu_paged gpu_forward_graph gpu_neighbour_nan; do tail -1 $W/$t.log; done
grep -h "ERROR SUMMARY" $W/memcheck-*.log; tail -3 $W/memcheck-check-bf16.log | cut -c1-150
grep -vh "^fp2bench:" $W/perf_regress.log | cut -c1-150 | tail -25
for f in chunked chunked-128k; do grep -v "^fp2bench:" $W/$f.log | cut -c1-120; done
tar cJf $OUT/w.tar.xz -C $OUT w && rm -rf $W
