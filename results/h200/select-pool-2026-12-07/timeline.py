"""Summary of a timeline log (argv[1], plain or .xz) from a build with timeline.patch or
timeline2.patch: per launch of the cached select of chunk 8 of 72K in 8K chunks, the pooling
CTAs' span and tasks, and the scoring CTAs' first wave (the CTAs that started first, one in each
slot the poolers leave): when they reached their fresh stage, how many deferred it,
and how many fresh tasks the scoring CTAs pooled themselves. With timeline3.patch also pooling
CTA 0's own steps (T lines): the end of its grid-dependency wait, each ticket taken, each
slice's arrival (its wait and barrier passed) and its end. Times in us from the launch's
first CTA (%globaltimer); the prints themselves slow the CTAs that wait, so only the times
up to the first wave's fresh stage are undisturbed."""
import lzma
import sys

name = sys.argv[1]
lines = [l.split() for l in (lzma.open(name, "rt") if name.endswith(".xz") else open(name)) if l.strip()]
P = [l for l in lines if l[0] == "P"]
S = [l for l in lines if l[0] == "S"]
T = [l for l in lines if l[0] == "T"]
# Every launch prints each CTA once: a launch's CTAs are its distinct block indices.
poolers, scorers = len({x[1] for x in P}), len({x[1] for x in S})
for n in range(len(P) // poolers if P else 0):
    p, s = P[n * poolers:(n + 1) * poolers], S[n * scorers:(n + 1) * scorers]
    t0 = min(int(x[3]) for x in p + s)
    us = lambda t: (int(t) - t0) / 1e3
    slots = 4 * len({x[2] for x in p + s})  # the select's 4 CTAs an SM, over the SMs the launch used
    first = sorted(s, key=lambda x: int(x[3]))[:slots - poolers]
    print("launch %d: poolers on %d SMs, %.1f-%.1f us, %d tasks (%d-%d each); first wave's fresh stage %.1f-%.1f us; "
          "%d scoring CTAs deferred it and pooled %d tasks"
          % (n, len({x[2] for x in p}), min(us(x[4]) for x in p), max(us(x[4]) for x in p), sum(int(x[5]) for x in p),
             min(int(x[5]) for x in p), max(int(x[5]) for x in p), min(us(x[4]) for x in first),
             max(us(x[4]) for x in first), sum(int(x[5]) > 0 for x in s), sum(max(0, int(x[7])) for x in s)))

launch = -1
for f in T:
    if f[1] == "waited":
        launch += 1
        t0 = int(f[2])
        print("launch %d, pooling CTA 0: waited until %.2f us" % (launch, (int(f[3]) - t0) / 1e3), end="")
    elif launch >= 0:
        print(" | %s %.2f" % (" ".join(f[1:-1]), (int(f[-1]) - t0) / 1e3), end="\n" if f[1] == "end" else "")
