#!/usr/bin/env bash
# Call 3 of the paged attention (issue 14, 2026-12-05): HEAD = the hybrid (pages of 64 keys and
# up read by the attention, pages of 16 copied contiguous by the pool as in M; the pooled
# cache with pages the attention reads) against M = b9b03d2, built by `VARIANTS="M HEAD"
# ../../chunk-stage-2026-12-04/build.sh`: call 1's steps (HEAD's GPU tests and checks, the
# checks with pages, the times if gpu_paged passed, memcheck of the two paged tests).
source results/h200/chunk-stage-2026-12-04/steps.sh
source results/h200/paged-attention-2026-12-05/steps.sh
paged_call
