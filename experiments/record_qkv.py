#!/usr/bin/env python3
"""record_qkv.py: record the post-RoPE q, k, v of chosen layers of a Hugging Face causal LM
into .safetensors files that fp2bench reads (DESIGN.md section 4).

One file per (sequence, layer), tensors named and laid out as fp2bench expects:
  q [L, Hq, D], k [L, Hkv, D], v [L, Hkv, D]   row-major, positions first,
                                              bf16 (default) or f32,
captured after the rotary embedding and before any grouped-query expansion, plus the
safetensors __metadata__ (model, layer, length, heads, rope parameters, scaling, input).
--save-attn-output adds `attn_out` [L, Hq, D] f32, the layer's attention output at capture
time (fp2bench ignores extra tensors; the test uses it).

How: a custom attention function is registered through transformers' AttentionInterface
(transformers >= 4.48). The model's attention layers call it with query [1, Hq, L, D] and
key/value [1, Hkv, L, D] after RoPE; it stores the tensors of the chosen layers
(module.layer_idx), delegates to the sdpa implementation, and stops the forward pass
once the last chosen layer has been recorded (so no logits over the whole prompt).

Examples:
  record_qkv.py --model meta-llama/Llama-3.1-8B-Instruct --layers 0,15,31 \\
      --text book.txt --len 64k --repeat-text --out-dir data/llama8b
  record_qkv.py --model Qwen/Qwen3-4B-Instruct-2507 --random-tokens --len 32k --seed 1 \\
      --layers 10 --out-dir data/qwen4b --dtype f32
  record_qkv.py --tiny-random --len 300 --layers 0,1 --out-dir /tmp/tiny   (no download)

Exit codes: 0 ok, 2 usage or unreadable input (bad option, layer out of range, model or
text that cannot be loaded), 3 runtime (torch/transformers missing or too old, CUDA error,
out of memory, capture failed).
"""
import argparse
import hashlib
import json
import os
import re
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # script_exit beside it, however loaded
from script_exit import EXIT_OK, EXIT_RUNTIME, EXIT_USAGE, RuntimeFailure, UsageError, run_main  # noqa: E402

CAPTURE_NAME = "fp2bench_record"   # no "/" (hub kernel syntax), no "sdpa"/"flash" in the name
FORMAT_NAME = "fp2bench-qkv"
FORMAT_VERSION = "1"
TINY_NAME = "tiny-random-llama"
# The tiny model: Llama-style with GQA, 2 layers, hidden 256, 8 query heads, 2 KV heads, head dim 32.
TINY = dict(vocab_size=1024, hidden_size=256, intermediate_size=512, num_hidden_layers=2,
            num_attention_heads=8, num_key_value_heads=2, head_dim=32)


class _StopForward(Exception):
    """Raised inside the model once every chosen layer is recorded."""


def parse_size(text):
    """1000, 4k, 128k, 1m -> int (k = 1024, m = 1024*1024)."""
    m = re.fullmatch(r"\s*(\d+)\s*([kKmM]?)\s*", text)
    if not m:
        raise argparse.ArgumentTypeError(f"'{text}' is not a size (examples: 300, 4k, 128k)")
    n = int(m.group(1)) * {"": 1, "k": 1024, "m": 1024 * 1024}[m.group(2).lower()]
    if n <= 0:
        raise argparse.ArgumentTypeError(f"'{text}' must be positive")
    return n


def parse_layers(text):
    try:
        layers = sorted({int(x) for x in text.split(",") if x.strip() != ""})
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a comma-separated list of layer indices")
    if not layers:
        raise argparse.ArgumentTypeError("no layer given")
    return layers


