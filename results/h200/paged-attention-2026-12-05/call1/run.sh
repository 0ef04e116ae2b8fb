#!/usr/bin/env bash
# Ran once, 2026-12-05, on an H100 (w/: its logs and JSONs; kernels/NOTES.md, "The paged
# attention", what it found). Every HEAD run with --paged was refused (the command line's
# stand-in pages named no page: 1fa490f); call 2 times them.
# Call 1 of the paged attention (issue 14, 2026-12-05): HEAD = c525362 (b768585's kernels:
# BF16 attention reads the pages, sm90 one TMA box a page, portable through the table; no copy
# of K and V; the pooled cache takes pages) against M = b9b03d2 (the pool copies paged K and V
# contiguous for the attention), built by `VARIANTS="M HEAD" ../../chunk-stage-2026-12-04/build.sh`.
# In order of what each step decides: HEAD's GPU tests (gpu_paged: paged bit for bit against
# contiguous, the sm90 paged kernel included; gpu_pooled_cache: the cache with pages of 16 and
# 64) and checks against the oracle with pages; then, only if gpu_paged passed, the times;
# memcheck last.
source results/h200/chunk-stage-2026-12-04/steps.sh
source results/h200/paged-attention-2026-12-05/steps.sh
paged_call
