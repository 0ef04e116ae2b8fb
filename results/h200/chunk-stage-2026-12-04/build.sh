#!/usr/bin/env bash
# Builds the variants that calls 5 and 7 timed and the builds whose records they wrote into .carry/d4/NAME
# (each in a git worktree of its commit, with its patches applied: a patched build's
# provenance names the commit, dirty) and packs them for `run`'s carry:
#   carry [".carry/d4/variants.tar.xz", ".carry/libcjson.so.1"]
# - N: main's select as call 3 timed it (3a44014; main's kernels have not changed since);
# - LV: N with v17.patch (select v17: BF16 on CTAs of two warpgroups taking turns at the
#   tensor cores);
# - LW: LV with v18.patch (select v18: the heaviest items halved, one per SM, so that a
#   chunk's waves of equal items load Q half an item apart);
# - HEAD: main as it stands, built from its commit. Call 5's HEAD was d488403 (both patches
#   applied as a commit of main's, so that its records had a landed commit's provenance),
#   call 7's 96cbe66 (v19); both lost to N and were reverted (kernels/NOTES.md). The paged
#   attention's call 1 (../paged-attention-2026-12-05) built b768585 as HEAD;
# - M: main before the paged attention (b9b03d2: the pool copies paged K and V for it);
# - T: HEAD with table-early.patch (the sm90 producer reads the page table before the stage
#   is free, so that the wait hides its latency);
# - G: T with gather.patch (pages of 16 gathered by the producer warp's cp.async instead of
#   copied by the pool, whose copy, k16/v16 and FP2_ATTEND_PAGE_MIN it removes; the paged
#   kernel's registers split 56 / 224; the pooled cache with pages of 16);
# - D16: T with page-min-16.patch (FP2_ATTEND_PAGE_MIN 16: pages of 16 a TMA box each, no copy);
# - G3: HEAD with gather3.patch (G widened: pages of 16 gathered by warp 0 and warps 2-3 of the
#   producer warpgroup, warp 1 planning alone there; the pool's copy removed). Written on
#   2026-12-05 (seventh session), run on 2026-12-06 (an H100: 79 % of contiguous);
# - G4: G3 with gather4.patch (all four producer warps gathering, warp 1 planning each
#   unit once it has issued the one before; full barriers counting the gathering lanes, whose
#   cp.async arrive with .noinc);
# - G5: G4 with stages3.patch (three BF16 stages, contiguous too: a measurement of
#   whether the gather's latency wants a deeper pipeline: it does not, call 4; the plans fit up to
#   about 750K keys);
# - G6: G4 with gather6.patch (each copy's source address in a register of its own, computed
#   before the copies: call 4's ncu found the address adds waiting on queued copies). Run in
#   the second session of 2026-12-06: 8 % slower than G4 (the compiler recomputes the addresses);
# - G7: G6 with gather7.patch (the page table read an item ahead, where G6 waits on it where it
#   is used; the paged kernel's split 64 / 216 registers, where 56 / 224 spilled): another 6 %
#   slower. G4 is the best gather, and the gather is shelved (kernels/NOTES.md, calls 6-9).
# - F: HEAD with fresh-pool.patch (with a pooled cache, the sm90 select's CTAs pool the
#   chunk's fresh blocks by ticket before they score, the pool's launch only copies the
#   prefix's means; ../fresh-pool-2026-12-06). Written and first run on 2026-12-06 (third
#   session).
# - E1: b23e871, the sm90 select loading Q's tile under an evict-first L2 policy, so that its
#   misses evict each other, not the dirty lines the timing's memset flush leaves (written on
#   2026-12-07 as a patch on e45e33e, then landed as this commit);
# - E2: E1 with evict-kv.patch (the pool's loads of K and V streamed too, `ld.global.cs`);
# - P: main before E1 (e45e33e), for the H200 call that compares the two (../l2-policy-2026-12-07).
# - E3: the select's Q evict-first on its other two paths too (2026-12-07, fifth session): the
#   cp.async rows where g does not divide 128, landed as 963365a, and FP8's bf16 Q in the
#   conversion by a hinted ld.global.nc, evict-q-fp8.patch on it (not landed). Call 3 built E3
#   as cfa9141 with both hunks in one patch: the same code.
# - W: main (1e31f3c) with ../select-pool-2026-12-07/w.patch (with a pooled cache, the sm90
#   select's grid starts with one CTA an SM that pools the chunk's fresh blocks through cp.async
#   slices, the pool's launch only copying the prefix; a scoring CTA waits only before its first
#   fresh stage, pooling what is left itself); W2 with w2.patch on it (a task's rows found once);
#   WD and W2D with timeline.patch and timeline2.patch (each CTA prints its times). Run on
#   2026-12-07 (seventh session, H100s), not landed (kernels/NOTES.md). W3: W2 with w3.patch
#   (a pooling CTA counts its tasks done once, after one fence); W3b: W3 with w3b.patch (two
#   pooling CTAs an SM); W3D: W3 with timeline3.patch (timeline2's prints and, for pooling CTA 0,
#   each slice's time). Run on an H200 in the eighth session (../select-pool-2026-12-07/call4/w-h200),
#   not landed.
# The patches are kept here because the branches of calls 1-3's variants (S, C, SC, V, U, L,
# and LV's first form) did not outlive their sessions: only main does. By default N, LV and
# HEAD, what call 5 ran; VARIANTS="N HEAD" (call 7) builds and packs only those, and so on.
# Run from the repository's root on the build machine (nvcc, cmake, ninja, libcjson-dev).
set -eu
here=$PWD/results/h200/chunk-stage-2026-12-04 tmp=${TMPDIR:-/tmp}/fp2-variants
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p $tmp .carry/d4
cp -L /usr/lib/x86_64-linux-gnu/libcjson.so.1 .carry/
declare -A rev_of=([N]=3a44014 [LV]=3a44014 [LW]=3a44014 [M]=b9b03d2 [T]=HEAD [G]=HEAD [D16]=HEAD [G3]=HEAD [G4]=HEAD [G5]=HEAD [G6]=HEAD [G7]=HEAD [F]=HEAD [E1]=b23e871 [E2]=b23e871 [P]=e45e33e [E3]=963365a [W]=1e31f3c [W2]=1e31f3c [WD]=1e31f3c [W2D]=1e31f3c [W3]=1e31f3c [W3b]=1e31f3c [W3D]=1e31f3c [HEAD]=HEAD)
sp=../select-pool-2026-12-07 # W's patches (its builds stack them: W2 is W with w2.patch, and so on)
w=$sp/w w2=$sp/w2 w3=$sp/w3
declare -A patches_of=([N]="" [LV]="v17" [LW]="v17 v18" [M]="" [T]="table-early" [G]="table-early gather" [D16]="table-early page-min-16" [G3]="gather3" [G4]="gather3 gather4" [G5]="gather3 gather4 stages3" [G6]="gather3 gather4 gather6" [G7]="gather3 gather4 gather6 gather7" [F]="fresh-pool" [E1]="" [E2]="evict-kv" [P]="" [E3]="evict-q-fp8" [W]="$w"
  [W2]="$w $w2" [WD]="$w $sp/timeline" [W2D]="$w $w2 $sp/timeline2" [W3]="$w $w2 $w3" [W3b]="$w $w2 $w3 $sp/w3b"
  [W3D]="$w $w2 $w3 $sp/timeline3"
  [HEAD]="")
