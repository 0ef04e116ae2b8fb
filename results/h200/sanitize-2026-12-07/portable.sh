#!/usr/bin/env bash
# The portable kernels' check where run.sh's steps were cut at their caps (any sm_90 card, main's
# build): FP8 at 64K and 128K (synth:llm, g = 1, 4 and 8, correction on and off), BF16 with g = 8
# (64:8, both inputs) at 64K and 128K; 1024 sampled rows, each step cut at its cap (it ran once,
# 2026-12-07, on an H100: portable-w-h100/). Carry as run.sh; run as
# `DEADLINE=170 bash results/h200/sanitize-2026-12-07/portable.sh`.
source results/h200/chunk-stage-2026-12-04/steps.sh
portable_check check-portable-fp8 80 --dtype fp8 --data synth:llm --len 64k,128k
portable_check check-portable-bf16-64x8 90 --dtype bf16 --heads 64:8 --len 64k,128k
verdicts
pack
