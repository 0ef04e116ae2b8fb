#!/usr/bin/env bash
# The GPU CI job (CTest label perf): every committed baseline of this GPU,
# results/<gpu>/baseline-*.json, against a fresh run of its own command by this build.
# Exit 1 when a timing is SLOWER; 77 (skipped) without a GPU or without a baseline for it.
# Usage: perf_regress.sh path/to/fp2bench
set -u
bin=$1
root=${FP2_SOURCE_DIR:-$(dirname "$0")/..}
. "$root/tests/lib/gpu_slug.sh"
slug=$(gpu_slug "$bin") || { echo "perf_regress.sh: no GPU: skipped"; exit 77; }
shopt -s nullglob
baselines=("$root/results/$slug"/baseline-*.json)
[ ${#baselines[@]} -gt 0 ] || { echo "perf_regress.sh: no baseline in results/$slug: skipped"; exit 77; }
rc=0
for b in "${baselines[@]}"; do
  echo "== $b"
  "$bin" regress --baseline "$b"
  status=$?
  [ $status -eq 0 ] || rc=1
done
exit $rc
