#!/usr/bin/env bash
# Session 13, call 4, on main with the todo-mask change (the build carried): the GPU checks
# first (gpu_check's whole grid with both kernels, the direct kernel tests), then
# results/refresh.sh reproduce-2 (speedup-llm-fp8 with every peer, REPORT.md rewritten),
# then the remaining GPU tests as time allows.
set -u
tar xJf .carry/s16/build.tar.xz
[ "$PWD" = /work/main ] || { mkdir -p /work; ln -sfn "$PWD" /work/main; }
export LD_LIBRARY_PATH=$PWD/.carry:/usr/local/cuda/lib64 FP2_EXPERIMENTS_DIR=$PWD/experiments \
  FP2_PLOTS_DIR=$PWD/plots FP2_PYTHON=$(command -v python3)
export FP2_CUDNN_LIB=$(python3 -c "import nvidia.cudnn as c; print(list(c.__path__)[0] + '/lib')")
W=$OUT/w; mkdir -p $W
start=$SECONDS
step() { local name=$1 cap=$2; shift 2; local t0=$SECONDS l=$(( 575 - (SECONDS - start) ))
  [ $l -gt $cap ] && l=$cap; [ $l -lt 1 ] && l=1
  timeout "$l" "$@" > "$W/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s (at $((SECONDS - start))s)" | tee -a $W/steps.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/gpu.txt 2>&1
step gpu-kernels 30 build/tests/gpu_kernels
step gpu-check 150 bash tests/gpu_check.sh build/fp2bench
step reproduce-2 300 bash results/refresh.sh reproduce-2 build results/h200
cp results/h200/speedup-llm-fp8.json results/h200/speedup-llm-fp8.png results/h200/REPORT.md results/h200/reproduce-2.log $W/ 2>/dev/null
(cd build && step ctest-rest 200 ctest -L gpu -E "gpu_check|gpu_kernels" --output-on-failure)
cat $W/steps.txt; tail -3 $W/gpu-check.log; tail -12 $W/reproduce-2.log | cut -c1-150
grep -E "Test +#|tests passed|tests failed" $W/ctest-rest.log | tail -8
