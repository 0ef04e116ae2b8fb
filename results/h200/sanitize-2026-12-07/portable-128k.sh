#!/usr/bin/env bash
# The portable kernels' 128K cases that portable.sh's caps cut off (any sm_90 card, main's build):
# FP8 on synth:llm with g = 4 and 8 (32:8, 64:8), and BF16 with g = 8 (64:8, both inputs), each
# with the correction on and off; 1024 sampled rows (it ran once, 2026-12-08, on an H100 in 144 s:
# portable-128k-w-h100/). Carry as run.sh; run as
# `DEADLINE=300 bash results/h200/sanitize-2026-12-07/portable-128k.sh`.
source results/h200/chunk-stage-2026-12-04/steps.sh
for heads in 32:8 64:8; do
  portable_check check-portable-fp8-128k-${heads%:8} 110 --dtype fp8 --data synth:llm --heads $heads --len 128k
done
portable_check check-portable-bf16-128k-64 150 --dtype bf16 --heads 64:8 --len 128k
verdicts
pack
