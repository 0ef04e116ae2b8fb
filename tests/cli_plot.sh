#!/usr/bin/env bash
# fp2bench plot: renders a density result as a PNG through plots/density.gp, exports
# the table its script declares (nested keys, arrays, null as NaN, series blocks), and
# refuses bad input with one clear line. Usage: cli_plot.sh path/to/fp2bench
set -u
bin=$(realpath "$1")
name=cli_plot.sh
if ! command -v gnuplot >/dev/null 2>&1; then
  echo "gnuplot is not installed: skipped"
  exit 77
fi
# shellcheck source=lib/expect.sh
. "$(dirname "$(realpath "$0")")/lib/expect.sh"

is_png() { [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ]; }

cat >res.json <<'JSON'
{"schema": "fp2bench/1", "experiment": "density", "provenance": {"git_commit": "x"},
 "config": {"alpha": 0.1},
 "rows": [
  {"len": 4096, "density": 0.73, "density_per_head": [0.70, 0.76], "flops_index": 1e9},
  {"len": 8192, "density": 0.52, "density_per_head": [0.50, 0.54]},
  {"len": 16384, "density": null},
  {"len": 32768, "density": 0.18, "density_per_head": [0.17, 0.19]}]}
JSON

# The image, and the table the script asked for.
"$bin" plot res.json -o out.png --dat out.dat >out.txt 2>err.txt || fail "plot failed: $(cat err.txt)"
[ -s out.png ] && is_png out.png || fail "out.png is missing or not a PNG"
cat >want.dat <<'DAT'
# fp2bench plot data: experiment density, from res.json
# len density density_per_head.0 density_per_head.1
4096 0.73 0.7 0.76
8192 0.52 0.5 0.54
16384 NaN NaN NaN
32768 0.18 0.17 0.19
DAT
diff want.dat out.dat >diff.txt || fail "out.dat differs from what density.gp declares: $(cat diff.txt)"

# Without -o the image goes beside the result; nothing temporary is left behind.
"$bin" plot res.json >out.txt 2>err.txt || fail "plot without -o failed: $(cat err.txt)"
[ -s res.png ] && is_png res.png || fail "res.png (the default output) is missing or not a PNG"
ls ./*.tmp.* >/dev/null 2>&1 && fail "temporary files left behind: $(ls ./*.tmp.*)"

# Series: one block per distinct value, with the value as every column's header.
mkdir plots
cat >plots/series.gp <<'GP'
# columns: x run.y flag label
# series: method
set terminal dumb
set output ARG2
plot for [i=0:*] ARG1 index i using 1:2 with lines title columnheader(1)
GP
cat >series.json <<'JSON'
{"schema": "fp2bench/1", "experiment": "series", "provenance": {}, "config": {},
 "rows": [{"method": "fp2", "x": 1, "run": {"y": 2}, "flag": true, "label": "a \"b\""},
          {"method": "cudnn", "x": 1, "run": {"y": 5}, "flag": false},
          {"method": "fp2", "x": 2, "run": {"y": 3}}]}
JSON
cat >want.dat <<'DAT'
# fp2bench plot data: experiment series, from series.json
# method = fp2
"fp2" "fp2" "fp2" "fp2"
# x run.y flag label
1 2 1 "a  b "
2 3 NaN NaN


# method = cudnn
"cudnn" "cudnn" "cudnn" "cudnn"
# x run.y flag label
1 5 0 NaN
DAT
FP2_PLOTS_DIR=$dir/plots "$bin" plot series.json -o series.txt --dat series.dat >out.txt 2>err.txt ||
  fail "series plot failed: $(cat err.txt)"
diff want.dat series.dat >diff.txt || fail "series.dat differs: $(cat diff.txt)"

# A script gnuplot rejects (gnuplot's own lines, then one naming the script, exit 3) leaves no
# image behind.
printf '# columns: x\nthis is not gnuplot\n' >plots/broken.gp
sed 's/"series"/"broken"/' series.json >broken.json
FP2_PLOTS_DIR=$dir/plots "$bin" plot broken.json -o broken.png >out.txt 2>err.txt
rc=$?
[ "$rc" -eq 3 ] && grep -q "gnuplot failed on '.*broken.gp'" err.txt ||
  fail "plot with a broken script exited $rc without naming it: $(cat err.txt)"
[ -e broken.png ] && fail "broken.png exists after gnuplot failed"
ls ./*.tmp.* >/dev/null 2>&1 && fail "temporary files left behind: $(ls ./*.tmp.*)"

# The result must hold what its script draws: a column without a value in any row is refused
# by name (a density result labelled speedup, and the reverse), unless the script calls it
# optional; the script learns which columns hold data (ARG3), so that absent peers get no line.
cat >plots/present.gp <<'GP'
# columns: x a b c
# optional: b
set print "present.txt"
print ARG3
set terminal dumb
set output ARG2
plot ARG1 using 1:2 with lines
GP
cat >present.json <<'JSON'
{"schema": "fp2bench/1", "experiment": "present", "provenance": {}, "config": {},
 "rows": [{"x": 1, "a": 2, "c": null}, {"x": 2, "a": 3, "b": null, "c": 7}]}
JSON
FP2_PLOTS_DIR=$dir/plots "$bin" plot present.json -o present.out >out.txt 2>err.txt || fail "plot failed: $(cat err.txt)"
[ "$(cat present.txt)" = "1 2 4" ] || fail "the script was told that columns '$(cat present.txt)' hold data, not '1 2 4'"
sed 's/"c": 7/"c": null/' present.json >absent.json
FP2_PLOTS_DIR=$dir/plots expect 2 "'absent.json' (experiment 'present') has no 'c' in any row" "$bin" plot absent.json
sed 's/"experiment": "density"/"experiment": "speedup"/' res.json >mislabelled.json
expect 2 "has no 'speedup_dense' in any row, which '.*speedup.gp' draws" "$bin" plot mislabelled.json
printf '{"schema": "fp2bench/1", "experiment": "density", "provenance": {}, "config": {},
 "rows": [{"len": 4096, "speedup_dense": 2.5}]}' >speedup-as-density.json
expect 2 "has no 'density' in any row" "$bin" plot speedup-as-density.json

# Refusals, each one line naming its cause.
expect 2 "no plot script for experiment 'series'" "$bin" plot series.json
printf '{"schema": "fp2bench/1", "rows": [' >bad.json
expect 2 "'bad.json' is not valid json" "$bin" plot bad.json
expect 2 "cannot open 'missing.json'" "$bin" plot missing.json
expect 2 "missing RESULT.json" "$bin" plot
expect 3 "gnuplot not found: install gnuplot-nox" env PATH="$dir/empty" "$bin" plot res.json -o x.png
expect 2 "cannot write 'no/such/dir/x.png'" "$bin" plot res.json -o no/such/dir/x.png
sed 's/"rows": \[/"rows": [], "x": [/' res.json >empty.json
expect 2 "has no rows to plot" "$bin" plot empty.json

"$bin" plot --help >help.txt || fail "plot --help failed"
for opt in RESULT.json --out --dat --help; do
  grep -q -- "$opt" help.txt || fail "plot --help does not list $opt"
done

[ "$failures" -eq 0 ] || { echo "$name: $failures failure(s)" >&2; exit 1; }
echo "cli_plot.sh: ok"
