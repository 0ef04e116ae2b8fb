"""fp2: the Python binding of the fp2 library (kernels/fp2.h), through ctypes: nothing is
compiled at import, and import needs neither the library nor torch.

The library: $FP2_LIB (a path to libfp2.so), else build/libfp2.so in the repository holding
this file (where `bash tests/setup.sh` or `cmake --build build` puts it). It is loaded at the
first call that needs it.

    import fp2  # with kernels/ on sys.path
    o = fp2.forward(q, k, v, cu_seqlens_q, cu_seqlens_k, alpha=0.1)

q is bf16 [total_q, Hq, D], k and v bf16 [total_k, Hkv, D], contiguous, on one CUDA device
(torch tensors, or objects with __cuda_array_interface__ whose typestr is '<V2' for bf16, as
ml_dtypes names it); or k and v in a serving engine's pages with page_table=, and the
pooled means kept across a prefill's chunks with pooled= (see forward). cu_seqlens_q and
cu_seqlens_k are the host-side prefix sums [0, L(0), L(0) + L(1), ...] of the requests' query
and key counts (a list, tuple or CPU tensor: reading a device tensor would synchronise, which a
graph capture forbids). Request
b's queries are the last L_q(b) of its L_k(b) positions, causal against all L_k(b) keys:
L_q < L_k is a chunk of a prefill, L_q = L_k a whole prompt (kernels/README.md).

The plan (the batch's device metadata, fp2_plan) is cached per device, shape, lengths and
options; creating one allocates and synchronises, so it happens at the first call of each.
To capture a call in a CUDA graph (torch.cuda.graph):

    ws = torch.empty(fp2.workspace_bytes(q, k, v, cu_q, cu_k, **options), dtype=torch.uint8,
                     device=q.device)
    o = torch.empty_like(q)
    fp2.forward(q, k, v, cu_q, cu_k, out=o, workspace=ws, **options)  # plan, kernel modules
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fp2.forward(q, k, v, cu_q, cu_k, out=o, workspace=ws, **options)
    # copy new inputs into q, k, v; g.replay() writes o

With out and workspace given and the plan cached, forward allocates nothing and never
synchronises. The captured graph uses the cached plan: call clear_plans() only when no graph
that replays one is left.

An engine that calls the pass every step on tensors of the same shapes checks its arguments
once and then pays only for the call (experiments/binding_overhead.py measures both):

    run = fp2.prepare(q, k, v, cu_q, cu_k, workspace=ws, **options)
    run(q, k, v, o)  # any torch tensors of q's, k's and v's shapes on that device
"""
import contextlib
import ctypes
import math
import os
import sys

BF16, FP8 = 0, 1
KERNEL_PORTABLE, KERNEL_SM90 = 0, 1
OK, ERR_ARG, ERR_CUDA, ERR_UNSUPPORTED = 0, 1, 2, 3
STAGES = 4

_DTYPES = {"bf16": BF16, "fp8": FP8}
_KERNELS = ("auto", "portable", "sm90")
_ALIGN_INPUT, _ALIGN_WORKSPACE = 16, 256  # fp2.h: q, k, v 16-byte aligned; the workspace 256


class Params(ctypes.Structure):
    """fp2_params."""
    _fields_ = [("hq", ctypes.c_int), ("hkv", ctypes.c_int), ("dim", ctypes.c_int), ("block", ctypes.c_int),
                ("qtile", ctypes.c_int), ("alpha", ctypes.c_float), ("sink", ctypes.c_int),
                ("window", ctypes.c_int), ("recent", ctypes.c_int), ("correction", ctypes.c_int),
                ("dtype", ctypes.c_int), ("kernel", ctypes.c_int), ("page_size", ctypes.c_int)]


_int_p = ctypes.POINTER(ctypes.c_int)


