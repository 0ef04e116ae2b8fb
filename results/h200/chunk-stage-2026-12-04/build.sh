#!/usr/bin/env bash
# Builds the variants of calls 3 and 4 (and of calls 1, 1b, 1c, planned and replaced by them)
# from their commits into .carry/d4/{N,S,C,SC,V,U,L,LV}
# (each in a git worktree, so that its provenance names its commit; V = select v17, branch
# select-turns, and U = the cached pool under the select, branch pool-under-select, both on C)
# and packs those built for `run`'s carry. By default N, LV and S, what call 4 runs;
# VARIANTS="V" builds and packs only V, and so on:
#   carry [".carry/d4/variants.tar.xz", ".carry/libcjson.so.1"]
# Run from the repository's root on the build machine (nvcc, cmake, ninja, libcjson-dev).
set -eu
root=$PWD tmp=${TMPDIR:-/tmp}/fp2-variants
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p $tmp .carry/d4
cp -L /usr/lib/x86_64-linux-gnu/libcjson.so.1 .carry/
declare -A rev_of=([N]=3a44014 [S]=36c2790 [C]=e157101 [SC]=e6d47a6 [V]=700c245 [U]=4570237 [L]=45acf3f [LV]=9ea9069)
variants=${VARIANTS:-N LV S}
for n in $variants; do
  rev=${rev_of[$n]:?unknown variant $n}
  git worktree remove -f $tmp/wt-$n 2>/dev/null || true
  git worktree add -f --detach $tmp/wt-$n $rev >/dev/null
  cmake -S $tmp/wt-$n -B $tmp/build-$n -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build $tmp/build-$n --target fp2bench gpu_kernels gpu_pooled_cache gpu_paged gpu_forward_graph \
    gpu_neighbour_nan >/dev/null
  mkdir -p .carry/d4/$n
  cp $tmp/build-$n/fp2bench .carry/d4/$n/
  for t in gpu_kernels gpu_pooled_cache gpu_paged gpu_forward_graph gpu_neighbour_nan; do
    cp $tmp/build-$n/tests/$t .carry/d4/$n/
  done
  echo "$n: $(grep -o '"[0-9a-f]\{40\}"' $tmp/build-$n/generated/build_info.c | head -1)"
done
cd .carry/d4 && tar cJf variants.tar.xz $variants
