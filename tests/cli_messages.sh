#!/usr/bin/env bash
# Messages name the real problem (issue 16, item 9): an integer out of range is out of range,
# not "not an integer"; a negative seed is negative; a number below the smallest double is
# taken as the nearest one; a huge argument is not echoed whole; regress without timings is a
# usage error, and a 0 ms timing shows "-", not "-nan%"; run --rows 0 prints no "nan%".
# Usage: cli_messages.sh path/to/fp2bench
set -u
bin=$(realpath "$1")
fx=$(cd "${FP2_SOURCE_DIR:-$(dirname "$0")/..}" && pwd)/tests/fixtures/regress
name=cli_messages.sh
# shellcheck source=lib/expect.sh
. "$(dirname "$(realpath "$0")")/lib/expect.sh"
need_python3

expect 2 "--recent: '99999999999' is out of range" "$bin" run --recent 99999999999 --backend cpu
expect 2 "--heads: '4294967296:1' is out of range" "$bin" run --heads 4294967296:1 --backend cpu
expect 2 "--alpha: '1e400' is out of range" "$bin" run --alpha 1e400 --backend cpu
expect 2 "--alpha: 'x' is not a number" "$bin" run --alpha x --backend cpu
expect 2 "--seed: '-1' is negative" "$bin" run --seed -1 --backend cpu
expect 2 "--len: '99999999999999999999' is too large a size" "$bin" run --len 99999999999999999999 --backend cpu
expect 2 "--trials: '12x' is not an integer" "$bin" run --trials 12x --backend cpu
"$bin" run --alpha 1e-400 --len 300 --heads 2:1 --dim 16 --backend cpu >/dev/null 2>err.txt ||
  fail "--alpha 1e-400 (nearest double 0) was refused: $(cat err.txt)"
huge=$(head -c 100000 /dev/zero | tr '\0' 7)
for args in "--len $huge" "--alpha $huge" "--dtype $huge" "--heads $huge:1" "$huge" "--$huge"; do
  # shellcheck disable=SC2086
  "$bin" run $args --backend cpu >/dev/null 2>err.txt
  [ "$(wc -c <err.txt)" -lt 300 ] || fail "a 100 KB argument was echoed: $(wc -c <err.txt) bytes for '${args:0:12}...'"
done

"$bin" run --len 300 --heads 2:1 --dim 16 --backend cpu --rows 0 >out.txt 2>err.txt || fail "run --rows 0 failed"
grep -qi nan out.txt && fail "run --rows 0 prints nan: $(cat out.txt)"
grep -q "not measured (--rows 0)" out.txt || fail "run --rows 0 does not say the quality was not measured"

"$bin" density --len 1k --heads 2:1 --dim 16 --backend cpu --out untimed.json >/dev/null 2>&1 || fail "density failed"
expect 2 "have no timings to compare" "$bin" regress --baseline untimed.json --candidate untimed.json
python3 - "$fx/base.json" zero.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
t = d["rows"][0]["pool"]
t["trials_ms"] = [0.0] * len(t["trials_ms"])
t["median_ms"] = t["min_ms"] = t["max_ms"] = 0.0
json.dump(d, open(sys.argv[2], "w"))
PY
"$bin" regress --baseline zero.json --candidate zero.json >out.txt 2>err.txt
grep -qi nan out.txt && fail "regress prints nan for a 0 ms timing: $(grep -i nan out.txt)"
grep -q "pool .* - " out.txt || fail "regress does not show '-' for the change of a 0 ms timing: $(cat out.txt)"

[ "$failures" -eq 0 ] || exit 1
echo "cli_messages.sh: ok"
