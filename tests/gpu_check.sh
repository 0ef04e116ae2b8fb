#!/usr/bin/env bash
# The gpu kernels against the oracle at small sizes over check's whole grid (g = 1, 4, 8,
# synth:random and synth:llm, bf16 and fp8, correction on and off), odd lengths included.
# Exits 77 (skipped) where no GPU is found.
# Usage: gpu_check.sh path/to/fp2bench
set -u
bin=$1
"$bin" check --backend gpu --len 1k,2k+77 --rows 512
