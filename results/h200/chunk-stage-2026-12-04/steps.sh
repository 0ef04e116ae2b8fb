# Sourced by call*/run.sh from the repository's root on the device: the builds of ../build.sh
# unpacked from the carry, the environment, $W (the call's folder under $OUT) and step NAME
# CAP CMD... (CMD's output to $W/NAME.log, cut at CAP seconds or at the call's deadline).
set -u
[ -x .carry/d4/HEAD/fp2bench ] || tar xJf .carry/d4/variants.tar.xz -C .carry/d4
# build.sh packs only the builds VARIANTS names; every call times main's (HEAD) beside them.
[ -x .carry/d4/HEAD/fp2bench ] || { echo "the carry holds no HEAD build: $(ls .carry/d4)"; exit 1; }
[ "$PWD" = /work/main ] || { mkdir -p /work; ln -sfn "$PWD" /work/main; }
export LD_LIBRARY_PATH=$PWD/.carry:/usr/local/cuda/lib64 FP2_EXPERIMENTS_DIR=$PWD/experiments \
  FP2_PLOTS_DIR=$PWD/plots FP2_PYTHON=$(command -v python3)
W=$OUT/w; mkdir -p $W
# The card, into $W/device.txt. H200_ONLY=1: the call stops here on any other card, so that
# its start is all it costs.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "device: $gpu" | tee $W/device.txt
[ -n "${H200_ONLY:-}" ] && case "$gpu" in *H200*) ;; *) echo "not an H200: nothing run"; exit 0 ;; esac
# The card's memory, clock and power limit, into $W/gpu.txt.
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,power.limit --format=csv | tee $W/gpu.txt
start=$SECONDS; deadline=${DEADLINE:-570}
step() { local name=$1 cap=$2; shift 2; local t0=$SECONDS l=$(( deadline - (SECONDS - start) ))
  [ $l -gt $cap ] && l=$cap; [ $l -lt 1 ] && l=1
  timeout "$l" "$@" > "$W/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s (at $((SECONDS - start))s)" | tee -a $W/steps.txt; return $rc; }
