"""The include graph of src/ (issue 17): each folder is a floor that includes only itself and
the floors below it, in CMakeLists.txt's FP2_HOST_DIRS order, and no module (x.c with x.h)
is on a circle. Prints the folder graph; exits 1 naming each upward arrow or circle.
synth.[ch] stay beside main.c for their owner but are data (problems from a generator), so
they count as data/; main.c is the top. Headers outside src/ (fp2.h, libc) are not edges.
Usage: python3 src_floors.py [SOURCE_DIR]"""
import os
import re
import sys

TOP_DATA = {"synth"}  # modules in src/ itself that sit on the data floor


def floors(root):
    text = open(os.path.join(root, "CMakeLists.txt")).read()
    m = re.search(r"set\(FP2_HOST_DIRS ([^)]*)\)", text)
    if not m:
        sys.exit("src_floors: no set(FP2_HOST_DIRS ...) in CMakeLists.txt")
    return m.group(1).split() + ["main"]


def modules(root):
    """{module: (floor, [included header stems])} for every .c and .h under src/."""
    src = os.path.join(root, "src")
    mods = {}
    for dirpath, _, files in os.walk(src):
        folder = os.path.relpath(dirpath, src)
        for f in sorted(files):
            stem, ext = os.path.splitext(f)
            if ext not in (".c", ".h"):
                continue
            if folder == ".":
                floor = "data" if stem in TOP_DATA else "main"
            else:
                floor = folder
            incs = re.findall(r'^\s*#\s*include\s+"([^"]+)\.h"', open(os.path.join(dirpath, f)).read(), re.M)
            prev = mods.setdefault(stem, (floor, []))
            if prev[0] != floor:
                sys.exit(f"src_floors: '{stem}' is in both {prev[0]}/ and {floor}/")
            prev[1].extend(os.path.basename(i) for i in incs)
    return mods


def circles(mods):
    """Each module circle once, as the list of its modules (Tarjan's strongly connected parts)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in mods[v][1]:
            if w not in mods or w == v:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                out.append(sorted(part))

    for v in sorted(mods):
        if v not in index:
            visit(v)
    return out


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    order = floors(root)
    rank = {f: i for i, f in enumerate(order)}
    mods = modules(root)
    edges, bad = {}, []
    for m, (floor, incs) in sorted(mods.items()):
        if floor not in rank:
            bad.append(f"src/{floor}/ is not in FP2_HOST_DIRS")
            continue
        for h in incs:
            if h not in mods:
                continue
            to = mods[h][0]
            if to != floor:
                edges.setdefault(floor, set()).add(to)
            if rank[to] > rank[floor]:
                bad.append(f"upward: {floor}/{m} includes {to}/{h}.h")
    for part in circles(mods):
        bad.append("circle: " + " -> ".join(part))
    for f in reversed(order):
        below = sorted(edges.get(f, ()), key=rank.get, reverse=True)
        print(f"{f:7} -> {' '.join(below) if below else '(nothing)'}")
    print(f"{len(mods)} modules, {len(order)} floors: " + (f"{len(bad)} problems" if bad else "no circles, no upward arrows"))
    for b in bad:
        print("src_floors: " + b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