class Plan(ctypes.Structure):
    """fp2_plan."""
    _fields_ = [("batch", ctypes.c_int), ("total_q", ctypes.c_int), ("total_k", ctypes.c_int),
                ("total_tiles", ctypes.c_int), ("total_blocks", ctypes.c_int), ("nseg", ctypes.c_int),
                ("max_blocks", ctypes.c_int), ("capacity", ctypes.c_int), ("total_chunks", ctypes.c_int),
                ("prefix_blocks", ctypes.c_int),
                ("cu_q", _int_p), ("cu_k", _int_p), ("cu_tiles", _int_p), ("cu_blocks", _int_p),
                ("cu_chunks", _int_p), ("tile_seq", _int_p), ("seg_base", _int_p)]


class StageEvents(ctypes.Structure):
    """fp2_stage_events (cudaEvent_t at[FP2_STAGES + 1])."""
    _fields_ = [("at", ctypes.c_void_p * (STAGES + 1))]


class KvPages(ctypes.Structure):
    """fp2_kv_pages."""
    _fields_ = [("table", _int_p), ("max_pages", ctypes.c_int), ("num_pages", ctypes.c_int)]


class PooledCache(ctypes.Structure):
    """fp2_pooled_cache."""
    _fields_ = [("k_mean", ctypes.c_void_p), ("v_mean", ctypes.c_void_p), ("table", _int_p),
                ("max_blocks", ctypes.c_int)]


class Inputs(ctypes.Structure):
    """fp2_inputs."""
    _fields_ = [("q", ctypes.c_void_p), ("k", ctypes.c_void_p), ("v", ctypes.c_void_p), ("o", ctypes.c_void_p),
                ("offsets", _int_p), ("indices", _int_p), ("events", ctypes.POINTER(StageEvents)),
                ("pages", ctypes.POINTER(KvPages)), ("pooled", ctypes.POINTER(PooledCache))]


# The C names of the mirrors, for the layout test (tests/test_binding.py).
STRUCTS = {"fp2_params": Params, "fp2_plan": Plan, "fp2_stage_events": StageEvents, "fp2_kv_pages": KvPages,
           "fp2_pooled_cache": PooledCache, "fp2_inputs": Inputs}


