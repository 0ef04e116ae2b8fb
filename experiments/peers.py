#!/usr/bin/env python3
"""peers.py: time dense and sparse attention peers through PyTorch on the inputs fp2bench used,
so that `fp2bench speedup` can put them beside its own kernels (DESIGN.md sections 3 and 6).

  peers.py --in IN.safetensors --out OUT.json [--trials N] [--warmup N]
           [--peers fa2,sdpa_cudnn,flex] [--check-rows N] [--seed S] [--debug]

IN.safetensors (one sequence, causal prefill, written by fp2bench): q [L, Hq, D], k and v
[L, Hkv, D] in BF16, positions first; csr_offsets [Hkv*ntiles + 1] and csr_indices [nnz] I32,
fp2bench's block index (segment h*ntiles + T lists the ascending key blocks of KV head h for
PackGQA query tile T, whose packed rows r in [T*M, (T+1)*M) are position r // g, query head
h*g + r % g, g = Hq/Hkv); __metadata__ "block" (B), "qtile" (M), "trials", "dtype" ("bf16").

Peers (all causal, scale 1/sqrt(D), batch 1, inputs made [1, H, L, D] and contiguous outside
the timed region):
  fa2         torch.nn.functional.scaled_dot_product_attention under
              sdpa_kernel(SDPBackend.FLASH_ATTENTION), is_causal=True; GQA through
              enable_gqa=True, or K/V expanded to Hq heads (repeat_interleave, untimed) when
              that does not run or fails its check;
  sdpa_cudnn  the same under SDPBackend.CUDNN_ATTENTION;
  flex        torch.compile(flex_attention) with a BlockMask that is exactly fp2bench's index:
              allowed[Hkv, ntiles, nblocks] built on the GPU from the CSR, and
              mask_mod(b, h, q, kv) = allowed[h // g, (q*g + h % g) // M, kv // B] & (kv <= q),
              through create_block_mask(mask_mod, 1, Hq, L, L, BLOCK_SIZE=128) (run on slices of
              query positions and heads, joined with BlockMask.from_kv_blocks, when the boolean
              mask it materialises would pass 2^29 elements); enable_gqa=True. It computes the
              sparse attention WITHOUT mean correction (unselected blocks contribute nothing).

Each peer is first checked: its output on --check-rows sampled query rows (default 256, the
first and last positions among them, random heads) against a float64 reference computed on
the GPU from the same bf16 inputs, row by row in chunks (dense causal softmax for fa2 and
sdpa_cudnn; for flex restricted to the keys of the allowed blocks of the row's tile, causal).
The relative L2 error over the sampled rows must stay below 2e-2, else the peer is listed
under "skipped" with the error. Then --warmup calls (default 3; flex compiles at its first
call, before them), then --trials timed calls (default: the file's "trials", else 5): each
after torch.cuda.synchronize() and the zeroing of a 256 MiB buffer (flushes the L2 and keeps
the GPU busy while the call is issued, as triton.testing.do_bench does), between a pair of
torch.cuda.Event records around that one call. Every trial is reported in ms.

OUT.json: {"schema": "fp2bench-peers/1", "torch": ..., "device": ..., "peers": [{"name",
"trials_ms", "checked_rows", "max_rel_err" (the worst sampled row's relative L2 error),
"rel_l2_err" (over all sampled rows: the checked figure), "pairs" (what it computes, for its
TFLOP/s: "causal" every causal pair, "index" the pairs of fp2bench's index without correction),
"gqa", ...; flex adds "note" and "block_mask"}], "skipped": [{"name", "why"}], "cuda", "cudnn", "triton", "input", "trials",
"warmup", "check", "timing"}.

Exit codes: 0 it ran (peers that could not run or failed their check are under "skipped"),
2 bad arguments or an unreadable input, 3 other runtime errors, 77 torch or a CUDA device
missing (the reason on stderr).
"""
import argparse
import contextlib
import json
import math
import os
import struct
import sys
import time
import warnings

EXIT_OK, EXIT_USAGE, EXIT_RUNTIME, EXIT_ABSENT = 0, 2, 3, 77
SCHEMA = "fp2bench-peers/1"
PEERS = ("fa2", "sdpa_cudnn", "flex")
TOLERANCE = 2e-2               # relative L2 error over the sampled rows
FLEX_BLOCK = 128               # BlockMask block size, queries and keys
MASK_BUDGET = 1 << 29          # mask elements per eager create_block_mask call (about 11 bytes each at peak:
                               # the bool mask, its padded copy, and the int64 copy its block sums make)
