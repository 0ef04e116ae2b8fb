#!/usr/bin/env bash
# Call 1 (planned 2026-12-04; no device was lent in the session that wrote it). Four builds,
# made by ../build.sh into .carry/d4: N = main (3a44014: chunked times the index stage as one
# range beside the stage-by-stage passes), S = select v16 (branch select-persistent), C = the
# CSR in one kernel (branch csr-one-kernel), SC = both (branch select-persistent-csr).
# The GPU tests of S, C and SC; checks with many items a CTA and many CSR groups (16K at 24:8,
# Q by cp.async; a mixed batch; 40 requests of 4K, 1280 groups, two rounds of the CSR's
# look-back; FP8 at 32K, 256 groups); chunked at 128K in 8K chunks
# alternated N C S SC twice; memcheck and racecheck of SC; last, as time allows, ncu of the
# select stage's kernels at one chunk. Nothing here is a record: call 2 writes the winner's.
set -u
[ -x .carry/d4/SC/fp2bench ] || tar xJf .carry/d4/variants.tar.xz -C .carry/d4
[ "$PWD" = /work/main ] || { mkdir -p /work; ln -sfn "$PWD" /work/main; }
export LD_LIBRARY_PATH=$PWD/.carry:/usr/local/cuda/lib64 FP2_EXPERIMENTS_DIR=$PWD/experiments \
  FP2_PLOTS_DIR=$PWD/plots FP2_PYTHON=$(command -v python3)
W=$OUT/w; mkdir -p $W
start=$SECONDS; deadline=${DEADLINE:-570}
step() { local name=$1 cap=$2; shift 2; local t0=$SECONDS l=$(( deadline - (SECONDS - start) ))
  [ $l -gt $cap ] && l=$cap; [ $l -lt 1 ] && l=1
  timeout "$l" "$@" > "$W/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s (at $((SECONDS - start))s)" | tee -a $W/steps.txt; return $rc; }
for v in SC C S; do
  for t in gpu_kernels gpu_pooled_cache gpu_paged gpu_forward_graph gpu_neighbour_nan; do step $t-$v 40 .carry/d4/$v/$t; done
done
step check-g3-16k-SC 60 .carry/d4/SC/fp2bench check --backend gpu --kernel sm90 --dtype bf16 --len 16k --heads 24:8 --rows 256
step check-requests-SC 60 .carry/d4/SC/fp2bench check --backend gpu --kernel sm90 --dtype bf16 --requests 8k/64k,3x4k,1k/16k+77 --rows 256
step check-40x4k-SC 90 .carry/d4/SC/fp2bench check --backend gpu --kernel sm90 --dtype bf16 --requests 40x4k --rows 256
step check-32k-C 90 .carry/d4/C/fp2bench check --backend gpu --kernel sm90 --dtype fp8 --len 32k --rows 256
for v in N C S SC N C S SC; do
  step chunked-$v-$SECONDS 45 .carry/d4/$v/fp2bench chunked --backend gpu --len 128k --chunk 8k --out $W/chunked-$v-$SECONDS.json
done
step memcheck-SC 60 compute-sanitizer --tool memcheck --error-exitcode 9 .carry/d4/SC/fp2bench check --backend gpu --kernel sm90 --len 8k --heads 24:8 --dtype bf16 --rows 256
step racecheck-SC 90 compute-sanitizer --tool racecheck --error-exitcode 9 .carry/d4/SC/fp2bench check --backend gpu --kernel sm90 --len 4k --dtype bf16 --rows 256
M=gpu__time_duration.sum,launch__registers_per_thread,launch__grid_size
# Chunk 8 of 72K in 8K chunks with the cache: 3 passes a pipeline call (warm-up, staged, whole),
# 54 before it (the one pass, 8 chunks twice, chunk 8 without the cache); N runs 3 matching
# kernels a pass (select, compact, place), SC 2 (select, csr).
for v in N:162:3 SC:108:2; do IFS=: read -r n skip count <<< "$v"
  step ncu-$n 60 ncu --clock-control none --csv --page raw -k regex:'select_sm90|compact|place|csr' --launch-skip $skip \
    --launch-count $count --metrics $M .carry/d4/$n/fp2bench chunked --backend gpu --len 72k --chunk 8k --trials 1
done
cat $W/steps.txt
for f in $W/gpu_*.log $W/check-*.log $W/*check-SC.log; do
  echo "$(basename $f .log): $(grep -E 'ERROR SUMMARY|ok|FAIL|fail|mismatch|flips|cases' $f | tail -2 | tr '\n' ' ' | cut -c1-160)"; done
python3 - "$W" <<'PY'
import glob, json, sys, csv
for f in sorted(glob.glob(sys.argv[1] + "/chunked-*.json"), key=lambda f: int(f.split("-")[-1][:-5])):
    try: rows = {r["mode"]: r for r in json.load(open(f))["rows"]}
    except Exception as e: print(f, e); continue
    u, c = rows["chunked"], rows["chunked+cache"]
    print(f.split("/")[-1][8:-5], "one-pass select %.3f" % rows["one-pass"]["select_ms"],
          "| uncached %.3f (staged %.3f)" % (u["index_ms"], u["index_staged_ms"]),
          "| cached %.3f (staged %.3f: pool %.3f select %.3f)" % (c["index_ms"], c["index_staged_ms"], c["pool_ms"], c["select_ms"]),
          "| ratio %.3f (staged %.3f)" % (c["index_vs_uncached"], c["index_staged_ms"] / u["index_staged_ms"]))
for f in sorted(glob.glob(sys.argv[1] + "/ncu-*.log")):
    try:
        rows = [r for r in csv.reader(open(f)) if r]
        h = next(i for i, r in enumerate(rows) if r[0] == "ID")
        for r in rows[h + 2:]:
            m = dict(zip(rows[h], r))
            print(f.split("/")[-1], m["Kernel Name"][:40], m["gpu__time_duration.sum"], m["launch__grid_size"], m["launch__registers_per_thread"])
    except Exception as e: print(f, e)
PY
tar cJf $OUT/w.tar.xz -C $OUT w && rm -rf $W