class Error(Exception):
    """A library call failed: status is the fp2_status, the text fp2_error_message()."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


class ArgumentError(Error, ValueError):
    """FP2_ERR_ARG: an argument the library cannot accept."""


class CudaError(Error, RuntimeError):
    """FP2_ERR_CUDA, or a CUDA runtime call of this module, failed."""


class UnsupportedError(Error, NotImplementedError):
    """FP2_ERR_UNSUPPORTED: valid, but not implemented for this shape or GPU."""


_ERRORS = {ERR_ARG: ArgumentError, ERR_CUDA: CudaError, ERR_UNSUPPORTED: UnsupportedError}

_lib_handle = None


def library_path():
    """$FP2_LIB, else build/libfp2.so in the repository holding this file."""
    here = os.path.dirname(os.path.abspath(__file__))
    return os.environ.get("FP2_LIB") or os.path.join(os.path.dirname(here), "build", "libfp2.so")


def _lib():
    global _lib_handle
    if _lib_handle is None:
        path = library_path()
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            raise OSError(f"fp2: cannot load '{path}' (set FP2_LIB to libfp2.so): {e}") from None
        P, c_int, c_void_p, c_size_t = ctypes.POINTER, ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t
        lib.fp2_error_message.restype = ctypes.c_char_p
        lib.fp2_error_message.argtypes = []
        lib.fp2_plan_create.argtypes = [P(Params), c_int, P(c_int), P(c_int), P(Plan)]
        lib.fp2_plan_destroy.restype = None
        lib.fp2_plan_destroy.argtypes = [P(Plan)]
        lib.fp2_sm90_supports_shape.argtypes = [P(Params)]
        lib.fp2_check_pages.argtypes = [P(Params), P(KvPages)]
        lib.fp2_workspace_bytes.restype = c_size_t
        lib.fp2_workspace_bytes.argtypes = [P(Params), P(Plan)]
        lib.fp2_forward.argtypes = [P(Params), P(Plan), P(Inputs), c_void_p, c_size_t, c_void_p]
        # cudart, through the library that links it: the device's compute capability.
        lib.cudaGetErrorString.restype = ctypes.c_char_p
        lib.cudaGetErrorString.argtypes = [c_int]
        lib.cudaGetDevice.argtypes = [P(c_int)]
        lib.cudaDeviceGetAttribute.argtypes = [P(c_int), c_int, c_int]
        _lib_handle = lib
    return _lib_handle


def _check(status):
    """Raises the exception of a failed fp2_status, with fp2_error_message()."""
    if status != OK:
        cls = _ERRORS.get(status, Error)
        raise cls(status, _lib().fp2_error_message().decode(errors="replace"))


def _cuda(name, *args):
    err = getattr(_lib(), name)(*args)
    if err != 0:
        raise CudaError(ERR_CUDA, f"{name}: {_lib().cudaGetErrorString(err).decode(errors='replace')}")


class _Array:
    """What forward needs of a tensor: its pointer, shape, element type, device (None when the
    interface does not say) and whether it is C-contiguous."""

    def __init__(self, ptr, shape, dtype, device, contiguous):
        self.ptr, self.shape, self.dtype, self.device, self.contiguous = ptr, shape, dtype, device, contiguous


_TYPESTRS = {"<V2": "bf16", "|u1": "uint8", "<i4": "int32", "<i8": "int64", "<f2": "float16", "<f4": "float32"}


_torch_dtypes = {}  # torch dtype -> the names _need takes, filled at the first torch tensor


def _array(x, name):
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(x, torch.Tensor):
        if not x.is_cuda:
            raise ValueError(f"fp2: {name} must be on a CUDA device, not '{x.device}'")
        if not _torch_dtypes:
            _torch_dtypes.update({torch.bfloat16: "bf16", torch.uint8: "uint8"})
        dtype = _torch_dtypes.get(x.dtype) or str(x.dtype).replace("torch.", "")
        return _Array(x.data_ptr(), tuple(x.shape), dtype, x.get_device(), x.is_contiguous())
    cai = getattr(x, "__cuda_array_interface__", None)
    if cai is None:
        raise TypeError(f"fp2: {name} must be a CUDA torch tensor or have __cuda_array_interface__, "
                        f"not {type(x).__name__}")
    shape, typestr = tuple(cai["shape"]), cai["typestr"]
    strides = cai.get("strides")
    itemsize = int(typestr[2:])
    c_strides = tuple(itemsize * math.prod(shape[i + 1:]) for i in range(len(shape)))
    contiguous = strides is None or tuple(strides) == c_strides
    return _Array(cai["data"][0], shape, _TYPESTRS.get(typestr, typestr), None, contiguous)


def _need(array, name, dtype, shape):
    """Checks dtype, shape (None: any extent) and contiguity; returns array."""
    if array.dtype != dtype:
        raise TypeError(f"fp2: {name} must be {dtype}, not {array.dtype}")
    if len(array.shape) != len(shape) or any(w is not None and w != s for s, w in zip(array.shape, shape)):
        want = "[" + ", ".join("*" if w is None else str(w) for w in shape) + "]"
        raise ValueError(f"fp2: {name} has shape {list(array.shape)}, expected {want}")
    if not array.contiguous:
        raise ValueError(f"fp2: {name} must be contiguous")
    return array


def _aligned(named):
    """Checks that each (array, name) starts on _ALIGN_INPUT bytes, as fp2.h asks of the inputs."""
    for a, name in named:
        if a.ptr % _ALIGN_INPUT != 0:
            raise ValueError(f"fp2: {name} must be {_ALIGN_INPUT}-byte aligned")


def prefix_sums(lengths):
    """cu_seqlens from per-request lengths: [0, L(0), L(0) + L(1), ...]."""
    cu = [0]
    for n in lengths:
        cu.append(cu[-1] + n)
    return cu


def _lengths(cu, name, total):
    """The per-request lengths of host-side prefix sums ending at total (None: at any)."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(cu, torch.Tensor):
        if cu.is_cuda:
            raise ValueError(f"fp2: {name} must be on the host (a list or a CPU tensor): reading a CUDA "
                             f"tensor would synchronise")
        cu = cu.tolist()
    elif hasattr(cu, "__cuda_array_interface__"):
        raise ValueError(f"fp2: {name} must be on the host (a list or a CPU tensor), not device memory")
    cu = [int(c) for c in cu]
    if len(cu) < 2 or cu[0] != 0:
        raise ValueError(f"fp2: {name} must start at 0 and hold batch + 1 offsets, got {cu}")
    if total is not None and cu[-1] != total:
        raise ValueError(f"fp2: {name} ends at {cu[-1]}, but the tensor has {total} rows")
    lengths = tuple(b - a for a, b in zip(cu, cu[1:]))
    for b, n in enumerate(lengths):
        if n <= 0:
            raise ValueError(f"fp2: {name}: request {b} has {n} rows (each needs at least one)")
    return lengths


