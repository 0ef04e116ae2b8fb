#!/usr/bin/env bash
# Call 2: the SASS of main's select kernel (M = e7651ff, from call 1's carry: TR is main plus
# stamps, so its code differs only by them), to read how the exponentials are scheduled.
set -u
[ -x .carry/d4/TR/fp2bench ] || tar xJf .carry/d4/variants.tar.xz -C .carry/d4
W=$OUT/w; mkdir -p $W
for v in $(ls .carry/d4 | grep -v tar); do
  cuobjdump -sass .carry/d4/$v/fp2bench > $W/all-$v.sass 2>&1
  python3 - $W/all-$v.sass $W/select-$v.sass <<'PY'
import sys, re
out, keep = [], False
for line in open(sys.argv[1]):
    if line.strip().startswith("Function :"):
        keep = "select_sm90" in line
    if keep: out.append(line)
open(sys.argv[2], "w").writelines(out)
print(sys.argv[2], len(out), "lines")
PY
  rm $W/all-$v.sass
done
tar cJf $OUT/w.tar.xz -C $OUT w && rm -rf $W
