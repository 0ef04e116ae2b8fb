#!/usr/bin/env bash
# fp2bench run, density and check end to end on the cpu backend at small sizes: every
# subcommand's --help, the JSON of each, the dump's tensors, a recorded-tensor input, and
# one-line errors with exit code 2 for bad options and impossible shapes.
# Usage: cli_run.sh path/to/fp2bench
set -u
bin=$1
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
failures=0
fail() { echo "cli_run.sh: $*" >&2; failures=$((failures + 1)); }
command -v python3 >/dev/null 2>&1 || { echo "cli_run.sh: python3 not found" >&2; exit 77; }

for sub in info run density check plot speedup regress; do
  "$bin" "$sub" --help >"$dir/help.txt" 2>&1 || fail "$sub --help failed"
  grep -q "^usage: fp2bench $sub" "$dir/help.txt" || fail "$sub --help has no usage line"
done
"$bin" run --help | grep -q -- "--len L\[,L...\] .*(default: 4k)" || fail "run --help does not show --len's default"
"$bin" help run | grep -q -- "--no-correction" || fail "help run does not list --no-correction"

# Bad options and impossible shapes: one line on stderr naming the option, exit 2.
expect_usage() {
  local option=$1
  shift
  "$bin" "$@" >/dev/null 2>"$dir/err.txt"
  local rc=$?
  [ $rc -eq 2 ] || fail "'$*' exited $rc, not 2"
  [ "$(wc -l <"$dir/err.txt")" -eq 1 ] || fail "'$*' printed more than one line: $(cat "$dir/err.txt")"
  grep -q -- "$option" "$dir/err.txt" || fail "'$*' does not name $option: $(cat "$dir/err.txt")"
}
expect_usage --heads run --heads 30:8 --backend cpu
expect_usage --heads run --heads 0:0 --backend cpu
expect_usage --len run --len 0 --backend cpu
expect_usage --len run --len -5 --backend cpu
expect_usage --alpha run --alpha 1.5 --backend cpu
expect_usage --dtype run --dtype fp16 --backend cpu
expect_usage --dim density --dim -1 --backend cpu
expect_usage --batch run --batch 0 --backend cpu
expect_usage --data run --data synth:nope --backend cpu
expect_usage bogus bogus
expect_usage "--frobnicate" check --frobnicate
expect_usage "--kernel sm90" run --kernel sm90 --dim 64 --backend cpu
expect_usage "--kernel" run --kernel fast --backend cpu

# run: table, JSON and dump on a small llm-like problem.
"$bin" run --len 700 --heads 8:2 --dim 32 --backend cpu --out "$dir/run.json" --dump "$dir/dump.safetensors" \
  >"$dir/run.txt" 2>"$dir/err.txt" || fail "run failed: $(cat "$dir/err.txt")"