def _options(dtype="bf16", alpha=0.1, block=128, qtile=128, sink=2, window=4, recent=2, correction=True,
             kernel="auto"):
    """forward's options, checked, as a hashable tuple in this order (the plan cache's key)."""
    if dtype not in _DTYPES:
        raise ValueError(f"fp2: dtype must be one of {sorted(_DTYPES)}, not {dtype!r}")
    if kernel not in _KERNELS:
        raise ValueError(f"fp2: kernel must be one of {list(_KERNELS)}, not {kernel!r}")
    if not (math.isfinite(alpha) and alpha >= 0):
        raise ValueError(f"fp2: alpha must be finite and >= 0, not {alpha}")
    for name, value, least in (("block", block, 1), ("qtile", qtile, 1), ("sink", sink, 0), ("window", window, 0),
                               ("recent", recent, 0)):
        if not isinstance(value, int) or value < least:
            raise ValueError(f"fp2: {name} must be an integer >= {least}, not {value!r}")
    return (dtype, float(alpha), block, qtile, sink, window, recent, bool(correction), kernel)


class _Entry:
    """A cached plan: the params it was made for (kernel resolved), the plan, its workspace size."""

    def __init__(self, params, plan, workspace_bytes):
        self.params, self.plan, self.workspace_bytes = params, plan, workspace_bytes


_plans = {}


def _device(device):
    """A context on the tensors' device (torch's), or none when the interface does not say or
    it is the current one already."""
    torch = sys.modules.get("torch")
    if torch is not None and device is not None and device != torch.cuda.current_device():
        return torch.cuda.device(device)
    return contextlib.nullcontext()


def _entry(key):
    """The cached plan of key (_inputs'), created at its first use."""
    entry = _plans.get(key)
    if entry is not None:
        return entry
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_current_stream_capturing():
        raise RuntimeError("fp2: no plan for these shapes, lengths and options yet, and creating one allocates: "
                           "call forward (or workspace_bytes) once before capturing")
    device, hq, hkv, dim, page_size, options, lq, lk = key
    dtype, alpha, block, qtile, sink, window, recent, correction, kernel = options
    p = Params(hq=hq, hkv=hkv, dim=dim, block=block, qtile=qtile, alpha=alpha, sink=sink, window=window,
               recent=recent, correction=int(correction), dtype=_DTYPES[dtype],
               kernel=KERNEL_SM90 if kernel == "sm90" else KERNEL_PORTABLE, page_size=page_size)
    lib = _lib()
    batch = len(lq)
    plan = Plan()
    with _device(device):
        if kernel == "auto":  # as fp2bench's --kernel auto: sm90 on compute capability 9 where it takes the shape
            dev, major = ctypes.c_int(), ctypes.c_int()
            _cuda("cudaGetDevice", ctypes.byref(dev))
            _cuda("cudaDeviceGetAttribute", ctypes.byref(major), 75, dev)  # cudaDevAttrComputeCapabilityMajor
            if major.value == 9 and lib.fp2_sm90_supports_shape(ctypes.byref(p)) == OK:
                p.kernel = KERNEL_SM90
        # Synchronous: the plan is on the device for any stream when it returns.
        _check(lib.fp2_plan_create(ctypes.byref(p), batch, (ctypes.c_int * batch)(*lq),
                                   (ctypes.c_int * batch)(*lk), ctypes.byref(plan)))
    entry = _plans[key] = _Entry(p, plan, lib.fp2_workspace_bytes(ctypes.byref(p), ctypes.byref(plan)))
    return entry


