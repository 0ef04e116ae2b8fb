#!/usr/bin/env python3
"""test_peers.py: end-to-end test of experiments/peers.py (needs torch and a CUDA GPU; FlexAttention
also needs triton).

Builds a small input the way fp2bench writes it (L = 1000, 8:2 heads, D = 64, random bf16 q, k, v,
block 128, qtile 128) with a random CSR index that keeps every causal block for half the tiles
and, for the others, a sparse random set plus the tile's diagonal blocks; writes it with the
fallback safetensors writer of record_qkv.py; runs peers.py on it and checks:
  - exit 0, OUT.json's schema, torch and device; each of fa2, sdpa_cudnn and flex either timed
    (as many positive trials as the file's metadata asks, checked rows, error under 2e-2) or
    skipped with a reason that is not a failed check; flex present where triton is installed,
    with its note on the missing mean correction, each with the pairs it computes ("index" for
    flex, "causal" for the others); --trials and --peers override;
  - the BlockMask peers.py builds is fp2bench's index, block by block (partial and full blocks
    against a mask built here from the kept sets), in one create_block_mask call and in the
    sliced form used for long inputs;
  - flex's output on every row equals this test's own float64 sparse attention (built from the
    kept sets and the PackGQA mapping, independently of peers.py), and differs from dense
    attention (the check has teeth); peers.py's float64 references equal this test's; the same
    on a second input whose tiles straddle key blocks (block 64, qtile 96);
  - the fallback reader reads what the safetensors package reads;
  - bad arguments and bad inputs give exit 2 and one line, no traceback.
Exit codes: 0 all passed, 1 a check failed, 77 skipped (torch or a CUDA device missing).
"""
import importlib.util
import json
import math
import os
import random
import subprocess
import sys
import tempfile

SKIP = 77
HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "peers.py")
L, HQ, HKV, D = 1000, 8, 2, 64
G = HQ // HKV
TRIALS = 3          # in the file's metadata
CHECK_ROWS = 128
TOL = 2e-2

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402


