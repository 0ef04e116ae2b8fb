#!/usr/bin/env bash
# Call 6 of paged K/V (issue 14): chunked at 128K (8K and 16K chunks) on G = 5b621dc, which
# adds each chunk's stage times (per_chunk), and at 64K (the reproduce step's setting).
set -u
[ -x .carry/d4/G/fp2bench ] || tar xJf .carry/d4/variants.tar.xz -C .carry/d4
[ "$PWD" = /work/main ] || { mkdir -p /work; ln -sfn "$PWD" /work/main; }
export LD_LIBRARY_PATH=$PWD/.carry:/usr/local/cuda/lib64 FP2_EXPERIMENTS_DIR=$PWD/experiments \
  FP2_PLOTS_DIR=$PWD/plots FP2_PYTHON=$(command -v python3)
W=$OUT/w; mkdir -p $W
start=$SECONDS; deadline=${DEADLINE:-570}
step() { local name=$1 cap=$2; shift 2; local t0=$SECONDS l=$(( deadline - (SECONDS - start) ))
  [ $l -gt $cap ] && l=$cap; [ $l -lt 1 ] && l=1
  timeout "$l" "$@" > "$W/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s (at $((SECONDS - start))s)" | tee -a $W/steps.txt; return $rc; }
G=.carry/d4/G
step chunked-128k 60 $G/fp2bench chunked --backend gpu --len 128k --chunk 8k,16k --out $W/chunked-128k.json
step chunked 40 $G/fp2bench chunked --backend gpu --out $W/chunked.json
cat $W/steps.txt
for f in chunked-128k chunked; do grep -v "^fp2bench:" $W/$f.log | cut -c1-120; done
python3 - "$W" <<'PY'
import json, sys
for x in json.load(open(sys.argv[1] + "/chunked-128k.json"))["rows"]:
    if x.get("per_chunk") and x["chunk"] == 8192:
        print(x["mode"], " ".join("%d:%.3f+%.3f" % (c["first"] // 1024, c["pool_ms"], c["select_ms"]) for c in x["per_chunk"]))
PY
tar cJf $OUT/w.tar.xz -C $OUT w && rm -rf $W
