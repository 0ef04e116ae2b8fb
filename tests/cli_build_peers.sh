#!/usr/bin/env bash
# experiments/build_peers.sh without the peers' sources: usage errors (2), the steps that cannot
# run naming what is missing (3), and env's three exports from a folder holding both libraries.
# Usage: cli_build_peers.sh path/to/fp2bench (unused)
set -u
root=$(realpath "${FP2_SOURCE_DIR:-$(dirname "$0")/..}")
script=$root/experiments/build_peers.sh
name=cli_build_peers.sh
. "$root/tests/lib/expect.sh"

bash "$script" >/dev/null 2>&1; [ $? -eq 2 ] || fail "no arguments: not a usage error"
bash "$script" assemble "$dir" >/dev/null 2>&1; [ $? -eq 2 ] || fail "assemble without the git copies: not a usage error"
bash "$script" assemble "$dir" a b "$dir/out" 2>"$dir/err.txt"
[ $? -eq 3 ] && grep -q "no assemble.sh in '$dir'" "$dir/err.txt" || fail "a recipe folder without assemble.sh: $(cat "$dir/err.txt")"
bash "$script" build "$dir" 2>"$dir/err.txt"
[ $? -eq 3 ] && grep -q "no build.sh in '$dir'" "$dir/err.txt" || fail "build before assemble: $(cat "$dir/err.txt")"
bash "$script" env "$dir" 2>"$dir/err.txt"
[ $? -eq 3 ] && grep -q "no FlashPrefill V2 library" "$dir/err.txt" || fail "env before build: $(cat "$dir/err.txt")"

mkdir -p "$dir/p/fp2/flashprefill_ops" "$dir/p/hpc"
touch "$dir/p/fp2/flashprefill_ops/fp2_C.abi3.so" "$dir/p/hpc/hpc_peers_C.cpython-312-x86_64-linux-gnu.so"
got=$(bash "$script" env "$dir/p") || fail "env with both libraries failed"
eval "$got"
[ "${FP2_FLASHPREFILL_LIB:-}" = "$(readlink -f "$dir/p/fp2/flashprefill_ops/fp2_C.abi3.so")" ] &&
  [ "${FP2_FLASHPREFILL_PY:-}" = "$(readlink -f "$dir/p/fp2/flashprefill_ops")" ] &&
  [ "${FP2_HPC_OPS_LIB:-}" = "$(readlink -f "$dir/p/hpc/hpc_peers_C.cpython-312-x86_64-linux-gnu.so")" ] ||
  fail "env's exports: $got"

[ $failures -eq 0 ] || { echo "cli_build_peers.sh: $failures failure(s)" >&2; exit 1; }
echo "cli_build_peers.sh: ok"