def build_parser():
    p = argparse.ArgumentParser(
        prog="record_qkv.py",
        description="Record post-RoPE q, k, v of chosen layers of a Hugging Face causal LM "
                    "into .safetensors files for fp2bench (q [L,Hq,D], k/v [L,Hkv,D]).")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--model", metavar="NAME_OR_PATH", help="Hugging Face model id or local directory")
    src.add_argument("--tiny-random", action="store_true",
                     help="build a tiny randomly initialised Llama-style GQA model (2 layers, hidden 256, "
                          "8 heads, 2 KV heads, head dim 32); no download")
    p.add_argument("--layers", type=parse_layers, default=[0], metavar="I[,I...]",
                   help="layer indices to record (default: 0)")
    inp = p.add_mutually_exclusive_group()
    inp.add_argument("--text", metavar="FILE", help="prompt text file (tokenised with the model's tokenizer; "
                     "with --tiny-random its UTF-8 bytes are the token ids)")
    inp.add_argument("--random-tokens", action="store_true", help="uniform random token ids (needs --len)")
    p.add_argument("--len", type=parse_size, metavar="N", dest="length",
                   help="sequence length: 300, 4k, 64k (with --text: cut the prompt to N tokens)")
    p.add_argument("--repeat-text", action="store_true",
                   help="with --text and --len: repeat the text until it has N tokens")
    p.add_argument("--seed", type=int, default=0, help="seed of the random tokens and of the tiny model (default 0)")
    p.add_argument("--out-dir", required=True, metavar="DIR", help="directory for the .safetensors files")
    p.add_argument("--dtype", choices=["bf16", "f32"], default="bf16", help="dtype of the stored tensors (default bf16)")
    p.add_argument("--device", choices=["cuda", "cpu"], default=None,
                   help="where the model runs (default: cuda when available, else cpu)")
    p.add_argument("--model-dtype", choices=["bf16", "f16", "f32"], default=None,
                   help="dtype the model computes in (default: bf16 on cuda and f32 on cpu for --model, f32 for --tiny-random)")
    p.add_argument("--save-attn-output", action="store_true",
                   help="also store `attn_out` [L, Hq, D] f32, the layer's attention output")
    p.add_argument("--trust-remote-code", action="store_true", help="pass trust_remote_code=True to transformers")
    p.add_argument("--debug", action="store_true", help="show Python tracebacks")
    return p


# ---------------------------------------------------------------------------------------------
# Pieces the test reuses (they import torch/transformers lazily, so --help works without them).

def import_stack():
    """Import torch and transformers, or fail with one line."""
    try:
        import torch  # noqa: F401
    except Exception as e:  # ImportError, or a broken install
        raise RuntimeFailure(f"cannot import torch ({e.__class__.__name__}: {e}); install torch and transformers")
    try:
        import transformers  # noqa: F401
    except Exception as e:
        raise RuntimeFailure(f"cannot import transformers ({e.__class__.__name__}: {e}); install transformers >= 4.48")
    try:
        from transformers.modeling_utils import AttentionInterface  # noqa: F401
    except Exception:
        import transformers as t
        raise RuntimeFailure(f"transformers {t.__version__} has no AttentionInterface; transformers >= 4.48 is needed")


def torch_dtype(name):
    import torch
    return {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}[name]


