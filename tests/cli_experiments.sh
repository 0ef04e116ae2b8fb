#!/usr/bin/env bash
# The paper's experiments end to end on the cpu backend at a tiny size: sweep-alpha,
# correction, breakdown and chunked write their JSON (the paper's values beside ours where the
# paper has some), and their plots render.
# Usage: cli_experiments.sh path/to/fp2bench
set -u
bin=$1
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
failures=0
fail() { echo "cli_experiments.sh: $*" >&2; failures=$((failures + 1)); }
command -v python3 >/dev/null 2>&1 || { echo "cli_experiments.sh: python3 not found" >&2; exit 77; }
small="--len 1k --heads 8:2 --dim 32 --backend cpu"

"$bin" sweep-alpha $small --alpha 0.5,0.1,0 --rows 16 --out "$dir/sweep.json" >/dev/null 2>"$dir/err.txt" ||
  fail "sweep-alpha failed: $(cat "$dir/err.txt")"
python3 - "$dir/sweep.json" <<'PY' || fail "sweep-alpha's JSON is not as expected"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["experiment"] == "sweep-alpha" and d["config"]["paper"]["paper_values"], d["config"]
rows = d["rows"]
assert [(r["dtype"], r["alpha"]) for r in rows] == [(t, a) for t in ("bf16", "fp8") for a in (0.5, 0.1, 0)], rows
assert d["config"]["alpha"] == [0.5, 0.1, 0] and d["config"]["dtype"] == "both", d["config"]   # what it swept
assert all(r["kernel"] == "oracle" for r in rows), rows
for t in ("bf16", "fp8"):
    dens = [r["density"] for r in rows if r["dtype"] == t]
    assert dens == sorted(dens) and dens[-1] == 1.0, dens          # lower alpha keeps more; alpha 0 keeps all
    zero = [r for r in rows if r["dtype"] == t and r["alpha"] == 0][0]
    assert abs(zero["rel_error_corrected"] - zero["rel_error_uncorrected"]) < 1e-9, zero  # nothing to correct
    assert all(0 <= r["rel_error_corrected"] < 0.5 and r["needle_rows"] > 0 for r in rows), rows
PY
"$bin" correction $small --sparsity 0,0.9 --out "$dir/corr.json" >/dev/null 2>"$dir/err.txt" ||
  fail "correction failed: $(cat "$dir/err.txt")"
python3 - "$dir/corr.json" <<'PY' || fail "correction's JSON is not as expected"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["experiment"] == "correction" and d["config"]["paper"]["paper_values"], d["config"]
rows = d["rows"]
assert [r["sparsity"] for r in rows] == [0, 0.9, 0, 0.9], rows
assert d["config"]["dtype"] == "both", d["config"]
assert d["config"]["forced_density"] == [1, 1 - 0.9], d["config"]  # what the rows ran, not null
assert all(r["attend_corrected"]["n"] >= 1 and r["flops_correction"] >= 0 for r in rows), rows
assert rows[0]["density"] == 1.0 and rows[0]["flops_correction"] == 0, rows[0]
PY
"$bin" breakdown --len 600,1k --heads 8:2 --dim 32 --backend cpu --out "$dir/breakdown.json" >/dev/null \
  2>"$dir/err.txt" || fail "breakdown failed: $(cat "$dir/err.txt")"
"$bin" chunked --len 2k --chunk 512,1k --heads 8:2 --dim 32 --backend cpu --out "$dir/chunked.json" >/dev/null \
  2>"$dir/err.txt" || fail "chunked failed: $(cat "$dir/err.txt")"
python3 - "$dir/breakdown.json" "$dir/chunked.json" <<'PY' || fail "breakdown's or chunked's JSON is not as expected"
import json, sys
b = json.load(open(sys.argv[1]))
assert b["experiment"] == "breakdown" and [r["len"] for r in b["rows"]] == [600, 1024], b["rows"]
for r in b["rows"]:
    assert r["pool"]["n"] >= 1 and r["attend_uncorrected"]["n"] >= 1 and r["total_ms"] > 0, r
