#!/usr/bin/env bash
# Call 1 of paged K/V (issue 14): P = paged-land (the paged commits on main), M = main.
# P's checks (gpu_paged, gpu_kernels, gpu_forward_graph, gpu_neighbour_nan, memcheck of
# gpu_paged, check --paged against the oracle, gpu_check.sh), then breakdown M vs P
# (contiguous: the pool's loop was restructured) and P with --paged 16 and 64, in mirrored
# order, FP8 and BF16.
set -u
[ -x .carry/d4/P/fp2bench ] || tar xJf .carry/d4/variants.tar.xz -C .carry/d4
[ "$PWD" = /work/main ] || { mkdir -p /work; ln -sfn "$PWD" /work/main; }
export LD_LIBRARY_PATH=$PWD/.carry:/usr/local/cuda/lib64 FP2_EXPERIMENTS_DIR=$PWD/experiments \
  FP2_PLOTS_DIR=$PWD/plots FP2_PYTHON=$(command -v python3)
W=$OUT/w; mkdir -p $W
start=$SECONDS; deadline=${DEADLINE:-570}
step() { local name=$1 cap=$2; shift 2; local t0=$SECONDS l=$(( deadline - (SECONDS - start) ))
  [ $l -gt $cap ] && l=$cap; [ $l -lt 1 ] && l=1
  timeout "$l" "$@" > "$W/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s (at $((SECONDS - start))s)" | tee -a $W/steps.txt; return $rc; }
P=.carry/d4/P M=.carry/d4/M
step gpu_paged 90 $P/gpu_paged
step gpu_kernels 60 $P/gpu_kernels
step gpu_forward_graph 60 $P/gpu_forward_graph
step gpu_neighbour_nan 60 $P/gpu_neighbour_nan
step memcheck-paged 180 compute-sanitizer --tool memcheck --error-exitcode 9 $P/gpu_paged
ck() { $P/fp2bench check --backend gpu --rows 512 "$@"; }
step check-paged16-sm90 60 ck --kernel sm90 --paged 16 --requests 1k,2x300/2k+77,640/4k+77,77
step check-paged64-fp8 60 ck --kernel sm90 --paged 64 --dtype fp8 --requests 8k/64k,3x4k,1k/16k+77 --heads 28:4
step check-paged256-portable 60 ck --kernel portable --paged 256 --len 2k+77 --batch 2 --heads 28:4
step gpu_check 200 bash tests/gpu_check.sh $P/fp2bench
# Mirrored: M P P16 P64, then P64 P16 P M (P16/P64: P with --paged 16/64).
for dt in fp8 bf16; do for r in 1 2; do
  if [ $r = 1 ]; then order="M P P16 P64"; else order="P64 P16 P M"; fi
  for v in $order; do X=.carry/d4/${v:0:1}/fp2bench; pg=; [ ${#v} -gt 1 ] && pg="--paged ${v:1}"
    step bd-$dt-$v-$r 40 $X breakdown --backend gpu --dtype $dt --len 32k,128k --trials 3 $pg --out $W/bd-$dt-$v-$r.json; done
done; done
cat $W/steps.txt
python3 - "$W" <<'PY' | tee $W/table.txt
import json, sys
w = sys.argv[1]
ks = ("quantise", "pool", "select", "attend_uncorrected", "attend_corrected")
print("median ms, rounds 1/2: " + " ".join(ks))
for dt in ("fp8", "bf16"):
    for L in (32768, 131072):
        for n in ("M", "P", "P16", "P64"):
            try:
                rs = [next(x for x in json.load(open(f"{w}/bd-{dt}-{n}-{r}.json"))["rows"] if x["len"] == L) for r in (1, 2)]
            except Exception as e:
                print(dt, L, n, "missing", e); continue
            print(dt, L // 1024, "K", n, " ".join("/".join("%.3f" % x[k]["median_ms"] if k in x else "-" for x in rs) for k in ks))
PY
for f in gpu_paged memcheck-paged gpu_check check-paged16-sm90 check-paged64-fp8 check-paged256-portable; do echo "== $f"; tail -2 $W/$f.log | cut -c1-160; done
tar cJf $OUT/w.tar.xz -C $OUT w && rm -rf $W
