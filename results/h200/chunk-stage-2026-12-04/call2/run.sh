#!/usr/bin/env bash
# Call 2 (planned 2026-12-04): the records of the build that a timing call picks, WIN (a build
# of ../build.sh in .carry/d4, in the same carry; HEAD once call 4's winner has landed).
# gpu_check.sh (every case); the records chunked-128k.json, chunked.json, breakdown.json and
# the perf baseline with its regress against a fresh run, into res/; memcheck of
# gpu_pooled_cache. Run it only on a WIN whose code is on main, and commit the records with
# that commit's provenance (the binaries carry it).
WIN=${WIN:?set WIN to the picked build}
source results/h200/chunk-stage-2026-12-04/steps.sh
mkdir -p $W/res
B=.carry/d4/$WIN
step chunked-128k 70 $B/fp2bench chunked --backend gpu --len 128k --chunk 8k,16k --out $W/res/chunked-128k.json
step chunked 50 $B/fp2bench chunked --backend gpu --out $W/res/chunked.json
step breakdown 40 $B/fp2bench breakdown --backend gpu --out $W/res/breakdown.json
step baseline 70 bash results/refresh.sh baseline $B $W/res
step gpu_check 150 bash tests/gpu_check.sh $B/fp2bench
step memcheck-cache 60 compute-sanitizer --tool memcheck --error-exitcode 9 $B/gpu_pooled_cache
grep -hE "SLOWER|FASTER|SAME" $W/baseline.log $W/res/baseline.log | cut -c1-160 | tail -12
python3 - "$W/res/chunked-128k.json" <<'PY'
import json, sys
for x in json.load(open(sys.argv[1]))["rows"]:
    print(x["mode"], x["chunk"], "index %.3f (staged %.3f) pool %.3f select %.3f" % (x["index_ms"], x["index_staged_ms"], x["pool_ms"], x["select_ms"]),
          "ratio %.3f" % x.get("index_vs_uncached", 0))
PY
finish
