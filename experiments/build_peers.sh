#!/usr/bin/env bash
# Builds the block-sparse peers (FlashPrefill V2 and HPC-Ops) from a user's own git copies of
# their repositories, with the recipe that lives outside this repository (a folder holding
# assemble.sh, patches/ and ourfiles/: ../shared/peers/ in this project), and says where the
# libraries are for experiments/peers.py. No third-party code is ever committed here: the
# assembled folder (default .peers/, which .gitignore lists) stays untracked.
#
#   build_peers.sh assemble RECIPE_DIR FP2_GITDIR HPC_GITDIR [OUT]   # anywhere with git (seconds)
#   build_peers.sh build [OUT]            # on the GPU machine: both libraries (~2 min, 16 cores)
#   eval "$(build_peers.sh env [OUT])"    # FP2_FLASHPREFILL_LIB, FP2_FLASHPREFILL_PY, FP2_HPC_OPS_LIB
#
# assemble checks the result byte for byte against the recipe's sums; build runs the recipe's
# build.sh (torch, CUDA 12.8+ nvcc, ninja; logs in OUT/out/) and then prints what env prints.
# Exit codes: 0 done, 2 usage, 3 a step failed.
set -u
usage() {
  echo "usage: build_peers.sh assemble RECIPE_DIR FP2_GITDIR HPC_GITDIR [OUT] | build [OUT] | env [OUT]" >&2
  exit 2
}
fail() {
  echo "build_peers.sh: $*" >&2
  exit 3
}

# The three variables, for eval; fails naming the library that is not built.
print_env() {
  local out=$1 fp2 hpc
  fp2=$(ls "$out"/fp2/flashprefill_ops/fp2_C*.so 2>/dev/null | head -1)
  hpc=$(ls "$out"/hpc/hpc_peers_C*.so 2>/dev/null | head -1)
  [ -n "$fp2" ] || fail "no FlashPrefill V2 library in '$out/fp2/flashprefill_ops' (run build first)"
  [ -n "$hpc" ] || fail "no HPC-Ops library in '$out/hpc' (run build first)"
  echo "export FP2_FLASHPREFILL_LIB='$(readlink -f "$fp2")'"
  echo "export FP2_FLASHPREFILL_PY='$(readlink -f "$out/fp2/flashprefill_ops")'"
  echo "export FP2_HPC_OPS_LIB='$(readlink -f "$hpc")'"
}

[ $# -ge 1 ] || usage
case $1 in
assemble)
  [ $# -ge 4 ] && [ $# -le 5 ] || usage
  recipe=$2 out=${5:-.peers}
  [ -f "$recipe/assemble.sh" ] || fail "no assemble.sh in '$recipe' (the recipe folder)"
  bash "$recipe/assemble.sh" "$3" "$4" "$out" || fail "assembling into '$out' failed (see above)"
  ;;
build)
  [ $# -le 2 ] || usage
  out=${2:-.peers}
  [ -f "$out/build.sh" ] || fail "no build.sh in '$out' (run assemble first)"
  OUT=${OUT:-$(readlink -f "$out")/out} bash "$out/build.sh" >&2 || fail "building the peers failed (logs in $out/out/)"
  print_env "$out"
  ;;
env)
  [ $# -le 2 ] || usage
  print_env "${2:-.peers}"
  ;;
*) usage ;;
esac
