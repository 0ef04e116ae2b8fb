#!/usr/bin/env bash
# The gpu kernels against the oracle at small sizes: the portable attention kernel (asked for,
# since auto would pick sm90 for bf16 on Hopper) over check's whole grid (g = 1, 4, 8,
# synth:random and synth:llm, bf16 and fp8, correction on and off), odd lengths included;
# on a Hopper GPU the sm90 attention kernel too (bf16 and fp8, the rest of the grid), and then the
# corners each kernel must survive: a batch of two sequences the first of which ends inside
# a block, batches of mixed lengths and chunked requests (--requests), group sizes 3, 5 and 7
# (tiles that start inside a position's heads), alpha = 0 (every causal block selected),
# alpha = 1 (the always-kept blocks alone, the rest through the correction), a forced mask
# given to the pass (--density) and one long sequence.
# Exits 77 (skipped) where no GPU is found.
# Usage: gpu_check.sh path/to/fp2bench
set -u
bin=$1
check() { "$bin" check --backend gpu --rows 512 "$@" || exit $?; }
check --kernel portable --len 1k,2k+77
check --kernel portable --len 2k+77 --batch 2 --heads 28:4
check --kernel portable --requests 1k,2x300/2k+77,640/4k+77,77
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1)
if [ "$cc" != "9.0" ]; then
  echo "gpu_check: not a Hopper GPU (compute capability '$cc'): the sm90 kernel is not checked"
  exit 0
fi
check --kernel sm90 --len 1k,2k+77,8k
check --kernel sm90 --len 2k+77 --batch 2
check --kernel sm90 --requests 1k,2x300/2k+77,640/4k+77,77
check --kernel sm90 --requests 8k/64k,3x4k,1k/16k+77 --heads 28:4 --dtype fp8
for heads in 24:8 40:8 28:4; do check --kernel sm90 --len 2k+77 --heads "$heads"; done
check --kernel sm90 --dtype bf16 --len 4k --heads 32:8 --alpha 0
check --kernel sm90 --dtype bf16 --len 4k --heads 32:8 --alpha 1
check --kernel sm90 --dtype bf16 --len 64k --heads 32:8 --data synth:llm --rows 256
# A forced mask given to the pass (fp2_forward's path for a caller's index; FP8 converts Q in
# the quantise stage there, not in the select).
check --kernel sm90 --len 4k+77 --heads 24:8 --density 0.3
