#!/usr/bin/env bash
# Call 4 of paged K/V (issue 14): the pooled cache's second form. C2 = bd406d3 (the pool's grid
# past the prefixes, a light pass copying the prefix's means), C = 5466f0e (call 3's), M2 = main
# (c059035). C2's checks, breakdown M2 vs C2 (the pool without a cache must not move), chunked
# at 128K (8K and 16K chunks) C vs C2, the reproduce step's chunked (64K) on C2, and batch
# --paged 64 in FP8 (call 3's ran past its limit after BF16).
set -u
[ -x .carry/d4/C2/fp2bench ] || tar xJf .carry/d4/variants.tar.xz -C .carry/d4
[ "$PWD" = /work/main ] || { mkdir -p /work; ln -sfn "$PWD" /work/main; }
export LD_LIBRARY_PATH=$PWD/.carry:/usr/local/cuda/lib64 FP2_EXPERIMENTS_DIR=$PWD/experiments \
  FP2_PLOTS_DIR=$PWD/plots FP2_PYTHON=$(command -v python3)
W=$OUT/w; mkdir -p $W
start=$SECONDS; deadline=${DEADLINE:-570}
step() { local name=$1 cap=$2; shift 2; local t0=$SECONDS l=$(( deadline - (SECONDS - start) ))
  [ $l -gt $cap ] && l=$cap; [ $l -lt 1 ] && l=1
  timeout "$l" "$@" > "$W/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s (at $((SECONDS - start))s)" | tee -a $W/steps.txt; return $rc; }
C=.carry/d4/C C2=.carry/d4/C2 M=.carry/d4/M2
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > $W/gpu.txt 2>&1
step gpu_pooled_cache 60 $C2/gpu_pooled_cache
step memcheck-pooled 120 compute-sanitizer --tool memcheck --error-exitcode 9 $C2/gpu_pooled_cache
step gpu_paged 60 $C2/gpu_paged
step gpu_kernels 60 $C2/gpu_kernels
step gpu_forward_graph 60 $C2/gpu_forward_graph
for r in 1 2; do
  if [ $r = 1 ]; then order="M C2"; else order="C2 M"; fi
  for v in $order; do X=.carry/d4/$v/fp2bench; [ $v = M ] && X=$M/fp2bench
    step bd-bf16-$v-$r 40 $X breakdown --backend gpu --dtype bf16 --len 32k,128k --trials 3 --out $W/bd-bf16-$v-$r.json; done
done
for v in M C2; do X=.carry/d4/$v/fp2bench; [ $v = M ] && X=$M/fp2bench
  step bd-fp8-$v-1 40 $X breakdown --backend gpu --dtype fp8 --len 32k,128k --trials 3 --out $W/bd-fp8-$v-1.json; done
step chunked-128k-C 60 $C/fp2bench chunked --backend gpu --len 128k --chunk 8k,16k --out $W/chunked-128k-C.json
step chunked-128k-C2 60 $C2/fp2bench chunked --backend gpu --len 128k --chunk 8k,16k --out $W/chunked-128k-C2.json
step chunked 40 $C2/fp2bench chunked --backend gpu --out $W/chunked.json
step batch-paged64-fp8 75 $C2/fp2bench batch --backend gpu --paged 64 --dtype fp8 --out $W/batch-paged64-fp8.json
cat $W/steps.txt
python3 - "$W" <<'PY' | tee $W/table.txt
import json, sys
w = sys.argv[1]
ks = ("quantise", "pool", "select", "attend_uncorrected", "attend_corrected")
print("median ms, rounds 1/2: " + " ".join(ks))
for dt, names in (("bf16", ("M", "C2")), ("fp8", ("M", "C2"))):
    for L in (32768, 131072):
        for n in names:
            rs = []
            for r in (1, 2):
                try: rs.append(next(x for x in json.load(open(f"{w}/bd-{dt}-{n}-{r}.json"))["rows"] if x["len"] == L))
                except Exception: pass
            print(dt, L // 1024, "K", n, " ".join("/".join("%.3f" % x[k]["median_ms"] for x in rs) for k in ks))
for f in ("chunked-128k-C", "chunked-128k-C2", "chunked"):
    try:
        for x in json.load(open(f"{w}/{f}.json"))["rows"]:
            print(f, x["mode"], x["chunk"], "index %.3f pool %s select %s total %.3f idx/uncached %s" % (x["index_ms"],
                  "%.3f" % x["pool_ms"] if "pool_ms" in x else "-", "%.3f" % x["select_ms"] if "select_ms" in x else "-",
                  x["total_ms"], "%.3f" % x["index_vs_uncached"] if "index_vs_uncached" in x else "-"))
    except Exception as e: print(f, "missing", e)
PY
for f in gpu_pooled_cache memcheck-pooled gpu_paged gpu_kernels gpu_forward_graph batch-paged64-fp8; do echo "== $f"; tail -2 $W/$f.log | cut -c1-160; done
tar cJf $OUT/w.tar.xz -C $OUT w && rm -rf $W
