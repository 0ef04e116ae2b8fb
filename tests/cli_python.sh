#!/usr/bin/env bash
# tests/lib/python.sh, which runs the Python tests: it finds the interpreter when it runs
# ($FP2_PYTHON as a bare name on PATH or as a path, else python3) and skips (77) without one.
# Usage: cli_python.sh path/to/fp2bench (unused: the wrapper is what is tested)
set -u
root=$(realpath "${FP2_SOURCE_DIR:-$(dirname "$0")/..}")
wrapper=$root/tests/lib/python.sh
name=cli_python.sh
. "$root/tests/lib/expect.sh"
py=$(command -v python3) || { echo "cli_python.sh: python3 not found" >&2; exit 77; }
printf 'import sys\nprint("ran", sys.argv[1])\nsys.exit(5)\n' >"$dir/t.py"

for interp in python3 "$py"; do
  got=$(FP2_PYTHON=$interp bash "$wrapper" "$dir/t.py" arg 2>&1)
  status=$?
  [ $status -eq 5 ] && [ "$got" = "ran arg" ] || fail "FP2_PYTHON=$interp: exit $status, output '$got'"
done
got=$(env -u FP2_PYTHON bash "$wrapper" "$dir/t.py" x 2>&1)
[ "$got" = "ran x" ] || fail "without FP2_PYTHON, python3 does not run: '$got'"
FP2_PYTHON=fp2-no-such-python bash "$wrapper" "$dir/t.py" >/dev/null 2>"$dir/err.txt"
[ $? -eq 77 ] || fail "FP2_PYTHON=fp2-no-such-python does not skip (77)"
grep -q "'fp2-no-such-python' not found" "$dir/err.txt" || fail "the skip does not name the interpreter"

[ $failures -eq 0 ] || { echo "cli_python.sh: $failures failure(s)" >&2; exit 1; }
echo "cli_python.sh: ok"
