#!/usr/bin/env python3
"""gpu_binding.py: the Python binding (kernels/fp2.py) on a GPU, against dense causal attention in
float64. At alpha = 0 every causal block is selected (E >= 0 always holds), so the sparse pass is
dense attention up to bf16 rounding: a check that fails for a wrong causal offset, head mapping,
length or row. A batch of four requests of mixed lengths, two of them chunks of a prefill (fewer
queries than keys), random bf16 inputs (normal, never all zeros), 32:8 and 24:8 heads (g = 3 does
not divide the 128-row tile), D = 128, the portable kernel and, on compute capability 9, the sm90
one. Each case runs forward eagerly, then captures the same call under torch.cuda.graph with out
and workspace preallocated, replays it on new inputs copied into the same tensors and checks the
replay against the reference and, bit for bit, against an eager call on those inputs; that a
prepared call (fp2.prepare) gives the eager call's output bit for bit and refuses a tensor of
another shape; and that kernel='auto' gives the output of the kernel it should pick.
Run from the repository root: FP2_LIB=build/libfp2.so python3 tests/gpu_binding.py
Exit codes: 0 all passed, 1 a check failed, 77 no torch or no CUDA GPU."""
import math
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "kernels"))
sys.path.insert(0, os.path.join(ROOT, "experiments"))
from checks import check, finish  # noqa: E402

try:
    import torch
except ImportError:
    print("gpu_binding: torch is not installed: skipped")
    sys.exit(77)
if not torch.cuda.is_available():
    print("gpu_binding: no CUDA GPU: skipped")
    sys.exit(77)
import fp2  # noqa: E402

LQ = [1024 + 77, 300, 77, 640]
LK = [1024 + 77, 2048 + 5, 77, 1024 + 640]
D = 128
# bf16 output (8 bits of mantissa) and bf16 probabilities in the products: a few ulps of the
# value, and of the row's scale near 0.
RTOL, ATOL, L2_TOL = 2 ** -6, 4e-3, 1e-2



def inputs(hq, hkv, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    q = torch.randn(sum(LQ), hq, D, generator=g, device="cuda").to(torch.bfloat16)
    k = torch.randn(sum(LK), hkv, D, generator=g, device="cuda").to(torch.bfloat16)
    v = torch.randn(sum(LK), hkv, D, generator=g, device="cuda").to(torch.bfloat16)
    return q, k, v


def dense(q, k, v):
    """Causal attention in float64, each request's queries the last of its positions."""
    hq, hkv = q.shape[1], k.shape[1]
    out = torch.empty(q.shape, dtype=torch.float64, device=q.device)
    for q0, k0, lq, lk in zip(fp2.prefix_sums(LQ), fp2.prefix_sums(LK), LQ, LK):
        qb = q[q0:q0 + lq].double().transpose(0, 1)                                        # [hq, lq, D]
        kb = k[k0:k0 + lk].double().repeat_interleave(hq // hkv, dim=1).transpose(0, 1)  # [hq, lk, D]
        vb = v[k0:k0 + lk].double().repeat_interleave(hq // hkv, dim=1).transpose(0, 1)
        s = qb @ kb.transpose(1, 2) / math.sqrt(D)
        pos = torch.arange(lk - lq, lk, device=q.device)[:, None]
        s = s.masked_fill(torch.arange(lk, device=q.device)[None, :] > pos, float("-inf"))
        out[q0:q0 + lq] = (torch.softmax(s, dim=-1) @ vb).transpose(0, 1)
    return out


def check_close(o, ref, what):
    diff = (o.double() - ref).abs()
    bad = diff > ATOL + RTOL * ref.abs()
    l2 = (torch.linalg.vector_norm(o.double() - ref) / torch.linalg.vector_norm(ref)).item()
    worst = divmod(int(diff.argmax()), o.shape[1] * D)
    detail = (f"{int(bad.sum())} of {o.numel()} values beyond {ATOL} + {RTOL:.3g}|ref|, max error "
              f"{diff.max().item():.3g} at row {worst[0]}, relative L2 {l2:.3g}")
    check(bool(torch.isfinite(o).all()) and not bool(bad.any()) and l2 <= L2_TOL, what, detail)


def one_case(hq, hkv, kernel, seed, is_auto):
    what = f"{hq}:{hkv} heads, kernel {kernel}"
    cu_q, cu_k = fp2.prefix_sums(LQ), fp2.prefix_sums(LK)
    opts = dict(alpha=0.0, kernel=kernel)
    q, k, v = inputs(hq, hkv, seed)
    eager = fp2.forward(q, k, v, cu_q, cu_k, **opts)
    torch.cuda.synchronize()
    check_close(eager, dense(q, k, v), f"{what}: eager (allocating) forward = dense attention")

    ws = torch.empty(fp2.workspace_bytes(q, k, v, cu_q, cu_k, **opts), dtype=torch.uint8, device="cuda")
    o = torch.empty_like(q)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fp2.forward(q, k, v, cu_q, cu_k, out=o, workspace=ws, **opts)
    q2, k2, v2 = inputs(hq, hkv, seed + 1000)
    q.copy_(q2)
    k.copy_(k2)
    v.copy_(v2)
    o.fill_(float("nan"))
    graph.replay()
    torch.cuda.synchronize()
    check_close(o, dense(q2, k2, v2), f"{what}: graph replay on new inputs = dense attention")
    again = fp2.forward(q2, k2, v2, cu_q, cu_k, **opts)
    torch.cuda.synchronize()
    check(torch.equal(o, again), f"{what}: graph replay = eager forward, bit for bit",
          f"max difference {(o.double() - again.double()).abs().max().item():.3g}")
    run = fp2.prepare(q2, k2, v2, cu_q, cu_k, **opts)
    prepared = torch.full_like(q2, float("nan"))
    run(q2, k2, v2, prepared)
    torch.cuda.synchronize()
    check(torch.equal(prepared, again), f"{what}: prepared call = eager forward, bit for bit",
          f"max difference {(prepared.double() - again.double()).abs().max().item():.3g}")
    try:
        run(q2[1:], k2, v2, prepared)
        check(False, f"{what}: prepared call refuses q of another shape", "it ran")
    except ValueError as e:
        check("as prepared" in str(e), f"{what}: prepared call refuses q of another shape", str(e))
    if is_auto:
        auto = fp2.forward(q2, k2, v2, cu_q, cu_k, alpha=0.0)
        torch.cuda.synchronize()
        check(torch.equal(auto, again), f"{what}: kernel 'auto' picks {kernel} (the same output, bit for bit)")


def main():
    major = torch.cuda.get_device_capability()[0]
    print(f"gpu_binding: {torch.cuda.get_device_name()}, torch {torch.__version__}, library {fp2.library_path()}")
    kernels = ["portable", "sm90"] if major == 9 else ["portable"]
    auto = kernels[-1]  # what kernel='auto' runs at D = 128, block and qtile 128
    seed = 1
    for kernel in kernels:
        for hq, hkv in ((32, 8), (24, 8)):
            try:
                one_case(hq, hkv, kernel, seed, kernel == auto)
            except Exception as e:  # one line, and the next case still runs
                check(False, f"{hq}:{hkv} heads, kernel {kernel}", f"{type(e).__name__}: {e}")
            seed += 1
    fp2.clear_plans()
    return finish()


if __name__ == "__main__":
    sys.exit(main())
