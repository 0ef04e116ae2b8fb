#!/usr/bin/env bash
# Call 1 (dcfcd7f): what the select v4 session could not run: the gpu tests beside
# gpu_check/gpu_kernels (fp2_forward in a CUDA graph and with a given index, the neighbour NaN
# case, the binding, the Hopper tile, the ceilings and cuDNN; not the torch peers), the whole
# check grid with its new forced-density line (FP8 through a given index), then reproduce-1
# (speedup BF16 with the peers) when every check passed.
set -u
tar xJf .carry/s8/build.tar.xz
[ "$PWD" = /work/main ] || { mkdir -p /work; ln -sfn "$PWD" /work/main; }
export LD_LIBRARY_PATH=$PWD/.carry:/usr/local/cuda/lib64 FP2_EXPERIMENTS_DIR=$PWD/experiments \
  FP2_PLOTS_DIR=$PWD/plots FP2_PYTHON=$(command -v python3)
export FP2_CUDNN_LIB=$(python3 -c "import nvidia.cudnn as c; print(list(c.__path__)[0] + '/lib')")
W=$OUT/w; mkdir -p $W
start=$SECONDS; bad=0
step() { local name=$1 cap=$2; shift 2; local t0=$SECONDS l=$(( 585 - (SECONDS - start) ))
  [ $l -gt $cap ] && l=$cap; [ $l -lt 1 ] && l=1
  timeout "$l" "$@" > "$W/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s (at $((SECONDS - start))s)" | tee -a $W/steps.txt; return $rc; }
B=build/fp2bench
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > $W/gpu.txt 2>&1
step ctest-gpu 120 ctest --test-dir build -L gpu -E "gpu_check|test_peers" --output-on-failure --timeout 60 || bad=1
step gpu-check 150 bash tests/gpu_check.sh $B || bad=1
if [ $bad = 0 ]; then
  step reproduce-1 300 bash results/refresh.sh reproduce-1 build results/h200
  cp results/h200/speedup-llm-bf16.json results/h200/reproduce-1.log results/h200/REPORT.md $W/ 2>/dev/null
fi
cat $W/steps.txt
grep -E "tests passed|Test +#|Failed" $W/ctest-gpu.log | cut -c1-110
tail -3 $W/gpu-check.log | cut -c1-140
tail -4 $W/reproduce-1.log 2>/dev/null | cut -c1-150
tar cJf $OUT/w.tar.xz -C $OUT w && rm -rf $W
