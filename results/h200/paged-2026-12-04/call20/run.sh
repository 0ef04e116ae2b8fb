#!/usr/bin/env bash
# Call 20 of issue 14: where the BF16 select's time goes by source line, main's kernels (P =
# a7ed528): ncu's source counters (warp stall samples per CUDA line) and warp-state statistics
# for the 128K one pass, chunk 0 and chunk 8 of 128K in 8K chunks (without the cache), for the
# next session's select work. Run as `mkdir -p /tmp/var && ln -sfn $PWD /tmp/var/wt-P &&
# DEADLINE=200 bash run.sh`: the binary names its sources by the path it was built from
# (/tmp/var/wt-P, a worktree of a7ed528), and without that link a first run (same call) found none.
set -u
[ -x .carry/d4/P/fp2bench ] || tar xJf .carry/d4/variants.tar.xz -C .carry/d4
[ "$PWD" = /work/main ] || { mkdir -p /work; ln -sfn "$PWD" /work/main; }
export LD_LIBRARY_PATH=$PWD/.carry:/usr/local/cuda/lib64 FP2_EXPERIMENTS_DIR=$PWD/experiments \
  FP2_PLOTS_DIR=$PWD/plots FP2_PYTHON=$(command -v python3)
W=$OUT/w; mkdir -p $W
start=$SECONDS; deadline=${DEADLINE:-300}
step() { local name=$1 cap=$2; shift 2; local t0=$SECONDS l=$(( deadline - (SECONDS - start) ))
  [ $l -gt $cap ] && l=$cap; [ $l -lt 1 ] && l=1
  timeout "$l" "$@" > "$W/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s (at $((SECONDS - start))s)" | tee -a $W/steps.txt; return $rc; }
P=.carry/d4/P/fp2bench
for x in one-pass:1 chunk0:3 chunk8:35; do
  n=${x%%:*} skip=${x##*:}
  step ncu-$n 100 ncu --clock-control none --section SourceCounters --section WarpStateStats --section LaunchStats \
    --import-source yes -k regex:select_sm90 --launch-skip $skip --launch-count 1 -o $W/$n \
    $P chunked --backend gpu --len 128k --chunk 8k --trials 1
  step src-$n 30 bash -c "ncu --import $W/$n.ncu-rep --page source --csv --print-source cuda,sass > $W/src-$n.csv"
  step raw-$n 30 bash -c "ncu --import $W/$n.ncu-rep --page raw --csv > $W/raw-$n.csv"
done
rm -f $W/*.ncu-rep
cat $W/steps.txt; ls -la $W; head -c 600 $W/src-chunk0.csv
tar cJf $OUT/w.tar.xz -C $OUT w && rm -rf $W
