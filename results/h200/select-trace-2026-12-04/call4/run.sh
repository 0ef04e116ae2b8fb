#!/usr/bin/env bash
# Call 4: W = select-whole-tile (c573842: BF16 on one whole-tile product a stage, m64n128, one
# accumulator at 4 CTAs, the stage released when its product has completed) against M = main
# e7651ff. W's gpu_kernels and gpu_pooled_cache; TW's timeline (W plus stamps: 0 keys landed, 1 product
# done, 2 released, 3-4 first half scored, 5 second half); ncu of the BF16 select at 128K one pass for M and W;
# chunked at 128K in 8K chunks M W M W.
set -u
[ -x .carry/d4/W/fp2bench ] || tar xJf .carry/d4/variants.tar.xz -C .carry/d4
[ "$PWD" = /work/main ] || { mkdir -p /work; ln -sfn "$PWD" /work/main; }
export LD_LIBRARY_PATH=$PWD/.carry:/usr/local/cuda/lib64 FP2_EXPERIMENTS_DIR=$PWD/experiments \
  FP2_PLOTS_DIR=$PWD/plots FP2_PYTHON=$(command -v python3)
W=$OUT/w; mkdir -p $W/tr
start=$SECONDS; deadline=${DEADLINE:-400}
step() { local name=$1 cap=$2; shift 2; local t0=$SECONDS l=$(( deadline - (SECONDS - start) ))
  [ $l -gt $cap ] && l=$cap; [ $l -lt 1 ] && l=1
  timeout "$l" "$@" > "$W/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s (at $((SECONDS - start))s)" | tee -a $W/steps.txt; return $rc; }
for t in gpu_kernels gpu_pooled_cache; do step $t-W 40 .carry/d4/W/$t; done
FP2_SELECT_TRACE=$W/tr/one step trace-one 40 .carry/d4/TW/fp2bench breakdown --backend gpu --len 128k --trials 1
FP2_SELECT_TRACE=$W/tr/chk step trace-chunked 60 .carry/d4/TW/fp2bench chunked --backend gpu --len 128k --chunk 8k --trials 1
M=sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,gpu__time_duration.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread
for v in M W; do
  step ncu128-$v 30 ncu --clock-control none --csv --page raw -k regex:select_sm90 --launch-skip 1 --launch-count 1 --metrics $M \
    .carry/d4/$v/fp2bench breakdown --backend gpu --len 128k --trials 1
done
for v in M W M W; do
  step chunked-$v-${SECONDS} 35 .carry/d4/$v/fp2bench chunked --backend gpu --len 128k --chunk 8k --out $W/chunked-$v-$SECONDS.json
done
cat $W/steps.txt
for t in gpu_kernels gpu_pooled_cache; do echo "$t-W: $(tail -1 $W/$t-W.log)"; done
python3 - "$W" <<'PY'
import glob, json, sys, csv
for f in sorted(glob.glob(sys.argv[1] + "/chunked-*.json"), key=lambda f: int(f.split("-")[-1][:-5])):
    for x in json.load(open(f))["rows"]:
        print(f.split("/")[-1][8:-5], x["mode"], "index %.3f pool %.3f select %.3f" % (x["index_ms"], x["pool_ms"], x["select_ms"]), "ratio %.3f" % x.get("index_vs_uncached", 0))
for f in sorted(glob.glob(sys.argv[1] + "/ncu*.log")):
    rows = [r for r in csv.reader(open(f)) if r]
    h = next(i for i, r in enumerate(rows) if r[0] == "ID")
    for r in rows[h + 2:]:
        m = dict(zip(rows[h], r))
        print(f.split("/")[-1], m["Grid Size"], {k.split("__")[1][:24]: m[k] for k in rows[h] if "__" in k and k.split("__")[0] in ("gpu", "sm", "smsp") or k.startswith("launch__registers")})
PY
tar cJf $OUT/w.tar.xz -C $OUT w && rm -rf $W