def build_tiny_model(seed, max_len=4096):
    """The tiny Llama-style GQA model, its weights drawn from `seed` (same seed, same weights,
    whatever transformers does at init). float32, on the CPU, eval mode."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM
    cfg = LlamaConfig(**TINY, max_position_embeddings=max(4096, int(max_len)), rms_norm_eps=1e-6,
                      tie_word_embeddings=False, attention_bias=False, mlp_bias=False)
    torch.manual_seed(seed)
    model = LlamaForCausalLM(cfg)
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in sorted(model.named_parameters(), key=lambda kv: kv[0]):
            if p.ndim == 1:   # RMSNorm weights (no biases in this model)
                p.fill_(1.0)
            else:             # embeddings 0.02; linear layers 1/sqrt(fan_in), so q.k/sqrt(D) is O(1)
                std = 0.02 if "embed" in name else p.shape[1] ** -0.5
                p.copy_(torch.randn(tuple(p.shape), generator=gen, dtype=torch.float32) * std)
    return model.float().eval()


def random_token_ids(vocab_size, length, seed):
    import torch
    gen = torch.Generator().manual_seed(seed)
    return torch.randint(0, int(vocab_size), (int(length),), generator=gen, dtype=torch.long).tolist()


def set_attention(model, name):
    """Switch a loaded model to attention implementation `name`; True when it took effect."""
    setter = getattr(model, "set_attn_implementation", None)
    if setter is not None:
        try:
            setter(name)
        except Exception:
            pass  # fall through to the config attribute
    if getattr(model.config, "_attn_implementation", None) != name:
        try:
            model.config._attn_implementation = name
        except Exception:
            model.config._attn_implementation_internal = name
    return getattr(model.config, "_attn_implementation", None) == name


def text_config(config):
    get = getattr(config, "get_text_config", None)
    if get is not None:
        try:
            return get()
        except Exception:
            pass
    return config


def rope_info(config):
    """Rotary parameters as a JSON-able dict, from transformers 5 (`rope_parameters`) or 4
    (`rope_theta`, `rope_scaling`) configs."""
    cfg = text_config(config)
    info = {}
    rp = getattr(cfg, "rope_parameters", None)
    if isinstance(rp, dict) and rp:
        info.update(rp)
    else:
        theta = getattr(cfg, "rope_theta", None)
        if theta is not None:
            info["rope_theta"] = theta
        scaling = getattr(cfg, "rope_scaling", None)
        if scaling:
            info["rope_scaling"] = scaling
        info.setdefault("rope_type", (scaling or {}).get("rope_type", (scaling or {}).get("type", "default")))
    prf = getattr(cfg, "partial_rotary_factor", None)
    if prf is not None and "partial_rotary_factor" not in info:
        info["partial_rotary_factor"] = prf
    return json.loads(json.dumps(info, default=str))


def num_layers(config):
    cfg = text_config(config)
    for attr in ("num_hidden_layers", "n_layer", "num_layers"):
        n = getattr(cfg, attr, None)
        if isinstance(n, int):
            return n
    return None


# ---------------------------------------------------------------------------------------------
# safetensors output

_ST_NAMES = None


def _st_dtype_name(t):
    import torch
    global _ST_NAMES
    if _ST_NAMES is None:
        _ST_NAMES = {torch.bfloat16: "BF16", torch.float16: "F16", torch.float32: "F32", torch.int32: "I32",
                     torch.int64: "I64"}
    return _ST_NAMES[t.dtype]


def _tensor_bytes(t):
    import torch
    u8 = t.contiguous().view(torch.uint8) if t.dim() > 0 else t.reshape(1).view(torch.uint8)
    try:
        return u8.numpy().tobytes()
    except Exception:  # torch without numpy
        return bytes(u8.flatten().tolist())


def write_safetensors(path, tensors, metadata):
    """Write `tensors` (name -> CPU tensor) and `metadata` (str -> str) as a .safetensors file:
    8-byte little-endian header length, JSON header (padded with spaces to 8 bytes), raw data.
    Uses the safetensors package when importable, else this writer."""
    tensors = {k: v.detach().cpu().contiguous() for k, v in tensors.items()}
    tmp = path + ".part"
    try:
        from safetensors.torch import save_file
    except Exception:
        save_file = None
    if save_file is not None:
        save_file(tensors, tmp, metadata=metadata)
    else:
        if sys.byteorder != "little":
            raise RuntimeFailure("this writer needs a little-endian host (install the safetensors package)")
        header, offset = {}, 0
        for name, t in tensors.items():
            n = t.numel() * t.element_size()
            header[name] = {"dtype": _st_dtype_name(t), "shape": list(t.shape), "data_offsets": [offset, offset + n]}
            offset += n
        header["__metadata__"] = metadata
        h = json.dumps(header, separators=(",", ":")).encode("utf-8")
        h += b" " * (-len(h) % 8)
        with open(tmp, "wb") as f:
            f.write(struct.pack("<Q", len(h)))
            f.write(h)
            for t in tensors.values():
                f.write(_tensor_bytes(t))
    os.replace(tmp, path)


# ---------------------------------------------------------------------------------------------
# capture

class Recorder:
    """Receives the attention calls; writes one file per chosen layer as soon as it is seen."""

    def __init__(self, layers, out_dtype, save_output, write):
        self.wanted = set(layers)
        self.last = max(layers)
        self.out_dtype = out_dtype
        self.save_output = save_output
        self.write = write          # callable(layer, tensors, extra_metadata)
        self.done = set()
        self.layerless_calls = 0

    def __call__(self, module, query, key, value, out, kwargs):
        layer = getattr(module, "layer_idx", None)
        if layer is None:
            self.layerless_calls += 1
            return
        layer = int(layer)
        if layer not in self.wanted or layer in self.done:
            return
        if query.dim() != 4 or key.dim() != 4 or value.dim() != 4:
            raise RuntimeFailure(f"layer {layer}: expected 4-d query/key/value, got {tuple(query.shape)}, "
                                 f"{tuple(key.shape)}, {tuple(value.shape)}")
        b, hq, L, d = query.shape
        if b != 1:
            raise RuntimeFailure(f"layer {layer}: expected one sequence, got batch {b}")
        if key.shape[2] != L:
            raise RuntimeFailure(f"layer {layer}: key length {key.shape[2]} differs from query length {L} "
                                 "(a cache in use?)")
        # [1, H, L, D] -> [L, H, D], converted on the device, then copied to the host
        tensors = {
            "q": query[0].transpose(0, 1).to(self.out_dtype).contiguous().cpu(),
            "k": key[0].transpose(0, 1).to(self.out_dtype).contiguous().cpu(),
            "v": value[0].transpose(0, 1).to(self.out_dtype).contiguous().cpu(),
        }
        if self.save_output:
            o = out[0] if isinstance(out, (tuple, list)) else out
            o = o[0]
            if tuple(o.shape[:2]) != (L, hq):    # sdpa returns [b, L, H, D]; accept [b, H, L, D] too
                o = o.transpose(0, 1)
            tensors["attn_out"] = o.float().contiguous().cpu()
        scaling = kwargs.get("scaling", getattr(module, "scaling", None))
        extra = {
            "scaling": repr(float(scaling)) if scaling is not None else "default (1/sqrt(head_dim))",
            "sliding_window": str(kwargs.get("sliding_window")) if kwargs.get("sliding_window") else "none",
        }
        self.write(layer, tensors, extra)
        self.done.add(layer)
        if self.done == self.wanted:
            raise _StopForward()


_recorder = None   # the Recorder the registered function reports to (None: plain sdpa)


def install_capture():
    """Register the capture function (and the sdpa mask builder) under CAPTURE_NAME. Done
    before a model is loaded, so that from_pretrained accepts the name."""
    from transformers.modeling_utils import AttentionInterface, ALL_ATTENTION_FUNCTIONS
    try:
        sdpa = ALL_ATTENTION_FUNCTIONS["sdpa"]
    except KeyError:
        from transformers.integrations.sdpa_attention import sdpa_attention_forward as sdpa

    def fp2bench_record(module, query, key, value, attention_mask, *args, **kwargs):
        out = sdpa(module, query, key, value, attention_mask, *args, **kwargs)
        if _recorder is not None:
            _recorder(module, query, key, value, out, kwargs)
        return out

    AttentionInterface.register(CAPTURE_NAME, fp2bench_record)
    try:  # transformers >= 4.53 builds masks per implementation; use sdpa's for ours
        from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS
        ALL_MASK_ATTENTION_FUNCTIONS.register(CAPTURE_NAME, ALL_MASK_ATTENTION_FUNCTIONS["sdpa"])
    except Exception:
        pass  # older versions build the mask themselves; a missing entry means no mask (sdpa is_causal)


# ---------------------------------------------------------------------------------------------

def slug(name):
    base = os.path.basename(os.path.normpath(name)) or name
    return re.sub(r"[^A-Za-z0-9._-]+", "-", base).strip("-") or "model"


def check_layers(layers, n, model_name):
    bad = [i for i in layers if i < 0 or (n is not None and i >= n)]
    if bad:
        have = f"{n} layers (0..{n - 1})" if n else "an unknown number of layers"
        raise UsageError(f"layer {bad[0]} out of range: '{model_name}' has {have}")


def load_model(args, device):
    import transformers
    from transformers import AutoConfig, AutoModelForCausalLM
    model_dtype = torch_dtype(args.model_dtype or ("bf16" if device == "cuda" else "f32"))
    try:
        config = AutoConfig.from_pretrained(args.model, trust_remote_code=args.trust_remote_code)
    except Exception as e:
        raise UsageError(f"cannot load model '{args.model}': {first_line(e)}")
    check_layers(args.layers, num_layers(config), args.model)
    ver = tuple(int(x) for x in re.findall(r"\d+", transformers.__version__)[:2])
    dtype_kw = "dtype" if ver >= (4, 56) else "torch_dtype"
    kwargs = {dtype_kw: model_dtype, "trust_remote_code": args.trust_remote_code,
              "attn_implementation": CAPTURE_NAME}
    try:
        try:
            model = AutoModelForCausalLM.from_pretrained(args.model, **kwargs)
        except ValueError as e:
            if CAPTURE_NAME not in str(e) and "attn_implementation" not in str(e):
                raise
            kwargs.pop("attn_implementation")   # switch after loading instead
            model = AutoModelForCausalLM.from_pretrained(args.model, **kwargs)
    except (UsageError, RuntimeFailure):
        raise
    except Exception as e:
        raise UsageError(f"cannot load model '{args.model}': {first_line(e)}")
    model = model.to(device).eval()
    return model, config, model_dtype


def first_line(e):
    s = str(e).strip().splitlines()
    return (s[0] if s else e.__class__.__name__)[:400]


def tokens_from_args(args, model_name, vocab_size):
    """The prompt's token ids and a description of where they came from."""
    if args.random_tokens:
        if args.length is None:
            raise UsageError("--random-tokens needs --len")
        return random_token_ids(vocab_size, args.length, args.seed), f"random tokens, seed {args.seed}, vocab {vocab_size}"
    if args.text is None:
        if args.tiny_random and args.length is not None:
            return random_token_ids(vocab_size, args.length, args.seed), f"random tokens, seed {args.seed}, vocab {vocab_size}"
        raise UsageError("give --text FILE or --random-tokens with --len")
    try:
        with open(args.text, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError as e:
        raise UsageError(f"cannot open '{args.text}': {e.strerror.lower() if e.strerror else e}")
    if args.tiny_random:
        ids = list(text.encode("utf-8"))
        how = f"text '{args.text}' as UTF-8 bytes"
    else:
        from transformers import AutoTokenizer
        try:
            tok = AutoTokenizer.from_pretrained(model_name, trust_remote_code=args.trust_remote_code)
        except Exception as e:
            raise UsageError(f"cannot load the tokenizer of '{model_name}': {first_line(e)}")
        ids = tok(text, add_special_tokens=True, return_attention_mask=False)["input_ids"]
        how = f"text '{args.text}'"
    if not ids:
        raise UsageError(f"'{args.text}' gives no tokens")
    if args.length is not None:
        if len(ids) < args.length:
            if not args.repeat_text:
                raise UsageError(f"'{args.text}' has {len(ids)} tokens, fewer than --len {args.length} "
                                 "(use --repeat-text or a longer text)")
            reps = -(-args.length // len(ids))
            ids = (ids * reps)
            how += f", repeated {reps} times"
        ids = ids[:args.length]
        how += f", first {args.length} tokens"
    return ids, how


def run(args):
    import_stack()
    import torch
    import transformers
    install_capture()

    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    if device == "cuda" and not torch.cuda.is_available():
        raise RuntimeFailure("--device cuda but torch sees no CUDA device")

    if args.tiny_random:
        if args.length is None and args.text is None:
            raise UsageError("--tiny-random needs --len (random tokens) or --text")
        model_name = TINY_NAME
        check_layers(args.layers, TINY["num_hidden_layers"], model_name)
        model = build_tiny_model(args.seed, max_len=max(args.length or 0, 4096))
        config = model.config
        mdt = torch_dtype(args.model_dtype or "f32")
        model = model.to(device)
        if mdt != torch.float32:   # parameters only: the rotary inv_freq buffer stays float32
            for p in model.parameters():
                p.data = p.data.to(mdt)
    else:
        model_name = args.model
        model, config, mdt = load_model(args, device)
    n = num_layers(config)

    vocab = getattr(text_config(config), "vocab_size", None)
    if not isinstance(vocab, int) or vocab <= 0:
        raise RuntimeFailure(f"'{model_name}' has no vocab_size in its config")
    ids, input_desc = tokens_from_args(args, model_name, vocab)
    L = len(ids)
    if args.tiny_random and max(ids) >= vocab:
        raise UsageError(f"token id {max(ids)} does not fit the tiny model's vocabulary of {vocab}")
    tokens_sha = hashlib.sha256(",".join(map(str, ids)).encode()).hexdigest()

    try:
        os.makedirs(args.out_dir, exist_ok=True)
    except OSError as e:
        raise UsageError(f"cannot create '{args.out_dir}': {e.strerror.lower() if e.strerror else e}")

    tcfg = text_config(config)
    rope = rope_info(config)
    out_dtype = torch_dtype(args.dtype)
    stem = slug(model_name)
    written = []

    def write(layer, tensors, extra):
        q, k, v = tensors["q"], tensors["k"], tensors["v"]
        meta = {
            "format": FORMAT_NAME, "format_version": FORMAT_VERSION,
            "model": model_name, "layer": str(layer), "num_layers": str(n),
            "length": str(q.shape[0]), "hq": str(q.shape[1]), "hkv": str(k.shape[1]),
            "head_dim": str(q.shape[2]), "value_dim": str(v.shape[2]),
            "rope": json.dumps(rope, sort_keys=True), "positions": f"0..{q.shape[0] - 1}",
            "layout": "q [L, Hq, D], k [L, Hkv, D], v [L, Hkv, D]; row-major, positions first; "
                      "post-RoPE, before GQA expansion (query head h uses KV head h // (Hq/Hkv))",
            "dtype": args.dtype, "model_dtype": str(mdt).replace("torch.", ""),
            "input": input_desc, "tokens_sha256": tokens_sha, "seed": str(args.seed),
            "attn_out": "present ([L, Hq, D] f32)" if "attn_out" in tensors else "absent",
            "device": device, "torch": torch.__version__, "transformers": transformers.__version__,
            "recorder": "experiments/record_qkv.py",
        }
        meta.update(extra)
        path = os.path.join(args.out_dir, f"{stem}_L{q.shape[0]}_layer{layer:02d}.safetensors")
        try:
            write_safetensors(path, tensors, meta)
        except OSError as e:
            raise RuntimeFailure(f"cannot write '{path}': {e.strerror.lower() if e.strerror else e}")
        written.append(path)
        print(f"record_qkv: wrote '{path}' (layer {layer}, q {list(q.shape)}, k {list(k.shape)}, "
              f"v {list(v.shape)}, {args.dtype})", file=sys.stderr)

    global _recorder
    recorder = Recorder(args.layers, out_dtype, args.save_attn_output, write)
    _recorder = recorder
    if not set_attention(model, CAPTURE_NAME):
        raise RuntimeFailure(f"'{model_name}' did not accept the attention implementation '{CAPTURE_NAME}'")

    input_ids = torch.tensor([ids], dtype=torch.long, device=device)
    try:
        with torch.inference_mode():
            model(input_ids=input_ids, use_cache=False)
    except _StopForward:
        pass
    except torch.cuda.OutOfMemoryError as e:
        raise RuntimeFailure(f"out of memory on {device} at length {L}: {first_line(e)}")
    if recorder.done != set(args.layers):
        missing = sorted(set(args.layers) - recorder.done)
        why = (" (its attention modules have no layer_idx)" if recorder.layerless_calls else
               "; its attention may not go through transformers' AttentionInterface")
        raise RuntimeFailure(f"no attention call was captured for layer(s) {missing} of '{model_name}'{why}")
    print(f"record_qkv: {len(written)} file(s), L = {L}, head_dim = {getattr(tcfg, 'head_dim', '?')}", file=sys.stderr)
    return EXIT_OK


def main(argv=None):
    args = build_parser().parse_args(argv)
    if args.repeat_text and (args.text is None or args.length is None):
        print("record_qkv: --repeat-text needs --text and --len", file=sys.stderr)
        return EXIT_USAGE
    return run_main("record_qkv", run, args, lambda e: f"{e.__class__.__name__}: {first_line(e)}")


if __name__ == "__main__":
    sys.exit(main())
