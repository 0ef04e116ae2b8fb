#!/usr/bin/env bash
# Call 3 of paged K/V (issue 14): the pooled-means cache. C = pooled-cache (5466f0e), M2 = main
# (c059035). C's checks (gpu_pooled_cache and its memcheck, gpu_paged, gpu_kernels,
# gpu_forward_graph, check of the sm90 kernel), breakdown M2 vs C mirrored (the pool gained the
# cache's branch: its time must not move), then chunked with and without the cache (BF16 at
# 128K, chunks of 8K and 16K; the reproduce step's 64K), and batch --paged 64.
set -u
[ -x .carry/d4/C/fp2bench ] || tar xJf .carry/d4/variants.tar.xz -C .carry/d4
[ "$PWD" = /work/main ] || { mkdir -p /work; ln -sfn "$PWD" /work/main; }
export LD_LIBRARY_PATH=$PWD/.carry:/usr/local/cuda/lib64 FP2_EXPERIMENTS_DIR=$PWD/experiments \
  FP2_PLOTS_DIR=$PWD/plots FP2_PYTHON=$(command -v python3)
W=$OUT/w; mkdir -p $W
start=$SECONDS; deadline=${DEADLINE:-570}
step() { local name=$1 cap=$2; shift 2; local t0=$SECONDS l=$(( deadline - (SECONDS - start) ))
  [ $l -gt $cap ] && l=$cap; [ $l -lt 1 ] && l=1
  timeout "$l" "$@" > "$W/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s (at $((SECONDS - start))s)" | tee -a $W/steps.txt; return $rc; }
C=.carry/d4/C M=.carry/d4/M2
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > $W/gpu.txt 2>&1
step gpu_pooled_cache 60 $C/gpu_pooled_cache
step memcheck-pooled 120 compute-sanitizer --tool memcheck --error-exitcode 9 $C/gpu_pooled_cache
step gpu_paged 60 $C/gpu_paged
step gpu_kernels 60 $C/gpu_kernels
step gpu_forward_graph 60 $C/gpu_forward_graph
step check-sm90 60 $C/fp2bench check --backend gpu --rows 512 --kernel sm90 --len 1k,2k+77,8k
step check-requests 60 $C/fp2bench check --backend gpu --rows 512 --kernel sm90 --requests 1k,2x300/2k+77,640/4k+77,77
for dt in bf16 fp8; do for r in 1 2; do
  if [ $r = 1 ]; then order="M C"; else order="C M"; fi
  for v in $order; do X=$M/fp2bench; [ $v = C ] && X=$C/fp2bench
    step bd-$dt-$v-$r 40 $X breakdown --backend gpu --dtype $dt --len 32k,128k --trials 3 --out $W/bd-$dt-$v-$r.json; done
done; done
step chunked-128k 150 $C/fp2bench chunked --backend gpu --len 128k --chunk 8k,16k --out $W/chunked-128k.json
step chunked 90 $C/fp2bench chunked --backend gpu --out $W/chunked.json
step batch-paged64 60 $C/fp2bench batch --backend gpu --paged 64 --dtype both --out $W/batch-paged64.json
cat $W/steps.txt
python3 - "$W" <<'PY' | tee $W/table.txt
import json, sys
w = sys.argv[1]
ks = ("quantise", "pool", "select", "attend_uncorrected", "attend_corrected")
print("median ms, rounds 1/2: " + " ".join(ks))
for dt in ("bf16", "fp8"):
    for L in (32768, 131072):
        for n in ("M", "C"):
            try:
                rs = [next(x for x in json.load(open(f"{w}/bd-{dt}-{n}-{r}.json"))["rows"] if x["len"] == L) for r in (1, 2)]
            except Exception as e:
                print(dt, L, n, "missing", e); continue
            print(dt, L // 1024, "K", n, " ".join("/".join("%.3f" % x[k]["median_ms"] if k in x else "-" for x in rs) for k in ks))
PY
for f in chunked-128k chunked; do echo "== $f"; grep -v "^fp2bench:" $W/$f.log | tail -8 | cut -c1-120; done
for f in gpu_pooled_cache memcheck-pooled gpu_paged check-sm90 check-requests batch-paged64; do echo "== $f"; tail -2 $W/$f.log | cut -c1-160; done
tar cJf $OUT/w.tar.xz -C $OUT w && rm -rf $W
