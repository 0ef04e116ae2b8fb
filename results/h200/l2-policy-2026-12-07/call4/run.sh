#!/usr/bin/env bash
# Call 4 (2026-12-07, fifth session): main with Q evict-first on both of the select's BF16 paths
# (HEAD, 963365a: TMA and cp.async) against main before any hint (P, e45e33e), built by
# `VARIANTS="HEAD P" results/h200/chunk-stage-2026-12-04/build.sh`.
# - On any card: HEAD's GPU tests and checks (12:3, g = 3 and 28:4, g = 7: Q by the hinted
#   cp.async; g = 4: by the hinted TMA; FP8 at 16K), then nothing more on a card other than an H200.
# - On an H200: the records, `chunked-128k.json` (8K and 16K chunks) first, then P HEAD
#   alternated in 8K chunks (mirrored, twice), and `breakdown.json` (HEAD, BF16).
# - H200_ONLY=1 (steps.sh): nothing at all on any other card, now that an H100 ran the checks.
# Ran on an H100 (w-h100/: the checks) and on an H200 (w-h200/: the records), 2026-12-07.
source results/h200/chunk-stage-2026-12-04/steps.sh
head_checks_for_records
step check-g7-HEAD 60 $H/fp2bench check --backend gpu --kernel sm90 --dtype bf16 --heads 28:4 --len 16k --rows 256
step check-fp8-HEAD 60 $H/fp2bench check --backend gpu --kernel sm90 --dtype fp8 --len 16k --rows 256
case "$gpu" in *H200*)
  records P HEAD HEAD P P HEAD ;;
esac
finish
