#!/usr/bin/env bash
# kernels/compare.sh, the side-by-side timing of kernel versions: bad arguments exit 2 with a
# message naming the fault, and without a GPU it skips (77) before writing anything.
# Usage: cli_compare.sh path/to/fp2bench
set -u
bin=$1
script=$(dirname "$0")/../kernels/compare.sh
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
failures=0
fail() { echo "cli_compare.sh: $*" >&2; failures=$((failures + 1)); }

expect() { # expect STATUS MESSAGE ARGS...: compare.sh ARGS exits STATUS, stderr holds MESSAGE
  local want=$1 msg=$2
  shift 2
  bash "$script" "$@" >/dev/null 2>"$dir/err.txt"
  local got=$?
  [ "$got" = "$want" ] || fail "'compare.sh $*' exited $got, not $want"
  grep -q -- "$msg" "$dir/err.txt" || fail "'compare.sh $*' did not say '$msg': $(cat "$dir/err.txt")"
}

expect 2 "usage\|side by side" "$dir/out"
expect 2 "is not NAME=BIN" "$dir/out" "$bin"
expect 2 "no NAME=BIN given" "$dir/out" --kernel sm90
expect 2 "is not an executable" "$dir/out" "a=$dir/missing"
if ! "$bin" info 2>/dev/null | grep -q '^  name '; then
  expect 77 "no GPU found" "$dir/out" "a=$bin"
  [ ! -e "$dir/out" ] || fail "compare.sh wrote '$dir/out' before finding no GPU"
fi

[ "$failures" -eq 0 ] || exit 1
echo "cli_compare.sh: ok"