variants=${VARIANTS:-N LV HEAD}
for n in $variants; do
  rev=${rev_of[$n]:?unknown variant $n}
  git worktree remove -f $tmp/wt-$n 2>/dev/null || true
  git worktree add -f --detach $tmp/wt-$n $rev >/dev/null
  for patch in ${patches_of[$n]}; do git -C $tmp/wt-$n apply $here/$patch.patch; done
  cmake -S $tmp/wt-$n -B $tmp/build-$n -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build $tmp/build-$n --target fp2bench fp2_shared gpu_kernels gpu_pooled_cache gpu_paged gpu_forward_graph \
    gpu_neighbour_nan >/dev/null
  mkdir -p .carry/d4/$n
  cp $tmp/build-$n/fp2bench $tmp/build-$n/libfp2.so .carry/d4/$n/
  for t in gpu_kernels gpu_pooled_cache gpu_paged gpu_forward_graph gpu_neighbour_nan; do
    cp $tmp/build-$n/tests/$t .carry/d4/$n/
  done
  echo "$n: $(grep -o '"[0-9a-f]\{40\}"' $tmp/build-$n/generated/build_info.c | head -1)" \
    "dirty $(grep -o 'fp2_git_dirty = -\?[0-9]' $tmp/build-$n/generated/build_info.c | tail -c 2)"
done
cd .carry/d4 && tar cJf variants.tar.xz $variants