def _same_device(arrays, names):
    devices = {a.device for a in arrays} - {None}
    if len(devices) > 1:
        raise ValueError(f"fp2: {names} are on different devices ({sorted(devices)})")


def _inputs(q, k, v, cu_seqlens_q, cu_seqlens_k, options, page_table=None):
    """The checked arrays of q, k, v, the page table's (None: K and V contiguous) with its
    fp2_kv_pages, and the key of their plan."""
    qa, ka, va = _array(q, "q"), _array(k, "k"), _array(v, "v")
    _need(qa, "q", "bf16", (None, None, None))
    total_q, hq, dim = qa.shape
    if page_table is None:
        _need(ka, "k", "bf16", (None, None, dim))
        total_k, hkv, _ = ka.shape
        page_size = 0
    else:  # pages [num_pages, page_size, Hkv, D]: they hold any number of keys
        _need(ka, "k", "bf16", (None, None, None, dim))
        _, page_size, hkv, _ = ka.shape
        total_k = None
    _need(va, "v", "bf16", ka.shape)
    if hkv == 0 or hq % hkv != 0:
        raise ValueError(f"fp2: {hq} query heads are not a multiple of {hkv} KV heads")
    _aligned(((qa, "q"), (ka, "k"), (va, "v")))
    _same_device((qa, ka, va), "q, k and v")
    lq = _lengths(cu_seqlens_q, "cu_seqlens_q", total_q)
    lk = _lengths(cu_seqlens_k, "cu_seqlens_k", total_k)
    if len(lq) != len(lk):
        raise ValueError(f"fp2: cu_seqlens_q has {len(lq)} requests, cu_seqlens_k {len(lk)}")
    for b, (nq, nk) in enumerate(zip(lq, lk)):
        if nq > nk:
            raise ValueError(f"fp2: request {b} has {nq} queries but {nk} keys (L_q <= L_k: its queries are the "
                             f"last of its positions)")
    pages = None if page_table is None else _kv_pages(page_table, ka, lk, qa)
    return qa, ka, va, pages, (qa.device, hq, hkv, dim, page_size, _options(**options), lq, lk)


def _kv_pages(page_table, ka, lk, qa):
    """The checked page table (int32 [batch, max_pages] on q's device, naming a page for each of
    a request's keys) and its fp2_kv_pages, which the library's own check accepts."""
    ta = _need(_array(page_table, "page_table"), "page_table", "int32", (len(lk), None))
    _same_device((qa, ta), "q and page_table")
    num_pages, page_size = ka.shape[:2]
    max_pages = ta.shape[1]
    pages = KvPages(table=ctypes.cast(ta.ptr, _int_p), max_pages=max_pages, num_pages=num_pages)
    p = Params(page_size=page_size)  # all fp2_check_pages reads of the params
    _check(_lib().fp2_check_pages(ctypes.byref(p), ctypes.byref(pages)))
    for b, n in enumerate(lk):
        if n > max_pages * page_size:
            raise ValueError(f"fp2: page_table has {max_pages} columns, but request {b}'s {n} keys need "
                             f"{-(-n // page_size)} pages of {page_size}")
    return ta, pages


