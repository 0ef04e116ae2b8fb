#!/usr/bin/env bash
# kernels/compare.sh, the side-by-side timing of kernel versions: bad arguments exit 2 with a
# message naming the fault, and without a GPU it skips (77) before writing anything.
# Usage: cli_compare.sh path/to/fp2bench
set -u
bin=$(realpath "$1")
root=$(realpath "$(dirname "$0")/..")
script=$root/kernels/compare.sh
name=cli_compare.sh
. "$root/tests/lib/expect.sh"
. "$root/tests/lib/gpu_slug.sh"

# The usage text is many lines: checked by itself.
bash "$script" out >/dev/null 2>err.txt
[ $? -eq 2 ] && grep -q "side by side" err.txt || fail "'compare.sh out' did not exit 2 with its usage"
expect 2 "is not NAME=BIN" bash "$script" out "$bin"
expect 2 "no NAME=BIN given" bash "$script" out --kernel sm90
expect 2 "needs a value" bash "$script" out --cases
expect 2 "is not an executable" bash "$script" out "a=$dir/missing"
expect 2 "unknown case source 'nope'" bash "$script" out --cases 1k:nope "a=$bin"
if ! gpu_slug "$bin" >/dev/null; then
  expect 77 "no GPU found" bash "$script" out "a=$bin"
  [ ! -e out ] || fail "compare.sh wrote 'out' before finding no GPU"
fi

[ "$failures" -eq 0 ] || exit 1
echo "$name: ok"
