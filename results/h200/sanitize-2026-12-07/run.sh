#!/usr/bin/env bash
# compute-sanitizer on main's build (HEAD of ../chunk-stage-2026-12-04/build.sh), any sm_90 card
# (the call the peers' call makes where no H200 comes): results/h200/README.md lists the
# sanitizers on this build's sm90 kernels, and the portable kernel's check at 64K and 128K, as not
# yet measured. memcheck and synccheck of `check` on small odd shapes (12:3 at 3K+77: a partial
# block and tile, hkv odd, g = 4 splitting no position; 24:8 at 2K+5: g = 3, Q by cp.async), in
# both dtypes on the sm90 kernels and in BF16 on the portable ones, and of a batch of a prompt and
# a chunk in pages of 16 and of 64 keys; memcheck of the GPU tests of pages and the pooled cache;
# then the portable kernels' check at 64K and 128K (BF16, 1024 sampled rows), each cut at its
# cap. Carry: .carry/d4/variants.tar.xz and .carry/libcjson.so.1; run as
# `DEADLINE=330 bash results/h200/sanitize-2026-12-07/run.sh`.
source results/h200/chunk-stage-2026-12-04/steps.sh
for tool in memcheck synccheck; do
  for dtype in bf16 fp8; do
    sanitized $tool sm90-$dtype-12x3 45 $H/fp2bench check --backend gpu --kernel sm90 --dtype $dtype --heads 12:3 --len 3k+77 --rows 256
  done
  sanitized $tool sm90-bf16-24x8 45 $H/fp2bench check --backend gpu --kernel sm90 --dtype bf16 --heads 24:8 --len 2k+5 --rows 256
  sanitized $tool portable-bf16-12x3 45 $H/fp2bench check --backend gpu --kernel portable --dtype bf16 --heads 12:3 --len 3k+77 --rows 256
  for pages in 16 64; do
    sanitized $tool sm90-paged$pages 45 $H/fp2bench check --backend gpu --kernel sm90 --dtype bf16 --heads 12:3 --paged $pages \
      --requests 3k+77,1k/4k+5 --rows 256
  done
done
sanitized memcheck gpu_paged 45 $H/gpu_paged
sanitized memcheck gpu_pooled_cache 45 $H/gpu_pooled_cache
portable_check check-portable-64k 60 --dtype bf16 --len 64k
portable_check check-portable-128k 90 --dtype bf16 --len 128k
verdicts
pack
