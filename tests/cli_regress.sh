#!/usr/bin/env bash
# fp2bench regress on the fixture results: exit 0 for a repeat, 1 for an injected 10%
# slowdown, 2 for results that cannot be compared; the JSON of the comparison.
# Usage: cli_regress.sh path/to/fp2bench
set -u
bin=$1
fx=${FP2_SOURCE_DIR:-$(dirname "$0")/..}/tests/fixtures/regress
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
failures=0
fail() { echo "cli_regress.sh: $*" >&2; failures=$((failures + 1)); }
expect() {
  local want=$1 cand=$2
  "$bin" regress --baseline "$fx/base.json" --candidate "$fx/$cand.json" --out "$dir/$cand.out.json" \
    >"$dir/out.txt" 2>"$dir/err.txt"
  local rc=$?
  [ $rc -eq "$want" ] || fail "$cand: exit $rc, want $want: $(cat "$dir/out.txt" "$dir/err.txt")"
}
expect 0 same
expect 1 slow10
grep -q "attend .*SLOWER" "$dir/out.txt" || fail "slow10: no SLOWER attend row"
expect 0 fast10
expect 2 other-config
grep -q "dtype" "$dir/err.txt" || fail "other-config: the refusal does not name dtype"
expect 2 other-gpu
"$bin" regress --candidate "$fx/same.json" >/dev/null 2>&1
[ $? -eq 2 ] || fail "regress without --baseline does not exit 2"
if command -v python3 >/dev/null 2>&1; then
  python3 - "$dir/slow10.out.json" <<'PY' || fail "the comparison's JSON is not as expected"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["experiment"] == "regress" and d["config"]["floor"] == 0.03, d["config"]
v = {r["timing"]: r["verdict"] for r in d["rows"]}
assert v["attend"] == "SLOWER" and abs(next(r for r in d["rows"] if r["timing"] == "attend")["change"] - 0.1) < 0.01, d["rows"]
PY
fi
[ $failures -eq 0 ] || { echo "cli_regress.sh: $failures failure(s)" >&2; exit 1; }
echo "cli_regress.sh: ok"
