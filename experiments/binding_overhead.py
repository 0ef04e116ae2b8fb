#!/usr/bin/env python3
"""binding_overhead.py: what a CUDA-graph replay of fp2_forward and the Python binding
(kernels/fp2.py) add to the pass, on a GPU: issue 13's targets are a replay within 20 us of the
kernels themselves and a Python call within 30 us of the library call.

For each batch (random bf16 inputs, 32:8 heads, D = 128, the library's defaults):
- replay and eager: the GPU time of one graph replay and of one eager forward, CUDA events
  around --calls back-to-back calls, divided by their number;
- kernels: the durations of the CUDA kernels (memsets included) of one replay, summed, from
  torch.profiler over as many back-to-back replays (the clocks under a long run are not those
  of one call);
- python, prepared and c: the host time of one fp2.forward call with out and workspace given,
  of one call of fp2.prepare's Prepared (arguments checked once, then only the cheap checks
  per call), and of the bare ctypes call of fp2_forward with the same arguments built once,
  each timed alone after a synchronise (so that no launch waits for a full queue), median of
  --calls.
The overheads are replay - kernels, python - c and prepared - c. Prints a table; --out writes JSON.
Run from the repository root:
  FP2_LIB=build/libfp2.so python3 experiments/binding_overhead.py --out results/h200/binding-overhead.json
Exit codes: 0 done, 2 bad arguments, 3 a failed run, 77 no torch or no CUDA GPU."""
import argparse
import ctypes
import datetime
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "kernels"))
sys.path.insert(0, os.path.join(ROOT, "experiments"))
from script_exit import Absent, RuntimeFailure, UsageError, run_main  # noqa: E402

HQ, HKV, D = 32, 8, 128
# Batches as "LQ/LK" per request (LQ alone: a whole prompt): a single short prompt, where the
# fixed costs show most, a small mixed batch with a chunk, and one long prompt.
DEFAULT_BATCHES = "1k;2k,2k,1k/4k,512;32k"


def parse_size(text):
    t = text.strip().lower()
    scale = 1024 if t.endswith("k") else 1
    n = int(float(t[:-1]) * scale) if t.endswith("k") else int(t)
    if n <= 0:
        raise ValueError(text)
    return n


def parse_batches(text):
    """[(name, lq list, lk list)] from "REQ,REQ;REQ..." with REQ = L or LQ/LK."""
    batches = []
    for spec in text.split(";"):
        lq, lk = [], []
        for req in spec.split(","):
            try:
                q, _, k = req.partition("/")
                nq = parse_size(q)
                nk = parse_size(k) if k else nq
            except ValueError:
                raise UsageError(f"--batches: '{req}' is not L or LQ/LK (sizes like 4k)")
            if nq > nk:
                raise UsageError(f"--batches: '{req}' has more queries than keys")
            lq.append(nq)
            lk.append(nk)
        batches.append((spec, lq, lk))
    return batches



def git_commit():
    try:
        out = subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10)
        return out.stdout.strip() if out.returncode == 0 else None
    except (OSError, subprocess.SubprocessError):
        return None


