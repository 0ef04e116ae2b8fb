#!/usr/bin/env bash
# Call 1: P = pdl-select (e30bb72: programmatic dependent launch pool -> select -> compact ->
# place) against M0 = 4e851d2 (main). P's gpu_kernels and gpu_pooled_cache; chunked at 128K in
# 8K chunks M0 P M0 P; P's other GPU tests, memcheck, gpu_check.sh.
set -u
[ -x .carry/d4/P/fp2bench ] || tar xJf .carry/d4/variants.tar.xz -C .carry/d4
[ "$PWD" = /work/main ] || { mkdir -p /work; ln -sfn "$PWD" /work/main; }
export LD_LIBRARY_PATH=$PWD/.carry:/usr/local/cuda/lib64 FP2_EXPERIMENTS_DIR=$PWD/experiments \
  FP2_PLOTS_DIR=$PWD/plots FP2_PYTHON=$(command -v python3)
W=$OUT/w; mkdir -p $W
start=$SECONDS; deadline=${DEADLINE:-330}
step() { local name=$1 cap=$2; shift 2; local t0=$SECONDS l=$(( deadline - (SECONDS - start) ))
  [ $l -gt $cap ] && l=$cap; [ $l -lt 1 ] && l=1
  timeout "$l" "$@" > "$W/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s (at $((SECONDS - start))s)" | tee -a $W/steps.txt; return $rc; }
P=.carry/d4/P
for t in gpu_kernels gpu_pooled_cache; do step $t 40 $P/$t; done
for v in M0 P M0 P; do
  step chunked-$v-${SECONDS} 35 .carry/d4/$v/fp2bench chunked --backend gpu --len 128k --chunk 8k --out $W/chunked-$v-$SECONDS.json
done
for t in gpu_paged gpu_forward_graph gpu_neighbour_nan; do step $t 40 $P/$t; done
step memcheck-g3 60 compute-sanitizer --tool memcheck --error-exitcode 9 $P/fp2bench check --backend gpu --kernel sm90 --len 2k+77 --heads 24:8 --dtype bf16
step memcheck-cache 60 compute-sanitizer --tool memcheck --error-exitcode 9 $P/gpu_pooled_cache
which nsys nsight-sys > $W/nsys.txt 2>&1
step gpu_check 150 bash tests/gpu_check.sh $P/fp2bench
cat $W/steps.txt
for t in gpu_kernels gpu_pooled_cache gpu_paged gpu_forward_graph gpu_neighbour_nan gpu_check memcheck-g3 memcheck-cache; do
  echo "$t: $(grep -E 'ERROR SUMMARY|ok|FAIL|fail|mismatch|cases' $W/$t.log | tail -2 | tr '\n' ' ' | cut -c1-200)"; done
cat $W/nsys.txt
python3 - "$W" <<'PY'
import glob, json, sys
for f in sorted(glob.glob(sys.argv[1] + "/chunked-*.json"), key=lambda f: int(f.split("-")[-1][:-5])):
    for x in json.load(open(f))["rows"]:
        print(f.split("/")[-1][8:-5], x["mode"], "index %.3f pool %.3f select %.3f" % (x["index_ms"], x["pool_ms"], x["select_ms"]), "ratio %.3f" % x.get("index_vs_uncached", 0),
              "c0 %.4f c15 %.4f" % (x["per_chunk"][0]["select_ms"], x["per_chunk"][-1]["select_ms"]) if "per_chunk" in x else "")
PY
tar cJf $OUT/w.tar.xz -C $OUT w && rm -rf $W
