#!/usr/bin/env bash
# The gpu kernels against the oracle at small sizes: the portable attention kernel (asked for,
# since auto would pick sm90 for bf16 on Hopper) over check's whole grid (g = 1, 4, 8,
# synth:random and synth:llm, bf16 and fp8, correction on and off), odd lengths included;
# on a Hopper GPU the sm90 attention kernel too (bf16, the rest of the grid).
# Exits 77 (skipped) where no GPU is found.
# Usage: gpu_check.sh path/to/fp2bench
set -u
bin=$1
"$bin" check --backend gpu --kernel portable --len 1k,2k+77 --rows 512 || exit $?
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1)
if [ "$cc" = "9.0" ]; then
  "$bin" check --backend gpu --kernel sm90 --dtype bf16 --len 1k,2k+77,8k --rows 512
else
  echo "gpu_check: not a Hopper GPU (compute capability '$cc'): the sm90 kernel is not checked"
fi
