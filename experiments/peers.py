#!/usr/bin/env python3
"""peers.py: time dense and sparse attention peers through PyTorch on the inputs fp2bench used,
so that `fp2bench speedup` can put them beside its own kernels (DESIGN.md sections 3 and 6).

  peers.py --in IN.safetensors --out OUT.json [--trials N] [--warmup N]
           [--peers fa2,sdpa_cudnn,flex,fpv2,fpv2_kernel,hpc] [--check-rows N] [--seed S] [--debug]

IN.safetensors (one sequence, causal prefill, written by fp2bench): q [L, Hq, D], k and v
[L, Hkv, D] in BF16, positions first; csr_offsets [Hkv*ntiles + 1] and csr_indices [nnz] I32,
fp2bench's block index (segment h*ntiles + T lists the ascending key blocks of KV head h for
PackGQA query tile T, whose packed rows r in [T*M, (T+1)*M) are position r // g, query head
h*g + r % g, g = Hq/Hkv); __metadata__ "block" (B), "qtile" (M), "trials", "dtype" ("bf16"), and
from fp2bench's run "peer_dtype" (bf16 or fp8) and its selection's "alpha", "sink", "window", "recent".

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
  fpv2        FlashPrefill V2's whole pass (qhfan/FlashPrefillv2, built by experiments/build_peers.sh):
              its Triton index builder (build_block_sparse_index_fast, with the file's alpha, sink,
              window and recent) on the same q/k, then its block-sparse attention with mean correction
              (torch.ops.flashprefill.fwd, paged K/V of page size 1: the only compiled corrected path)
              on the index it built; checked against a reference with its own index and correction;
  fpv2_kernel its block-sparse attention alone, WITHOUT correction (TMA K/V), on fp2bench's index: the
              same segments (KV head, PackGQA tile of 128 packed rows), each 128-key block as two
              64-token tiles;
  hpc         HPC-Ops' block-sparse FP8 prefill (torch.ops.hpc.attention_with_kvcache_blocksparse_
              prefill_fp8, quant_type 1, K/V in pages of 64 tokens) on fp2bench's index as its uint8
              mask [1, Hq, ceil(L/128), ceil(L/128)]: position tile t of query head hq gets the union
              of the blocks of every PackGQA tile that holds a row of that head in that tile (denser
              than the index: its pairs and density are reported). FP8 only.
fpv2, fpv2_kernel and hpc run in the file's "peer_dtype" (bf16 or fp8: per-tensor scales amax/448,
the references use the dequantized values) and need D = 128, block 128 (and qtile 128 for
FlashPrefill V2). Their libraries are named by environment variables: FP2_FLASHPREFILL_LIB (its
fp2_C*.so), FP2_FLASHPREFILL_PY (the folder of flash_block_sparse_index_triton.py, for fpv2's
index builder), FP2_HPC_OPS_LIB (hpc_peers_C*.so); unset or unreadable, the peer is skipped with
the reason.

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
TFLOP/s: "causal" every causal pair, "index" the pairs of fp2bench's index without correction,
"counted" the "pairs_count" it gives: (query row, key) pairs over all query heads, with their
"density" over the causal pairs), "versus" (the time of fp2bench's its ratio is taken against:
"total" the index stage plus the sparse attention, "attend_nocorr" the sparse attention without
correction on the same index), "gqa", ...; flex adds "note" and "block_mask"}], "skipped":
[{"name", "why"}], "cuda", "cudnn", "triton", "input", "trials", "warmup", "check", "timing"}.

Exit codes: 0 it ran (peers that could not run or failed their check are under "skipped"),
2 bad arguments or an unreadable input, 3 other runtime errors, 77 torch or a CUDA device
missing (the reason on stderr).
"""
import argparse
import contextlib
import importlib.util
import json
import math
import os
import struct
import sys
import time
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # script_exit beside it, however loaded
from script_exit import EXIT_ABSENT, EXIT_OK, EXIT_RUNTIME, EXIT_USAGE, Absent, RuntimeFailure, UsageError, run_main  # noqa: E402

