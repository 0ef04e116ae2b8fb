#!/usr/bin/env python3
"""test_peer_adapters.py: the block-sparse peers' side of experiments/peers.py that needs neither
torch nor a GPU (CI has neither): fp2bench's CSR in FlashPrefill V2's 64-token tiles and in
HPC-Ops' uint8 mask per query head, each checked exactly on small hand-made cases and against
a row-by-row enumeration of its definition on random indexes (g = 1, 2, 3, 4, 5, 8; lengths that
are not multiples of 128; a last position tile whose heads lie in different PackGQA tiles); the
pairs and density HPC-Ops' mask lets through against a key-by-key count; and the skips, with
their reasons, when a library is not named, missing, or the shape or dtype is one it lacks.
Exit codes: 0 all passed, 1 a check failed.
"""
import importlib.util
import json
import os
import random
import struct
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from checks import check, finish  # noqa: E402


def load_peers():
    spec = importlib.util.spec_from_file_location("peers", os.path.join(HERE, "peers.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def random_index(rnd, L, g, hkv, qtile):
    """offsets, indices of a causal index: per (KV head, PackGQA tile) a random subset of the
    tile's causal blocks, its diagonal always in."""
    ntiles = -(-L * g // qtile)
    offsets, indices = [0], []
    for _ in range(hkv):
        for T in range(ntiles):
            last_k = min(((T + 1) * qtile - 1) // g, L - 1) // 128
            blocks = {J for J in range(last_k + 1) if rnd.random() < 0.4} | {last_k}
            indices += sorted(blocks)
            offsets.append(len(indices))
    return offsets, indices


def tiles_by_definition(offsets, indices, L):
    """Per segment: every 64-token tile that starts inside the sequence and lies in a kept block."""
    out = []
    for s in range(len(offsets) - 1):
        kept = set(indices[offsets[s]:offsets[s + 1]])
        out.append([t for t in range(-(-L // 64)) if (t * 64) // 128 in kept])
    return out


def mask_by_definition(offsets, indices, L, hkv, g, qtile):
    """mask[hq][t] = the union, over the rows (p, hq) with p in position tile t, of the blocks of the
    PackGQA tile holding packed row p*g + hq % g."""
    ntiles = -(-L * g // qtile)
    nqt = -(-L // 128)
    mask = [[set() for _ in range(nqt)] for _ in range(hkv * g)]
    for hq in range(hkv * g):
        h = hq // g
        for p in range(L):
            seg = h * ntiles + (p * g + hq % g) // qtile
            mask[hq][p // 128].update(indices[offsets[seg]:offsets[seg + 1]])
    return mask


def pairs_by_definition(mask, L):
    n = 0
    for rows in mask:
        for p in range(L):
            n += sum(1 for k in range(p + 1) if k // 128 in rows[p // 128])
    return n


def as_sets(raw, hq, nqt):
    return [[{j for j in range(nqt) if raw[(h * nqt + t) * nqt + j]} for t in range(nqt)] for h in range(hq)]


def write_input(path, L, hq, hkv, d, block, qtile, peer_dtype):
    """A safetensors file as fp2bench writes it for the peers (zero data: only its header is read here)."""
    ntiles = -(-L * (hq // hkv) // qtile)
    shapes = {"q": ("BF16", [L, hq, d]), "k": ("BF16", [L, hkv, d]), "v": ("BF16", [L, hkv, d]),
              "csr_offsets": ("I32", [hkv * ntiles + 1]), "csr_indices": ("I32", [0])}
    header, off = {}, 0
    for name, (dtype, shape) in shapes.items():
        n = (2 if dtype == "BF16" else 4)
        for x in shape:
            n *= x
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [off, off + n]}
        off += n
    header["__metadata__"] = {"block": str(block), "qtile": str(qtile), "trials": "3", "dtype": "bf16",
                              "peer_dtype": peer_dtype}
    raw = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(raw)) + raw + bytes(off))


class FakeCtx:
    def __init__(self, prob):
        self.prob = prob


def skip_reason(pe, fn, *args):
    try:
        fn(*args)
    except pe.PeerSkip as e:
        return str(e)
    return None


def main():
    pe = load_peers()

    # 1. FlashPrefill V2's tiles, by hand: L = 300 has 5 tiles of 64; block 2's second tile starts at 320
    cu, tiles = pe.fpv2_tiles([0, 2, 3], [0, 2, 1], 128, 300)
    check((cu, tiles) == ([0, 3, 5], [0, 1, 4, 2, 3]), "fpv2 tiles: blocks -> 64-token tiles, the one past L dropped",
          f"{cu} {tiles}")

    # 2. HPC-Ops' mask, by hand: g = 2 (divides 128), L = 256, two KV heads, 4 PackGQA tiles each:
    # position tile 1 takes the union of PackGQA tiles 2 and 3
    offs = [0, 1, 2, 3, 5, 6, 7, 8, 9]
    idx = [0, 0, 1, 0, 1, 0, 0, 1, 1]
    raw, pairs = pe.hpc_mask(offs, idx, 256, 2, 2, 128)
    want = [[{0}, {0, 1}], [{0}, {0, 1}], [{0}, {1}], [{0}, {1}]]
    check(as_sets(raw, 4, 2) == want, "hpc mask: union of the g PackGQA tiles of each position tile",
          f"{as_sets(raw, 4, 2)}")
    check(pairs == pairs_by_definition(want, 256), "hpc mask: its pairs (g = 2)", f"{pairs}")

    # 3. g = 3, L = 171: PackGQA tile 4 holds only packed row 512, position 170 of head 2, so in the
    # last position tile head 2 sees tiles 3 and 4, heads 0 and 1 tile 3 alone
    offs = [0, 1, 2, 3, 4, 6]
    idx = [0, 0, 0, 1, 0, 1]
    raw, pairs = pe.hpc_mask(offs, idx, 171, 1, 3, 128)
    want = [[{0}, {1}], [{0}, {1}], [{0}, {0, 1}]]
    check(as_sets(raw, 3, 2) == want, "hpc mask: g = 3, the last tile's heads in different PackGQA tiles",
          f"{as_sets(raw, 3, 2)}")
    tri = 128 * 129 // 2
    check(pairs == 3 * tri + 3 * (43 * 44 // 2) + 43 * 128, "hpc mask: pairs of the g = 3 case", f"{pairs}")
    check(abs(pairs / pe.causal_pairs(171, 3) - pairs / (3 * 171 * 172 / 2)) < 1e-15 and pe.causal_pairs(171, 3)
          == 3 * 171 * 172 // 2, "causal pairs over all query heads")

    # 4. random indexes against the definitions
    rnd = random.Random(7)
    cases = [(1000, 1, 2, 128), (1000, 2, 2, 128), (700, 3, 2, 128), (513, 4, 1, 128), (400, 5, 2, 128),
             (300, 8, 1, 128), (650, 3, 2, 96)]
    for L, g, hkv, qtile in cases:
        offs, idx = random_index(rnd, L, g, hkv, qtile)
        cu, tiles = pe.fpv2_tiles(offs, idx, 128, L)
        got = [tiles[cu[s]:cu[s + 1]] for s in range(len(cu) - 1)]
        check(got == tiles_by_definition(offs, idx, L), f"fpv2 tiles = their definition (L {L}, g {g})")
        raw, pairs = pe.hpc_mask(offs, idx, L, hkv, g, qtile)
        nqt = -(-L // 128)
        want = mask_by_definition(offs, idx, L, hkv, g, qtile)
        check(len(raw) == hkv * g * nqt * nqt and as_sets(raw, hkv * g, nqt) == want and set(raw) <= {0, 1},
              f"hpc mask = its definition (L {L}, g {g}, qtile {qtile})")
        check(pairs == pairs_by_definition(want, L), f"hpc mask's pairs = a key-by-key count (L {L}, g {g})",
              f"{pairs}")

    # 5. skips, each with its reason
    tmp = tempfile.mkdtemp(prefix="fp2bench-adapters-")
    path = os.path.join(tmp, "in.safetensors")
    write_input(path, 256, 4, 2, 128, 128, 128, "bf16")
    prob = pe.read_problem(path)
    check(prob.peer_dtype == "bf16" and prob.select == {}, "read_problem: peer_dtype, no selection parameters")
    for var in ("FP2_FLASHPREFILL_LIB", "FP2_HPC_OPS_LIB", "FP2_FLASHPREFILL_PY"):
        os.environ.pop(var, None)
    why = skip_reason(pe, pe.fpv2_kernel_setup, FakeCtx(prob))
    check(why is not None and "FP2_FLASHPREFILL_LIB is not set" in why, "fpv2_kernel: skipped without FP2_FLASHPREFILL_LIB",
          why)
    why = skip_reason(pe, pe.fpv2_setup, FakeCtx(prob))
    check(why is not None and "FP2_FLASHPREFILL_LIB is not set" in why, "fpv2: skipped without FP2_FLASHPREFILL_LIB", why)
    os.environ["FP2_FLASHPREFILL_LIB"] = os.path.join(tmp, "fp2_C.abi3.so")
    why = skip_reason(pe, pe.fpv2_kernel_setup, FakeCtx(prob))
    check(why is not None and f"cannot read '{os.path.join(tmp, 'fp2_C.abi3.so')}'" in why,
          "fpv2_kernel: a missing library is named", why)
    why = skip_reason(pe, pe.load_index_builder)
    check(why is not None and "FP2_FLASHPREFILL_PY is not set" in why, "fpv2: skipped without FP2_FLASHPREFILL_PY", why)
    os.environ["FP2_FLASHPREFILL_PY"] = tmp
    why = skip_reason(pe, pe.load_index_builder)
    check(why is not None and "flash_block_sparse_index_triton.py" in why and "cannot read" in why,
          "fpv2: a missing index builder is named", why)
    why = skip_reason(pe, pe.hpc_setup, FakeCtx(prob))
    check(why is not None and "FP8 only" in why, "hpc: skipped on a bf16 run", why)
    write_input(path, 256, 4, 2, 128, 128, 128, "fp8")
    prob8 = pe.read_problem(path)
    why = skip_reason(pe, pe.hpc_setup, FakeCtx(prob8))
    check(why is not None and "FP2_HPC_OPS_LIB is not set" in why, "hpc: skipped without FP2_HPC_OPS_LIB", why)
    write_input(path, 256, 4, 2, 64, 128, 128, "fp8")
    why = skip_reason(pe, pe.hpc_setup, FakeCtx(pe.read_problem(path)))
    check(why is not None and "head dim 128" in why and "dim 64" in why, "hpc: skipped at head dim 64", why)
    write_input(path, 256, 4, 2, 128, 128, 64, "bf16")
    why = skip_reason(pe, pe.fpv2_kernel_setup, FakeCtx(pe.read_problem(path)))
    check(why is not None and "qtile 128" in why and "qtile 64" in why, "fpv2_kernel: skipped at qtile 64", why)
    write_input(path, 256, 4, 2, 128, 128, 128, "fp16")
    try:
        pe.read_problem(path)
        check(False, "peer_dtype fp16 is refused")
    except pe.UsageError as e:
        check("peer_dtype 'fp16'" in str(e), "peer_dtype fp16 is refused", str(e))
    check(pe.build_parser().parse_args(["--in", "x", "--out", "y"]).peers == ["fa2", "sdpa_cudnn", "flex"]
          and pe.build_parser().parse_args(["--in", "x", "--out", "y", "--peers", "hpc,fpv2"]).peers == ["hpc", "fpv2"],
          "--peers: the torch peers by default, the block-sparse ones by name")

    return finish()


if __name__ == "__main__":
    sys.exit(main())
