#!/usr/bin/env bash
# Ran once, 2026-12-05, on an H100 (w/: its logs; kernels/NOTES.md, "Call 6", what it found).
# Call 6 (2026-12-05): where main's select spends its time in a chunk. ncu's warp states (the
# stall reasons, in the raw page) and SourceCounters (its summary only) of the select at chunk 8 of 72K in 8K
# chunks (8K queries, 64K keys before them; the launch count as call 4 had it: the one pass
# takes select launches 0-2, chunk c 3 + 6c to 8 + 6c, so skip 52 is chunk 8's), build N
# (main's select, 3a44014; ../build.sh). Carry as call 5's.
source results/h200/chunk-stage-2026-12-04/steps.sh
M=sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,gpu__time_duration.sum,launch__registers_per_thread
N=".carry/d4/N/fp2bench chunked --backend gpu --len 72k --chunk 8k --trials 1"
step ncu-chunk8-states 90 ncu --clock-control none --section WarpStateStats --section SchedulerStats \
  --section SourceCounters --metrics $M -k regex:select_sm90_kernel --launch-skip 52 --launch-count 1 $N
step ncu-chunk8-raw 90 ncu --clock-control none --csv --page raw --section WarpStateStats -k regex:select_sm90_kernel \
  --launch-skip 52 --launch-count 1 --metrics $M $N
cat $W/steps.txt
grep -E "Stall|stall|Warp Cycles|Issued|Eligible|Active Warps|Duration|Tensor|xu|issue" $W/ncu-chunk8-states.log | cut -c1-150 | head -60
tar cJf $OUT/w.tar.xz -C $OUT w && rm -rf $W
