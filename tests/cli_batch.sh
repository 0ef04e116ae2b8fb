#!/usr/bin/env bash
# Batches of mixed lengths and chunked requests (--requests) on the cpu backend: check passes
# on one and records it; batch writes its JSON (tokens/s, the dense pass, each request alone),
# says that cpu times mean nothing, runs a small mix without --requests, plots, and refuses
# bad input with one line and exit 2. tests/test_batch.c holds the batch to its requests alone.
# Usage: cli_batch.sh path/to/fp2bench
set -u
bin=$(realpath "$1")
name=cli_batch.sh
# shellcheck source=lib/expect.sh
. "$(dirname "$(realpath "$0")")/lib/expect.sh"
need_python3
small=(--backend cpu --heads 8:2 --dim 32)

# check: the batch alone, then with lengths, every case passing.
"$bin" check "${small[@]}" --requests 300,2x100/1k,640/1k+77 --out check.json >out.txt 2>err.txt ||
  fail "check on a batch failed ($?): $(head -c 300 err.txt) $(tail -3 out.txt)"
grep -q "^batch: 4 requests, 1140 queries, 3449 keys: 300,2x100/1k,640/1101$" out.txt ||
  fail "check does not describe the batch: $(head -1 out.txt)"
grep -q "^8 of 8 cases passed$" out.txt || fail "check ran otherwise: $(tail -1 out.txt)"
python3 - check.json <<'PY' || fail "check's JSON is not as expected"
import json, sys
d = json.load(open(sys.argv[1]))
want = [{"lq": 300, "lk": 300}] + [{"lq": 100, "lk": 1024}] * 2 + [{"lq": 640, "lk": 1101}]
assert d["config"]["requests"] == want and "len" not in d["config"], d["config"]
assert all(r["requests"] == want and r["ok"] and r["rows"] == 1140 * 8 for r in d["rows"]), d["rows"]
PY
"$bin" check "${small[@]}" --len 300 --requests 100/1k --dtype fp8 --data synth:llm >out.txt 2>err.txt ||
  fail "check on lengths and a batch failed: $(head -c 300 err.txt)"
[ "$(grep -c '^    300 \|^  batch ' out.txt)" -eq 4 ] || fail "check ran other cases: $(cat out.txt)"

# batch: both dtypes, timed (meaninglessly) on the cpu, each request alone.
"$bin" batch "${small[@]}" --requests 1k,2x300,256/1k --dtype both --trials 2 --out batch.json >out.txt 2>err.txt ||
  fail "batch failed: $(head -c 300 err.txt)"
grep -q "mean nothing" err.txt || fail "batch does not say that cpu times mean nothing: $(cat err.txt)"
python3 - batch.json <<'PY' || fail "batch's JSON is not as expected"
import json, sys
d = json.load(open(sys.argv[1]))
c = d["config"]
assert d["experiment"] == "batch" and c["backend"] == "cpu" and "mean nothing" in c["note"], c
assert c["requests"] == [{"lq": 1024, "lk": 1024}] + [{"lq": 300, "lk": 300}] * 2 + [{"lq": 256, "lk": 1024}], c
assert c["dtype"] == "both" and d["provenance"]["command"].startswith("fp2bench batch"), d
rows = d["rows"]
assert [r["dtype"] for r in rows] == ["bf16", "fp8"], rows
for r in rows:
    assert r["requests"] == 4 and r["total_q"] == 1880 and r["total_k"] == 2648 and r["kernel"] == "oracle", r
    assert 0 < r["density"] <= 1 and r["dense"]["n"] >= 1, r
    total = sum(r[k]["median_ms"] for k in ("quantise", "pool", "select", "attend"))
    assert abs(r["total_ms"] - total) <= 1e-9 * total, r
    assert abs(r["tokens_per_s"] - 1880 / r["total_ms"] * 1e3) <= 1e-6 * r["tokens_per_s"], r
    each = r["per_request"]
    assert [(q["lq"], q["lk"]) for q in each] == [(1024, 1024), (300, 300), (300, 300), (256, 1024)], each
    assert abs(r["singles_total_ms"] - sum(q["alone_total_ms"] for q in each)) <= 1e-9 * r["singles_total_ms"], r
    assert abs(r["batch_vs_singles"] - r["singles_total_ms"] / r["total_ms"]) <= 1e-12, r
PY
"$bin" batch "${small[@]}" --no-singles --out alone.json >out.txt 2>err.txt ||
  fail "batch without --requests failed: $(cat err.txt)"
grep -q "runs at a small size, --requests 1k,2x512,300,256/1k,128/700" err.txt ||
  fail "batch on the cpu does not say which small mix it runs: $(cat err.txt)"
grep -q "^requests: 1k,2x512,300,256/1k,128/700$" out.txt || fail "batch's table does not name the mix: $(cat out.txt)"
if command -v gnuplot >/dev/null 2>&1; then # plots/batch.gp, with and without the singles' bar
  for r in batch alone; do
    "$bin" plot $r.json -o $r.png >/dev/null 2>err.txt && [ -s $r.png ] || fail "plot of $r.json failed: $(cat err.txt)"
  done
fi
"$bin" batch --help >out.txt 2>&1 || fail "batch --help failed"
grep -q "128k,64k,32k,16k,2x8k,2x4k,8k/128k,8k/96k,8k/40k" out.txt || fail "batch --help has no default mix"
"$bin" help | grep -q "^  batch " || fail "fp2bench help does not list batch"

# Bad input: one line naming the option, exit 2, before any work.
expect 2 "request 1 (2048/1024) needs 1 <= queries <= keys" "$bin" batch "${small[@]}" --requests 2k/1k
expect 2 "the count before 'x' is not a positive integer" "$bin" batch "${small[@]}" --requests 0x8k
expect 2 "'8k/' is not a size\|'' is not a size" "$bin" batch "${small[@]}" --requests 1k,8k/
expect 2 "more than 256 requests" "$bin" check "${small[@]}" --requests 200x1k,100x1k
expect 2 "is outside 1..16m\|<= 16m" "$bin" batch "${small[@]}" --requests 17m
expect 2 "--batch must be 1" "$bin" check "${small[@]}" --requests 1k --batch 2
expect 2 "drawn from a synthetic source" "$bin" batch "${small[@]}" --requests 1k --data check.json
expect 2 "unknown option '--len'" "$bin" batch "${small[@]}" --len 1k
expect 2 "--trials: 0 is not positive" "$bin" batch "${small[@]}" --trials 0
expect 2 "beyond what the index can count" "$bin" batch --backend cpu --heads 1024:1 --requests 16m,16m
expect 2 "unknown peer 'nope'" "$bin" batch "${small[@]}" --requests 1k --peers cudnn,nope
expect 2 "which --no-singles turns off" "$bin" batch "${small[@]}" --requests 1k --peers cudnn --no-singles

[ "$failures" -eq 0 ] || { echo "$name: $failures failure(s)" >&2; exit 1; }
echo "$name: ok"