c = json.load(open(sys.argv[2]))
rows = c["rows"]
assert [(r["mode"], r["chunk"]) for r in rows] == [("one-pass", 2048), ("chunked", 512), ("chunked", 1024)], rows
assert rows[0]["time_vs_one_pass"] == 1 and all(r["density"] > 0 for r in rows), rows
# Re-running the index per chunk applies the tail rule to every chunk: never less dense.
assert all(r["density"] >= rows[0]["density"] - 1e-12 for r in rows), rows
# The cpu has no dependent launches to keep whole: its index is its stages' sum, and each
# chunk's index time is there.
assert all(r["index_timed"] == "as its stages' sum" and r["index_staged_ms"] == r["index_ms"] for r in rows), rows
assert all(len(r["per_chunk"]) == 2048 // r["chunk"] and all(c["index_ms"] > 0 for c in r["per_chunk"])
           for r in rows[1:]), rows
PY
# hpc-compare counts both index formats exactly: HPC-Ops' uint8 mask is batch x Hq x
# ceil(L/128)^2 bytes at any density; our CSR is 4 bytes per segment offset and per kept block.
"$bin" hpc-compare --len 1000 --heads 8:2 --batch 2 --dim 32 --backend cpu --densities 1,0.3 \
  --out "$dir/hpc.json" >/dev/null 2>"$dir/err.txt" || fail "hpc-compare failed: $(cat "$dir/err.txt")"
python3 - "$dir/hpc.json" <<'PY' || fail "hpc-compare's JSON is not as expected"
import json, math, sys
d = json.load(open(sys.argv[1]))
assert d["experiment"] == "hpc-ops" and d["config"]["paper"]["paper_values"], d["config"]
assert [s["name"] for s in d["config"]["not_run"]] == ["mask_driven_skip", "hpc,fpv2"], d["config"]
assert "gpu backend only" in d["config"]["not_run"][1]["why"], d["config"]
rows = d["rows"]
assert [r["forced_density"] for r in rows] == [1, 0.3], rows
blocks = math.ceil(1000 / 128)
tiles = math.ceil(1000 * 4 / 128)                       # packed rows of a KV head's group, per tile
segments = 2 * 2 * tiles                                # batch x KV heads x tiles
for r in rows:
    assert r["hpc_mask_bytes"] == 2 * 8 * blocks * blocks, r
    assert r["index_segments"] == segments and r["csr_bytes"] == 4 * (segments + 1 + r["index_nnz"]), r
    assert "attend" not in r, r                         # the cpu backend counts, it does not time