REF_BUDGET = 1 << 25           # float64 scores per reference chunk (256 MiB)
FLUSH_BYTES = 256 << 20        # zeroed before each timed call
FLEX_NOTE = ("sparse attention over fp2bench's block index WITHOUT mean correction: each query row "
             "attends to the keys of its tile's selected blocks, causal; unselected blocks contribute "
             "nothing (fp2bench's --no-correction computes the same)")
ST_SIZES = {"BF16": 2, "F16": 2, "F32": 4, "F64": 8, "I8": 1, "U8": 1, "I16": 2, "I32": 4, "I64": 8, "BOOL": 1}


class UsageError(Exception):
    """Bad arguments or an unreadable input: exit 2."""


class RuntimeFailure(Exception):
    """The run failed: exit 3."""


class Absent(Exception):
    """torch or a CUDA device is missing: exit 77."""


class PeerSkip(Exception):
    """This peer cannot run or failed its check; the message says why."""


def first_line(e):
    """The first line of a message (and the next one when the first ends with a colon, as
    torch.compile's 'backend='inductor' raised:' does), at most 300 characters."""
    s = [x.strip() for x in str(e).strip().splitlines() if x.strip()]
    if not s:
        return e.__class__.__name__
    line = s[0] + (" " + s[1] if s[0].endswith(":") and len(s) > 1 else "")
    return line[:300]


def describe_error(e):
    """One line for an exception raised by torch (out of memory, compile errors, ...)."""
    name = e.__class__.__name__
    if "OutOfMemory" in name:
        return f"out of memory: {first_line(e)}"
    return f"{name}: {first_line(e)}"


def round_up(x, m):
    return (x + m - 1) // m * m


# ---------------------------------------------------------------------------------------------
# arguments

def peer_list(text):
    names = []
    for x in text.split(","):
        x = x.strip()
        if not x:
            continue
        if x not in PEERS:
            raise argparse.ArgumentTypeError(f"unknown peer '{x}' (choose from {','.join(PEERS)})")
        if x not in names:
            names.append(x)
    if not names:
        raise argparse.ArgumentTypeError("no peer given")
    return names


def count(minimum):
    def parse(text):
        try:
            n = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"'{text}' is not an integer")
        if n < minimum:
            raise argparse.ArgumentTypeError(f"'{text}' must be at least {minimum}")
        return n
    return parse


def build_parser():
    p = argparse.ArgumentParser(
        prog="peers.py",
        description="Time PyTorch attention peers (FlashAttention-2 and cuDNN through SDPA, FlexAttention "
                    "with fp2bench's block index) on the inputs fp2bench wrote; JSON result for fp2bench speedup.")
    p.add_argument("--in", dest="inp", required=True, metavar="IN.safetensors",
                   help="q [L,Hq,D], k/v [L,Hkv,D] bf16, csr_offsets, csr_indices, metadata block/qtile/trials")
    p.add_argument("--out", required=True, metavar="OUT.json", help="result (schema fp2bench-peers/1)")
    p.add_argument("--trials", type=count(1), default=None, metavar="N",
                   help="timed calls per peer (default: the file's 'trials', else 5)")
    p.add_argument("--warmup", type=count(0), default=3, metavar="N", help="untimed calls before the trials (default 3)")
    p.add_argument("--peers", type=peer_list, default=list(PEERS), metavar="LIST",
                   help=f"comma-separated peers (default {','.join(PEERS)})")
    p.add_argument("--check-rows", type=count(0), default=256, metavar="N",
                   help="query rows checked against the float64 reference (default 256; 0: no check)")
    p.add_argument("--seed", type=int, default=0, help="seed of the sampled rows (default 0)")
    p.add_argument("--debug", action="store_true", help="show Python tracebacks")
    return p


# ---------------------------------------------------------------------------------------------
# input (header checks need no torch)

