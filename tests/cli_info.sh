#!/usr/bin/env bash
# fp2bench info: describes the machine and exits 0 with or without a GPU; --out writes a
# result document with one row per GPU; --out - keeps stdout for the JSON alone.
# Usage: cli_info.sh path/to/fp2bench
set -u
bin=$1
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
failures=0
fail() { echo "cli_info.sh: $*" >&2; failures=$((failures + 1)); }

"$bin" info >"$dir/out.txt" 2>"$dir/err.txt" || fail "info failed: $(cat "$dir/err.txt")"
for field in fp2bench host cpu "cuda runtime" "cuda driver"; do
  grep -q "^$field " "$dir/out.txt" || fail "info does not print '$field'"
done
gpus=$(grep -c '^gpu [0-9]*:$' "$dir/out.txt")
if [ "$gpus" -eq 0 ]; then
  grep -q '^no CUDA GPU found' "$dir/out.txt" || fail "no gpu listed and no 'no CUDA GPU found'"
fi

"$bin" info --out "$dir/info.json" >/dev/null 2>"$dir/err.txt" || fail "info --out failed: $(cat "$dir/err.txt")"
"$bin" info --out - >"$dir/stdout.json" 2>"$dir/text.txt" || fail "info --out - failed"
grep -q '^host ' "$dir/text.txt" || fail "with --out -, the text is not on stderr"
if command -v python3 >/dev/null 2>&1; then
  for json in "$dir/info.json" "$dir/stdout.json"; do
    python3 - "$json" "$gpus" <<'PY' || fail "$json is not the expected document"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "fp2bench/1" and d["experiment"] == "info", d
p = d["provenance"]
assert p["argv"][:2] == ["fp2bench", "info"] and p["command"].startswith("fp2bench info --out"), p
assert len(d["rows"]) == int(sys.argv[2]), d["rows"]
assert (p["gpu"] is None) == (int(sys.argv[2]) == 0), p["gpu"]
for i, row in enumerate(d["rows"]):
    assert row["device"] == i and row["sm_count"] > 0 and "clocks" in row, row
PY
  done
fi

"$bin" info --out "$dir/no/such/dir/x.json" >/dev/null 2>"$dir/err.txt"
rc=$?
[ "$rc" -eq 2 ] || fail "info --out into a missing directory exited $rc, expected 2 (checked before any work)"
grep -q "cannot write '$dir/no/such/dir/x.json'" "$dir/err.txt" || fail "unclear error: $(cat "$dir/err.txt")"
"$bin" info --bogus >/dev/null 2>&1
[ $? -eq 2 ] || fail "info --bogus did not exit 2"
"$bin" info --help | grep -q -- "--out" || fail "info --help does not list --out"

[ "$failures" -eq 0 ] || { echo "cli_info.sh: $failures failure(s)" >&2; exit 1; }
echo "cli_info.sh: ok"
