#!/usr/bin/env bash
# Call 7 of paged K/V (issue 14): does a chunk's short index stage wait on the host? H = 09b959e
# (the host's time in fp2_forward, submit_ms, in chunked's per_chunk): chunked at 128K in 8K
# chunks and at 32K in 8K chunks; then ncu's GPU duration of each pool and select kernel of the
# 32K run, to set against the stages' event times.
set -u
[ -x .carry/d4/H/fp2bench ] || tar xJf .carry/d4/variants.tar.xz -C .carry/d4
[ "$PWD" = /work/main ] || { mkdir -p /work; ln -sfn "$PWD" /work/main; }
export LD_LIBRARY_PATH=$PWD/.carry:/usr/local/cuda/lib64 FP2_EXPERIMENTS_DIR=$PWD/experiments \
  FP2_PLOTS_DIR=$PWD/plots FP2_PYTHON=$(command -v python3)
W=$OUT/w; mkdir -p $W
start=$SECONDS; deadline=${DEADLINE:-570}
step() { local name=$1 cap=$2; shift 2; local t0=$SECONDS l=$(( deadline - (SECONDS - start) ))
  [ $l -gt $cap ] && l=$cap; [ $l -lt 1 ] && l=1
  timeout "$l" "$@" > "$W/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s (at $((SECONDS - start))s)" | tee -a $W/steps.txt; return $rc; }
H=.carry/d4/H
step chunked-128k 60 $H/fp2bench chunked --backend gpu --len 128k --chunk 8k --out $W/chunked-128k.json
step chunked-32k 30 $H/fp2bench chunked --backend gpu --len 32k --chunk 8k --trials 3 --out $W/chunked-32k.json
step ncu-32k 120 ncu --clock-control none --csv --page raw --metrics gpu__time_duration.sum,launch__grid_size \
  -k regex:"select|compact|copy_kernel|Scan|pool|cached_means" $H/fp2bench chunked --backend gpu --len 32k --chunk 8k --trials 1
cat $W/steps.txt
for f in chunked-128k chunked-32k; do grep -v "^fp2bench:" $W/$f.log | cut -c1-120; done
python3 - "$W" <<'PY'
import json, sys
w = sys.argv[1]
for f in ("chunked-128k", "chunked-32k"):
    for x in json.load(open(f"{w}/{f}.json"))["rows"]:
        if x.get("per_chunk"):
            print(f, x["mode"], " ".join("%d:%.3f+%.3f/%.3f" % (c["first"] // 1024, c["pool_ms"], c["select_ms"], c["submit_ms"]) for c in x["per_chunk"]))
PY
grep -c '"' $W/ncu-32k.log; grep -E '^"[0-9]' $W/ncu-32k.log | awk -F'","' '{print $1, $5, $(NF-1), $NF}' | cut -c1-200 | tail -45
tar cJf $OUT/w.tar.xz -C $OUT w && rm -rf $W
