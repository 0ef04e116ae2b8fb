#!/usr/bin/env bash
# Session 13, call 1: branch sm90-mask (plain and REGS240) checked and timed against main
# (.gpu_mask_check.sh), then main's GPU tests (ctest -L gpu) for issue 17's merge.
set -u
tar xJf .carry/s13/bins.tar.xz
[ "$PWD" = /work/main ] || { mkdir -p /work; ln -sfn "$PWD" /work/main; }
export LD_LIBRARY_PATH=$PWD/.carry:/usr/local/cuda/lib64 FP2_EXPERIMENTS_DIR=$PWD/experiments \
  FP2_PLOTS_DIR=$PWD/plots FP2_PYTHON=$(command -v python3)
export FP2_CUDNN_LIB=$(python3 -c "import nvidia.cudnn as c; print(list(c.__path__)[0] + '/lib')")
W=/tmp/w; mkdir -p $W
start=$SECONDS
timeout 330 bash .gpu_mask_check.sh $W/mask build build-mask build-r240 > $W/mask.log 2>&1
echo "mask rc=$? at $((SECONDS - start))s" >> $W/steps.txt
left=$(( 560 - (SECONDS - start) )); [ $left -lt 10 ] && left=10
(cd build && timeout $left ctest -L gpu --output-on-failure) > $W/ctest-gpu.log 2>&1
echo "ctest-gpu rc=$? at $((SECONDS - start))s" >> $W/steps.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/gpu.txt 2>&1
tar czf $OUT/call1.tgz -C $W .
cat $W/steps.txt; grep -E "Test +#|tests passed|tests failed" $W/ctest-gpu.log | tail -25
cat $W/mask/steps.txt; tail -14 $W/mask.log