class Problem:
    """What the input file holds: shapes, metadata and where each tensor's bytes are."""

    def __init__(self, path, tensors, meta, base):
        self.path, self.tensors, self.meta, self.base = path, tensors, meta, base
        self.L, self.hq, self.dim = tensors["q"][1]
        self.hkv = tensors["k"][1][1]
        self.g = self.hq // self.hkv
        self.block = meta_int(meta, "block", path)
        self.qtile = meta_int(meta, "qtile", path)
        self.ntiles = -(-self.L * self.g // self.qtile)
        self.nblocks = -(-self.L // self.block)
        self.nnz = tensors["csr_indices"][1][0]
        self.trials = meta_int(meta, "trials", path) if "trials" in meta else None

    def summary(self):
        return {"L": self.L, "hq": self.hq, "hkv": self.hkv, "dim": self.dim, "block": self.block,
                "qtile": self.qtile, "ntiles": self.ntiles, "nblocks": self.nblocks, "nnz": self.nnz}


def meta_int(meta, key, path):
    try:
        n = int(str(meta[key]).strip())
    except KeyError:
        raise UsageError(f"'{path}': metadata has no '{key}'")
    except ValueError:
        raise UsageError(f"'{path}': metadata '{key}' = '{meta[key]}' is not an integer")
    if n <= 0:
        raise UsageError(f"'{path}': metadata '{key}' = {n} must be positive")
    return n


def read_header(path):
    """-> (tensors: name -> (dtype, shape, begin, end) relative to base, metadata, base)."""
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            head = f.read(8)
            if len(head) < 8:
                raise UsageError(f"'{path}' is not a safetensors file (shorter than 8 bytes)")
            (n,) = struct.unpack("<Q", head)
            if n > size - 8 or n > (100 << 20):
                raise UsageError(f"'{path}' is not a safetensors file (header length {n}, file {size} bytes)")
            raw = f.read(n)
    except OSError as e:
        raise UsageError(f"cannot read '{path}': {(e.strerror or str(e)).lower()}")
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise UsageError(f"'{path}': the safetensors header is not JSON ({e})")
    if not isinstance(header, dict):
        raise UsageError(f"'{path}': the safetensors header is not a JSON object")
    meta = header.pop("__metadata__", None) or {}
    if not isinstance(meta, dict):
        raise UsageError(f"'{path}': __metadata__ is not a JSON object")
    base = 8 + n
    tensors = {}
    for name, h in header.items():
        try:
            dtype, shape, (b, e) = h["dtype"], [int(s) for s in h["shape"]], h["data_offsets"]
            b, e = int(b), int(e)
        except (KeyError, TypeError, ValueError):
            raise UsageError(f"'{path}': tensor '{name}' has a malformed header entry")
        if dtype not in ST_SIZES:
            raise UsageError(f"'{path}': tensor '{name}' has unknown dtype '{dtype}'")
        numel = 1
        for s in shape:
            if s < 0:
                raise UsageError(f"'{path}': tensor '{name}' has a negative dimension")
            numel *= s
        if e - b != numel * ST_SIZES[dtype] or b < 0 or base + e > size:
            raise UsageError(f"'{path}': tensor '{name}' ({dtype} {shape}) has data offsets [{b}, {e}] that do not "
                             f"fit its shape or the file ({size} bytes)")
        tensors[name] = (dtype, shape, b, e)
    return tensors, meta, base


def read_problem(path):
    """Checks names, dtypes, shapes and metadata against the contract; -> Problem."""
    tensors, meta, base = read_header(path)
    for name in ("q", "k", "v", "csr_offsets", "csr_indices"):
        if name not in tensors:
            raise UsageError(f"'{path}' has no tensor '{name}' (q, k, v, csr_offsets and csr_indices are needed)")
    for name in ("q", "k", "v"):
        dtype, shape = tensors[name][:2]
        if dtype != "BF16" or len(shape) != 3:
            raise UsageError(f"'{path}': '{name}' must be BF16 [L, H, D], got {dtype} {shape}")
    for name in ("csr_offsets", "csr_indices"):
        dtype, shape = tensors[name][:2]
        if dtype != "I32" or len(shape) != 1:
            raise UsageError(f"'{path}': '{name}' must be a 1-d I32 tensor, got {dtype} {shape}")
    (L, hq, d), (lk, hkv, dk), (lv, hv, dv) = (tensors[n][1] for n in ("q", "k", "v"))
    if L <= 0 or hq <= 0 or d <= 0 or hkv <= 0:
        raise UsageError(f"'{path}': empty q or k ({tensors['q'][1]}, {tensors['k'][1]})")
    if (lk, dk) != (L, d) or [lv, hv, dv] != [lk, hkv, dk]:
        raise UsageError(f"'{path}': q {tensors['q'][1]}, k {tensors['k'][1]}, v {tensors['v'][1]} do not agree "
                         "(q [L, Hq, D], k and v [L, Hkv, D])")
    if hq % hkv:
        raise UsageError(f"'{path}': {hq} query heads are not a multiple of {hkv} KV heads")
    dtype = str(meta.get("dtype", "bf16")).strip().lower()
    if dtype != "bf16":
        raise UsageError(f"'{path}': metadata dtype '{dtype}'; the peers take bf16 inputs")
    prob = Problem(path, tensors, meta, base)
    want = prob.hkv * prob.ntiles + 1
    if tensors["csr_offsets"][1][0] != want:
        raise UsageError(f"'{path}': csr_offsets has {tensors['csr_offsets'][1][0]} entries; Hkv*ntiles + 1 = "
                         f"{prob.hkv}*{prob.ntiles} + 1 = {want} expected (L {L}, g {prob.g}, qtile {prob.qtile})")
    return prob


def load_tensors(prob, names=("q", "k", "v", "csr_offsets", "csr_indices"), use_package=True):
    """The named tensors on the CPU: with the safetensors package when importable, else with
    this reader (raw little-endian data; BF16 through an int16 view)."""
    import torch
    safe_open = None
    if use_package:
        try:
            from safetensors import safe_open
        except Exception:
            safe_open = None
    if safe_open is not None:
        try:
            with safe_open(prob.path, framework="pt", device="cpu") as f:
                return {n: f.get_tensor(n) for n in names}
        except Exception as e:   # the header was checked above: let this reader try
            print(f"peers.py: the safetensors package cannot read '{prob.path}' ({first_line(e)}); "
                  "reading it directly", file=sys.stderr)
    if sys.byteorder != "little":
        raise RuntimeFailure("this reader needs a little-endian host (install the safetensors package)")
    kinds = {"BF16": (torch.int16, torch.bfloat16), "F16": (torch.float16, None), "F32": (torch.float32, None),
             "I32": (torch.int32, None), "I64": (torch.int64, None)}
    out = {}
    try:
        with open(prob.path, "rb") as f:
            for n in names:
                dtype, shape, b, e = prob.tensors[n]
                raw_dtype, view = kinds[dtype]
                buf = bytearray(e - b)
                f.seek(prob.base + b)
                if f.readinto(buf) != len(buf):
                    raise UsageError(f"'{prob.path}': tensor '{n}' is cut short")
                t = torch.frombuffer(buf, dtype=raw_dtype) if buf else torch.empty(0, dtype=raw_dtype)
                if view is not None:
                    t = t.view(view)
                out[n] = t.reshape(shape)
    except OSError as e:
        raise UsageError(f"cannot read '{prob.path}': {(e.strerror or str(e)).lower()}")
    return out


def check_csr(prob, offsets, indices):
    """The CSR must describe Hkv*ntiles segments of key blocks in [0, nblocks)."""
    import torch
    offsets, indices = offsets.to(torch.int64), indices.to(torch.int64)
    if int(offsets[0]) != 0 or int(offsets[-1]) != prob.nnz:
        raise UsageError(f"'{prob.path}': csr_offsets runs from {int(offsets[0])} to {int(offsets[-1])}; "
                         f"0 to nnz = {prob.nnz} expected")
    if offsets.numel() > 1 and bool((offsets[1:] < offsets[:-1]).any()):
        s = int((offsets[1:] < offsets[:-1]).nonzero()[0])
        raise UsageError(f"'{prob.path}': csr_offsets decreases at segment {s}")
    bad = ((indices < 0) | (indices >= prob.nblocks)).nonzero().flatten()
    if bad.numel():
        i = int(bad[0])
        raise UsageError(f"'{prob.path}': csr_indices[{i}] = {int(indices[i])} is outside [0, {prob.nblocks}) "
                         f"(L {prob.L}, block {prob.block})")


# ---------------------------------------------------------------------------------------------
# the index as a FlexAttention BlockMask

def allowed_table(prob, offsets, indices, device):
    """allowed[h, T, J]: block J is in the segment of KV head h and tile T. Padded with False
    beyond ntiles and nblocks so that the mask_mod may be evaluated at padded positions."""
    import torch
    offsets = offsets.to(device=device, dtype=torch.int64)
    indices = indices.to(device=device, dtype=torch.int64)
    nseg = prob.hkv * prob.ntiles
    seg = torch.repeat_interleave(torch.arange(nseg, device=device), offsets[1:] - offsets[:-1])
    limit = round_up(prob.L, FLEX_BLOCK) + 2 * FLEX_BLOCK      # any q_idx or kv_idx below this is in range
    tiles = max(prob.ntiles, ((limit - 1) * prob.g + prob.g - 1) // prob.qtile + 1)
    blocks = max(prob.nblocks, (limit - 1) // prob.block + 1)
    allowed = torch.zeros(prob.hkv, tiles, blocks, dtype=torch.bool, device=device)
    allowed[seg // prob.ntiles, seg % prob.ntiles, indices] = True
    return allowed


def index_mask_mod(allowed, g, qtile, block):
    """fp2bench's selection as a FlexAttention mask_mod (query head h, position q_idx, key kv_idx)."""
    def fp2bench_index(b, h, q_idx, kv_idx):
        return allowed[h // g, (q_idx * g + h % g) // qtile, kv_idx // block] & (kv_idx <= q_idx)
    return fp2bench_index


def _shifted(mask_mod, h0, q0):
    def shifted(b, h, q_idx, kv_idx):
        return mask_mod(b, h + h0, q_idx + q0, kv_idx)
    return shifted


def build_block_mask(mask_mod, hq, L, device, budget=MASK_BUDGET):
    """create_block_mask(mask_mod, 1, hq, L, L, BLOCK_SIZE=128). In eager mode it materialises
    the boolean mask [1, hq, L, L]; past `budget` elements it is called on slices of query
    positions (multiples of 128) and heads and the slices are joined with
    BlockMask.from_kv_blocks, which gives the same BlockMask. -> (BlockMask, calls)."""
    import torch
    from torch.nn.attention.flex_attention import BlockMask, create_block_mask
    lp = round_up(L, FLEX_BLOCK)
    if hq * lp * lp <= budget:
        return create_block_mask(mask_mod, 1, hq, L, L, device=device, BLOCK_SIZE=FLEX_BLOCK), 1
    qc = budget // (hq * lp) // FLEX_BLOCK * FLEX_BLOCK
    hc = hq
    if qc < FLEX_BLOCK:
        qc, hc = FLEX_BLOCK, max(1, budget // (FLEX_BLOCK * lp))
    keys = ("kv_num_blocks", "kv_indices", "full_kv_num_blocks", "full_kv_indices")
    rows = {k: [] for k in keys}
    calls = 0
    for q0 in range(0, L, qc):
        ql = min(qc, L - q0)
        heads = {k: [] for k in keys}
        for h0 in range(0, hq, hc):
            hl = min(hc, hq - h0)
            part = create_block_mask(_shifted(mask_mod, h0, q0), 1, hl, ql, L, device=device, BLOCK_SIZE=FLEX_BLOCK)
            calls += 1
            for k in keys:
                heads[k].append(getattr(part, k))
        for k in keys:
            rows[k].append(torch.cat(heads[k], dim=1))
    joined = {k: torch.cat(rows[k], dim=2) for k in keys}
    bm = BlockMask.from_kv_blocks(joined["kv_num_blocks"], joined["kv_indices"], joined["full_kv_num_blocks"],
                                  joined["full_kv_indices"], BLOCK_SIZE=FLEX_BLOCK, mask_mod=mask_mod,
                                  seq_lengths=(L, L))
    return bm, calls


# ---------------------------------------------------------------------------------------------
# run context: inputs on the GPU, sampled rows, reference

class Context:
    def __init__(self, prob, cpu, device, check_rows, seed):
        import torch
        self.prob, self.device = prob, device
        # [L, H, D] -> [1, H, L, D], contiguous, outside any timed region
        self.q4 = cpu["q"].to(device).permute(1, 0, 2).unsqueeze(0).contiguous()
        self.k4 = cpu["k"].to(device).permute(1, 0, 2).unsqueeze(0).contiguous()
        self.v4 = cpu["v"].to(device).permute(1, 0, 2).unsqueeze(0).contiguous()
        self.offsets, self.indices = cpu["csr_offsets"], cpu["csr_indices"]
        self._allowed = None
        self.pos, self.head = sample_rows(prob.L, prob.hq, check_rows, seed, device)
        self._refs = {}

    @property
    def allowed(self):
        if self._allowed is None:
            self._allowed = allowed_table(self.prob, self.offsets, self.indices, self.device)
        return self._allowed

    def reference(self, sparse):
        """float64 outputs of the sampled rows [n, D] (cached per kind)."""
        if sparse not in self._refs:
            self._refs[sparse] = reference_rows(self.q4, self.k4, self.v4, self.pos, self.head, self.prob,
                                                self.allowed if sparse else None)
        return self._refs[sparse]

    def check(self, out4, sparse):
        """-> (rel L2 over the rows, worst per-row rel L2, rows); raises PeerSkip on NaN/Inf."""
        import torch
        n = int(self.pos.numel())
        if n == 0:
            return None, None, 0
        got = out4[0, self.head, self.pos].double()
        ref = self.reference(sparse)
        if not bool(torch.isfinite(got).all()):
            bad = int((~torch.isfinite(got).all(dim=1)).nonzero()[0])
            raise PeerSkip(f"output check failed: NaN or Inf at position {int(self.pos[bad])}, "
                           f"query head {int(self.head[bad])}")
        diff = got - ref
        rel = float(diff.norm() / ref.norm().clamp_min(1e-300))
        per_row = diff.norm(dim=1) / ref.norm(dim=1).clamp_min(1e-300)  # 0 where both are 0
        return rel, float(per_row.max()), n


def sample_rows(L, hq, n, seed, device):
    """n distinct (position, query head) rows: position 0 and L-1 first, the rest uniform."""
    import torch
    total = L * hq
    gen = torch.Generator().manual_seed(seed)
    if n >= total:
        flat = torch.arange(total)
    elif n == 0:
        flat = torch.empty(0, dtype=torch.int64)
    else:
        ends = [int(torch.randint(hq, (1,), generator=gen)),
                (L - 1) * hq + int(torch.randint(hq, (1,), generator=gen))]
        ends = list(dict.fromkeys(ends))[:n]
        rest = torch.randperm(total, generator=gen)[: n + len(ends)]
        rest = rest[~torch.isin(rest, torch.tensor(ends))][: n - len(ends)]
        flat = torch.cat([torch.tensor(ends, dtype=torch.int64), rest])
    return (flat // hq).to(device), (flat % hq).to(device)


def reference_rows(q4, k4, v4, pos, head, prob, allowed=None):
    """Causal softmax(q k^T / sqrt(D)) v of the given rows in float64 on the GPU, by KV head and
    in chunks of rows ([rows, L] scores at most); with `allowed`, only the keys of the allowed
    blocks of the row's tile count. A row with no key gives 0 (FlexAttention's convention)."""
    import torch
    n, L, d, g = int(pos.numel()), prob.L, prob.dim, prob.g
    out = torch.zeros(n, d, dtype=torch.float64, device=q4.device)
    keys = torch.arange(L, device=q4.device)
    scale = 1.0 / math.sqrt(d)
    chunk = max(1, REF_BUDGET // L)
    for h in range(prob.hkv):
        sel = ((head // g) == h).nonzero().flatten()
        if sel.numel() == 0:
            continue
        kk = k4[0, h].double()                         # [L, D]
        vv = v4[0, h].double()
        for c in range(0, sel.numel(), chunk):
            idx = sel[c:c + chunk]
            p, hq = pos[idx], head[idx]
            s = (q4[0, hq, p].double() @ kk.T) * scale     # [rows, L]
            m = keys[None, :] <= p[:, None]
            if allowed is not None:
                tile = (p * g + hq % g) // prob.qtile
                blk = allowed[h, tile, :prob.nblocks]          # [rows, nblocks]
                m &= blk.repeat_interleave(prob.block, dim=1)[:, :L]
            s.masked_fill_(~m, float("-inf"))
            mx = s.amax(dim=1, keepdim=True)
            empty = torch.isinf(mx)
            e = torch.exp(s - torch.where(empty, torch.zeros_like(mx), mx))
            den = e.sum(dim=1, keepdim=True)
            o = (e @ vv) / torch.where(empty, torch.ones_like(den), den)
            out[idx] = torch.where(empty, torch.zeros_like(o), o)
            del s, m, e
    return out


# ---------------------------------------------------------------------------------------------
# peers: each setup returns (fn, info, hold): hold() gives a fresh context manager to keep
# around the calls (sdpa_kernel's is single-use)

def sdpa_setup(ctx, backend_name, gqa):
    """fn() -> [1, Hq, L, D] through SDPA with one backend; gqa is 'enable_gqa' or 'expanded'."""
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel
    backend = getattr(SDPBackend, backend_name, None)
    if backend is None:
        raise PeerSkip(f"this torch has no SDPBackend.{backend_name}")
    sdpa = torch.nn.functional.scaled_dot_product_attention
    q4, k4, v4, g = ctx.q4, ctx.k4, ctx.v4, ctx.prob.g
    if g == 1:
        def fn():
            return sdpa(q4, k4, v4, is_causal=True)
        gqa = "none (Hq = Hkv)"
    elif gqa == "enable_gqa":
        def fn():
            return sdpa(q4, k4, v4, is_causal=True, enable_gqa=True)
    else:
        ke = k4.repeat_interleave(g, dim=1).contiguous()      # query head h -> KV head h // g
        ve = v4.repeat_interleave(g, dim=1).contiguous()

        def fn():
            return sdpa(q4, ke, ve, is_causal=True)
    return fn, {"backend": f"SDPBackend.{backend_name}", "gqa": gqa}, lambda: sdpa_kernel(backend)


def flex_setup(ctx):
    import torch
    try:
        from torch.nn.attention.flex_attention import flex_attention
    except Exception as e:
        raise PeerSkip(f"this torch has no FlexAttention ({describe_error(e)})")
    prob = ctx.prob
    t0 = time.perf_counter()
    mask_mod = index_mask_mod(ctx.allowed, prob.g, prob.qtile, prob.block)
    bm, calls = build_block_mask(mask_mod, prob.hq, prob.L, ctx.q4.device)
    torch.cuda.synchronize()
    mask_s = time.perf_counter() - t0
    compiled = torch.compile(flex_attention, dynamic=False)
    q4, k4, v4 = ctx.q4, ctx.k4, ctx.v4

    def fn():
        return compiled(q4, k4, v4, block_mask=bm, enable_gqa=True)
    partial = int(bm.kv_num_blocks.sum())
    full = int(bm.full_kv_num_blocks.sum()) if bm.full_kv_num_blocks is not None else 0
    info = {"note": FLEX_NOTE, "compile": "torch.compile(flex_attention, dynamic=False)", "gqa": "enable_gqa",
            "block_mask": {"block_size": [FLEX_BLOCK, FLEX_BLOCK], "partial_blocks": partial, "full_blocks": full,
                           "create_block_mask_calls": calls, "build_s": round(mask_s, 3)}}
    return fn, info, contextlib.nullcontext


def first_call(fn, hold):
    """The first call (compiles flex), its output, and the warnings it raised, as text."""
    import torch
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            with hold():
                out = fn()
            torch.cuda.synchronize()
        except Exception as e:
            msgs = []
            for w in seen:
                m = first_line(w.message)
                if m not in msgs and "deprecat" not in m.lower() and "disabled" not in m.lower():
                    msgs.append(m)
            why = describe_error(e)
            if msgs:
                why += " (" + "; ".join(msgs)[:400] + ")"
            raise PeerSkip(why)
    return out


def time_calls(fn, hold, warmup, trials, flush):
    import torch
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    with hold():
        for _ in range(warmup):
            fn()
        for _ in range(trials):
            torch.cuda.synchronize()
            flush.zero_()
            start.record()
            fn()
            end.record()
            torch.cuda.synchronize()
            times.append(float(start.elapsed_time(end)))
    return times


def checked_call(ctx, fn, hold, sparse):
    """First call and check: -> (rel L2, worst row, rows) or raises PeerSkip."""
    out = first_call(fn, hold)
    try:
        rel, worst, n = ctx.check(out, sparse)
    finally:
        del out
    if rel is not None and not rel < TOLERANCE:
        raise PeerSkip(f"output check failed: relative error {rel:.3g} over {TOLERANCE:g} ({n} rows)")
    return rel, worst, n


def run_peer(name, ctx, args, trials, flush, log):
    """-> the peer's JSON entry, or raises PeerSkip."""
    import torch
    t0 = time.perf_counter()
    if name == "flex":
        fn, info, hold = flex_setup(ctx)
        rel, worst, n = checked_call(ctx, fn, hold, sparse=True)
        info["first_call_s"] = round(time.perf_counter() - t0 - info["block_mask"]["build_s"], 3)
    else:
        backend = "FLASH_ATTENTION" if name == "fa2" else "CUDNN_ATTENTION"
        modes = ["enable_gqa", "expanded"] if ctx.prob.g > 1 else ["enable_gqa"]
        failures = []
        for mode in modes:
            try:
                fn, info, hold = sdpa_setup(ctx, backend, mode)
                rel, worst, n = checked_call(ctx, fn, hold, sparse=False)
                break
            except PeerSkip as e:
                failures.append(f"{mode}: {e}" if len(modes) > 1 else str(e))
                fn = None
                torch.cuda.empty_cache()
        if fn is None:
            raise PeerSkip("; ".join(failures))
        if failures:
            info["gqa_note"] = "; ".join(failures)
        if name == "fa2":   # which flash implementation SDPA runs (None: the built-in FlashAttention-2)
            import torch.nn.attention as attention
            try:
                info["flash_version"] = attention._get_flash_version()
            except Exception:
                pass
            try:
                info["flash_impl"] = attention.current_flash_attention_impl() or "default (FlashAttention-2)"
            except Exception:
                pass
    times = time_calls(fn, hold, args.warmup, trials, flush)
    entry = {"name": name, "trials_ms": times, "checked_rows": n, "max_rel_err": worst, "rel_l2_err": rel,
             "pairs": "index" if name == "flex" else "causal"}
    entry.update(info)
    med = sorted(times)[len(times) // 2]
    err = f"rel. error {rel:.3g} (worst row {worst:.3g}) over {n} rows" if n else "not checked"
    log(f"{name}: {err}; median {med:.4g} ms of {len(times)} (min {min(times):.4g}, max {max(times):.4g})")
    return entry


# ---------------------------------------------------------------------------------------------

def import_torch():
    try:
        import torch
    except Exception as e:
        raise Absent(f"cannot import torch ({e.__class__.__name__}: {first_line(e)})")
    if not torch.cuda.is_available():
        why = "torch was built without CUDA" if torch.version.cuda is None else "no CUDA device is visible"
        raise Absent(f"torch {torch.__version__} sees no CUDA device ({why})")
    return torch


def versions(torch):
    v = {"cuda": torch.version.cuda}
    try:
        v["cudnn"] = torch.backends.cudnn.version()
    except Exception:
        pass
    try:
        import triton
        v["triton"] = triton.__version__
    except Exception:
        pass
    return v


def write_json(path, doc):
    tmp = f"{path}.part{os.getpid()}"
    try:
        with open(tmp, "w") as f:
            json.dump(doc, f, indent=1, allow_nan=False)
            f.write("\n")
        os.replace(tmp, path)
    except (OSError, ValueError) as e:
        try:
            os.remove(tmp)
        except OSError:
            pass
        raise RuntimeFailure(f"cannot write '{path}': {(getattr(e, 'strerror', None) or str(e)).lower()}")


def run(args):
    def log(msg):
        print(f"peers.py: {msg}", file=sys.stderr, flush=True)

    out_dir = os.path.dirname(os.path.abspath(args.out))
    if not os.path.isdir(out_dir):
        raise UsageError(f"cannot write '{args.out}': no directory '{out_dir}'")
    prob = read_problem(args.inp)
    trials = args.trials or prob.trials or 5
    torch = import_torch()
    torch.set_grad_enabled(False)
    device = torch.device("cuda", torch.cuda.current_device())
    cpu = load_tensors(prob)
    check_csr(prob, cpu["csr_offsets"], cpu["csr_indices"])
    try:
        ctx = Context(prob, cpu, device, args.check_rows, args.seed)
        flush = torch.empty(FLUSH_BYTES, dtype=torch.uint8, device=device)
    except Exception as e:
        raise RuntimeFailure(f"cannot set up the inputs on {torch.cuda.get_device_name(device)}: {describe_error(e)}")
    del cpu
    log(f"L {prob.L}, heads {prob.hq}:{prob.hkv}, d {prob.dim}, block {prob.block}, qtile {prob.qtile}, "
        f"{prob.nnz} index blocks; {args.warmup} warm-up and {trials} timed calls per peer")

    doc = {"schema": SCHEMA, "torch": torch.__version__, "device": torch.cuda.get_device_name(device)}
    doc.update(versions(torch))
    doc.update({"input": prob.summary(), "warmup": args.warmup, "trials": trials,
                "check": {"rows": int(ctx.pos.numel()), "seed": args.seed, "tolerance": TOLERANCE,
                          "reference": "float64 on the GPU from the bf16 inputs; relative L2 error over the sampled "
                                       "rows (rel_l2_err; max_rel_err is the worst row)"},
                "timing": "CUDA events around one call, after torch.cuda.synchronize() and zeroing a 256 MiB "
                          "buffer (L2 flush); warm-up calls first",
                "peers": [], "skipped": []})
    for name in args.peers:
        try:
            doc["peers"].append(run_peer(name, ctx, args, trials, flush, log))
        except PeerSkip as e:
            doc["skipped"].append({"name": name, "why": str(e)})
            log(f"{name} skipped: {e}")
        except Exception as e:  # a failure of this peer, not of the run
            if args.debug:
                raise
            doc["skipped"].append({"name": name, "why": describe_error(e)})
            log(f"{name} skipped: {describe_error(e)}")
        try:
            torch.cuda.synchronize()
            torch.cuda.empty_cache()
        except Exception:
            pass
    write_json(args.out, doc)
    return EXIT_OK


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        return run(args)
    except UsageError as e:
        print(f"peers.py: {e}", file=sys.stderr)
        return EXIT_USAGE
    except Absent as e:
        print(f"peers.py: {e}", file=sys.stderr)
        return EXIT_ABSENT
    except RuntimeFailure as e:
        print(f"peers.py: {e}", file=sys.stderr)
        return EXIT_RUNTIME
    except KeyboardInterrupt:
        print("peers.py: interrupted", file=sys.stderr)
        return EXIT_RUNTIME
    except Exception as e:  # anything unforeseen: one line, the traceback only with --debug
        if args.debug:
            raise
        print(f"peers.py: {describe_error(e)} (--debug shows the traceback)", file=sys.stderr)
        return EXIT_RUNTIME


if __name__ == "__main__":
    sys.exit(main())
