#!/usr/bin/env bash
# Re-measures, on a machine with a GPU, what results/<gpu>/ holds, in stages that each fit a
# 10-minute slot (run them one after the other, or all at once where time allows):
#
#   verify    the gpu tests (Hopper building blocks, check over the grid with both kernels,
#             ceilings and the cuDNN peer, the torch peers), compute-sanitizer on a small
#             check with each kernel, info --measure
#   speedup   speedup BF16 and FP8 with every peer on synth:llm (portable kernel), speedup
#             BF16 with the sm90 kernel, breakdown
#   baseline  the committed baselines of the perf job, then regress against a fresh run
#   reproduce fp2bench reproduce (tens of minutes: give it the time)
#
#   results/refresh.sh STAGE [BUILD_DIR [OUT_DIR]]   defaults: build, results/<gpu>
#
# Every command's output goes to OUT_DIR/STAGE.log (appended) and its JSON beside it; the
# log ends with a table of each step's exit status. Steps go on after a failing one.
set -u
cd "$(dirname "$0")/.."
stage=${1:-}
case $stage in
  verify | speedup | baseline | reproduce) ;;
  *)
    echo "usage: results/refresh.sh verify|speedup|baseline|reproduce [BUILD_DIR [OUT_DIR]]" >&2
    exit 2
    ;;
esac
build=${2:-build}
bin=$build/fp2bench
[ -x "$bin" ] || { echo "refresh.sh: no $bin (build first: cmake -B $build -G Ninja && cmake --build $build)" >&2; exit 2; }
. tests/lib/gpu_slug.sh
slug=$(gpu_slug "$bin") || { echo "refresh.sh: no GPU found" >&2; exit 77; }
out=${3:-results/$slug}
mkdir -p "$out"
log=$out/$stage.log
summary=()

step() { # step NAME COMMAND...: runs it, logs it, records its exit status
  local name=$1
  shift
  echo "=== $name: $* ($(date -u +%FT%TZ))" >>"$log"
  "$@" >>"$log" 2>&1
  local rc=$?
  echo "=== $name: exit $rc" >>"$log"
  summary+=("$(printf '%-28s %s' "$name" "$rc")")
}

case $stage in
  verify)
    step tile_sm90 "$build/tests/gpu_tile_sm90"
    step check_grid bash tests/gpu_check.sh "$bin"
    step ceilings_cudnn "$build/tests/gpu_ceilings_cudnn"
    step torch_peers bash tests/lib/python.sh experiments/test_peers.py
    for tool in memcheck racecheck synccheck; do
      step "sanitizer_${tool}_portable" compute-sanitizer --tool "$tool" --error-exitcode 1 \
        "$bin" check --backend gpu --len 300 --heads 8:2 --rows 64
      step "sanitizer_${tool}_sm90" compute-sanitizer --tool "$tool" --error-exitcode 1 \
        "$bin" check --backend gpu --kernel sm90 --dtype bf16 --len 300 --heads 8:2 --rows 64
    done
    step info "$bin" info --measure --out "$out/info.json"
    ;;
  speedup)
    step speedup_llm "$bin" speedup --dtype both --out "$out/speedup-llm.json"
    step speedup_sm90_bf16 "$bin" speedup --kernel sm90 --dtype bf16 --peers cudnn --out "$out/speedup-sm90-bf16.json"
    step breakdown "$bin" breakdown --out "$out/breakdown.json"
    ;;
  baseline)
    step baseline "$bin" speedup --dtype both --peers none --trials 10 --out "$out/baseline-speedup.json"
    step regress_same "$bin" regress --baseline "$out/baseline-speedup.json"
    ;;
  reproduce)
    step reproduce "$bin" reproduce --dir "$out"
    ;;
esac

{
  echo "=== summary of $stage on $slug"
  printf '%s\n' "${summary[@]}"
} | tee -a "$log"
for s in "${summary[@]}"; do [ "${s##* }" = 0 ] || exit 1; done