# $H is HEAD's build and $W/res the folder of its records.
H=.carry/d4/HEAD
mkdir -p $W/res
# Build V's check with g = 3 (24:8 at 16K), as step check-g3-V.
check_g3() {
  step check-g3-$1 60 .carry/d4/$1/fp2bench check --backend gpu --kernel sm90 --dtype bf16 --heads 24:8 --len 16k --rows 256
}
# HEAD's GPU tests, then its checks with hkv odd (12:3 at 13K+77) and g = 3.
head_checks() {
  for t in gpu_kernels gpu_pooled_cache gpu_paged gpu_forward_graph gpu_neighbour_nan; do step $t-HEAD 40 $H/$t; done
  step check-odd-HEAD 60 $H/fp2bench check --backend gpu --kernel sm90 --dtype bf16 --heads 12:3 --len 13k+77 --rows 256
  check_g3 HEAD
}
# HEAD's checks before its records (records): head_checks, and the check at g = 4 (32:8 at 16K).
head_checks_for_records() {
  head_checks
  step check-g4-HEAD 60 $H/fp2bench check --backend gpu --kernel sm90 --dtype bf16 --len 16k --rows 256
}
# Build V's GPU tests (the names after V) and its check at g = 3, as steps NAME-V.
variant_gates() {
  local v=$1 t; shift
  for t in "$@"; do step $t-$v 40 .carry/d4/$v/$t; done
  check_g3 $v
}
# sanitized TOOL NAME CAP CMD...: CMD under compute-sanitizer's TOOL (exit 9 on any error), as
# step TOOL-NAME cut at CAP seconds.
sanitized() {
  local tool=$1 name=$2 cap=$3
  shift 3
  step $tool-$name $cap compute-sanitizer --tool $tool --error-exitcode 9 "$@"
}
# portable_check NAME CAP ARGS...: HEAD's portable kernels in `check` on 1024 sampled rows (ARGS:
# the dtype, shapes and lengths), as step NAME cut at CAP seconds.
portable_check() {
  local name=$1 cap=$2
  shift 2
  step $name $cap $H/fp2bench check --backend gpu --kernel portable "$@" --rows 1024
}
# memcheck and synccheck of build V's pooled-cache test.
sanitize_pooled() {
  local tool
  for tool in memcheck synccheck; do sanitized $tool pooled-$1 60 .carry/d4/$1/gpu_pooled_cache; done
}
# runs_each STEM CAP "ARGS" V...: `fp2bench ARGS` by each build V, in that order, as step
# STEM-V-SECONDS (cut at CAP seconds) into $W/STEM-V-SECONDS.json.
runs_each() {
  local stem=$1 cap=$2 args=$3 v
  shift 3
  for v in "$@"; do
    step $stem-$v-$SECONDS $cap .carry/d4/$v/fp2bench $args --out $W/$stem-$v-$SECONDS.json
  done
}
# `chunked` at 128K in 8K chunks by each build named, in that order, into $W/chunked-NAME-SECONDS.json.
chunked_each() { runs_each chunked 50 "chunked --backend gpu --len 128k --chunk 8k" "$@"; }
# Whether every step named ran and returned 0.
passed() { for n in "$@"; do grep -q "^$n rc=0" $W/steps.txt || return 1; done; }
# HEAD's records into $W/res once its pooled-cache test and its check at g = 4 passed:
# `chunked-128k.json` (8K and 16K chunks) first, in case the device time ends during what
# follows, then `chunked` at 128K in 8K chunks by each build named, in that order, and
# `breakdown.json` (BF16) last.
records() {
  passed gpu_pooled_cache-HEAD check-g4-HEAD || return
  step chunked-128k 60 $H/fp2bench chunked --backend gpu --len 128k --chunk 8k,16k --out $W/res/chunked-128k.json
  chunked_each "$@"
  step breakdown-HEAD 40 $H/fp2bench breakdown --backend gpu --dtype bf16 --out $W/res/breakdown.json
}
# On an H200 only: HEAD's tests and checks (g = 4 too) and its records (records: the builds
# named after V), then build V's `chunked-128k.json` into $W/res-V, for the case that V lands,
# once its gates and sanitizers passed.
h200_records() {
  case "$gpu" in *H200*) ;; *) return ;; esac
  local v=$1; shift
  head_checks_for_records
  records "$@"
  passed gpu_pooled_cache-$v check-g3-$v memcheck-pooled-$v synccheck-pooled-$v || return
  mkdir -p $W/res-$v
  step chunked-128k-$v 60 .carry/d4/$v/fp2bench chunked --backend gpu --len 128k --chunk 8k,16k \
    --out $W/res-$v/chunked-128k.json
}
# ncu's metrics of a select launch: its pipes, issue, occupancy, registers and time.
M=sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,gpu__time_duration.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread
# ncu of the one-pass select at 128K in BF16 for each build named.
ncu_one_pass() {
  for v in "$@"; do
    step ncu-$v 35 ncu --clock-control none --csv --page raw -k regex:select_sm90_kernel --launch-count 1 --metrics $M \
      .carry/d4/$v/fp2bench run --backend gpu --dtype bf16 --len 128k --rows 1 --trials 1
  done
}
# The steps and the verdict lines of the GPU tests, checks and sanitizers (memcheck-*.log and
# the like match *check-*); every call's table starts with them.
verdicts() {
  cat $W/steps.txt
  for f in $W/gpu_*.log $W/*check-*.log; do
    [ -f $f ] && echo "$(basename $f .log): $(grep -E 'ERROR SUMMARY|ok|FAIL|fail|mismatch|flips|cases' $f | tail -2 | tr '\n' ' ' | cut -c1-160)"
  done
}
# Two builds' breakdowns side by side into $OUT/breakdown.txt, from $W/STEM-A.json and
# $W/STEM-B.json: each length's pool, select, attention and total (ms), the lengths both have.
breakdowns_side_by_side() {
  python3 - $W "$@" <<'P' > $OUT/breakdown.txt
import json, os, sys
w, stem, names = sys.argv[1], sys.argv[2], sys.argv[3:]
def lengths(v):
    f = "%s/%s-%s.json" % (w, stem, v)
    return {r["len"]: r for r in json.load(open(f))["rows"]} if os.path.exists(f) else {}
rows = {v: lengths(v) for v in names}
for n in sorted(set.intersection(*(set(rows[v]) for v in names))):
    print(n, " | ".join("%s pool %.3f select %.3f attend %.3f total %.3f"
                        % (v, r["pool"]["median_ms"], r["select"]["median_ms"], r["attend_corrected"]["median_ms"],
                           r["total_ms"]) for v in names for r in [rows[v][n]]))
P
}
# $W packed for the fetch.
pack() { tar cJf $OUT/w.tar.xz -C $OUT w && rm -rf $W; }
# The table printed last: the verdicts, the chunked runs (summary.py) and ncu's rows.
finish() {
  verdicts
  python3 results/h200/chunk-stage-2026-12-04/summary.py $W "$M"
  pack
}
