#!/usr/bin/env python3
"""test_binding.py: the side of the Python binding (kernels/fp2.py) that needs no GPU: its ctypes
structs and constants against the C compiler's layout of fp2.h (printed by fp2_abi, the program
named as the argument), fp2_status mapped to exceptions with fp2_error_message() (through FP2_LIB's
library, on a call that needs no GPU), and forward's refusals of bad arguments (with K and V
contiguous, or in pages with a pooled cache), each raised before any CUDA work, on stand-ins with
__cuda_array_interface__ (their pointers are never used). With torch installed, also a CPU tensor
refused. And experiments/binding_overhead.py's refusals of bad arguments (exit 2), which come
before it needs torch. Usage: test_binding.py FP2_ABI.
Exit codes: 0 all passed, 1 a check failed."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "kernels"))
sys.path.insert(0, os.path.join(ROOT, "experiments"))
import fp2  # noqa: E402
from checks import check, finish  # noqa: E402


class Fake:
    """A stand-in device array: only its __cuda_array_interface__ is read."""

    def __init__(self, shape, typestr="<V2", ptr=1 << 20, strides=None):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "data": (ptr, False),
                                         "strides": strides, "version": 3}


def abi(program):
    """{('size', name): bytes, ('field', name): (offset, bytes), ('enum', name): value} from fp2_abi."""
    lines = subprocess.run([program], check=True, capture_output=True, text=True).stdout.splitlines()
    out = {}
    for line in lines:
        kind, name, *values = line.split()
        out[(kind, name)] = tuple(int(x) for x in values) if kind == "field" else int(values[0])
    return out


def check_layout(c):
    for cname, cls in fp2.STRUCTS.items():
        check(c.get(("size", cname)) == fp2.ctypes.sizeof(cls), f"sizeof {cname}",
              f"C {c.get(('size', cname))}, ctypes {fp2.ctypes.sizeof(cls)}")
        want = {name.split(".", 1)[1]: v for (kind, name), v in c.items()
                if kind == "field" and name.startswith(cname + ".")}
        got = {f[0]: (getattr(cls, f[0]).offset, getattr(cls, f[0]).size) for f in cls._fields_}
        check(got == want, f"{cname}: fields, offsets and sizes", f"C {want}, ctypes {got}")
    enums = {name: v for (kind, name), v in c.items() if kind == "enum"}
    got = {name: getattr(fp2, name[len("FP2_"):], None) for name in enums}
    check(enums and got == enums, "enum constants", f"C {enums}, fp2.py {got}")


def check_status():
    fp2._check(fp2.OK)
    p = fp2.Params(hq=32, hkv=8, dim=64, block=128, qtile=128)
    try:
        fp2._check(fp2._lib().fp2_sm90_supports_shape(fp2.ctypes.byref(p)))
        check(False, "FP2_ERR_UNSUPPORTED raises UnsupportedError")
    except fp2.UnsupportedError as e:
        check(e.status == fp2.ERR_UNSUPPORTED and "sm90 kernel takes" in str(e) and isinstance(e, NotImplementedError),
              "FP2_ERR_UNSUPPORTED raises UnsupportedError with fp2_error_message()", str(e))


def refused(what, exc, fragment, *args, **kwargs):
    """forward(*args, **kwargs) raises exc with fragment in its message."""
    try:
        fp2.forward(*args, **kwargs)
        check(False, f"refused: {what}", "forward returned")
    except exc as e:
        check(fragment in str(e), f"refused: {what}", str(e))
    except Exception as e:
        check(False, f"refused: {what}", f"{type(e).__name__}: {e}")


def check_refusals():
    hq, hkv, d = 8, 2, 128
    lq, lk = [0, 100, 130], [0, 300, 330]  # cu_seqlens: request 0 is a chunk, 100 queries of 300 keys
    q, k, v = Fake((130, hq, d)), Fake((330, hkv, d)), Fake((330, hkv, d))
    out, ws = Fake((130, hq, d)), Fake((1024,), "|u1")
    ok = dict(out=out, workspace=ws)
    refused("q not an array", TypeError, "__cuda_array_interface__", [1.0], k, v, lq, lk, **ok)
    refused("q in fp16", TypeError, "q must be bf16, not float16", Fake((130, hq, d), "<f2"), k, v, lq, lk, **ok)
    refused("q of 2 dimensions", ValueError, "q has shape [130, 1024]", Fake((130, hq * d)), k, v, lq, lk, **ok)
    refused("k of another head dim", ValueError, "k has shape [330, 2, 64], expected [*, *, 128]", q,
            Fake((330, hkv, 64)), v, lq, lk, **ok)
    refused("v unlike k", ValueError, "v has shape [330, 4, 128], expected [330, 2, 128]", q, k,
            Fake((330, 4, d)), lq, lk, **ok)
    refused("hq not a multiple of hkv", ValueError, "8 query heads are not a multiple of 3", q, Fake((330, 3, d)),
            Fake((330, 3, d)), lq, lk, **ok)
    refused("k not contiguous", ValueError, "k must be contiguous", q,
            Fake((330, hkv, d), strides=(2 * d * 2, 2 * d * 2 * 330, 2)), v, lq, lk, **ok)
    refused("q misaligned", ValueError, "q must be 16-byte aligned", Fake((130, hq, d), ptr=(1 << 20) + 2), k, v,
            lq, lk, **ok)
    refused("cu_seqlens_q not from 0", ValueError, "must start at 0", q, k, v, [1, 100, 130], lk, **ok)
    refused("cu_seqlens_q not ending at total_q", ValueError, "cu_seqlens_q ends at 120, but the tensor has 130",
            q, k, v, [0, 100, 120], lk, **ok)
    refused("a request without queries", ValueError, "request 1 has 0 rows", q, k, v, [0, 130, 130], lk, **ok)
    refused("cu_seqlens on the device", ValueError, "must be on the host", q, k, v, Fake((3,), "<i4"), lk, **ok)
    refused("batches of different sizes", ValueError, "cu_seqlens_q has 2 requests, cu_seqlens_k 1", q, k, v, lq,
            [0, 330], **ok)
    refused("L_q > L_k", ValueError, "request 0 has 100 queries but 30 keys", q, k, v, lq, [0, 30, 330], **ok)
    refused("an unknown dtype", ValueError, "dtype must be one of", q, k, v, lq, lk, dtype="fp16", **ok)
    refused("an unknown kernel", ValueError, "kernel must be one of", q, k, v, lq, lk, kernel="sm100", **ok)
    refused("block 0", ValueError, "block must be an integer >= 1", q, k, v, lq, lk, block=0, **ok)
    refused("a negative alpha", ValueError, "alpha must be finite and >= 0", q, k, v, lq, lk, alpha=-0.1, **ok)
    refused("no out for non-torch arrays", TypeError, "out and workspace must be given", q, k, v, lq, lk,
            workspace=ws)
    refused("out unlike q", ValueError, "out has shape [129, 8, 128], expected [130, 8, 128]", q, k, v, lq, lk,
            out=Fake((129, hq, d)), workspace=ws)
    refused("workspace not bytes", TypeError, "workspace must be uint8, not float32", q, k, v, lq, lk, out=out,
            workspace=Fake((256,), "<f4"))
    refused("workspace misaligned", ValueError, "workspace must be 256-byte aligned", q, k, v, lq, lk, out=out,
            workspace=Fake((1024,), "|u1", ptr=(1 << 20) + 16))


def check_paged_refusals():
    """forward with a page table (K and V [num_pages, page_size, Hkv, D]) and a pooled cache."""
    hq, hkv, d, ps = 8, 2, 128, 64
    lq, lk = [0, 100, 130], [0, 300, 330]  # requests of 300 and 30 keys: 5 and 1 pages of 64
    q, kp, vp = Fake((130, hq, d)), Fake((9, ps, hkv, d)), Fake((9, ps, hkv, d))
    table = Fake((2, 5), "<i4")
    ok = dict(out=Fake((130, hq, d)), workspace=Fake((1024,), "|u1"))
    refused("contiguous k with a page table", ValueError, "k has shape [330, 2, 128], expected [*, *, *, 128]", q,
            Fake((330, hkv, d)), Fake((330, hkv, d)), lq, lk, page_table=table, **ok)
    refused("v unlike k in pages", ValueError, "v has shape [9, 16, 2, 128], expected [9, 64, 2, 128]", q, kp,
            Fake((9, 16, hkv, d)), lq, lk, page_table=table, **ok)
    refused("a page table of int64", TypeError, "page_table must be int32, not int64", q, kp, vp, lq, lk,
            page_table=Fake((2, 5), "<i8"), **ok)
    refused("a page table of another batch", ValueError, "page_table has shape [3, 5], expected [2, *]", q, kp, vp,
            lq, lk, page_table=Fake((3, 5), "<i4"), **ok)
    refused("a page table too narrow", ValueError, "page_table has 4 columns, but request 0's 300 keys need 5 pages",
            q, kp, vp, lq, lk, page_table=Fake((2, 4), "<i4"), **ok)
    refused("pages of 32 keys", fp2.ArgumentError, "page_size 32: the pages hold 16, 64, 128 or 256 keys", q,
            Fake((18, 32, hkv, d)), Fake((18, 32, hkv, d)), lq, lk, page_table=Fake((2, 10), "<i4"), **ok)
    means, blocks = Fake((4, hkv, d), "<f4"), Fake((2, 3), "<i4")
    refused("pooled not a triple", TypeError, "pooled must be (k_mean, v_mean, table)", q, kp, vp, lq, lk,
            page_table=table, pooled=(means, means), **ok)
    refused("pooled means in bf16", TypeError, "pooled k_mean must be float32, not bf16", q, kp, vp, lq, lk,
            page_table=table, pooled=(Fake((4, hkv, d)), means, blocks), **ok)
    refused("pooled means of other heads", ValueError, "pooled v_mean has shape [4, 4, 128], expected [4, 2, 128]",
            q, kp, vp, lq, lk, page_table=table, pooled=(means, Fake((4, 4, d), "<f4"), blocks), **ok)
    refused("a pooled table of another batch", ValueError, "pooled table has shape [1, 3], expected [2, *]", q, kp,
            vp, lq, lk, page_table=table, pooled=(means, means, Fake((1, 3), "<i4")), **ok)


def check_torch():
    try:
        import torch
    except ImportError:
        print("skipped: torch is not installed (a CPU tensor refused)")
        return
    q = torch.ones(4, 2, 64, dtype=torch.bfloat16)
    refused("a CPU tensor", ValueError, "q must be on a CUDA device, not 'cpu'", q, q, q, [0, 4], [0, 4])


def check_overhead_script():
    """experiments/binding_overhead.py refuses bad arguments with exit 2 before it needs torch."""
    script = os.path.join(ROOT, "experiments", "binding_overhead.py")
    for args, fragment in ((["--batches", "2k/1k"], "more queries than keys"),
                           (["--batches", "1k;x"], "is not L or LQ/LK"), (["--calls", "5"], "at least 10")):
        r = subprocess.run([sys.executable, script, *args], capture_output=True, text=True)
        check(r.returncode == 2 and fragment in r.stderr, f"binding_overhead.py {' '.join(args)}: exit 2",
              f"exit {r.returncode}: {r.stderr.strip()}")


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: test_binding.py FP2_ABI")
    check_layout(abi(sys.argv[1]))
    check_status()
    check_refusals()
    check_paged_refusals()
    check_torch()
    check_overhead_script()
    check(fp2.prefix_sums([300, 1, 7]) == [0, 300, 301, 308], "prefix_sums gives cu_seqlens")
    return finish()


if __name__ == "__main__":
    sys.exit(main())
