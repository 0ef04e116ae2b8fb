#!/usr/bin/env bash
# Call 14 of issue 14, for the next session's select work: ncu's full sections (raw, CSV) of the
# BF16 sm90 select (v11, M = eb127bc, main's kernels) at 128K one pass and at chunk 8 of 128K in
# 8K chunks (prefix 64K, without the cache): where its warps stall.
set -u
[ -x .carry/d4/M/fp2bench ] || tar xJf .carry/d4/variants.tar.xz -C .carry/d4
export LD_LIBRARY_PATH=$PWD/.carry:/usr/local/cuda/lib64 FP2_EXPERIMENTS_DIR=$PWD/experiments \
  FP2_PLOTS_DIR=$PWD/plots FP2_PYTHON=$(command -v python3)
W=$OUT/w; mkdir -p $W
start=$SECONDS; deadline=${DEADLINE:-300}
step() { local name=$1 cap=$2; shift 2; local t0=$SECONDS l=$(( deadline - (SECONDS - start) ))
  [ $l -gt $cap ] && l=$cap; [ $l -lt 1 ] && l=1
  timeout "$l" "$@" > "$W/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s (at $((SECONDS - start))s)" | tee -a $W/steps.txt; return $rc; }
for at in one-pass:1 chunk8:35; do
  step ncu-${at%%:*} 140 ncu --clock-control none --set full --csv --page raw -k regex:select_sm90 --launch-skip ${at#*:} \
    --launch-count 1 .carry/d4/M/fp2bench chunked --backend gpu --len 128k --chunk 8k --trials 1
done
cat $W/steps.txt
python3 - "$W" <<'PY'
import csv, sys
for n in ("one-pass", "chunk8"):
    rows = [r for r in csv.reader(open(f"{sys.argv[1]}/ncu-{n}.log")) if r]
    h = next(i for i, r in enumerate(rows) if r[0] == "ID")
    hd, v = rows[h], rows[h + 2]
    m = dict(zip(hd, v))
    print("==", n, m.get("Grid Size"), "duration", m.get("gpu__time_duration.sum"))
    st = sorted(((float(m[k].replace(",", "")), k) for k in m if k.startswith("smsp__average_warps_issue_stalled_") and k.endswith("_per_issue_active.ratio") and m[k] not in ("", "n/a")), reverse=True)
    for x, k in st[:10]: print("  %-70s %.3f" % (k[34:], x))
PY
tar cJf $OUT/w.tar.xz -C $OUT w && rm -rf $W
