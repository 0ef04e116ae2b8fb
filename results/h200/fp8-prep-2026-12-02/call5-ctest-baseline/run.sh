#!/usr/bin/env bash
# Call 5, the same build as call 4: the rest of ctest -L gpu (fp2_forward in a CUDA graph, the
# Python binding, the tile test, the cuDNN ceilings, the torch peers), then
# results/refresh.sh baseline (the perf job's baseline and a regress against it).
set -u
tar xJf .carry/s4/build.tar.xz
[ "$PWD" = /work/main ] || { mkdir -p /work; ln -sfn "$PWD" /work/main; }
export LD_LIBRARY_PATH=$PWD/.carry:/usr/local/cuda/lib64 FP2_EXPERIMENTS_DIR=$PWD/experiments \
  FP2_PLOTS_DIR=$PWD/plots FP2_PYTHON=$(command -v python3)
export FP2_CUDNN_LIB=$(python3 -c "import nvidia.cudnn as c; print(list(c.__path__)[0] + '/lib')")
W=$OUT/w; mkdir -p $W
start=$SECONDS
step() { local name=$1 cap=$2; shift 2; local t0=$SECONDS l=$(( 280 - (SECONDS - start) ))
  [ $l -gt $cap ] && l=$cap; [ $l -lt 1 ] && l=1
  timeout "$l" "$@" > "$W/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s (at $((SECONDS - start))s)" | tee -a $W/steps.txt; return $rc; }
(cd build && step ctest-rest 200 ctest -L gpu -E "gpu_check|gpu_kernels" --output-on-failure)
step baseline 70 bash results/refresh.sh baseline build results/h200
cp results/h200/baseline-speedup.json results/h200/regress-same.json results/h200/baseline.log $W/ 2>/dev/null
cat $W/steps.txt
grep -E "Test +#|tests passed|tests failed" $W/ctest-rest.log | tail -8
tail -5 $W/baseline.log | cut -c1-150
tar cJf $OUT/w.tar.xz -C $OUT w && rm -rf $W
