#!/usr/bin/env bash
# Call 2: the records on N = b9def15 (select v15, the select stage on dependent launches gated
# by the kernels' ptxVersion): N's GPU tests; chunked at 128K (8K and 16K chunks) on N and, to
# see the gate keep the early starts, P = e30bb72 at 8K; the perf baseline and its regress;
# chunked (the default lengths); check at 128K BF16 (select v15's first); reproduce-1
# (speedup-llm-bf16) and breakdown.
set -u
[ -x .carry/d4/N/fp2bench ] || tar xJf .carry/d4/variants.tar.xz -C .carry/d4
[ "$PWD" = /work/main ] || { mkdir -p /work; ln -sfn "$PWD" /work/main; }
export LD_LIBRARY_PATH=$PWD/.carry:/usr/local/cuda/lib64 FP2_EXPERIMENTS_DIR=$PWD/experiments \
  FP2_PLOTS_DIR=$PWD/plots FP2_PYTHON=$(command -v python3)
W=$OUT/w; mkdir -p $W/res
start=$SECONDS; deadline=${DEADLINE:-570}
step() { local name=$1 cap=$2; shift 2; local t0=$SECONDS l=$(( deadline - (SECONDS - start) ))
  [ $l -gt $cap ] && l=$cap; [ $l -lt 1 ] && l=1
  timeout "$l" "$@" > "$W/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s (at $((SECONDS - start))s)" | tee -a $W/steps.txt; return $rc; }
N=.carry/d4/N
for t in gpu_kernels gpu_pooled_cache gpu_paged gpu_forward_graph gpu_neighbour_nan; do step $t 40 $N/$t; done
step chunked-128k 60 $N/fp2bench chunked --backend gpu --len 128k --chunk 8k,16k --out $W/res/chunked-128k.json
step chunked-P 35 .carry/d4/P/fp2bench chunked --backend gpu --len 128k --chunk 8k --out $W/chunked-P.json
step baseline 60 bash results/refresh.sh baseline $N $W/res
step chunked 60 $N/fp2bench chunked --backend gpu --out $W/res/chunked.json
step check128k 150 $N/fp2bench check --backend gpu --len 128k --dtype bf16
step reproduce-1 240 bash results/refresh.sh reproduce-1 $N $W/res
step breakdown 60 $N/fp2bench reproduce --steps breakdown --dir $W/res
cat $W/steps.txt
for t in gpu_kernels gpu_pooled_cache gpu_paged gpu_forward_graph gpu_neighbour_nan check128k; do
  echo "$t: $(grep -E 'ERROR SUMMARY|ok|FAIL|fail|mismatch|flips|cases' $W/$t.log | tail -2 | tr '\n' ' ' | cut -c1-240)"; done
grep -hE "SLOWER|FASTER|SAME|UNCLEAR|summary|exit" $W/res/*.log | cut -c1-160 | tail -14
python3 - "$W" <<'PY'
import json, sys
for f in ["res/chunked-128k.json", "chunked-P.json"]:
    for x in json.load(open(sys.argv[1] + "/" + f))["rows"]:
        print(f[:12], x["mode"], x["chunk"], "index %.3f pool %.3f select %.3f" % (x["index_ms"], x["pool_ms"], x["select_ms"]), "ratio %.3f" % x.get("index_vs_uncached", 0))
PY
tail -8 $W/res/reproduce-1.log | cut -c1-200
tar cJf $OUT/w.tar.xz -C $OUT w && rm -rf $W
