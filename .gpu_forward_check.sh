#!/usr/bin/env bash
# GPU verification of branch 'forward' (fp2_forward, the backend through it, the CUDA-graph
# test) on the H200, in about 90 s once built. Run from the repository root of the branch.
# Carry build/ (or let this build it: bash tests/setup.sh, minutes) and main's binary
# .carry/s7/bin/fp2bench (BASE=... to name another) for the timing comparison.
# Exits non-zero at the first failing step; the speedup comparison prints each row's ratio
# and fails when fp2_forward's total is more than 3 % slower than main's.
set -u
cd "$(dirname "$0")"
BASE=${BASE:-.carry/s7/bin/fp2bench}
NEW=build/fp2bench
step() { echo "== $*" >&2; "$@" || { echo "FAILED ($?): $*" >&2; exit 1; }; }

[ -x "$NEW" ] || step bash tests/setup.sh
nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader

# The new test first: eager and graph-replayed fp2_forward against the oracle.
step build/tests/gpu_forward_graph
step build/tests/gpu_kernels
step build/tests/gpu_neighbour_nan
# The backend, now through fp2_forward, against the oracle: sm90 and portable, bf16 and fp8.
for kernel in sm90 portable; do
  for dtype in bf16 fp8; do
    step "$NEW" check --backend gpu --kernel "$kernel" --dtype "$dtype" --len 1k,2k+77 --rows 256
  done
done

# Not slower than main: the same speedup run on both binaries, totals compared row by row.
if [ ! -x "$BASE" ]; then
  echo "no baseline binary at '$BASE': speedup comparison skipped" >&2
  exit 1
fi
out=$(mktemp -d)
for which in base new; do
  bin=$BASE
  [ "$which" = new ] && bin=$NEW
  step "$bin" speedup --len 32k,128k --dtype both --peers none --trials 5 --out "$out/$which.json"
done
python3 - "$out/base.json" "$out/new.json" <<'EOF'
import json, sys
rows = [{(r["len"], r["dtype"]): r for r in json.load(open(f))["rows"]} for f in sys.argv[1:3]]
slower = 0
for key in sorted(rows[0]):
    b, n = rows[0][key], rows[1].get(key)
    if n is None:
        print(f"{key}: missing from the new run"); slower += 1; continue
    for f in ("index_ms", "total_ms"):
        ratio = n[f] / b[f]
        flag = "  SLOWER" if f == "total_ms" and ratio > 1.03 else ""
        slower += bool(flag)
        print(f"len {int(key[0])} {key[1]} {f}: main {b[f]:.3f} ms, forward {n[f]:.3f} ms, x{ratio:.3f}{flag}")
sys.exit(1 if slower else 0)
EOF
