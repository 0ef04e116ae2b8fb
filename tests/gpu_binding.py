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
another shape; and that kernel='auto' gives the output of the kernel it should pick. Then K and V
in pages of 16 and of 64 keys, shuffled among spare pages and NaN wherever no key lies (forward
and a prepared call with page_table, at the default alpha, so that the index counts too) give the
contiguous pass's output bit for bit; and a chunk run with a pooled cache that a pass over its
prefix filled (pages of 64) gives the chunk run without it, bit for bit.
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


def paged(x, lengths, page_size, seed):
    """x [sum lengths, Hkv, D] in pages of page_size keys, each request's pages drawn shuffled
    among three spare ones, NaN wherever no key lies: (pages [num_pages, page_size, Hkv, D], the
    page table [batch, max_pages] int32 on the device)."""
    counts = [-(-n // page_size) for n in lengths]
    order = torch.randperm(sum(counts) + 3, generator=torch.Generator().manual_seed(seed)).tolist()
    pages = torch.full((len(order), page_size) + tuple(x.shape[1:]), float("nan"), dtype=x.dtype, device=x.device)
    table = torch.zeros(len(lengths), max(counts), dtype=torch.int32)
    for b, (x0, n) in enumerate(zip(fp2.prefix_sums(lengths), lengths)):
        for j in range(counts[b]):
            page = order.pop()
            table[b, j] = page
            rows = x[x0 + j * page_size:x0 + min(n, (j + 1) * page_size)]
            pages[page, :rows.shape[0]] = rows
    return pages, table.cuda()


def paged_case(hq, hkv, kernel, seed, page_size):
    what = f"{hq}:{hkv} heads, kernel {kernel}, pages of {page_size}"
    cu_q, cu_k = fp2.prefix_sums(LQ), fp2.prefix_sums(LK)
    q, k, v = inputs(hq, hkv, seed)
    contiguous = fp2.forward(q, k, v, cu_q, cu_k, kernel=kernel)
    (kp, table), (vp, _) = paged(k, LK, page_size, seed), paged(v, LK, page_size, seed)
    o = fp2.forward(q, kp, vp, cu_q, cu_k, page_table=table, kernel=kernel)
    run = fp2.prepare(q, kp, vp, cu_q, cu_k, page_table=table, kernel=kernel)
    prepared = torch.full_like(q, float("nan"))
    run(q, kp, vp, prepared, page_table=table)
    torch.cuda.synchronize()
    check(torch.equal(o, contiguous), f"{what}: forward = the contiguous pass, bit for bit",
          f"max difference {(o.double() - contiguous.double()).abs().nan_to_num(float('inf')).max().item():.3g}")
    check(torch.equal(prepared, contiguous), f"{what}: prepared call = the contiguous pass, bit for bit")


def pooled_case(hq, hkv, kernel, seed):
    """Requests 1 and 3 (the chunks): a pass over the keys before their queries fills the cache,
    then the chunk runs with it and without."""
    what = f"{hq}:{hkv} heads, kernel {kernel}, pooled cache, pages of 64"
    lq, lk = [LQ[1], LQ[3]], [LK[1], LK[3]]
    prefix = [n - m for n, m in zip(lk, lq)]
    g = torch.Generator(device="cuda").manual_seed(seed)
    k, v = (torch.randn(sum(lk), hkv, D, generator=g, device="cuda").to(torch.bfloat16) for _ in range(2))
    (kp, table), (vp, _) = paged(k, lk, 64, seed), paged(v, lk, 64, seed)
    blocks = -(-max(lk) // 128)
    rows = torch.randperm(2 * blocks, generator=torch.Generator().manual_seed(seed)).to(torch.int32)
    means = [torch.full((2 * blocks, hkv, D), float("nan"), device="cuda") for _ in range(2)]
    cache = (means[0], means[1], rows.view(2, blocks).cuda())
    q_prefix = torch.randn(sum(prefix), hq, D, generator=g, device="cuda").to(torch.bfloat16)
    q = torch.randn(sum(lq), hq, D, generator=g, device="cuda").to(torch.bfloat16)
    opts = dict(page_table=table, kernel=kernel)
    fp2.forward(q_prefix, kp, vp, fp2.prefix_sums(prefix), fp2.prefix_sums(prefix), pooled=cache, **opts)
    cached = fp2.forward(q, kp, vp, fp2.prefix_sums(lq), fp2.prefix_sums(lk), pooled=cache, **opts)
    fresh = fp2.forward(q, kp, vp, fp2.prefix_sums(lq), fp2.prefix_sums(lk), **opts)
    torch.cuda.synchronize()
    check(torch.equal(cached, fresh), f"{what}: the chunk with the cache = without it, bit for bit",
          f"max difference {(cached.double() - fresh.double()).abs().nan_to_num(float('inf')).max().item():.3g}")


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
    cases = [(one_case, hq, hkv, kernel, kernel == auto) for kernel in kernels for hq, hkv in ((32, 8), (24, 8))]
    cases += [(paged_case, 24, 8, kernel, page_size) for kernel in kernels for page_size in (16, 64)]
    cases += [(pooled_case, 32, 8, kernel) for kernel in kernels]
    for case, hq, hkv, kernel, *rest in cases:
        try:
            case(hq, hkv, kernel, seed, *rest)
        except Exception as e:  # one line, and the next case still runs
            check(False, f"{case.__name__} {hq}:{hkv} heads, kernel {kernel}", f"{type(e).__name__}: {e}")
        seed += 1
    fp2.clear_plans()
    return finish()


if __name__ == "__main__":
    sys.exit(main())