# Dense: every causal block of every tile, last_k + 1 blocks for tile t (rows 32 t .. 32 t + 31).
dense = sum(min(1000 - 1, 32 * t + 31) // 128 + 1 for t in range(tiles)) * 2 * 2
assert rows[0]["index_nnz"] == dense and rows[0]["density"] == 1, rows[0]
assert rows[1]["index_nnz"] < dense and rows[1]["index_alloc_bytes"] == rows[0]["index_alloc_bytes"], rows
PY
"$bin" hpc-compare --backend cpu --densities 0 >/dev/null 2>&1
[ $? -eq 2 ] || fail "hpc-compare --densities 0 does not exit 2"
"$bin" reproduce --small --quick --dir "$dir/none" >/dev/null 2>&1
[ $? -eq 2 ] || fail "reproduce --small --quick does not exit 2"
[ ! -e "$dir/none" ] || fail "reproduce --small --quick created its folder"
"$bin" sweep-alpha $small --alpha 1.5 >/dev/null 2>&1
[ $? -eq 2 ] || fail "sweep-alpha --alpha 1.5 does not exit 2"
"$bin" correction $small --sparsity 1 >/dev/null 2>&1
[ $? -eq 2 ] || fail "correction --sparsity 1 does not exit 2"
if command -v gnuplot >/dev/null 2>&1; then
  for r in sweep corr breakdown chunked hpc; do
    "$bin" plot "$dir/$r.json" -o "$dir/$r.png" >/dev/null 2>"$dir/err.txt" || fail "plot of $r failed: $(cat "$dir/err.txt")"
  done
fi
# reproduce drives every experiment into one folder with plots and REPORT.md, here in two
# stages (--steps): the report is assembled from every step's JSON in the folder each time.
"$bin" reproduce --small --steps speedup-llm-bf16,nope --dir "$dir/none" >/dev/null 2>"$dir/err.txt"
[ $? -eq 2 ] && grep -q "unknown step 'nope'" "$dir/err.txt" || fail "reproduce --steps nope is not a usage error naming it"
first="speedup-llm-bf16 sweep-alpha"
rest="speedup-llm-fp8 speedup-density5-bf16 speedup-density5-fp8 speedup-peers-128k correction density-niah breakdown chunked"
rest="$rest hpc-ops hpc-ops-index-128k"
"$bin" reproduce --small --steps "${first// /,}" --dir "$dir/rep" >/dev/null 2>"$dir/err.txt" ||
  fail "reproduce --steps failed: $(tail -3 "$dir/err.txt")"
for f in $first; do [ -s "$dir/rep/$f.json" ] || fail "reproduce --steps wrote no $f.json"; done
for f in $rest; do [ ! -e "$dir/rep/$f.json" ] || fail "reproduce --steps ran $f too"; done
[ "$(grep -c '^Not run yet' "$dir/rep/REPORT.md" 2>/dev/null)" = 10 ] || fail "REPORT.md does not list the 10 steps not run"
# The second stage reports the first stage's JSON as it finds it: a length of 128K, written as such.
python3 - "$dir/rep/speedup-llm-bf16.json" <<'PY' || fail "cannot edit speedup-llm-bf16.json"
import json, sys
d = json.load(open(sys.argv[1]))
d["rows"][0]["len"] = 131072
json.dump(d, open(sys.argv[1], "w"))
PY
"$bin" reproduce --small --steps "${rest// /,}" --dir "$dir/rep" >/dev/null 2>"$dir/err.txt" ||
  fail "reproduce failed: $(tail -3 "$dir/err.txt")"
for f in $first $rest; do [ -s "$dir/rep/$f.json" ] || fail "reproduce wrote no $f.json"; done
[ "$(grep -c '^## ' "$dir/rep/REPORT.md" 2>/dev/null)" = 12 ] || fail "REPORT.md does not have 12 sections"
grep -q "^Not run yet" "$dir/rep/REPORT.md" && fail "REPORT.md of the second stage misses the first stage's steps"
grep -q "numbers mean nothing" "$dir/rep/REPORT.md" || fail "REPORT.md of a --small run does not say so"
[ ! -e "$dir/rep/REPORT.md.tmp" ] || fail "reproduce left its temporary report"
python3 - "$dir/rep/REPORT.md" <<'PY' || fail "REPORT.md is not as expected"
import re, sys
text = open(sys.argv[1]).read()
assert "| bf16 | oracle | 128K |" in text, "lengths are not written as sizes"   # speedup-llm-bf16's first row
assert re.search(r"^Data: .*version \d+ in [^;]*`speedup-llm-bf16`.* calibrated to: density 74", text, re.M), \
    "REPORT.md does not say which synth:llm version each result ran on and what it is calibrated to"
assert "\\" not in text, "raw LaTeX: " + re.search(r"\S*\\\S*", text).group()
headings = [l for l in text.splitlines() if l.startswith("## ")]
assert all(h.endswith(" at 1K, 8:2 heads") for h in headings), "a heading not saying what ran: " + str(headings)
assert not re.search(r"\d\.\d+e\+\d", text), "a number in exponent form: " + re.search(r"\S*\d\.\d+e\+\d\S*", text).group()
for section in text.split("\n## ")[1:]:
    said = [l for l in section.splitlines() if l.startswith("- ")]
    assert len(said) == len(set(said)), "a statement of the paper twice in: " + section.splitlines()[0]
    inner = [a for a in said for b in said if a != b and a[2:] in b]
    assert not inner, "a statement of the paper inside another: " + str(inner[:1])
PY

# --report-only runs nothing and re-assembles the report from the JSON gathered in the folder.
"$bin" reproduce --report-only --steps chunked --dir "$dir/rep" >/dev/null 2>&1
[ $? -eq 2 ] || fail "reproduce --report-only --steps is not a usage error"
sums=$(cat "$dir"/rep/*.json | md5sum)
rm -f "$dir/rep/REPORT.md"
"$bin" reproduce --report-only --dir "$dir/rep" >/dev/null 2>"$dir/err.txt" ||
  fail "reproduce --report-only failed: $(tail -3 "$dir/err.txt")"
[ "$(grep -c '^## ' "$dir/rep/REPORT.md" 2>/dev/null)" = 12 ] || fail "REPORT.md of --report-only does not have 12 sections"
grep -q "^Not run yet\|^Failed in this run" "$dir/rep/REPORT.md" && fail "REPORT.md of --report-only misses a result"
[ "$(cat "$dir"/rep/*.json | md5sum)" = "$sums" ] || fail "reproduce --report-only changed a result"

[ $failures -eq 0 ] || { echo "cli_experiments.sh: $failures failure(s)" >&2; exit 1; }
echo "cli_experiments.sh: ok"
