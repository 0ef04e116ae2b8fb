#!/usr/bin/env bash
# Call 2 of the paged attention (issue 14, 2026-12-05): call 1's plan again with HEAD = 1fa490f
# (the command line's --paged accepted again; the kernels are call 1's, whose tests, checks and
# memcheck passed there), built by `VARIANTS="M HEAD" ../../chunk-stage-2026-12-04/build.sh`:
# gpu_paged as the gate, the checks against the oracle with pages, the times.
source results/h200/chunk-stage-2026-12-04/steps.sh
source results/h200/paged-attention-2026-12-05/steps.sh
step gpu_paged-HEAD 40 $H/gpu_paged
paged_checks
grep -q "^gpu_paged-HEAD rc=0" $W/steps.txt && paged_times
paged_finish
