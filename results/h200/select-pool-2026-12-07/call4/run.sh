#!/usr/bin/env bash
# Call 4 (written 2026-12-07, seventh session; ran on an H200 in the eighth, without its last
# h200_records line: w-h200/): W3 (W2 counting a pooling CTA's
# tasks done once, after one fence) and W3b (W3 with two pooling CTAs an SM) against HEAD, and
# W3D's timeline (timeline2's prints and, for pooling CTA 0, the time of each slice's arrival and
# each ticket: `grep '^T ' w/timeline.log`). Whether the per-task fences held W2's pooling CTAs at
# 15 us a task (kernels/NOTES.md, "W: the fresh blocks pooled inside the select ..."). Builds:
# `VARIANTS="HEAD P W3 W3b W3D" ../chunk-stage-2026-12-04/build.sh`. Any card: the verdict needs
# only W3 against HEAD on the same card; on an H200 main's records follow (h200_records).
source results/h200/chunk-stage-2026-12-04/steps.sh
variant_gates W3 gpu_pooled_cache gpu_kernels gpu_paged gpu_forward_graph
sanitize_pooled W3
step gpu_pooled_cache-W3b 40 .carry/d4/W3b/gpu_pooled_cache
if passed gpu_pooled_cache-W3 gpu_pooled_cache-W3b; then
  step timeline-W3D 40 .carry/d4/W3D/fp2bench chunked --backend gpu --len 72k --chunk 8k --trials 1
  mv $W/timeline-W3D.log $W/timeline.log
  chunked_each HEAD W3 W3b W3b W3 HEAD
fi
h200_records W3 P HEAD
finish
