#!/usr/bin/env bash
# Inputs that are not what they claim are refused with one line and exit 2 (issue 16,
# items 3 and 5): a NaN or infinity in q, k or v (naming the tensor and the first position),
# a FIFO, a directory or a device in place of a file (at once: open() never waits on a
# FIFO), and a text file given as safetensors. Usage: cli_inputs.sh path/to/fp2bench
set -u
bin=$(realpath "$1")
name=cli_inputs.sh
# shellcheck source=lib/expect.sh
. "$(dirname "$(realpath "$0")")/lib/expect.sh"
need_python3


# q [300, 2, 16], k and v [300, 1, 16] in f32; BAD=tensor:position:head:element:value.
make_qkv() {
  python3 - "$@" <<'PY'
import json, math, random, struct, sys
out, bad = sys.argv[1], sys.argv[2:]
L, HQ, HKV, D = 300, 2, 1, 16
random.seed(1)
shapes = {"q": [L, HQ, D], "k": [L, HKV, D], "v": [L, HKV, D]}
data = {n: [random.gauss(0, 1) for _ in range(s[0] * s[1] * s[2])] for n, s in shapes.items()}
for b in bad:
    name, p, h, e, value = b.split(":")
    s = shapes[name]
    data[name][(int(p) * s[1] + int(h)) * s[2] + int(e)] = float(value)
header, offset, blob = {}, 0, b""
for n in "qkv":
    raw = struct.pack("<%df" % len(data[n]), *data[n])
    header[n] = {"dtype": "F32", "shape": shapes[n], "data_offsets": [offset, offset + len(raw)]}
    offset += len(raw)
    blob += raw
h = json.dumps(header).encode()
open(out, "wb").write(struct.pack("<Q", len(h)) + h + blob)
PY
}
make_qkv good.safetensors
"$bin" run --backend cpu --data good.safetensors >/dev/null 2>err.txt || fail "a finite input was refused: $(cat err.txt)"
make_qkv nan_q.safetensors q:200:1:5:nan q:250:0:0:nan
expect 2 "q holds nan at \[200, 1, 5\] (position, head, element)" "$bin" run --backend cpu --data nan_q.safetensors
make_qkv inf_k.safetensors k:7:0:15:inf
expect 2 "k holds inf at \[7, 0, 15\]" "$bin" density --backend cpu --data inf_k.safetensors
make_qkv inf_v.safetensors v:299:0:0:-inf
expect 2 "v holds -inf at \[299, 0, 0\]" "$bin" run --backend cpu --data inf_v.safetensors

# Not regular files: refused at once, never waited on.
mkfifo fifo
expect 2 "'fifo' is a fifo, not a regular file" "$bin" run --backend cpu --data fifo
expect 2 "'fifo' is a fifo, not a regular file" "$bin" plot fifo
expect 2 "'fifo' is a fifo, not a regular file" "$bin" regress --baseline fifo
mkdir folder
expect 2 "'folder' is a directory, not a regular file" "$bin" run --backend cpu --data folder
[ -e /dev/zero ] && expect 2 "'/dev/zero' is a character device, not a regular file" "$bin" plot /dev/zero
printf '# fp2bench\n\nsome text that is long enough to look like a header length\n' >README.md
expect 2 "'README.md' is not a safetensors file: its header length" "$bin" run --backend cpu --data README.md

[ "$failures" -eq 0 ] || exit 1
echo "cli_inputs.sh: ok"