SCHEMA = "fp2bench-peers/1"
PEERS = ("fa2", "sdpa_cudnn", "flex", "fpv2", "fpv2_kernel", "hpc")
TORCH_PEERS = PEERS[:3]      # torch alone runs them; the others need the libraries users build
TOLERANCE = 2e-2               # relative L2 error over the sampled rows (BF16)
TOLERANCE_FP8 = 0.1            # the same for the FP8 peers, against the dequantized inputs
FP8_MAX = 448.0                # largest finite e4m3: per-tensor scale amax / 448, as fp2bench's FP8
FPV2_TILE = 64                 # FlashPrefill V2's key tiles (kBlockN of its sm90 configurations)
HPC_BLOCK = 128                # HPC-Ops' mask blocks: 128 query positions x 128 keys
HPC_PAGE = 64                  # the only K/V page size its build compiles
FLEX_BLOCK = 128               # BlockMask block size, queries and keys
MASK_BUDGET = 1 << 29          # mask elements per eager create_block_mask call (about 11 bytes each at peak:
                               # the bool mask, its padded copy, and the int64 copy its block sums make)
REF_BUDGET = 1 << 25           # float64 scores per reference chunk (256 MiB)
FLUSH_BYTES = 256 << 20        # zeroed before each timed call
FLEX_NOTE = ("sparse attention over fp2bench's block index WITHOUT mean correction: each query row "
             "attends to the keys of its tile's selected blocks, causal; unselected blocks contribute "
             "nothing (fp2bench's --no-correction computes the same)")
ST_SIZES = {"BF16": 2, "F16": 2, "F32": 4, "F64": 8, "I8": 1, "U8": 1, "I16": 2, "I32": 4, "I64": 8, "BOOL": 1}


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
    p.add_argument("--peers", type=peer_list, default=list(TORCH_PEERS), metavar="LIST",
                   help=f"comma-separated peers of {','.join(PEERS)} (default {','.join(TORCH_PEERS)})")
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
        # fp2bench's run: the dtype of its kernels and the selection's parameters (fpv2's index builder)
        self.peer_dtype = str(meta.get("peer_dtype", "bf16")).strip().lower()
        self.select = {k: meta[k] for k in ("alpha", "sink", "window", "recent") if k in meta}

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
    if prob.peer_dtype not in ("bf16", "fp8"):
        raise UsageError(f"'{path}': metadata peer_dtype '{prob.peer_dtype}'; bf16 or fp8 expected")
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
# the index in the block-sparse peers' formats (plain Python on lists: tested without torch)

