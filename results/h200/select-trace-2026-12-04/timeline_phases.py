"""Per-phase clock cycles of the select's stages from a timeline trace (raw [slot][128] u64
records of thread 0 of each CTA on SMs 0 and 1: word 0 = blockIdx | stages << 32 | smid << 48,
1 = start, 2 = Q landed, 3 + 6c + k = stamp k of stage c, 127 = end; .bin or .bin.xz).
Columns are named for the half-tile loop (stamps: 0 keys landed, 1 first product done,
2 first half scored, 3 second product done, 4 released, 5 second half scored); for the
whole-tile loop of call 4 read prod0 = the product, exps0 = the release, prod1 = the first
half's exponentials, exps1 = the second half's.
Usage: timeline_phases.py TRACE"""
import lzma, struct, sys
def load(f):
    b = (lzma.open if f.endswith('.xz') else open)(f, 'rb').read()
    n = len(b) // 1024
    return [list(struct.unpack_from('<128Q', b, i * 1024)) for i in range(n)]

def main(f):
    a = load(f)
    for s in [0, 1]:
        A = [r for r in a if (r[0] >> 48) == s]
        if not A: continue
        t0 = min(r[1] for r in A)
        tot = {k: 0 for k in ["prologue", "keys", "prod0", "exps0", "prod1", "release", "exps1", "tail"]}
        cnt = 0
        for r in A:
            nn = min((r[0] >> 32) & 0xffff, 20)
            tot["prologue"] += r[2] - r[1]
            prev = r[2]
            for c in range(nn):
                st = r[3 + 6 * c: 9 + 6 * c]
                tot["keys"] += st[0] - prev
                tot["prod0"] += st[1] - st[0]; tot["exps0"] += st[2] - st[1]; tot["prod1"] += st[3] - st[2]
                tot["release"] += st[4] - st[3]; tot["exps1"] += st[5] - st[4]
                prev = st[5]; cnt += 1
            tot["tail"] += r[127] - prev
        span = max(r[127] for r in A) - t0
        busy = sum((r[127] - r[1]) for r in A)
        print("%s SM%d: %d CTAs, %d stages, span %d clk (%.1f us), CTAs resident %.2f, SM clk per CTA-stage %.0f" % (f.split('/')[-1], s, len(A), cnt, span, span / 1980, busy / span, span / max(cnt,1)))
        print("   " + "  ".join("%s %.0f (%.0f%%)" % (k, v / max(cnt,1), 100 * v / busy) for k, v in tot.items()))

if __name__ == "__main__":
    main(sys.argv[1])
