#!/usr/bin/env bash
# Call 4 (issue 13): the binding's GPU test (prepared call), its overheads, and batch with the
# peers in the same run (BF16: cudnn + torch; FP8: cudnn).
set -u
tar xJf .carry/c4/bins.tar.xz
export LD_LIBRARY_PATH=$PWD/.carry:/usr/local/cuda/lib64 FP2_EXPERIMENTS_DIR=$PWD/experiments FP2_SOURCE_DIR=$PWD FP2_PLOTS_DIR=$PWD/plots
export FP2_PYTHON=$(command -v python3)
export FP2_CUDNN_LIB=$(python3 -c "import nvidia.cudnn as c; print(list(c.__path__)[0] + '/lib')" 2>/dev/null)
W=/tmp/w R=$W/h200; mkdir -p $R
start=$SECONDS
left() { local l=$(( $1 - (SECONDS - start) )); [ "$l" -gt "$2" ] && l=$2; [ "$l" -lt 1 ] && l=1; echo "$l"; }
step() { local name=$1 cap=$2 dl=$3; shift 3; local t0=$SECONDS
  timeout "$(left "$dl" "$cap")" "$@" > "$W/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s (at $((SECONDS - start))s)" | tee -a $W/steps.txt; return $rc; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $W/gpu.txt 2>&1
export FP2_LIB=build/libfp2.so
step gpu-binding 40 40 python3 tests/gpu_binding.py
step binding-overhead 60 100 python3 experiments/binding_overhead.py --out $R/binding-overhead.json
step batch-bf16 430 520 build/fp2bench batch --dtype bf16 --peers cudnn,torch --trials 5 --out $R/batch-bf16.json
tar czf $OUT/call3.tgz -C $W .
cat $W/steps.txt; tail -3 $W/gpu-binding.log; tail -5 $W/binding-overhead.log; tail -6 $W/batch-bf16.log