def measure(torch, fp2, name, lq, lk, calls, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    q = torch.randn(sum(lq), HQ, D, generator=g, device="cuda").to(torch.bfloat16)
    k = torch.randn(sum(lk), HKV, D, generator=g, device="cuda").to(torch.bfloat16)
    v = torch.randn(sum(lk), HKV, D, generator=g, device="cuda").to(torch.bfloat16)
    cu_q, cu_k = fp2.prefix_sums(lq), fp2.prefix_sums(lk)
    out = torch.full_like(q, float("nan"))
    ws = torch.empty(fp2.workspace_bytes(q, k, v, cu_q, cu_k), dtype=torch.uint8, device="cuda")
    run = lambda: fp2.forward(q, k, v, cu_q, cu_k, out=out, workspace=ws)  # noqa: E731
    run()
    torch.cuda.synchronize()
    if not bool(torch.isfinite(out).all()):
        raise RuntimeFailure(f"batch {name}: the forward left non-finite outputs")

    def gpu_us(fn):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        fn()
        torch.cuda.synchronize()
        start.record()
        for _ in range(calls):
            fn()
        stop.record()
        stop.synchronize()
        return start.elapsed_time(stop) * 1000.0 / calls

    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        run()
    replay_us = gpu_us(graph.replay)
    eager_us = gpu_us(run)
    # The kernels' own time under the same back-to-back load (the clocks of a long run are not
    # those of one call): the profiler over as many replays, their durations summed per replay.
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        gpu_us(graph.replay)
    kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    if not kernels:
        raise RuntimeFailure(f"batch {name}: the profiler saw no CUDA kernel")
    kernel_us = sum(e.time_range.elapsed_us() for e in kernels) / (calls + 1)

    # The library call as fp2.forward makes it, its arguments built once.
    entry = fp2._entry(fp2._inputs(q, k, v, cu_q, cu_k, {})[-1])
    inputs = fp2.Inputs(q=q.data_ptr(), k=k.data_ptr(), v=v.data_ptr(), o=out.data_ptr())
    lib, stream = fp2._lib(), torch.cuda.current_stream().cuda_stream
    args = (ctypes.byref(entry.params), ctypes.byref(entry.plan), ctypes.byref(inputs), ws.data_ptr(),
            ws.numel(), stream)

    def c_call():
        if lib.fp2_forward(*args) != fp2.OK:
            raise RuntimeFailure(f"batch {name}: fp2_forward failed")

    def host_us(fn):
        times = []
        for _ in range(calls):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t0) * 1e6)
        torch.cuda.synchronize()
        return statistics.median(times)

    prepared = fp2.prepare(q, k, v, cu_q, cu_k, workspace=ws)
    python_us, prepared_us, c_us = host_us(run), host_us(lambda: prepared(q, k, v, out)), host_us(c_call)
    return {"batch": name, "requests": len(lq), "total_q": sum(lq), "total_k": sum(lk), "kernels": round(len(kernels) / (calls + 1)),
            "kernel_us": kernel_us, "replay_us": replay_us, "eager_us": eager_us,
            "graph_overhead_us": replay_us - kernel_us, "python_call_us": python_us, "c_call_us": c_us,
            "python_overhead_us": python_us - c_us, "prepared_call_us": prepared_us,
            "prepared_overhead_us": prepared_us - c_us}


def run(args):
    if args.calls < 10:
        raise UsageError("--calls must be at least 10")
    batches = parse_batches(args.batches)
    try:
        import torch
    except ImportError:
        raise Absent("torch is not installed")
    if not torch.cuda.is_available():
        raise Absent("no CUDA GPU")
    import fp2
    rows = [measure(torch, fp2, name, lq, lk, args.calls, 1 + i) for i, (name, lq, lk) in enumerate(batches)]
    fp2.clear_plans()
    print(f"{'batch':>20} {'kernels':>8} {'kernel us':>10} {'replay us':>10} {'graph +us':>10} {'eager us':>10} "
          f"{'python us':>10} {'c us':>8} {'python +us':>10} {'prepared +us':>12}")
    for r in rows:
        print(f"{r['batch']:>20} {r['kernels']:8d} {r['kernel_us']:10.1f} {r['replay_us']:10.1f} "
              f"{r['graph_overhead_us']:10.1f} {r['eager_us']:10.1f} {r['python_call_us']:10.1f} "
              f"{r['c_call_us']:8.1f} {r['python_overhead_us']:10.1f} {r['prepared_overhead_us']:12.1f}")
    if args.out:
        doc = {"experiment": "binding-overhead",
               "provenance": {"git_commit": git_commit(), "date_utc": datetime.datetime.now(
                   datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), "gpu": torch.cuda.get_device_name(),
                   "torch": torch.__version__, "python": sys.version.split()[0], "library": fp2.library_path(),
                   "command": " ".join(sys.argv)},
               "config": {"heads": f"{HQ}:{HKV}", "dim": D, "dtype": "bf16", "calls": args.calls,
                          "batches": args.batches, "targets_us": {"graph_overhead": 20, "python_overhead": 30, "prepared_overhead": 30}},
               "rows": rows}
        tmp = args.out + ".tmp"
        with open(tmp, "w") as f:
            json.dump(doc, f, indent=1)
        os.replace(tmp, args.out)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--batches", default=DEFAULT_BATCHES,
                    help=f"batches separated by ';', requests by ',', each L or LQ/LK (default: {DEFAULT_BATCHES})")
    ap.add_argument("--calls", type=int, default=200, help="calls per timing (default: 200)")
    ap.add_argument("--out", help="write the JSON result here")
    ap.add_argument("--debug", action="store_true", help="tracebacks for unforeseen errors")
    args = ap.parse_args()
    return run_main("binding_overhead", run, args, lambda e: f"{type(e).__name__}: {e}")


if __name__ == "__main__":
    sys.exit(main())