def _pooled_cache(pooled, hkv, dim, batch):
    """The checked arrays of pooled = (k_mean, v_mean, table) and their fp2_pooled_cache; what
    depends on the plan (enough columns, BF16, the page size) the library checks before any
    CUDA work."""
    if not isinstance(pooled, (tuple, list)) or len(pooled) != 3:
        raise TypeError("fp2: pooled must be (k_mean, v_mean, table)")
    km = _need(_array(pooled[0], "pooled k_mean"), "pooled k_mean", "float32", (None, hkv, dim))
    vm = _need(_array(pooled[1], "pooled v_mean"), "pooled v_mean", "float32", km.shape)
    ta = _need(_array(pooled[2], "pooled table"), "pooled table", "int32", (batch, None))
    _aligned(((km, "pooled k_mean"), (vm, "pooled v_mean")))
    cache = PooledCache(k_mean=km.ptr, v_mean=vm.ptr, table=ctypes.cast(ta.ptr, _int_p), max_blocks=ta.shape[1])
    return (km, vm, ta), cache


def workspace_bytes(q, k, v, cu_seqlens_q, cu_seqlens_k, *, page_table=None, **options):
    """Bytes of workspace forward needs for these tensors, lengths, page table and options
    (creating and caching the plan): preallocate it as a uint8 CUDA tensor of this many bytes."""
    return _entry(_inputs(q, k, v, cu_seqlens_q, cu_seqlens_k, options, page_table)[-1]).workspace_bytes


def clear_plans():
    """Frees every cached plan (a synchronising cudaFree each). A graph captured with one must not
    be replayed after this."""
    for key, entry in list(_plans.items()):
        with _device(key[0]):
            _lib().fp2_plan_destroy(ctypes.byref(entry.plan))
        del _plans[key]


def _current_stream(torch, device):
    """torch's current cudaStream_t on device (an index): through the raw getter where this torch
    has it (no Stream object made: a few microseconds less per call), else torch.cuda's."""
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    return raw(device) if raw is not None else torch.cuda.current_stream(device).cuda_stream


def _stream_handle(stream, device):
    if stream is None:
        torch = sys.modules.get("torch")
        if torch is None:
            return 0
        return _current_stream(torch, device if device is not None else torch.cuda.current_device())
    return getattr(stream, "cuda_stream", stream)