def fpv2_tiles(offsets, indices, block, L):
    """fp2bench's CSR -> FlashPrefill V2's: the same segments (its PackGQA tiles of 128 packed
    rows are ours when qtile is 128), each key block J as its 64-token tiles; a tile that starts
    at or past L is dropped, as its Triton builder does. -> (offsets, indices) lists."""
    per = block // FPV2_TILE
    last = -(-L // FPV2_TILE)
    cu, tiles = [0], []
    for s in range(len(offsets) - 1):
        for J in indices[offsets[s]:offsets[s + 1]]:
            tiles.extend(range(J * per, min(J * per + per, last)))
        cu.append(len(tiles))
    return cu, tiles


def tile_pairs(t, blocks, L):
    """Causal (query, key) pairs of position tile t (128 positions) over the given 128-key blocks."""
    rows = min(HPC_BLOCK, L - t * HPC_BLOCK)
    n = 0
    for j in blocks:
        if j < t:
            n += rows * min(HPC_BLOCK, L - j * HPC_BLOCK)
        elif j == t:
            n += rows * (rows + 1) // 2
    return n


def hpc_mask(offsets, indices, L, hkv, g, qtile):
    """fp2bench's CSR (key blocks of 128) -> HPC-Ops' uint8 mask [Hq, nqt, nqt] (row-major bytes,
    nqt = ceil(L/128)): position tile t of query head h*g + i gets the union of the blocks of every
    PackGQA tile holding one of its rows, packed rows p*g + i for p in the tile: g tiles inside the
    sequence, fewer (and different ones per head when g does not divide qtile) in its last tile.
    -> (mask, pairs): pairs = the causal (query, key) pairs that mask lets through, over all heads."""
    nqt = -(-L // HPC_BLOCK)
    ntiles = -(-L * g // qtile)
    mask = bytearray(hkv * g * nqt * nqt)
    pairs = 0
    for h in range(hkv):
        for t in range(nqt):
            p0, p1 = t * HPC_BLOCK, min((t + 1) * HPC_BLOCK, L) - 1
            span = None
            for i in range(g):
                if span != ((p0 * g + i) // qtile, (p1 * g + i) // qtile):
                    span = ((p0 * g + i) // qtile, (p1 * g + i) // qtile)
                    blocks = set()
                    for T in range(span[0], min(span[1], ntiles - 1) + 1):
                        seg = h * ntiles + T
                        blocks.update(indices[offsets[seg]:offsets[seg + 1]])
                    row = bytearray(nqt)
                    for j in blocks:
                        row[j] = 1
                    n = tile_pairs(t, blocks, L)
                at = ((h * g + i) * nqt + t) * nqt
                mask[at:at + nqt] = row
                pairs += n
    return mask, pairs


def causal_pairs(L, hq):
    return hq * L * (L + 1) // 2


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
        self._operands = {}

    @property
    def allowed(self):
        if self._allowed is None:
            self._allowed = allowed_table(self.prob, self.offsets, self.indices, self.device)
        return self._allowed

    def index_blocks(self, allowed=None):
        """blocks(p, hq, h) for reference_rows from a table [Hkv, tiles, blocks] over PackGQA tiles
        (default: the file's index)."""
        allowed = self.allowed if allowed is None else allowed
        g, qtile, nb = self.prob.g, self.prob.qtile, self.prob.nblocks
        return lambda p, hq, h: allowed[h, (p * g + hq % g) // qtile, :nb]

    def cached(self, key, make):
        if key not in self._refs:
            self._refs[key] = make()
        return self._refs[key]

    def reference(self, sparse):
        """float64 outputs of the sampled rows [n, D] from the bf16 inputs (cached per kind)."""
        return self.cached(("index" if sparse else "dense", "bf16"), lambda: reference_rows(
            self.q4, self.k4, self.v4, self.pos, self.head, self.prob, self.index_blocks() if sparse else None))

    def operands(self, dtype):
        """-> ((q, k, v) [L, H, D] as the block-sparse peers take them: bf16, or e4m3 codes of x / s with
        per-tensor scales s = amax / 448; (s_q, s_k, s_v), 1 for bf16; (q4, k4, v4) [1, H, L, D], the
        values the references use: the inputs, or the e4m3 codes times their scales)."""
        if dtype not in self._operands:
            import torch
            lhd = tuple(x[0].permute(1, 0, 2).contiguous() for x in (self.q4, self.k4, self.v4))
            if dtype == "bf16":
                self._operands[dtype] = (lhd, (1.0, 1.0, 1.0), (self.q4, self.k4, self.v4))
            else:
                f8 = getattr(torch, "float8_e4m3fn", None)
                if f8 is None:
                    raise PeerSkip(f"torch {torch.__version__} has no float8_e4m3fn")
                codes, scales, values = [], [], []
                for x in lhd:
                    sc = max(float(x.abs().max().float()) / FP8_MAX, 1e-30)
                    c = (x.float() / sc).to(f8)
                    codes.append(c)
                    scales.append(sc)
                    values.append((c.float() * sc).permute(1, 0, 2).unsqueeze(0))
                self._operands[dtype] = (tuple(codes), tuple(scales), tuple(values))
        return self._operands[dtype]

    def check(self, out4, sparse):
        return self.check_against(out4, self.reference(sparse))

    def check_against(self, out4, ref):
        """out4 [1, Hq, L, D] against ref, the float64 outputs of the sampled rows -> (rel L2 over the
        rows, worst per-row rel L2, rows); raises PeerSkip on NaN/Inf."""
        import torch
        n = int(self.pos.numel())
        if n == 0:
            return None, None, 0
        got = out4[0, self.head, self.pos].double()
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


def reference_rows(q4, k4, v4, pos, head, prob, blocks=None, means=None):
    """Causal softmax(q k^T / sqrt(D)) v of the given rows in float64 on the GPU, by KV head and
    in chunks of rows ([rows, L] scores at most). blocks(p, hq, h) -> [rows, nblocks] bool: only
    the keys of those blocks count (None: every causal key). means = (k_mean, v_mean [Hkv, nblocks,
    D], jend(p, hq) -> [rows]): the mean correction, one virtual key per block j < jend that blocks
    leaves out, logit q.k_mean[j]/sqrt(D) + ln|B_j|, value v_mean[j]. A row with no key gives 0
    (FlexAttention's convention)."""
    import torch
    n, L, d, g = int(pos.numel()), prob.L, prob.dim, prob.g
    out = torch.zeros(n, d, dtype=torch.float64, device=q4.device)
    keys = torch.arange(L, device=q4.device)
    jblocks = torch.arange(prob.nblocks, device=q4.device)
    log_len = torch.log(((jblocks + 1) * prob.block).clamp(max=L).double() - jblocks * prob.block)
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
            qq = q4[0, hq, p].double()
            s = (qq @ kk.T) * scale                        # [rows, L]
            m = keys[None, :] <= p[:, None]
            if blocks is not None:
                blk = blocks(p, hq, h)                     # [rows, nblocks]
                m &= blk.repeat_interleave(prob.block, dim=1)[:, :L]
            s.masked_fill_(~m, float("-inf"))
            values = vv
            if means is not None:
                k_mean, v_mean, jend = means
                virtual = (jblocks[None, :] < jend(p, hq)[:, None]) & ~blk
                sv = (qq @ k_mean[h].double().T) * scale + log_len[None, :]
                s = torch.cat([s, sv.masked_fill(~virtual, float("-inf"))], dim=1)
                values = torch.cat([vv, v_mean[h].double()], dim=0)
            mx = s.amax(dim=1, keepdim=True)
            empty = torch.isinf(mx)
            e = torch.exp(s - torch.where(empty, torch.zeros_like(mx), mx))
            den = e.sum(dim=1, keepdim=True)
            o = (e @ values) / torch.where(empty, torch.ones_like(den), den)
            out[idx] = torch.where(empty, torch.zeros_like(o), o)
            del s, m, e
    return out


def block_means(x4, prob):
    """[1, H, L, D] -> [H, nblocks, D] float64: the mean of each key block's valid rows."""
    import torch
    x = x4[0].double()
    pad = prob.nblocks * prob.block - prob.L
    if pad:
        x = torch.cat([x, x.new_zeros(x.shape[0], pad, x.shape[2])], dim=1)
    sums = x.view(x.shape[0], prob.nblocks, prob.block, x.shape[2]).sum(dim=2)
    j = torch.arange(prob.nblocks, device=x.device)
    lens = ((j + 1) * prob.block).clamp(max=prob.L) - j * prob.block
    return sums / lens.view(1, -1, 1).double()


def index_pairs(allowed, prob):
    """Causal (query row, key) pairs that a table [Hkv, >= ntiles, >= nblocks] over PackGQA tiles
    lets through, over all query heads (no correction keys)."""
    import torch
    dev = allowed.device
    M, B, L = prob.qtile, prob.block, prob.L
    start = torch.arange(prob.nblocks, device=dev) * B
    stop = (start + B).clamp(max=L)
    step = max(1, (1 << 24) // (M * prob.nblocks))
    total = 0
    for t0 in range(0, prob.ntiles, step):
        t1 = min(prob.ntiles, t0 + step)
        rows = torch.arange(t0 * M, t1 * M, device=dev)
        p = (rows // prob.g).view(-1, M, 1)                                  # position of each packed row
        seen = (torch.minimum(p + 1, stop) - start).clamp(min=0)             # [tiles, M, nblocks]
        seen = (seen * (rows < L * prob.g).view(-1, M, 1)).sum(dim=1)        # rows past the sequence: none
        total += int((allowed[:, t0:t1, :prob.nblocks].long() * seen).sum())
    return total


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


def checked_call(ctx, fn, hold, ref, tol=TOLERANCE, lhd=False):
    """First call and check against ref (the float64 rows): -> (rel L2, worst row, rows) or raises
    PeerSkip. lhd: fn returns [L, Hq, D] (the block-sparse peers), else [1, Hq, L, D]."""
    out = first_call(fn, hold)
    try:
        rel, worst, n = ctx.check_against(out.permute(1, 0, 2).unsqueeze(0) if lhd else out, ref)
    finally:
        del out
    if rel is not None and not rel < tol:
        raise PeerSkip(f"output check failed: relative error {rel:.3g} over {tol:g} ({n} rows)")
    return rel, worst, n


# ---------------------------------------------------------------------------------------------
# the block-sparse peers (FlashPrefill V2, HPC-Ops), loaded from the libraries users build:
# each setup returns (fn -> [L, Hq, D], info, the float64 reference of the sampled rows)

def load_op(var, what, namespace, op):
    """torch.ops.<namespace>.<op> from the library that the environment variable var names."""
    path = os.environ.get(var)
    if not path:
        raise PeerSkip(f"{var} is not set (the path of {what}; experiments/build_peers.sh builds it)")
    if not os.path.isfile(path) or not os.access(path, os.R_OK):
        raise PeerSkip(f"cannot read '{path}' ({var}: {what})")
    import torch
    try:
        torch.ops.load_library(path)
        return getattr(getattr(torch.ops, namespace), op)
    except Exception as e:
        raise PeerSkip(f"cannot load torch.ops.{namespace}.{op} from '{path}' ({var}): {describe_error(e)}")


def load_index_builder():
    """FlashPrefill V2's Triton index builder, from the folder FP2_FLASHPREFILL_PY names."""
    folder = os.environ.get("FP2_FLASHPREFILL_PY")
    if not folder:
        raise PeerSkip("FP2_FLASHPREFILL_PY is not set (the folder of FlashPrefill V2's "
                       "flash_block_sparse_index_triton.py, its index builder)")
    path = os.path.join(folder, "flash_block_sparse_index_triton.py")
    if not os.path.isfile(path) or not os.access(path, os.R_OK):
        raise PeerSkip(f"cannot read '{path}' (FP2_FLASHPREFILL_PY: its index builder)")
    try:
        spec = importlib.util.spec_from_file_location("flash_block_sparse_index_triton", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    except Exception as e:
        raise PeerSkip(f"cannot import '{path}': {describe_error(e)}")
    return mod


def require_shape(prob, what, qtile):
    """Both libraries are built for head dim 128 over 128-key blocks; FlashPrefill V2's PackGQA
    tiles are 128 packed rows, which our segments must be to pass as its own."""
    if prob.dim != 128 or prob.block != 128 or (qtile and prob.qtile != 128):
        raise PeerSkip(f"{what} takes head dim 128 and block 128{', qtile 128' if qtile else ''} "
                       f"(this input: dim {prob.dim}, block {prob.block}, qtile {prob.qtile})")


def fpv2_common(ctx):
    """-> (fwd, its keyword arguments common to every call, operands, scales, reference values)."""
    prob = ctx.prob
    require_shape(prob, "FlashPrefill V2", qtile=True)
    fwd = load_op("FP2_FLASHPREFILL_LIB", "FlashPrefill V2's fp2_C library", "flashprefill", "fwd")
    import torch
    operands, scales, values = ctx.operands(prob.peer_dtype)
    i32 = lambda x: torch.tensor(x, dtype=torch.int32, device=ctx.device)
    kw = dict(softmax_scale=1.0 / math.sqrt(prob.dim), is_causal=True, num_splits=1, cu_seqlens_q=i32([0, prob.L]),
              seqused_k=i32([prob.L]), max_seqlen_q=prob.L, pack_gqa=True)
    if prob.peer_dtype == "fp8":
        per_head = lambda x: torch.full((1, prob.hkv), x, dtype=torch.float32, device=ctx.device)
        kw.update(q_descale=per_head(scales[0]), k_descale=per_head(scales[1]), v_descale=per_head(scales[2]))
    return fwd, kw, operands, scales, values


def fpv2_kernel_setup(ctx):
    prob = ctx.prob
    fwd, kw, (q, k, v), _, values = fpv2_common(ctx)
    import torch
    cu, tiles = fpv2_tiles(ctx.offsets.tolist(), ctx.indices.tolist(), prob.block, prob.L)
    i32 = lambda x: torch.tensor(x, dtype=torch.int32, device=ctx.device)
    kw.update(block_sparse_cu=i32(cu), block_sparse_idx=i32(tiles), total_q_tiles=prob.ntiles,
              cu_q_tiles=i32([0, prob.ntiles]))
    k1, v1 = k.unsqueeze(0), v.unsqueeze(0)       # [1, L, Hkv, D]: batch 1, TMA loads

    def fn():
        return fwd(q=q, k=k1, v=v1, **kw)[0]
    ref = ctx.cached(("index", prob.peer_dtype), lambda: reference_rows(
        *values, ctx.pos, ctx.head, prob, ctx.index_blocks()))
    info = {"pairs": "index", "versus": "attend_nocorr", "dtype": prob.peer_dtype, "tiles": len(tiles),
            "note": "FlashPrefill V2's block-sparse attention WITHOUT mean correction on fp2bench's index "
                    "(its 64-token tiles, the same PackGQA segments), TMA K/V"}
    return fn, info, ref


def fpv2_setup(ctx):
    """Its whole pass: the index builder on the same q/k, then the corrected attention on that index."""
    prob = ctx.prob
    fwd, kw, (q, k, v), scales, values = fpv2_common(ctx)
    import torch
    missing = [x for x in ("alpha", "sink", "window", "recent") if x not in prob.select]
    if missing:
        raise PeerSkip(f"the input's metadata has no {', '.join(missing)} (its index builder's parameters)")
    fbi = load_index_builder()
    L, hkv, d, dev = prob.L, prob.hkv, prob.dim, ctx.device
    kp, vp = k.view(L, 1, hkv, d), v.view(L, 1, hkv, d)     # pages of one token: its corrected path
    page_table = torch.arange(L, dtype=torch.int32, device=dev).view(1, L)
    ws = fbi.SparseIndexWorkspace(batch_size=1, num_kv_heads=hkv, head_dim=d, total_q_tiles=prob.ntiles,
                                  max_q_tiles=prob.ntiles, max_k_blocks=prob.nblocks, dtype=k.dtype, device=dev,
                                  cu_q_tiles=torch.empty(2, dtype=torch.int32, device=dev),
                                  n_sub=prob.block // FPV2_TILE, use_mean_correction=True, head_dim_v=d)
    sel = prob.select
    bkw = dict(v_cache=vp, k_block_m=prob.qtile, k_block_n=prob.block, abs_threshold=float(sel["alpha"]),
               attention_sink=int(sel["sink"]), window_size=int(sel["window"]), last_n_blocks=int(sel["recent"]),
               min_sparse_q_len=0, causal=True, softmax_scale=kw["softmax_scale"], q_descale=scales[0],
               k_descale=scales[1])

    def build():
        return fbi.build_block_sparse_index_fast(q, kp, page_table, kw["seqused_k"], kw["cu_seqlens_q"], ws, **bkw)

    def fn():
        cu, tiles, ntiles, cu_tiles = build()
        return fwd(q=q, k=kp, v=vp, page_table=page_table, block_sparse_cu=cu, block_sparse_idx=tiles,
                   total_q_tiles=ntiles, cu_q_tiles=cu_tiles, k_mean=ws.k_mean, v_mean=ws.v_mean,
                   mean_k_block_size=prob.block, **kw)[0]
    try:
        cu, tiles, _, _ = build()          # the builder is deterministic: fn() selects the same
        tiles = tiles[:int(cu[-1])]        # its workspace's buffer: the index is the first cu[-1]
    except Exception as e:
        raise PeerSkip(f"its index builder failed: {describe_error(e)}")
    allowed = allowed_table(prob, cu, tiles.long() * FPV2_TILE // prob.block, cu.device)  # its 64-token tiles as blocks
    g, M, B = prob.g, prob.qtile, prob.block
    # its correction: every unselected block before the tile's first position's block
    jend = lambda p, hq: ((p * g + hq % g) // M * M // g) // B
    means = (block_means(values[1], prob), block_means(values[2], prob), jend)
    ref = reference_rows(*values, ctx.pos, ctx.head, prob, ctx.index_blocks(allowed), means)
    pairs = index_pairs(allowed, prob)
    info = {"pairs": "counted", "pairs_count": pairs, "density": pairs / causal_pairs(L, prob.hq),
            "versus": "total", "dtype": prob.peer_dtype, "tiles": int(tiles.numel()),
            "builder": {k_: bkw[k_] for k_ in ("abs_threshold", "attention_sink", "window_size", "last_n_blocks")},
            "note": "FlashPrefill V2's whole pass: its Triton index builder on the same q/k, then its block-sparse "
                    "attention with mean correction (paged K/V of page size 1) on the index it built"}
    return fn, info, ref


def hpc_setup(ctx):
    prob = ctx.prob
    require_shape(prob, "HPC-Ops' block-sparse prefill", qtile=False)
    if prob.peer_dtype != "fp8":
        raise PeerSkip("HPC-Ops' block-sparse prefill is FP8 only (this run is bf16: --dtype fp8)")
    op = load_op("FP2_HPC_OPS_LIB", "HPC-Ops' hpc_peers_C library", "hpc",
                 "attention_with_kvcache_blocksparse_prefill_fp8")
    import torch
    (q, k, v), (sq, sk, sv), values = ctx.operands("fp8")
    L, hq, hkv, d, dev = prob.L, prob.hq, prob.hkv, prob.dim, ctx.device
    raw, pairs = hpc_mask(ctx.offsets.tolist(), ctx.indices.tolist(), L, hkv, prob.g, prob.qtile)
    nqt = -(-L // HPC_BLOCK)
    mask = torch.frombuffer(raw, dtype=torch.uint8).view(1, hq, nqt, nqt).to(dev)
    padded = nqt * HPC_BLOCK                # K/V zero-filled to whole 128-key blocks, in pages of 64
    caches = []
    for x in (k, v):
        c = torch.zeros(padded, hkv, d, dtype=torch.uint8, device=dev)
        c[:L] = x.view(torch.uint8)
        caches.append(c.view(x.dtype).view(padded // HPC_PAGE, HPC_PAGE, hkv, d))
    f32 = lambda shape, x: torch.full(shape, x, dtype=torch.float32, device=dev)
    i32 = lambda x: torch.tensor(x, dtype=torch.int32, device=dev)
    qscale, kscale, vscale = f32((1, hq, padded), sq), f32((1,), sk), f32((1,), sv)
    cu, seqlens = i32([0, L]), i32([L])
    block_ids = torch.arange(padded // HPC_PAGE, dtype=torch.int32, device=dev).view(1, -1)

    def fn():   # quant_type 1: q per token and head, k and v per tensor (its Python API's default)
        return op(q, caches[0], caches[1], qscale, kscale, vscale, cu, block_ids, seqlens, L, 1, mask, None)
    blocks = lambda p, hq_, h: mask[0, hq_, p // HPC_BLOCK, :prob.nblocks].bool()
    ref = reference_rows(*values, ctx.pos, ctx.head, prob, blocks)
    info = {"pairs": "counted", "pairs_count": pairs, "density": pairs / causal_pairs(L, hq),
            "versus": "attend_nocorr", "dtype": "fp8", "quant_type": 1, "page_size": HPC_PAGE,
            "note": "HPC-Ops' block-sparse FP8 prefill (no correction) on fp2bench's index as its uint8 mask per "
                    "query head and 128-position tile: the union of the PackGQA tiles that cover it (denser)"}
    return fn, info, ref


BLOCK_SPARSE = {"fpv2": fpv2_setup, "fpv2_kernel": fpv2_kernel_setup, "hpc": hpc_setup}


def run_peer(name, ctx, args, trials, flush, log):
    """-> the peer's JSON entry, or raises PeerSkip."""
    import torch
    t0 = time.perf_counter()
    if name in BLOCK_SPARSE:
        fn, info, ref = BLOCK_SPARSE[name](ctx)
        hold = contextlib.nullcontext
        tol = TOLERANCE_FP8 if info["dtype"] == "fp8" else TOLERANCE
        rel, worst, n = checked_call(ctx, fn, hold, ref, tol, lhd=True)
    elif name == "flex":
        fn, info, hold = flex_setup(ctx)
        rel, worst, n = checked_call(ctx, fn, hold, ctx.reference(True))
        info["first_call_s"] = round(time.perf_counter() - t0 - info["block_mask"]["build_s"], 3)
        info.update(pairs="index", versus="total")
    else:
        backend = "FLASH_ATTENTION" if name == "fa2" else "CUDNN_ATTENTION"
        modes = ["enable_gqa", "expanded"] if ctx.prob.g > 1 else ["enable_gqa"]
        failures = []
        for mode in modes:
            try:
                fn, info, hold = sdpa_setup(ctx, backend, mode)
                rel, worst, n = checked_call(ctx, fn, hold, ctx.reference(False))
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
        info.update(pairs="causal", versus="total")
    times = time_calls(fn, hold, args.warmup, trials, flush)
    entry = {"name": name, "trials_ms": times, "checked_rows": n, "max_rel_err": worst, "rel_l2_err": rel}
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
                          "tolerance_fp8": TOLERANCE_FP8,
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
    return run_main("peers.py", run, build_parser().parse_args(argv), describe_error)


if __name__ == "__main__":
    sys.exit(main())
