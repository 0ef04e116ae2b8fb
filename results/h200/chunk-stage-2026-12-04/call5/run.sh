#!/usr/bin/env bash
# Ran once, 2026-12-05, on an H100 (w/: its logs and JSONs; kernels/NOTES.md, "Call 5", what it found).
# Call 5 (2026-12-05): the planned calls 4 (v17 timed against N) and 2 (the winner's records)
# in one, neither of which ran (every start of that day was refused; their scripts are in the
# history). HEAD = main with select v17 and v18 (both patches applied and committed first:
# ../build.sh says how); N = main's select, LV = v17 alone (../build.sh, its default:
# N LV HEAD). In order of what each step decides:
# HEAD's GPU tests and the checks on what v17 and v18 change (hkv odd with items halved and an
# odd unit count; Q by cp.async with items halved); chunked at 128K in 8K chunks, N, LV, then
# HEAD's record (8K and 16K chunks), N again; HEAD's other records (chunked, breakdown, the
# perf baseline with its regress); gpu_check.sh (every case of both kernels); synccheck with
# halved items, racecheck of the named barriers, memcheck of the pooled cache; ncu of the
# one-pass select at 128K for N and HEAD (tensor pipe, XU, registers).
source results/h200/chunk-stage-2026-12-04/steps.sh
head_checks
for v in N LV; do
  step chunked-$v-$SECONDS 45 .carry/d4/$v/fp2bench chunked --backend gpu --len 128k --chunk 8k --out $W/chunked-$v-$SECONDS.json
done
step chunked-128k 70 $H/fp2bench chunked --backend gpu --len 128k --chunk 8k,16k --out $W/res/chunked-128k.json
step chunked-N-$SECONDS 45 .carry/d4/N/fp2bench chunked --backend gpu --len 128k --chunk 8k --out $W/chunked-N-$SECONDS.json
step chunked 50 $H/fp2bench chunked --backend gpu --out $W/res/chunked.json
step breakdown 40 $H/fp2bench breakdown --backend gpu --out $W/res/breakdown.json
step baseline 60 bash results/refresh.sh baseline $H $W/res
step gpu_check 150 bash tests/gpu_check.sh $H/fp2bench
step synccheck-HEAD 50 compute-sanitizer --tool synccheck --error-exitcode 9 $H/fp2bench check --backend gpu --kernel sm90 --dtype bf16 --heads 12:3 --len 12k+77 --rows 64
step racecheck-HEAD 50 compute-sanitizer --tool racecheck --error-exitcode 9 $H/fp2bench check --backend gpu --kernel sm90 --dtype bf16 --heads 12:3 --len 2k+77 --rows 256
step memcheck-cache 40 compute-sanitizer --tool memcheck --error-exitcode 9 $H/gpu_pooled_cache
ncu_one_pass N HEAD
grep -hE "SLOWER|FASTER|SAME" $W/baseline.log $W/res/baseline.log 2>/dev/null | cut -c1-160 | tail -8
python3 - "$W/res/chunked-128k.json" <<'PY'
import json, sys
for x in json.load(open(sys.argv[1]))["rows"]:
    print("HEAD", x["mode"], x["chunk"], "index %.3f (staged %.3f) pool %.3f select %.3f" % (x["index_ms"], x["index_staged_ms"], x["pool_ms"], x["select_ms"]),
          "ratio %.3f" % x.get("index_vs_uncached", 0))
PY
finish
