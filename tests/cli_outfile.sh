#!/usr/bin/env bash
# Outputs never destroy what is at their path (issue 16, items 1, 2 and 6): --out, --dump,
# plot -o and --dat replace a regular file atomically and keep its mode, write through a
# symlink or into a device in place, report write errors (exit 3), refuse to overwrite an
# input or each other and a bad directory before any work (exit 2); an interrupted
# reproduce leaves the previous REPORT.md whole. Usage: cli_outfile.sh path/to/fp2bench
set -u
bin=$(realpath "$1")
name=cli_outfile.sh
# shellcheck source=lib/expect.sh
. "$(dirname "$(realpath "$0")")/lib/expect.sh"
small=(--len 1k --heads 2:1 --dim 16 --backend cpu)


# A regular file keeps its mode; a symlink stays a link and its target gets the result.
echo old >kept.json
chmod 600 kept.json
"$bin" density "${small[@]}" --out kept.json >/dev/null 2>err.txt || fail "density --out failed: $(cat err.txt)"
[ "$(stat -c %a kept.json)" = 600 ] || fail "--out reset the mode of kept.json to $(stat -c %a kept.json)"
grep -q '"experiment"' kept.json || fail "--out did not write kept.json"
echo old >target.json
ln -s target.json link.json
"$bin" density "${small[@]}" --out link.json >/dev/null 2>err.txt || fail "--out onto a link failed: $(cat err.txt)"
[ -L link.json ] || fail "--out replaced the symlink link.json"
grep -q '"experiment"' target.json || fail "--out did not write through the symlink"
ln -s /dev/null null.json
"$bin" density "${small[@]}" --out null.json >/dev/null 2>err.txt || fail "--out onto a link to /dev/null failed: $(cat err.txt)"
[ -L null.json ] || fail "--out replaced a symlink to /dev/null"
ln -s /dev/null dump.safetensors
"$bin" run --len 300 --heads 2:1 --dim 16 --backend cpu --dump dump.safetensors >/dev/null 2>err.txt ||
  fail "--dump onto a link to /dev/null failed: $(cat err.txt)"
[ -L dump.safetensors ] || fail "--dump replaced a symlink to /dev/null"
if [ -w /dev/full ]; then
  expect 3 "cannot write '/dev/full'" "$bin" density "${small[@]}" --out /dev/full
  expect 3 "cannot write '/dev/full'" "$bin" run --len 300 --heads 2:1 --dim 16 --backend cpu --dump /dev/full
fi
mkfifo fifo.json
expect 3 "cannot write 'fifo.json'" "$bin" density "${small[@]}" --out fifo.json

# Refused before any work, exit 2: an input, the other output, a missing directory or a
# directory (64K on the cpu would run for hours, so a late check times out).
"$bin" run --len 300 --heads 2:1 --dim 16 --backend cpu --dump in.safetensors >/dev/null 2>err.txt ||
  fail "run --dump failed: $(cat err.txt)"
cp in.safetensors in.orig
ln -s in.safetensors in-link.safetensors
expect 2 "--out: 'in.safetensors' is also the file of --data" "$bin" run --backend cpu --data in.safetensors --out in.safetensors
expect 2 "--out: 'in-link.safetensors' is also the file of --data" \
  "$bin" density --backend cpu --data in.safetensors --out in-link.safetensors
expect 2 "--dump: 'in.safetensors' is also the file of --data" "$bin" run --backend cpu --data in.safetensors --dump in.safetensors
expect 2 "--dump: 'x.out' is also the file of --out" "$bin" run "${small[@]}" --out x.out --dump x.out
cmp -s in.safetensors in.orig || fail "an input was overwritten"
[ ! -e x.out ] || fail "a refused run wrote x.out"
expect 2 "--out: cannot write 'nodir/x.json'" "$bin" density --len 64k --backend cpu --out nodir/x.json
expect 2 "--dump: cannot write 'nodir/x.st'" "$bin" run --len 64k --backend cpu --dump nodir/x.st
expect 2 "--out: cannot write '.': it is a directory" "$bin" density --len 64k --backend cpu --out .
expect 2 "--out: cannot write 'nodir/x.json'" "$bin" info --out nodir/x.json
expect 2 "--out: 'kept.json' is also the file of --baseline" "$bin" regress --baseline kept.json --out kept.json
expect 2 "--out: 'kept.json' is also the file of RESULT.json" "$bin" plot kept.json -o kept.json
expect 2 "--dat: 'link.json' is also the file of RESULT.json" "$bin" plot target.json -o x.png --dat link.json
expect 2 "--out: 'x.dat' is also the file of --dat" "$bin" plot kept.json -o x.dat --dat x.dat
expect 2 "--out: cannot write 'nodir/x.png'" "$bin" plot kept.json -o nodir/x.png

# plot -o and --dat through symlinks, when gnuplot is there to draw.
if command -v gnuplot >/dev/null 2>&1; then
  echo old >img.png
  ln -s img.png img-link.png
  echo old >tab.dat
  ln -s tab.dat tab-link.dat
  "$bin" plot kept.json -o img-link.png --dat tab-link.dat >/dev/null 2>err.txt || fail "plot failed: $(cat err.txt)"
  [ -L img-link.png ] && [ -L tab-link.dat ] || fail "plot replaced its symlinked outputs"
  [ "$(head -c 4 img.png | tail -c 3)" = PNG ] || fail "plot did not write the image through the symlink"
  grep -q '^# fp2bench plot data' tab.dat || fail "plot did not write the table through the symlink"
fi

# A reproduce interrupted while its steps run keeps the previous report whole: it no longer
# truncates REPORT.md at the start (the report's own write is atomic through outfile.c).
mkdir rep
printf '# the previous report\n' >rep/REPORT.md
setsid "$bin" reproduce --small --dir rep >/dev/null 2>&1 &
pid=$!
sleep 0.3
kill -TERM -- -"$pid" 2>/dev/null # the driver and the step it runs
wait "$pid" 2>/dev/null
[ "$(cat rep/REPORT.md)" = "# the previous report" ] || fail "an interrupted reproduce changed REPORT.md: $(head -c 200 rep/REPORT.md)"

[ "$failures" -eq 0 ] || exit 1
echo "cli_outfile.sh: ok"