def forward(q, k, v, cu_seqlens_q, cu_seqlens_k, *, page_table=None, pooled=None, out=None, workspace=None,
            stream=None, **options):
    """Block-sparse prefill attention over a batch (fp2_forward): returns o, bf16 like q.

    q [total_q, Hq, D], k and v [total_k, Hkv, D] bf16; cu_seqlens_q, cu_seqlens_k host prefix
    sums (see the module's doc). page_table: K and V in a serving engine's page cache instead
    (vLLM's and FlashInfer's NHD layout), k and v bf16 [num_pages, page_size, Hkv, D] with
    page_size 16, 64, 128 or 256, and page_table an int32 CUDA tensor [batch, max_pages]: key t
    of request b at row t % page_size of page page_table[b, t // page_size], every one of the
    request's keys in a page the table names (the table's contents are not read on the host).
    pooled: (k_mean, v_mean, table), the pooled means kept across the chunks of a prefill
    (fp2_pooled_cache, BF16, K and V contiguous or in pages of 64 keys or more): k_mean and
    v_mean float32 [rows, Hkv, D], table int32 [batch, max_blocks] on the device, key block j of
    request b (its keys 128 j ..) at row table[b, j]; the pass reads the blocks of a request's
    keys before its queries from it and writes each full block it pools.
    Options, with fp2bench's defaults: dtype 'bf16' or 'fp8' (the precision of the pass; the
    inputs are bf16 either way), alpha 0.1 (keep a block whose energy is at least alpha times
    the tile's largest; 0 keeps every causal block: dense attention),
    block 128, qtile 128, sink 2 and window 4 (blocks always kept), recent 2 (tail tiles that
    keep every causal block), correction True (pooled virtual keys for unselected blocks),
    kernel 'auto' (sm90 on a compute capability 9.x GPU where it takes the shape, else
    'portable'), or 'portable' or 'sm90'.
    out: a bf16 tensor shaped like q (allocated when None); workspace: a uint8 CUDA tensor of
    at least workspace_bytes(...) bytes, 256-byte aligned (allocated when None); stream: a
    torch.cuda.Stream or a cudaStream_t as an int (None: torch's current stream, or the legacy
    default stream without torch). Errors in the arguments raise ValueError or TypeError before
    any CUDA work; the library's failures raise Error's subclasses with its message."""
    qa, ka, va, pages, key = _inputs(q, k, v, cu_seqlens_q, cu_seqlens_k, options, page_table)
    cache = None if pooled is None else _pooled_cache(pooled, key[2], key[3], len(key[-1]))
    torch = sys.modules.get("torch")
    is_torch = torch is not None and isinstance(q, torch.Tensor)
    if not is_torch and (out is None or workspace is None):
        raise TypeError("fp2: out and workspace must be given for arrays that are not torch tensors")
    # The given out and workspace are checked before the plan, which a first call creates.
    oa = None if out is None else _need(_array(out, "out"), "out", "bf16", qa.shape)
    wa = None if workspace is None else _need(_array(workspace, "workspace"), "workspace", "uint8", (None,))
    if wa is not None and wa.ptr % _ALIGN_WORKSPACE != 0:
        raise ValueError(f"fp2: workspace must be {_ALIGN_WORKSPACE}-byte aligned")
    _same_device([a for a in (qa, oa, wa) + (cache[0] if cache else ()) if a is not None],
                 "q, out, workspace and pooled")
    entry = _entry(key)
    if out is None:
        out = torch.empty_like(q)
        oa = _array(out, "out")
    if workspace is None:
        workspace = torch.empty(entry.workspace_bytes, dtype=torch.uint8, device=q.device)
        wa = _array(workspace, "workspace")
    if wa.shape[0] < entry.workspace_bytes:
        raise ValueError(f"fp2: workspace of {wa.shape[0]} bytes, {entry.workspace_bytes} needed")
    inputs = Inputs(q=qa.ptr, k=ka.ptr, v=va.ptr, o=oa.ptr, pages=ctypes.pointer(pages[1]) if pages else None,
                    pooled=ctypes.pointer(cache[1]) if cache else None)
    with _device(qa.device):
        handle = _stream_handle(stream, qa.device)
        _check(_lib().fp2_forward(ctypes.byref(entry.params), ctypes.byref(entry.plan), ctypes.byref(inputs),
                                  wa.ptr, wa.shape[0], handle))
    return out


