#!/usr/bin/env bash
# Re-measures, on a machine with a GPU, what results/<gpu>/ holds, in stages that each fit a
# 10-minute slot (run them one after the other). The times are an H200's: measured at 7959de6
# for reproduce-1, -2 and -6 and the baseline (128K: sm90 dense BF16 224 ms, FP8 161 ms, cuDNN
# 246 ms, FA2 425 ms), estimated for the others from their sizes; the torch peers (python and
# torch start, flex compiles for each shape) take most of a speedup stage:
#
#   verify        the gpu tests (Hopper building blocks, check over the grid with both
#                 kernels, ceilings and the cuDNN peer, the torch peers), compute-sanitizer
#                 on a small check with each kernel, info --measure              ~6-8 min
#   baseline      the perf job's baseline (speedup both dtypes at 16K and 32K, no peers, 10
#                 trials: short enough to rerun in every GPU CI job), then regress against
#                 a fresh run (SAME expected)                        16 s (4c0ae26)
#   reproduce-1   reproduce --steps speedup-llm-bf16: speedup BF16 4K-128K with every peer
#                 (cudnn,torch,fpv2,hpc: the last two where experiments/build_peers.sh's env
#                 names them, else skipped with the reason; --kernel auto: sm90 on Hopper)
#                 into speedup-llm-bf16.json                                     219 s
#   reproduce-2   reproduce --steps speedup-llm-fp8, the same in FP8             246 s
#   reproduce-3   reproduce --steps speedup-density5-bf16               207 s (7959de6)
#   reproduce-4   reproduce --steps speedup-density5-fp8                207 s (7959de6)
#   reproduce-5   reproduce --steps sweep-alpha,correction,chunked (64K; sweep-alpha's fp64
#                 quality reference on the cpu dominates)             88 s (7959de6)
#   peers         FlashPrefill V2's and HPC-Ops' kernels built from .peers/ (assembled first
#                 by experiments/build_peers.sh assemble), then reproduce
#                 --steps speedup-peers-128k,hpc-ops with them: the like-for-like row of
#                 the headline and Fig. 5 with HPC-Ops timed at every density
#                 (build 120 s, the two steps 135 s)                  255 s (4c0ae26)
#   reproduce-6   reproduce --steps density-niah,breakdown,hpc-ops,hpc-ops-index-128k
#                 (37 + 18 + 68 s, the last on the cpu in under a second)         ~2 min
#
# Each reproduce-N stage rewrites REPORT.md from every step's JSON in OUT_DIR, so after the
# last one it is the full report.
#
#   results/refresh.sh STAGE [BUILD_DIR [OUT_DIR]]   defaults: build, results/<gpu>
#
# Every command's output goes to OUT_DIR/STAGE.log (appended) and its JSON beside it; the
# log ends with a table of each step's exit status. Steps go on after a failing one.
set -u
cd "$(dirname "$0")/.."
stage=${1:-}
stages="verify baseline peers reproduce-1 reproduce-2 reproduce-3 reproduce-4 reproduce-5 reproduce-6"
case " $stages " in
  *" $stage "*) ;;
  *)
    echo "usage: results/refresh.sh ${stages// /|} [BUILD_DIR [OUT_DIR]]" >&2
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
        "$bin" check --backend gpu --kernel portable --len 300 --heads 8:2 --rows 64
      step "sanitizer_${tool}_sm90" compute-sanitizer --tool "$tool" --error-exitcode 1 \
        "$bin" check --backend gpu --kernel sm90 --dtype bf16 --len 300 --heads 8:2 --rows 64
    done
    step info "$bin" info --measure --out "$out/info.json"
    ;;
  baseline)
    step baseline "$bin" speedup --dtype both --len 16k,32k --peers none --trials 10 --out "$out/baseline-speedup.json"
    step regress_same "$bin" regress --baseline "$out/baseline-speedup.json" --out "$out/regress-same.json"
    ;;
  peers)
    [ -f .peers/build.sh ] || { echo "refresh.sh: no .peers/build.sh: run experiments/build_peers.sh assemble first" >&2; exit 2; }
    env_file=$(mktemp) || exit 3
    step build_peers bash -c 'experiments/build_peers.sh build .peers > "$0"' "$env_file"
    eval "$(cat "$env_file")"
    rm -f "$env_file"
    step reproduce_peers "$bin" reproduce --steps speedup-peers-128k,hpc-ops --dir "$out"
    ;;
  reproduce-*)
    case $stage in
      reproduce-1) steps=speedup-llm-bf16 ;;
      reproduce-2) steps=speedup-llm-fp8 ;;
      reproduce-3) steps=speedup-density5-bf16 ;;
      reproduce-4) steps=speedup-density5-fp8 ;;
      reproduce-5) steps=sweep-alpha,correction,chunked ;;
      reproduce-6) steps=density-niah,breakdown,hpc-ops,hpc-ops-index-128k ;;
    esac
    step "reproduce_${steps//,/_}" "$bin" reproduce --steps "$steps" --dir "$out"
    ;;
esac

{
  echo "=== summary of $stage on $slug"
  printf '%s\n' "${summary[@]}"
} | tee -a "$log"
for s in "${summary[@]}"; do [ "${s##* }" = 0 ] || exit 1; done
