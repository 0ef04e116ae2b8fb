#!/usr/bin/env bash
# Call 1: a timeline of the BF16 select on SMs 0 and 1 (branch select-trace, a throwaway build
# TR = main e7651ff plus clock64 stamps of thread 0 at each phase of each stage): 128K one pass
# and 128K in 8K chunks. Trace files are raw [slot][128] u64 records, one file per launch.
set -u
[ -x .carry/d4/TR/fp2bench ] || tar xJf .carry/d4/variants.tar.xz -C .carry/d4
[ "$PWD" = /work/main ] || { mkdir -p /work; ln -sfn "$PWD" /work/main; }
export LD_LIBRARY_PATH=$PWD/.carry:/usr/local/cuda/lib64 FP2_EXPERIMENTS_DIR=$PWD/experiments \
  FP2_PLOTS_DIR=$PWD/plots FP2_PYTHON=$(command -v python3)
W=$OUT/w; mkdir -p $W/tr
start=$SECONDS; deadline=${DEADLINE:-150}
step() { local name=$1 cap=$2; shift 2; local t0=$SECONDS l=$(( deadline - (SECONDS - start) ))
  [ $l -gt $cap ] && l=$cap; [ $l -lt 1 ] && l=1
  timeout "$l" "$@" > "$W/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s (at $((SECONDS - start))s)" | tee -a $W/steps.txt; return $rc; }
FP2_SELECT_TRACE=$W/tr/one step one 40 .carry/d4/TR/fp2bench breakdown --backend gpu --len 128k --trials 1
FP2_SELECT_TRACE=$W/tr/chk step chunked 60 .carry/d4/TR/fp2bench chunked --backend gpu --len 128k --chunk 8k --trials 1
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm --format=csv >> $W/steps.txt
ls -la $W/tr | head -50
cat $W/steps.txt
tar cJf $OUT/w.tar.xz -C $OUT w && rm -rf $W
