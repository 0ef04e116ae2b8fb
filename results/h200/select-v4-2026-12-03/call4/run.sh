#!/usr/bin/env bash
# Call 4 (6f54e50's build, as call 3): the gpu tests not run in calls 1-3 (fp2_forward in a
# CUDA graph and with a given index, the neighbour NaN case, the binding, the Hopper tile,
# the ceilings and cuDNN; not the torch peers). reproduce-1 (speedup BF16) did not fit the device time left.
set -u
tar xJf .carry/s7/build.tar.xz
[ "$PWD" = /work/main ] || { mkdir -p /work; ln -sfn "$PWD" /work/main; }
export LD_LIBRARY_PATH=$PWD/.carry:/usr/local/cuda/lib64 FP2_EXPERIMENTS_DIR=$PWD/experiments \
  FP2_PLOTS_DIR=$PWD/plots FP2_PYTHON=$(command -v python3)
export FP2_CUDNN_LIB=$(python3 -c "import nvidia.cudnn as c; print(list(c.__path__)[0] + '/lib')")
W=$OUT/w; mkdir -p $W
start=$SECONDS
step() { local name=$1 cap=$2; shift 2; local t0=$SECONDS l=$(( 300 - (SECONDS - start) ))
  [ $l -gt $cap ] && l=$cap; [ $l -lt 1 ] && l=1
  timeout "$l" "$@" > "$W/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s (at $((SECONDS - start))s)" | tee -a $W/steps.txt; return $rc; }
step ctest-gpu 120 ctest --test-dir build -L gpu -E "gpu_check|gpu_kernels|test_peers" --output-on-failure --timeout 60
cat $W/steps.txt
grep -E "tests passed|Test +#|Failed" $W/ctest-gpu.log | cut -c1-110
tar cJf $OUT/w.tar.xz -C $OUT w && rm -rf $W
