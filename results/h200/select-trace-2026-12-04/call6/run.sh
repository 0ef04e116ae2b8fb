#!/usr/bin/env bash
# Call 6: the records whose BF16 index moved with select v14, on V = 5c19f0a: reproduce
# --steps speedup-llm-bf16 (refresh.sh reproduce-1: 4K-128K with cuDNN and the torch peers)
# and --steps breakdown.
set -u
[ -x .carry/d4/V/fp2bench ] || tar xJf .carry/d4/variants.tar.xz -C .carry/d4
[ "$PWD" = /work/main ] || { mkdir -p /work; ln -sfn "$PWD" /work/main; }
export LD_LIBRARY_PATH=$PWD/.carry:/usr/local/cuda/lib64 FP2_EXPERIMENTS_DIR=$PWD/experiments \
  FP2_PLOTS_DIR=$PWD/plots FP2_PYTHON=$(command -v python3)
W=$OUT/w; mkdir -p $W/res
start=$SECONDS; deadline=${DEADLINE:-420}
step() { local name=$1 cap=$2; shift 2; local t0=$SECONDS l=$(( deadline - (SECONDS - start) ))
  [ $l -gt $cap ] && l=$cap; [ $l -lt 1 ] && l=1
  timeout "$l" "$@" > "$W/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s (at $((SECONDS - start))s)" | tee -a $W/steps.txt; return $rc; }
V=.carry/d4/V
step reproduce-1 300 bash results/refresh.sh reproduce-1 $V $W/res
step breakdown 90 $V/fp2bench reproduce --steps breakdown --dir $W/res
cat $W/steps.txt
tail -25 $W/res/reproduce-1.log | cut -c1-200
tail -12 $W/breakdown.log | cut -c1-200
tar cJf $OUT/w.tar.xz -C $OUT w && rm -rf $W
