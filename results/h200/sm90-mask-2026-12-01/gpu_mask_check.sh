#!/usr/bin/env bash
# For the next GPU session (branch sm90-mask, not yet run): is the softmax/PV overlap back, is
# the kernel still correct, and is it faster than main, all in one call.
#   usage (on the device, repo root): bash .gpu_mask_check.sh OUT_DIR BASE_BUILD CAND_BUILD...
# BASE_BUILD: main's build folder; each CAND_BUILD a candidate's (this branch's, and e.g. this
# branch built with -DFP2_TRY_REGS240=1 after merging sm90-tune's switch), each with fp2bench
# and tests/gpu_kernels. Needs LD_LIBRARY_PATH with libcjson and FP2_EXPERIMENTS_DIR set.
set -u
out=$1 base=$2
shift 2
cands=("$@")
mkdir -p "$out"
start=$SECONDS
step() { local name=$1 cap=$2; shift 2; local t0=$SECONDS
  timeout "$cap" "$@" > "$out/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s (at $((SECONDS - start))s)" | tee -a "$out/steps.txt"; return $rc; }
# 1. The SASS: how many MUFU.EX2 precede the loop's WARPGROUP.DEPBAR.LE gsb0, 0x0 (main: FP8
#    8 of ~70, BF16 15): the wait for PV(i-1) should now come after (nearly) all of them.
names=(base) dirs=("$base")
for i in "${!cands[@]}"; do names+=("cand$i"); dirs+=("${cands[$i]}"); done
for i in "${!names[@]}"; do
  b=${names[$i]} dir=${dirs[$i]}
  cuobjdump -sass "$dir/fp2bench" > "$out/$b.sass" 2>&1
  python3 - "$out/$b.sass" <<'PY' | tee -a "$out/steps.txt"
import re, sys
text = open(sys.argv[1]).read()
for fn in re.split(r"\n\s*Function : ", text)[1:]:
    name = fn.split("\n", 1)[0]
    if "attend_sm90_kernel" not in name:
        continue
    lines = fn.split("\n")
    # the item loop: the second 'DEPBAR.LE gsb0, 0x1' region; count MUFU between the
    # 'gsb0, 0x1' wait and the next 'gsb0, 0x0' wait, and after it up to the next GMMA issue
    i1 = next(i for i, l in enumerate(lines) if "WARPGROUP.DEPBAR.LE gsb0, 0x1" in l)
    i0 = next(i for i in range(i1, len(lines)) if "WARPGROUP.DEPBAR.LE gsb0, 0x0" in lines[i])
    ig = next(i for i in range(i0, len(lines)) if "GMMA" in lines[i])
    before = sum("MUFU.EX2" in l for l in lines[i1:i0])
    after = sum("MUFU.EX2" in l for l in lines[i0:ig])
    regs = max(int(r) for r in re.findall(r"\bR(\d+)\b", fn))
    print(f"{sys.argv[1].rsplit('/', 1)[1]} {'fp8' if 'ILb1E' in name else 'bf16'}: MUFU before the PV wait "
          f"{before}, after {after}; highest register R{regs}")
PY
done
# 2. Correct: the grid at small sizes in both dtypes, the direct kernel tests, memcheck.
for i in "${!cands[@]}"; do
  c=${cands[$i]}
  step "check-bf16-cand$i" 30 "$c/fp2bench" check --backend gpu --kernel sm90 --len 1k,2k+77,16k --rows 256
  step "check-fp8-cand$i" 30 "$c/fp2bench" check --backend gpu --kernel sm90 --dtype fp8 --len 1k,2k+77,16k --rows 256
  step "check-g3-cand$i" 20 "$c/fp2bench" check --backend gpu --kernel sm90 --heads 24:8 --len 2k+77 --rows 256
  step "gpu-kernels-cand$i" 60 "$c/tests/gpu_kernels"
  step "memcheck-cand$i" 60 compute-sanitizer --tool memcheck --error-exitcode 1 "$c/fp2bench" check --backend gpu \
    --kernel sm90 --dtype fp8 --len 300 --heads 8:2 --rows 64
done
# 3. Faster? main, each candidate, main again, in one call.
order=(base "${names[@]:1}" base2)
for v in "${order[@]}"; do
  dir=$base
  [ "${v#cand}" != "$v" ] && dir=${cands[${v#cand}]}
  step "time-$v" 40 "$dir/fp2bench" speedup --dtype both --len 32k,128k --peers none --trials 5 --out "$out/time-$v.json"
done
python3 - "$out" "${order[@]}" <<'PY'
import json, os, sys
for v in sys.argv[2:]:
    f = os.path.join(sys.argv[1], f"time-{v}.json")
    if not os.path.exists(f):
        print(v, "missing"); continue
    for r in json.load(open(f))["rows"]:
        g = lambda k, m="median_ms": r[k][m] if r.get(k) else float("nan")
        print(f"{v:6} {r['len']:6d} {r['dtype']:4} attend {g('attend'):8.3f} nocorr {g('attend_nocorr'):8.3f} "
              f"dense {g('dense'):8.3f} (min {g('dense', 'min_ms'):8.3f})")
PY