def load_module(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# ------------------------------------------------------------------ the input

def tile_span(T, block, qtile, g, length):
    """Positions and key blocks of PackGQA tile T (DESIGN.md section 3)."""
    p_first = T * qtile // g
    p_last = min(((T + 1) * qtile - 1) // g, length - 1)
    return p_first, p_last, p_first // block, p_last // block


def make_index(length, g, hkv, block, qtile, seed):
    """kept[(h, T)] = sorted key blocks: every causal block for a random half of the tiles of each
    KV head; for the others a sparse random set plus the diagonal blocks first_k..last_k."""
    rnd = random.Random(seed)
    ntiles = -(-length * g // qtile)
    kept = {}
    for h in range(hkv):
        dense = set(rnd.sample(range(ntiles), ntiles // 2))
        for T in range(ntiles):
            _, _, first_k, last_k = tile_span(T, block, qtile, g, length)
            if T in dense:
                blocks = set(range(last_k + 1))
            else:
                blocks = {J for J in range(last_k + 1) if rnd.random() < 0.25} | set(range(first_k, last_k + 1))
            kept[(h, T)] = sorted(blocks)
    return kept, ntiles


def write_input(path, q, k, v, kept, ntiles, block, qtile, trials, rq):
    import torch
    offsets, indices = [0], []
    for h in range(HKV):
        for T in range(ntiles):
            indices += kept[(h, T)]
            offsets.append(len(indices))
    tensors = {"q": q, "k": k, "v": v, "csr_offsets": torch.tensor(offsets, dtype=torch.int32),
               "csr_indices": torch.tensor(indices, dtype=torch.int32)}
    meta = {"block": str(block), "qtile": str(qtile), "trials": str(trials), "dtype": "bf16",
            "writer": "test_peers.py (record_qkv.py's fallback writer)"}
    had = "safetensors.torch" in sys.modules
    saved = sys.modules.get("safetensors.torch")
    sys.modules["safetensors.torch"] = None          # makes `from safetensors.torch import ...` fail
    try:
        rq.write_safetensors(path, tensors, meta)
    finally:
        if had:
            sys.modules["safetensors.torch"] = saved
        else:
            del sys.modules["safetensors.torch"]
    return tensors


def random_qkv(length, seed):
    import torch
    gen = torch.Generator().manual_seed(seed)
    q = (torch.randn(length, HQ, D, generator=gen) * 1.5).to(torch.bfloat16)
    k = torch.randn(length, HKV, D, generator=gen).to(torch.bfloat16)
    v = torch.randn(length, HKV, D, generator=gen).to(torch.bfloat16)
    return q, k, v


# ------------------------------------------------------------------ this test's own reference

def sparse_mask(kept, length, g, block, qtile):
    """[HQ, L, L] bool: row (p, hq) sees key j when j's block is kept for its tile and j <= p."""
    import torch
    mask = torch.zeros(HQ, length, length, dtype=torch.bool)
    for hq in range(HQ):
        h = hq // g
        for p in range(length):
            T = (p * g + (hq - h * g)) // qtile
            for J in kept[(h, T)]:
                lo, hi = J * block, min((J + 1) * block, p + 1)
                if lo < hi:
                    mask[hq, p, lo:hi] = True
    return mask


def attention(q, k, v, mask):
    """softmax(q k^T / sqrt(D)) v in float64 over the allowed keys; q [L, HQ, D] -> [L, HQ, D]."""
    import torch
    q, k, v = q.double(), k.double(), v.double()
    kk, vv = k.repeat_interleave(G, dim=1), v.repeat_interleave(G, dim=1)
    s = torch.einsum("qhd,khd->hqk", q, kk) / math.sqrt(q.shape[-1])
    s = s.masked_fill(~mask, float("-inf"))
    p = torch.softmax(s, dim=-1)
    p = torch.nan_to_num(p, nan=0.0)                  # a row without keys gives 0
    return torch.einsum("hqk,khd->qhd", p, vv)


def rel_l2(a, b):
    a, b = a.double().cpu(), b.double().cpu()
    return float((a - b).norm() / b.norm().clamp_min(1e-300))


def block_table(mask, fb=128):
    """partial and full FlexAttention blocks [HQ, nqb, nkb] of a [HQ, L, L] mask, padding False."""
    import torch
    h, n, _ = mask.shape
    m = -(-n // fb) * fb
    pad = torch.zeros(h, m, m, dtype=torch.bool)
    pad[:, :n, :n] = mask
    s = pad.reshape(h, m // fb, fb, m // fb, fb).sum(dim=(2, 4))
    return (s > 0) & (s < fb * fb), s == fb * fb


def dense_blocks(num, idx):
    """BlockMask (num_blocks [1, H, R], indices [1, H, R, C]) -> bool [H, R, C] on the CPU."""
    import torch
    num, idx = num.cpu().long(), idx.cpu().long()
    cols = idx.shape[-1]
    valid = torch.arange(cols)[None, None, None, :] < num[..., None]
    out = torch.zeros(*idx.shape[:-1], cols + 1, dtype=torch.bool)
    out.scatter_(-1, torch.where(valid, idx, torch.full_like(idx, cols)), True)
    return out[0, :, :, :cols]


# ------------------------------------------------------------------ helpers

def run_peers(*args):
    p = subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, timeout=1800)
    return p.returncode, p.stdout, p.stderr


def one_line_error(rc, err, want_rc, want_text):
    """Exit code want_rc, the reason on the last line of stderr, no traceback."""
    lines = [x for x in err.strip().splitlines() if x.strip()]
    return rc == want_rc and bool(lines) and want_text in lines[-1] and "Traceback" not in err


def check_flex_case(pe, label, path, kept, q, k, v, block, qtile, budget_small):
    """peers.py's pieces on the GPU against this test's reference, for one input."""
    import torch
    from torch.nn.attention.flex_attention import create_block_mask
    prob = pe.read_problem(path)
    cpu = pe.load_tensors(prob)
    device = torch.device("cuda", torch.cuda.current_device())
    ctx = pe.Context(prob, cpu, device, L * HQ, 0)           # every row checked
    mask = sparse_mask(kept, L, G, block, qtile)
    ref_sparse = attention(q, k, v, mask)
    ref_dense = attention(q, k, v, torch.ones(L, L, dtype=torch.bool).tril().expand(HQ, L, L))

    # peers.py's own float64 references equal this test's
    rs = ctx.reference(True).cpu().reshape(L, HQ, D)
    check(rel_l2(rs, ref_sparse) < 1e-10, f"{label}: peers.py's sparse float64 reference = this test's",
          f"rel l2 {rel_l2(rs, ref_sparse):.3g}")
    rd = ctx.reference(False).cpu().reshape(L, HQ, D)
    check(rel_l2(rd, ref_dense) < 1e-10, f"{label}: peers.py's dense float64 reference = this test's",
          f"rel l2 {rel_l2(rd, ref_dense):.3g}")
    check(rel_l2(ref_sparse, ref_dense) > 0.05, f"{label}: the index changes the output (the check has teeth)",
          f"sparse vs dense rel l2 {rel_l2(ref_sparse, ref_dense):.3g}")

    # the BlockMask, block by block
    mm = pe.index_mask_mod(ctx.allowed, G, qtile, block)
    want_partial, want_full = block_table(mask)
    one = create_block_mask(mm, 1, HQ, L, L, device=device, BLOCK_SIZE=128)
    sliced, calls = pe.build_block_mask(mm, HQ, L, device, budget=budget_small)
    for name, bm in (("one call", one), (f"{calls} sliced calls", sliced)):
        got_p = dense_blocks(bm.kv_num_blocks, bm.kv_indices)
        got_f = dense_blocks(bm.full_kv_num_blocks, bm.full_kv_indices)
        check(torch.equal(got_p, want_partial) and torch.equal(got_f, want_full) and tuple(bm.shape[-2:]) == (L, L),
              f"{label}: BlockMask ({name}) = the index's partial and full 128x128 blocks",
              f"partial {int(got_p.sum())}/{int(want_partial.sum())}, full {int(got_f.sum())}/{int(want_full.sum())}, "
              f"shape {tuple(bm.shape)}")
    check(calls > 1, f"{label}: the small budget slices create_block_mask", f"{calls} calls")

    # flex through peers.py's setup, every row
    try:
        fn, info, hold = pe.flex_setup(ctx)
        with hold():
            out = fn()
        torch.cuda.synchronize()
    except Exception as e:
        check(False, f"{label}: flex runs", f"{e.__class__.__name__}: {str(e).strip()[:600]}")
        return
    o = out[0].permute(1, 0, 2).float().cpu()                 # [L, HQ, D]
    e = rel_l2(o, ref_sparse)
    check(e < TOL, f"{label}: flex output = this test's sparse attention, all {L * HQ} rows", f"rel l2 {e:.3g}")
    check(rel_l2(o, ref_dense) > 0.05, f"{label}: flex output is not dense attention",
          f"rel l2 vs dense {rel_l2(o, ref_dense):.3g}")
    rel, worst, n = ctx.check(out, True)
    check(n == L * HQ and rel < TOL and worst < 10 * TOL, f"{label}: peers.py's own check of flex agrees",
          f"rel {rel:.3g}, worst row {worst:.3g}, {n} rows")
    bmi = info.get("block_mask", {})
    check(bmi.get("partial_blocks") == int(want_partial.sum()) and bmi.get("full_blocks") == int(want_full.sum()),
          f"{label}: flex info counts the BlockMask's blocks", json.dumps(bmi))
    from torch.nn.attention.flex_attention import flex_attention
    sl = torch.compile(flex_attention, dynamic=False)(ctx.q4, ctx.k4, ctx.v4, block_mask=sliced, enable_gqa=True)
    e2 = rel_l2(sl[0].permute(1, 0, 2).float().cpu(), o)
    check(e2 < 1e-6, f"{label}: flex with the sliced BlockMask gives the same output", f"rel l2 {e2:.3g}")


# ------------------------------------------------------------------ the test

def main():
    try:
        import torch
    except Exception as e:
        print(f"test_peers: skipped: torch is not importable ({e.__class__.__name__}: {e})")
        return SKIP
    if not torch.cuda.is_available():
        print(f"test_peers: skipped: torch {torch.__version__} sees no CUDA device")
        return SKIP
    try:
        import triton  # noqa: F401
        have_triton = True
    except Exception:
        have_triton = False
    try:
        from torch.nn.attention.flex_attention import flex_attention  # noqa: F401
        have_flex = have_triton
    except Exception:
        have_flex = False
    device_name = torch.cuda.get_device_name(torch.cuda.current_device())
    print(f"test_peers: torch {torch.__version__}, {device_name}, flex {'expected' if have_flex else 'may be skipped'}")
    rq = load_module("record_qkv", os.path.join(HERE, "record_qkv.py"))
    pe = load_module("peers", SCRIPT)
    tmp = tempfile.mkdtemp(prefix="fp2bench-peers-")

    # 1. input A: block 128, qtile 128
    q, k, v = random_qkv(L, 11)
    kept, ntiles = make_index(L, G, HKV, 128, 128, 5)
    path = os.path.join(tmp, "a.safetensors")
    written = write_input(path, q, k, v, kept, ntiles, 128, 128, TRIALS, rq)

    # 2. the readers
    prob = pe.read_problem(path)
    check((prob.L, prob.hq, prob.hkv, prob.dim, prob.block, prob.qtile, prob.ntiles, prob.trials)
          == (L, HQ, HKV, D, 128, 128, ntiles, TRIALS), "read_problem: shapes and metadata", json.dumps(prob.summary()))
    mine = pe.load_tensors(prob, use_package=False)
    check(all(torch.equal(mine[n], written[n]) for n in written) and mine["q"].dtype == torch.bfloat16,
          "fallback reader: tensors read back exactly")
    try:
        import safetensors  # noqa: F401
        pkg = pe.load_tensors(prob, use_package=True)
        check(all(torch.equal(pkg[n], mine[n]) for n in mine), "safetensors package reads the same tensors")
    except ImportError:
        print("note: the safetensors package is not installed; only the fallback reader was checked")

    # 3. the script: trials from the metadata, all peers
    out = os.path.join(tmp, "a.json")
    rc, _, err = run_peers("--in", path, "--out", out, "--warmup", "1", "--check-rows", str(CHECK_ROWS))
    if not check(rc == 0, "peers.py on input A exits 0", f"rc {rc}: {err.strip()[-3000:]}"):
        return finish()
    print(err.strip())
    doc = json.load(open(out))
    check(doc.get("schema") == "fp2bench-peers/1" and doc.get("torch") == torch.__version__
          and doc.get("device") == device_name, "OUT.json: schema, torch, device",
          f"{doc.get('schema')}, {doc.get('torch')}, {doc.get('device')}")
    check(doc.get("trials") == TRIALS and doc.get("input", {}).get("nnz") == len(written["csr_indices"]),
          "OUT.json: trials from the file's metadata, input summary", json.dumps(doc.get("input")))
    peers = {p.get("name"): p for p in doc.get("peers", [])}
    skipped = {s.get("name"): s for s in doc.get("skipped", [])}
    names = [p.get("name") for p in doc.get("peers", [])] + [s.get("name") for s in doc.get("skipped", [])]
    check(sorted(names) == ["fa2", "flex", "sdpa_cudnn"], "every peer timed or skipped, once", f"{names}")
    for name in ("fa2", "sdpa_cudnn", "flex"):
        if name in peers:
            p = peers[name]
            t = p.get("trials_ms", [])
            check(len(t) == TRIALS and all(isinstance(x, (int, float)) and 0 < x < 1e5 for x in t),
                  f"{name}: {TRIALS} positive trials", f"{t}")
            check(p.get("checked_rows") == CHECK_ROWS and isinstance(p.get("max_rel_err"), (int, float))
                  and 0 <= p.get("rel_l2_err", 1) < TOL and p["max_rel_err"] < 10 * TOL,
                  f"{name}: checked against the float64 reference",
                  f"rows {p.get('checked_rows')}, rel l2 {p.get('rel_l2_err')}, worst row {p.get('max_rel_err')}, "
                  f"gqa {p.get('gqa')}")
            want = "index" if name == "flex" else "causal"
            check(p.get("pairs") == want, f"{name}: computes the {want} pairs (its TFLOP/s in fp2bench)",
                  f"{p.get('pairs')}")
        elif name in skipped:
            why = skipped[name].get("why", "")
            check(isinstance(why, str) and why.strip() and "check failed" not in why,
                  f"{name}: skipped with a reason (not a failed check)", why)
    if have_flex:
        check("flex" in peers, "flex runs where triton is installed", skipped.get("flex", {}).get("why", ""))
    if "flex" in peers:
        check("without mean correction" in peers["flex"].get("note", "").lower(), "flex: note on the mean correction",
              peers["flex"].get("note", ""))

    # 4. --trials and --peers override
    out2 = os.path.join(tmp, "a2.json")
    rc, _, err = run_peers("--in", path, "--out", out2, "--trials", "2", "--warmup", "0", "--peers", "fa2")
    doc2 = json.load(open(out2)) if rc == 0 and os.path.exists(out2) else {}
    got = [(p.get("name"), len(p.get("trials_ms", []))) for p in doc2.get("peers", [])]
    got += [(s.get("name"), s.get("why")) for s in doc2.get("skipped", [])]
    check(rc == 0 and len(got) == 1 and got[0][0] == "fa2" and (got[0][1] == 2 or isinstance(got[0][1], str)),
          "--trials 2 --peers fa2", f"rc {rc}: {got} {err.strip()[-500:]}")

    # 5. peers.py's pieces against this test's reference, input A and an input whose tiles straddle blocks
    if have_flex:
        check_flex_case(pe, "A (block 128, qtile 128)", path, kept, q, k, v, 128, 128, budget_small=3 * 128 * 1024)
        qb, kb, vb = random_qkv(L, 12)
        kept_b, ntiles_b = make_index(L, G, HKV, 64, 96, 6)
        path_b = os.path.join(tmp, "b.safetensors")
        write_input(path_b, qb, kb, vb, kept_b, ntiles_b, 64, 96, TRIALS, rq)
        check_flex_case(pe, "B (block 64, qtile 96)", path_b, kept_b, qb, kb, vb, 64, 96, budget_small=20 * 128 * 1024)
    else:
        print("note: no triton; the FlexAttention checks were not run")

    # 6. errors: exit 2, one line, no traceback
    rc, _, err = run_peers("--in", path, "--out", os.path.join(tmp, "x.json"), "--peers", "fa2,fa3")
    check(one_line_error(rc, err, 2, "unknown peer 'fa3'"), "unknown peer: exit 2", f"rc {rc}: {err.strip()[-400:]}")
    rc, _, err = run_peers("--in", os.path.join(tmp, "missing.safetensors"), "--out", os.path.join(tmp, "x.json"))
    check(one_line_error(rc, err, 2, "cannot read"), "missing input: exit 2", f"rc {rc}: {err.strip()[-400:]}")
    rc, _, err = run_peers("--in", path, "--out", os.path.join(tmp, "no-such-dir", "x.json"))
    check(one_line_error(rc, err, 2, "no directory"), "output in a missing directory: exit 2",
          f"rc {rc}: {err.strip()[-400:]}")
    bad = dict(written)
    bad["csr_offsets"] = written["csr_offsets"][:-1]
    bad_path = os.path.join(tmp, "bad-offsets.safetensors")
    rq_meta_write(rq, bad_path, bad)
    rc, _, err = run_peers("--in", bad_path, "--out", os.path.join(tmp, "x.json"))
    check(one_line_error(rc, err, 2, "csr_offsets has"), "csr_offsets of the wrong length: exit 2",
          f"rc {rc}: {err.strip()[-400:]}")
    bad = dict(written)
    bad["csr_indices"] = written["csr_indices"].clone()
    bad["csr_indices"][3] = -(-L // 128)
    bad_path = os.path.join(tmp, "bad-indices.safetensors")
    rq_meta_write(rq, bad_path, bad)
    rc, _, err = run_peers("--in", bad_path, "--out", os.path.join(tmp, "x.json"))
    check(one_line_error(rc, err, 2, "outside [0,"), "key block out of range: exit 2", f"rc {rc}: {err.strip()[-400:]}")
    check(not os.path.exists(os.path.join(tmp, "x.json")), "no result written on errors")
    return finish()


def rq_meta_write(rq, path, tensors):
    rq.write_safetensors(path, tensors, {"block": "128", "qtile": "128", "trials": str(TRIALS), "dtype": "bf16"})


if __name__ == "__main__":
    sys.exit(main())
