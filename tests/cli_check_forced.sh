#!/usr/bin/env bash
# check --density: the forced random mask goes to the pass as a given index (fp2_forward's
# path for a caller's index), and only the outputs are held to the oracle. On the cpu
# backend: a forced density of 1 keeps every causal block, as alpha = 0 selects them; a
# density of 0.2 keeps fewer; both pass, and the JSON records the forced density.
# tests/gpu_check.sh runs the same on a GPU. Usage: cli_check_forced.sh path/to/fp2bench
set -u
bin=$(realpath "$1")
name=cli_check_forced.sh
# shellcheck source=lib/expect.sh
. "$(dirname "$(realpath "$0")")/lib/expect.sh"
need_python3
small=(--backend cpu --len 1k+77 --heads 8:2 --dtype bf16 --data synth:llm --no-correction)

for run in "density1:--density 1" "alpha0:--alpha 0" "density02:--density 0.2"; do
  tag=${run%%:*}
  # shellcheck disable=SC2086
  "$bin" check "${small[@]}" ${run#*:} --out "$tag.json" >out.txt 2>err.txt ||
    fail "check ${run#*:} failed ($?): $(head -c 300 err.txt) $(tail -2 out.txt)"
done
python3 - density1.json alpha0.json density02.json <<'PY' || fail "check --density's JSON is not as expected"
import json, sys
full, alpha0, part = (json.load(open(f)) for f in sys.argv[1:])
blocks = lambda d: d["rows"][0]["index_blocks"]
assert full["config"]["forced_density"] == 1, full["config"].get("forced_density")
assert alpha0["config"]["forced_density"] is None
assert blocks(full) == blocks(alpha0) > 0, (blocks(full), blocks(alpha0))
assert 0 < blocks(part) < blocks(full), (blocks(part), blocks(full))
assert all(r["ok"] for d in (full, alpha0, part) for r in d["rows"])
PY

[ "$failures" -eq 0 ] || exit 1
echo "cli_check_forced.sh: ok"