grep -q '^density ' "$dir/run.txt" || fail "run prints no density"
python3 - "$dir/run.json" "$dir/dump.safetensors" <<'PY' || fail "run's JSON or dump is not as expected"
import json, struct, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "fp2bench/1" and d["experiment"] == "run", d.keys()
assert d["config"]["hq"] == 8 and d["config"]["dim"] == 32, d["config"]
row = d["rows"][0]
assert row["len"] == 700 and 0 < row["density"] <= 1, row
assert row["pool"]["n"] == 1 and row["pool"]["median_ms"] >= 0, row
assert 0 <= row["rel_error"] < 1 and 0 < row["mass_recall"] <= 1, row
raw = open(sys.argv[2], "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
header = json.loads(raw[8:8 + n])
shapes = {k: v["shape"] for k, v in header.items() if k != "__metadata__"}
nblocks, ntiles = 6, (700 * 4 + 127) // 128
assert shapes["o"] == [700, 8, 32], shapes
assert shapes["k_mean"] == [2, nblocks, 32] and shapes["v_mean"] == [2, nblocks, 32], shapes
assert shapes["csr_offsets"] == [2 * ntiles + 1], shapes
assert shapes["score"] == [2, ntiles, nblocks], shapes
assert header["o"]["dtype"] == "F32" and header["csr_indices"]["dtype"] == "I32", header
PY

# A recorded q/k/v file as input: its shapes are taken unless the options disagree.
python3 - "$dir/qkv.safetensors" <<'PY' || fail "could not write a q/k/v file"
import json, random, struct, sys
L, hq, hkv, d = 300, 4, 2, 16
random.seed(1)
def f32(n): return struct.pack("<%df" % n, *[random.gauss(0, 1) for _ in range(n)])
data = {"q": f32(L * hq * d), "k": f32(L * hkv * d), "v": f32(L * hkv * d)}
header, off = {}, 0
for name, shape in (("q", [L, hq, d]), ("k", [L, hkv, d]), ("v", [L, hkv, d])):
    header[name] = {"dtype": "F32", "shape": shape, "data_offsets": [off, off + len(data[name])]}
    off += len(data[name])
h = json.dumps(header).encode()
h += b" " * (-len(h) % 8)
open(sys.argv[1], "wb").write(struct.pack("<Q", len(h)) + h + data["q"] + data["k"] + data["v"])
PY
"$bin" run --data "$dir/qkv.safetensors" --backend cpu >"$dir/file.txt" 2>"$dir/err.txt" ||
  fail "run on a q/k/v file failed: $(cat "$dir/err.txt")"
expect_usage "--heads" run --data "$dir/qkv.safetensors" --heads 8:2 --backend cpu
expect_usage "--len" run --data "$dir/qkv.safetensors" --len 4k --backend cpu
printf 'not a safetensors file' >"$dir/bad.safetensors"
expect_usage "bad.safetensors" run --data "$dir/bad.safetensors" --backend cpu

# density over two lengths, and its plot.
"$bin" density --len 1k,2k --heads 8:2 --dim 32 --backend cpu --out "$dir/density.json" >/dev/null 2>"$dir/err.txt" ||
  fail "density failed: $(cat "$dir/err.txt")"
python3 - "$dir/density.json" <<'PY' || fail "density's JSON is not as expected"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["experiment"] == "density" and [r["len"] for r in d["rows"]] == [1024, 2048], d["rows"]
assert isinstance(d["config"]["synth_version"], int), d["config"]  # regress refuses other generators
for r in d["rows"]:
    assert 0 < r["density"] <= 1 and len(r["density_per_head"]) == 2 and r["flops_sparse"] > 0, r
PY

# check on the cpu backend over its grid at small sizes; it must pass.
"$bin" check --backend cpu --len 600 --rows 64 --out "$dir/check.json" >"$dir/check.txt" 2>"$dir/err.txt" ||
  fail "check failed: $(cat "$dir/check.txt" "$dir/err.txt")"
python3 - "$dir/check.json" >"$dir/case.txt" <<'PY' || fail "check's JSON is not as expected"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["experiment"] == "check" and len(d["rows"]) == 24, len(d["rows"])
assert all(r["ok"] and r["index_mismatches"] == 0 for r in d["rows"]), d["rows"]
assert d["rows"][0]["seed"] == d["config"]["seed"] and len({r["seed"] for r in d["rows"]}) == 24, d["rows"]
case = d["rows"][7]  # its axes given and its seed: the same case again
print(f'--heads {case["hq"]}:{case["hkv"]} --data {case["data"]} --dtype {case["dtype"]} --seed {case["seed"]}'
      + ('' if case["correction"] else ' --no-correction'))
PY
# shellcheck disable=SC2046
"$bin" check --backend cpu --len 600 --rows 64 $(cat "$dir/case.txt") --out "$dir/case.json" >/dev/null 2>&1 ||
  fail "check of one case failed: $(cat "$dir/case.txt")"
python3 - "$dir/check.json" "$dir/case.json" <<'PY' || fail "check's recorded seed does not rerun its case"
import json, math, sys
want, got = json.load(open(sys.argv[1]))["rows"][7], json.load(open(sys.argv[2]))["rows"][0]
same = lambda a, b: math.isclose(a, b, rel_tol=1e-9) if isinstance(a, float) else a == b  # sums in another order
assert got.keys() == want.keys() and all(same(got[k], want[k]) for k in want), (want, got)
PY

# speedup on the cpu backend: it says that it times nothing and gives the density alone (no
# times, TFLOP/s or speedups to misread), both dtypes; its plot has nothing to draw.
"$bin" speedup --backend cpu --len 600 --dtype both --heads 8:2 --dim 32 --peers none --out "$dir/speedup.json" \
  >"$dir/out.txt" 2>"$dir/err.txt" || fail "speedup failed: $(cat "$dir/err.txt")"
grep -q "the cpu backend times nothing" "$dir/err.txt" || fail "speedup on the cpu does not say that it times nothing"
grep -Eq "TF|ms|speedup" "$dir/out.txt" && fail "speedup on the cpu prints timing columns: $(cat "$dir/out.txt")"
python3 - "$dir/speedup.json" <<'PY' || fail "speedup's JSON is not as expected"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["experiment"] == "speedup" and [r["dtype"] for r in d["rows"]] == ["bf16", "fp8"], d["rows"]
assert d["config"]["dtype"] == "both", d["config"]                # what ran, not the shared default
assert d["config"]["kernel"] == "auto", d["config"]               # what was asked (the default) ...
assert all(r["kernel"] == "oracle" for r in d["rows"]), d["rows"]  # ... and what ran, per row
for r in d["rows"]:
    assert r["len"] == 600 and 0 < r["density"] <= 1 and r["flops_sparse"] > 0, r
    timed = [k for k in r if k.endswith(("_ms", "_tflops")) or k.startswith("speedup") or k in ("attend", "dense")]
    assert not timed, timed
PY
if command -v gnuplot >/dev/null 2>&1; then
  "$bin" plot "$dir/speedup.json" -o "$dir/speedup.png" >/dev/null 2>"$dir/err.txt"
  [ $? -eq 2 ] && grep -q "no 'speedup_dense' in any row" "$dir/err.txt" ||
    fail "plot of a cpu speedup did not say that it has nothing to draw: $(cat "$dir/err.txt")"
fi
expect_usage "--peers" speedup --peers nope --backend cpu

[ $failures -eq 0 ] || { echo "cli_run.sh: $failures failure(s)" >&2; exit 1; }
echo "cli_run.sh: ok"
