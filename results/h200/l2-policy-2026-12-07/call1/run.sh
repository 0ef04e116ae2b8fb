#!/usr/bin/env bash
# Call 1 (2026-12-07, fourth session): the select's Q (E1) and also the pool's K and V (E2) read
# under an evict-first L2 policy, against HEAD, then e45e33e, built by
# `VARIANTS="HEAD E1 E2" results/h200/chunk-stage-2026-12-04/build.sh` (E1 and E2 as patches on
# e45e33e then; E1 has landed since, and e45e33e is build.sh's P: run again, HEAD's place is P's). The question: does a
# chunk's index stage stop paying the write-back of the lines the memset flush left dirty?
# In order of what each step decides: the card; E2's GPU tests and checks (g = 4, Q by TMA;
# g = 3, by cp.async) — a cache hint must not change a bit; `chunked` at 128K in 8K chunks
# alternated HEAD E1 E2 three times (each chunk's pool and select, the attention after them,
# which may now pay the write-back instead); memcheck of E2's pooled-cache test.
source results/h200/chunk-stage-2026-12-04/steps.sh
E2=.carry/d4/E2
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,power.limit --format=csv | tee $W/gpu.txt
for t in gpu_kernels gpu_pooled_cache gpu_paged gpu_forward_graph; do step $t-E2 40 $E2/$t; done
step check-g4-E2 60 $E2/fp2bench check --backend gpu --kernel sm90 --dtype bf16 --len 16k --rows 256
step check-g3-E2 60 $E2/fp2bench check --backend gpu --kernel sm90 --dtype bf16 --heads 24:8 --len 16k --rows 256
if grep -q "^gpu_pooled_cache-E2 rc=0" $W/steps.txt; then
  for v in HEAD E1 E2 E2 E1 HEAD HEAD E1 E2; do
    step chunked-$v-$SECONDS 50 .carry/d4/$v/fp2bench chunked --backend gpu --len 128k --chunk 8k \
      --out $W/chunked-$v-$SECONDS.json
  done
fi
step memcheck-pooled-E2 60 compute-sanitizer --tool memcheck --error-exitcode 9 $E2/gpu_pooled_cache
# Beside summary.py's index lines: each run's attention and pass totals (uncached / cached) and the
# first and last chunks' pool and select without (u) and with (c) the cache, in µs.
python3 - $W <<'P' > $OUT/attention.txt
import glob, json, sys
for f in sorted(glob.glob(sys.argv[1] + "/chunked-*.json"), key=lambda f: int(f.split("-")[-1][:-5])):
    rows = {r["mode"]: r for r in json.load(open(f))["rows"]}
    u, c = rows["chunked"], rows["chunked+cache"]
    ends = " ".join("%s c%d pool %.1f select %.1f" % (n, i, 1e3 * r["per_chunk"][i]["pool_ms"],
                                                        1e3 * r["per_chunk"][i]["select_ms"])
                    for n, r in (("u", u), ("c", c)) for i in (0, -1))
    print(f.split("/")[-1][8:-5], "attend %.3f / %.3f" % (u["attend_ms"], c["attend_ms"]),
          "total %.3f / %.3f" % (u["total_ms"], c["total_ms"]), "|", ends)
P
finish
cat $OUT/attention.txt 2>/dev/null