class Prepared:
    """The pass for one set of shapes, lengths and options, its arguments checked once by
    prepare: calling it runs fp2_forward on torch tensors of those shapes, bf16, contiguous, on
    that device, with prepare's workspace, and returns out. It checks only what is cheap to
    read from a tensor (shape, dtype, device, contiguity), since the pointers may change
    between calls; like forward with out given, it allocates nothing and never synchronises,
    and it can be captured in a CUDA graph. It uses the cached plan: clear_plans() only once
    no Prepared (nor graph) that uses one is left."""

    def __init__(self, entry, q_shape, kv_shape, table_shape, device, workspace, workspace_ptr):
        import torch
        bf16 = torch.bfloat16
        self._names = ("q", "k", "v", "out") + (("page_table",) if table_shape else ())
        self._shapes = (q_shape, kv_shape, kv_shape, q_shape) + ((table_shape,) if table_shape else ())
        self._dtypes = (bf16, bf16, bf16, bf16) + ((torch.int32,) if table_shape else ())
        self._pooled_shape = (kv_shape[-2], kv_shape[-1], entry.plan.batch)  # Hkv, D, batch
        self._device, self._workspace = device, workspace  # the workspace kept alive with the plan
        self._inputs = Inputs()
        self._pages = KvPages(max_pages=table_shape[1], num_pages=kv_shape[0]) if table_shape else None
        if self._pages is not None:
            self._inputs.pages = ctypes.pointer(self._pages)
        self._forward = _lib().fp2_forward
        self._fixed = (ctypes.byref(entry.params), ctypes.byref(entry.plan), ctypes.byref(self._inputs))
        self._ws = (workspace_ptr, entry.workspace_bytes)

    def __call__(self, q, k, v, out, stream=None, *, page_table=None, pooled=None):
        """o = out: the pass on q, k, v, in pages of page_table if prepared with one, with the
        pooled cache if given (forward's; checked in full at each call) (stream: a
        torch.cuda.Stream or a cudaStream_t as an int; None: torch's current stream)."""
        if (page_table is None) != (self._pages is None):
            raise ValueError("fp2: prepared " + ("with a page table: give page_table" if self._pages is not None else
                                                 "without a page table: prepare with one to give page_table"))
        tensors = (q, k, v, out) + ((page_table,) if self._pages is not None else ())
        for t, shape, dtype, name in zip(tensors, self._shapes, self._dtypes, self._names):
            if t.shape != shape or t.dtype != dtype or t.get_device() != self._device or not t.is_contiguous():
                raise ValueError(f"fp2: {name} must be a contiguous {str(dtype)[6:]} tensor of shape {list(shape)} "
                                 f"on cuda:{self._device} (as prepared), not {t.dtype} {list(t.shape)} on {t.device}")
        cache = None if pooled is None else _pooled_cache(pooled, *self._pooled_shape)
        if cache and any(a.device != self._device for a in cache[0]):
            raise ValueError(f"fp2: pooled must be on cuda:{self._device} (as prepared)")
        inp = self._inputs
        inp.q, inp.k, inp.v, inp.o = q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr()
        if self._pages is not None:
            self._pages.table = ctypes.cast(page_table.data_ptr(), _int_p)
        inp.pooled = ctypes.pointer(cache[1]) if cache else None
        with _device(self._device):
            _check(self._forward(*self._fixed, *self._ws, _stream_handle(stream, self._device)))
        return out


def prepare(q, k, v, cu_seqlens_q, cu_seqlens_k, *, page_table=None, workspace=None, **options):
    """A Prepared pass for torch tensors shaped like q, k, v (and page_table: K and V in pages,
    as forward takes them), with these lengths and options (forward's): the plan is created
    (allocating and synchronising, once) and the workspace allocated when not given. The
    arguments are checked as forward checks them, and only their shapes, dtype and device are
    kept."""
    torch = sys.modules.get("torch")
    if torch is None or not isinstance(q, torch.Tensor):
        raise TypeError("fp2: prepare takes torch tensors (forward takes any __cuda_array_interface__)")
    qa, ka, va, pages, key = _inputs(q, k, v, cu_seqlens_q, cu_seqlens_k, options, page_table)
    entry = _entry(key)
    if workspace is None:
        workspace = torch.empty(entry.workspace_bytes, dtype=torch.uint8, device=q.device)
    wa = _need(_array(workspace, "workspace"), "workspace", "uint8", (None,))
    if wa.ptr % _ALIGN_WORKSPACE != 0:
        raise ValueError(f"fp2: workspace must be {_ALIGN_WORKSPACE}-byte aligned")
    if wa.shape[0] < entry.workspace_bytes:
        raise ValueError(f"fp2: workspace of {wa.shape[0]} bytes, {entry.workspace_bytes} needed")
    _same_device((qa, wa), "q and workspace")
    return Prepared(entry, q.shape, k.shape, pages[0].shape if pages else None, qa.device, workspace, wa.ptr)
