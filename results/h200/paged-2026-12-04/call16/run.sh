#!/usr/bin/env bash
# Call 16 of issue 14: main's kernels (M = eb127bc) re-measure the FP8 speedup record (reproduce-2's step,
# with the torch and cuDNN peers; the FP8 select gained the CSR in two launches).
set -u
[ -x .carry/d4/M/fp2bench ] || tar xJf .carry/d4/variants.tar.xz -C .carry/d4
export LD_LIBRARY_PATH=$PWD/.carry:/usr/local/cuda/lib64 FP2_EXPERIMENTS_DIR=$PWD/experiments \
  FP2_PLOTS_DIR=$PWD/plots FP2_PYTHON=$(command -v python3)
W=$OUT/w; mkdir -p $W
start=$SECONDS; deadline=${DEADLINE:-330}
step() { local name=$1 cap=$2; shift 2; local t0=$SECONDS l=$(( deadline - (SECONDS - start) ))
  [ $l -gt $cap ] && l=$cap; [ $l -lt 1 ] && l=1
  timeout "$l" "$@" > "$W/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s (at $((SECONDS - start))s)" | tee -a $W/steps.txt; return $rc; }
step speedup-llm-fp8 320 .carry/d4/M/fp2bench reproduce --steps speedup-llm-fp8 --dir $W
cat $W/steps.txt
for f in speedup-llm-fp8; do grep -v "^fp2bench:" $W/$f.log | cut -c1-160 | tail -12; done
tar cJf $OUT/w.tar.xz -C $OUT w && rm -rf $W
