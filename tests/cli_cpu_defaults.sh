#!/usr/bin/env bash
# The cpu backend's defaults end in seconds and say so (issue 16, item 8): run, density,
# speedup, sweep-alpha and correction without --len run at 1K on the cpu (the GPU defaults,
# 4K-128K or 64K, take the fp64 oracle minutes to hours), say so on stderr and show progress
# there; what reproduce --quick writes on a machine without a GPU, results/cpu/, is ignored by
# git. Usage: cli_cpu_defaults.sh path/to/fp2bench
set -u
bin=$(realpath "$1")
src=$(realpath "${FP2_SOURCE_DIR:-$(dirname "$0")/..}")
name=cli_cpu_defaults.sh
. "$src/tests/lib/expect.sh"
need_python3

for cmd in run density speedup sweep-alpha correction; do
  timeout 120 "$bin" "$cmd" --backend cpu --heads 4:1 --dim 16 --out "$dir/$cmd.json" >/dev/null 2>"$dir/err.txt"
  rc=$?
  [ $rc -eq 0 ] || { fail "$cmd at its cpu default exited $rc: $(tail -2 "$dir/err.txt")"; continue; }
  grep -q "the cpu backend (fp64 oracle) runs at a small size, --len 1k" "$dir/err.txt" ||
    fail "$cmd does not say that the cpu runs it at 1K: $(head -2 "$dir/err.txt")"
  [ "$(wc -l <"$dir/err.txt")" -ge 2 ] || fail "$cmd shows no progress on stderr"
  python3 -c 'import json, sys; assert {r["len"] for r in json.load(open(sys.argv[1]))["rows"]} == {1024}' \
    "$dir/$cmd.json" || fail "$cmd did not run at 1K on the cpu"
done
if git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
  git -C "$src" check-ignore -q results/cpu/speedup-llm-bf16.json || fail "results/cpu/ is not ignored by git"
fi

[ "$failures" -eq 0 ] || exit 1
echo "cli_cpu_defaults.sh: ok"
