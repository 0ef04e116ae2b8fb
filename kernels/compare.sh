#!/usr/bin/env bash
# Kernel versions side by side in one GPU run, as kernels/NOTES.md asks of every change:
# the candidate (the last binary named) is checked against the oracle first (a failing
# check is reported and its times are marked), then every binary times the same cases, one
# after the other, on the same inputs (fixed seeds), and a table of attention times and
# rates ends the output. Each run's JSON goes to OUT_DIR.
#
#   kernels/compare.sh OUT_DIR [--kernel K] [--dtype T] [--cases "L:DATA ..."] NAME=BIN [NAME=BIN ...]
#
# A case is a length and a source: dense (--density 1), llm (synth:llm) or nocorr (synth:llm
# without correction). Default cases: 16k, 32k and 128k, dense and llm. Default kernel: sm90;
# default dtype: bf16 (the check and every run take it).
# Exit 0 when the candidate's check passed, 1 when it failed, 2 on bad arguments, 77 without
# a GPU.
set -u
[ $# -ge 2 ] || { sed -n 2,15p "$0" >&2; exit 2; }
out=$1
shift
case_args() { # case_args DATA: the options of a case's source
  case $1 in
    dense) echo "--density 1" ;;
    llm) echo "--data synth:llm" ;;
    nocorr) echo "--data synth:llm --no-correction" ;;
    *) echo "compare.sh: unknown case source '$1'" >&2; return 2 ;;
  esac
}

kernel=sm90
dtype=bf16
cases="16k:dense 16k:llm 32k:dense 32k:llm 128k:dense 128k:llm"
while [ $# -gt 0 ]; do
  case $1 in
    --kernel | --dtype | --cases)
      [ $# -ge 2 ] || { echo "compare.sh: $1 needs a value" >&2; exit 2; }
      case $1 in --kernel) kernel=$2 ;; --dtype) dtype=$2 ;; *) cases=$2 ;; esac
      shift 2
      ;;
    *=*) break ;;
    *) echo "compare.sh: '$1' is not NAME=BIN" >&2; exit 2 ;;
  esac
done
[ $# -ge 1 ] || { echo "compare.sh: no NAME=BIN given" >&2; exit 2; }
for nb in "$@"; do
  [ -x "${nb#*=}" ] || { echo "compare.sh: '${nb#*=}' is not an executable" >&2; exit 2; }
done
for c in $cases; do case_args "${c#*:}" >/dev/null || exit 2; done
candidate=${!#}
cand_bin=${candidate#*=}
. "$(dirname "$0")/../tests/lib/gpu_slug.sh"
gpu_slug "$cand_bin" >/dev/null || { echo "compare.sh: no GPU found: skipped" >&2; exit 77; }
mkdir -p "$out"
verdict=ok
"$cand_bin" check --backend gpu --kernel "$kernel" --dtype "$dtype" --len 1k,2k+77,8k --rows 512 \
  --out "$out/check-${candidate%%=*}.json" >"$out/check-${candidate%%=*}.log" 2>&1 || verdict="FAILED (see check-${candidate%%=*}.log)"
echo "check of ${candidate%%=*}: $verdict"


rows=()
for c in $cases; do
  len=${c%%:*} data=${c#*:}
  args=$(case_args "$data") || exit 2
  for nb in "$@"; do
    name=${nb%%=*} bin=${nb#*=}
    json=$out/$name-$len-$data.json
    # shellcheck disable=SC2086
    if "$bin" run --backend gpu --kernel "$kernel" --dtype "$dtype" --len "$len" $args --rows 16 --trials 5 --out "$json" \
      >"$out/$name-$len-$data.log" 2>&1; then
      rows+=("$(python3 - "$json" "$name" "$len" "$data" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))["rows"][0]
a = r["attend"]
print(f"{sys.argv[2]:<10} {sys.argv[3]:>6} {sys.argv[4]:<7} {r['density']*100:7.2f}% {a['median_ms']:10.3f} "
      f"{a['min_ms']:10.3f} {a['max_ms']:10.3f} {r['attend_tflops']:8.1f}")
EOF
)")
    else
      rows+=("$(printf '%-10s %6s %-7s   run failed: see %s' "$name" "$len" "$data" "$name-$len-$data.log")")
    fi
  done
done
printf '%-10s %6s %-7s %8s %10s %10s %10s %8s\n' version len case density "median ms" "min ms" "max ms" TF/s
printf '%s\n' "${rows[@]}"
echo "candidate check: $verdict"
[ "$verdict" = ok ]
