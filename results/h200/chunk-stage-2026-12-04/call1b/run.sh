#!/usr/bin/env bash
# Call 1b (planned 2026-12-05; no device was lent in the session that wrote it): select v17, V
# (branch select-turns, 700c245: BF16 with two warpgroups a CTA taking turns at the tensor
# cores), against its base C (csr-one-kernel, e157101); both built by ../build.sh into
# .carry/d4, the same carry as call 1. Run it after call 1, as device time allows.
# V's GPU tests; checks on what v17 changes: an odd number of items with pairs that straddle
# two tiles (12:3 at 13k+77, hkv odd: the two warpgroups' stage counts differ, and the last
# CTA's second warpgroup has no item), Q by cp.async (24:8), a mixed batch, FP8 (its kernel
# is recompiled around the same code); synccheck and racecheck of the named barriers; chunked
# at 128K in 8K chunks alternated C V twice (one-pass select and the ratio); ncu of the one-
# pass select at 128K (tensor pipe, XU, issue, registers). Nothing here is a record.
set -u
[ -x .carry/d4/V/fp2bench ] || tar xJf .carry/d4/variants.tar.xz -C .carry/d4
[ "$PWD" = /work/main ] || { mkdir -p /work; ln -sfn "$PWD" /work/main; }
export LD_LIBRARY_PATH=$PWD/.carry:/usr/local/cuda/lib64 FP2_EXPERIMENTS_DIR=$PWD/experiments \
  FP2_PLOTS_DIR=$PWD/plots FP2_PYTHON=$(command -v python3)
W=$OUT/w; mkdir -p $W
start=$SECONDS; deadline=${DEADLINE:-570}
step() { local name=$1 cap=$2; shift 2; local t0=$SECONDS l=$(( deadline - (SECONDS - start) ))
  [ $l -gt $cap ] && l=$cap; [ $l -lt 1 ] && l=1
  timeout "$l" "$@" > "$W/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s (at $((SECONDS - start))s)" | tee -a $W/steps.txt; return $rc; }
V=.carry/d4/V
for t in gpu_kernels gpu_pooled_cache gpu_paged gpu_forward_graph gpu_neighbour_nan; do step $t-V 40 $V/$t; done
step check-odd-V 60 $V/fp2bench check --backend gpu --kernel sm90 --dtype bf16 --heads 12:3 --len 13k+77 --rows 256
step check-g3-V 60 $V/fp2bench check --backend gpu --kernel sm90 --dtype bf16 --heads 24:8 --len 16k --rows 256
step check-requests-V 60 $V/fp2bench check --backend gpu --kernel sm90 --dtype bf16 --requests 8k/64k,3x4k,1k/16k+77 --rows 256
step check-fp8-V 90 $V/fp2bench check --backend gpu --kernel sm90 --dtype fp8 --len 32k --rows 256
step synccheck-V 90 compute-sanitizer --tool synccheck --error-exitcode 9 $V/fp2bench check --backend gpu --kernel sm90 --dtype bf16 --heads 12:3 --len 2k+77 --rows 256
step racecheck-V 90 compute-sanitizer --tool racecheck --error-exitcode 9 $V/fp2bench check --backend gpu --kernel sm90 --dtype bf16 --heads 12:3 --len 2k+77 --rows 256
for v in C V C V; do
  step chunked-$v-$SECONDS 45 .carry/d4/$v/fp2bench chunked --backend gpu --len 128k --chunk 8k --out $W/chunked-$v-$SECONDS.json
done
M=sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,gpu__time_duration.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread
for v in C V; do
  step ncu-$v 40 ncu --clock-control none --csv --page raw -k regex:select_sm90_kernel --launch-count 1 --metrics $M \
    .carry/d4/$v/fp2bench run --backend gpu --dtype bf16 --len 128k --rows 1 --trials 1
done
cat $W/steps.txt
for f in $W/gpu_*.log $W/check-*.log $W/*check-V.log; do
  echo "$(basename $f .log): $(grep -E 'ERROR SUMMARY|ok|FAIL|fail|mismatch|flips|cases' $f | tail -2 | tr '\n' ' ' | cut -c1-160)"; done
python3 - "$W" <<'PY'
import glob, json, sys, csv
for f in sorted(glob.glob(sys.argv[1] + "/chunked-*.json"), key=lambda f: int(f.split("-")[-1][:-5])):
    try: rows = {r["mode"]: r for r in json.load(open(f))["rows"]}
    except Exception as e: print(f, e); continue
    u, c = rows["chunked"], rows["chunked+cache"]
    print(f.split("/")[-1][8:-5], "one-pass select %.3f" % rows["one-pass"]["select_ms"],
          "| uncached %.3f (select %.3f)" % (u["index_ms"], u["select_ms"]),
          "| cached %.3f (pool %.3f select %.3f)" % (c["index_ms"], c["pool_ms"], c["select_ms"]),
          "| ratio %.3f" % c["index_vs_uncached"])
for f in sorted(glob.glob(sys.argv[1] + "/ncu-*.log")):
    try:
        rows = [r for r in csv.reader(open(f)) if r]
        h = next(i for i, r in enumerate(rows) if r[0] == "ID")
        for r in rows[h + 2:]:
            m = dict(zip(rows[h], r))
            print(f.split("/")[-1], " ".join("%s=%s" % (k.split("__")[1][:28], m[k]) for k in rows[h] if "__" in k))
    except Exception as e: print(f, e)
PY
tar cJf $OUT/w.tar.xz -C $OUT w && rm -rf $W
