#!/usr/bin/env bash
# Session 13, call 3: sm90-mask + refill + the rescale gated on the row sums, checked and
# timed against main (.gpu_mask_check.sh).
set -u
tar xJf .carry/s15/bins.tar.xz
export LD_LIBRARY_PATH=$PWD/.carry:/usr/local/cuda/lib64 FP2_EXPERIMENTS_DIR=$PWD/experiments FP2_PLOTS_DIR=$PWD/plots
W=/tmp/w; mkdir -p $W
timeout 300 bash .gpu_mask_check.sh $W/mask build build-gate > $W/mask.log 2>&1
echo "mask rc=$?" >> $W/steps.txt
tar czf $OUT/call3.tgz -C $W .
cat $W/steps.txt $W/mask/steps.txt; grep -E "^(base|cand0|base2) " $W/mask.log
