#!/usr/bin/env python3
"""test_record_qkv.py: end-to-end test of experiments/record_qkv.py on the tiny random model.

Runs record_qkv.py --tiny-random in subprocesses (f32 and bf16 on the CPU, and on CUDA when
present), reads the .safetensors files back with its own reader, and checks:
  - tensor names, shapes, dtypes and metadata; values finite and not all zero;
  - q, k, v are post-RoPE and before GQA expansion: they equal q_proj/k_proj/v_proj of the
    layer's input with the rotary embedding applied by hand (theta from the config), and k
    differs from the un-rotated projection;
  - the recorded tensors reproduce the layer's attention: softmax(q k^T / sqrt(D)) v with
    GQA (query head h uses KV head h // g) and a causal mask, in float64, equals the input
    of the layer's o_proj in an independent eager run of the same model, and the attention
    output saved by the recorder;
  - bf16 files are the f32 values rounded; errors (layer out of range, a model that cannot
    be loaded) give exit code 2 and one line, no traceback.
Exit codes: 0 all passed, 1 a check failed, 77 skipped (torch or transformers missing).
"""
import importlib.util
import json
import math
import os
import struct
import subprocess
import sys
import tempfile

SKIP = 77
HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "record_qkv.py")
L = 200            # not a multiple of the 128-token block on purpose
SEED = 7
LAYERS = [0, 1]
HQ, HKV, D = 8, 2, 32

sys.path.insert(0, HERE)
from checks import check, finish  # noqa: E402


# ------------------------------------------------------------------ a minimal safetensors reader

def read_safetensors(path):
    """-> (tensors: name -> torch tensor, metadata: dict, problems: list of str)."""
    import torch
    dtypes = {"BF16": (torch.bfloat16, 2), "F16": (torch.float16, 2), "F32": (torch.float32, 4),
              "I32": (torch.int32, 4), "I64": (torch.int64, 8)}
    problems = []
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 8:
        return {}, {}, ["file shorter than 8 bytes"]
    (n,) = struct.unpack("<Q", data[:8])
    if 8 + n > len(data):
        return {}, {}, [f"header length {n} runs past the end of the file"]
    header = json.loads(data[8:8 + n].decode("utf-8"))
    meta = header.pop("__metadata__", {}) or {}
    base = 8 + n
    out, spans = {}, []
    for name, h in header.items():
        if h["dtype"] not in dtypes:
            problems.append(f"{name}: unexpected dtype {h['dtype']}")
            continue
        dt, size = dtypes[h["dtype"]]
        b, e = h["data_offsets"]
        count = 1
        for s in h["shape"]:
            count *= s
        if e - b != count * size:
            problems.append(f"{name}: {e - b} bytes for shape {h['shape']} {h['dtype']}")
            continue
        spans.append((b, e))
        buf = bytearray(data[base + b:base + e])
        t = torch.frombuffer(buf, dtype=dt) if count else torch.empty(0, dtype=dt)
        out[name] = t.reshape(h["shape"]).clone()
        out[name].st_dtype = h["dtype"]
    spans.sort()
    pos = 0
    for b, e in spans:
        if b != pos:
            problems.append(f"data offsets leave a gap or overlap at byte {pos}")
        pos = e
    if base + pos != len(data):
        problems.append(f"data ends at {base + pos}, file has {len(data)} bytes")
    return out, meta, problems


# ------------------------------------------------------------------ helpers

def run_recorder(out_dir, *extra, env_extra=None):
    env = dict(os.environ)
    env.update({"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"})
    if env_extra:
        env.update(env_extra)
    cmd = [sys.executable, SCRIPT, "--out-dir", out_dir, "--seed", str(SEED), *extra]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
    return p.returncode, p.stdout, p.stderr


def load_dir(d):
    files = {}
    if not os.path.isdir(d):
        return files
    for name in sorted(os.listdir(d)):
        if name.endswith(".safetensors"):
            t, meta, probs = read_safetensors(os.path.join(d, name))
            files[int(meta.get("layer", -1))] = (name, t, meta, probs)
    return files


def rel_max(a, b):
    a, b = a.double(), b.double()
    return float((a - b).abs().max() / b.abs().max().clamp_min(1e-30))


def rel_l2(a, b):
    a, b = a.double(), b.double()
    return float((a - b).norm() / b.norm().clamp_min(1e-30))


def rotate_half(x):
    h = x.shape[-1] // 2
    return __import__("torch").cat((-x[..., h:], x[..., :h]), dim=-1)


def rope_by_hand(x, theta):
    """x [L, H, D] float64 -> rotated, the half-split (rotate_half) convention of Llama."""
    import torch
    n, _, d = x.shape
    inv = 1.0 / (theta ** (torch.arange(0, d, 2, dtype=torch.float64) / d))
    ang = torch.arange(n, dtype=torch.float64)[:, None] * inv[None, :]
    emb = torch.cat((ang, ang), dim=-1)
    cos, sin = emb.cos()[:, None, :], emb.sin()[:, None, :]
    return x * cos + rotate_half(x) * sin


def attention_by_hand(q, k, v):
    """Causal softmax(q k^T / sqrt(D)) v with GQA, float64. q [L, Hq, D], k/v [L, Hkv, D]."""
    import torch
    q, k, v = q.double(), k.double(), v.double()
    n, hq, d = q.shape
    g = hq // k.shape[1]
    kk = k.repeat_interleave(g, dim=1)   # query head h -> KV head h // g
    vv = v.repeat_interleave(g, dim=1)
    s = torch.einsum("qhd,khd->hqk", q, kk) / math.sqrt(d)
    causal = torch.ones(n, n, dtype=torch.bool).tril()
    s = s.masked_fill(~causal, float("-inf"))
    p = torch.softmax(s, dim=-1)
    return torch.einsum("hqk,khd->qhd", p, vv)


def load_recorder_module():
    spec = importlib.util.spec_from_file_location("record_qkv", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def reference_run(rq):
    """Independent eager run of the same tiny model: per layer, the attention input x
    [L, hidden], the o_proj input [L, Hq, D], and the projection weights."""
    import torch
    model = rq.build_tiny_model(SEED)
    rq.set_attention(model, "eager")
    ids = rq.random_token_ids(model.config.vocab_size, L, SEED)
    cap = {}
    hooks = []
    for i in LAYERS:
        attn = model.model.layers[i].self_attn

        def pre_attn(mod, args, kwargs, i=i):
            h = kwargs.get("hidden_states", args[0] if args else None)
            cap[("x", i)] = h.detach().clone()

        def pre_o(mod, args, i=i):
            cap[("o", i)] = args[0].detach().clone()

        hooks.append(attn.register_forward_pre_hook(pre_attn, with_kwargs=True))
        hooks.append(attn.o_proj.register_forward_pre_hook(pre_o))
    with torch.no_grad():
        model(input_ids=torch.tensor([ids]), use_cache=False)
    for h in hooks:
        h.remove()
    return model, cap


# ------------------------------------------------------------------ the test

def main():
    try:
        import torch
        import transformers
    except Exception as e:
        print(f"test_record_qkv: skipped: torch or transformers is not importable ({e.__class__.__name__}: {e})")
        return SKIP
    try:
        from transformers.modeling_utils import AttentionInterface  # noqa: F401
    except Exception:
        print(f"test_record_qkv: skipped: transformers {transformers.__version__} has no AttentionInterface (needs >= 4.48)")
        return SKIP
    print(f"test_record_qkv: torch {torch.__version__}, transformers {transformers.__version__}")

    tmp = tempfile.mkdtemp(prefix="fp2bench-record-")
    d32, d16 = os.path.join(tmp, "f32"), os.path.join(tmp, "bf16")
    layers_arg = ",".join(map(str, LAYERS))

    # 1. record: f32 with the attention output, and bf16 (the default)
    rc, _, err = run_recorder(d32, "--tiny-random", "--len", str(L), "--layers", layers_arg,
                              "--dtype", "f32", "--device", "cpu", "--save-attn-output")
    if not check(rc == 0, "record f32 on cpu exits 0", f"rc {rc}: {err.strip()[-2000:]}"):
        return finish()
    rc, _, err = run_recorder(d16, "--tiny-random", "--len", str(L), "--layers", layers_arg, "--device", "cpu")
    check(rc == 0, "record bf16 on cpu exits 0", f"rc {rc}: {err.strip()[-2000:]}")

    f32, f16 = load_dir(d32), load_dir(d16)
    check(sorted(f32) == LAYERS, "one f32 file per layer", f"layers {sorted(f32)}")
    check(sorted(f16) == LAYERS, "one bf16 file per layer", f"layers {sorted(f16)}")

    # 2. names, shapes, dtypes, metadata, values
    for layer in LAYERS:
        for label, files, names, dtype in (("f32", f32, {"q", "k", "v", "attn_out"}, "F32"),
                                           ("bf16", f16, {"q", "k", "v"}, "BF16")):
            if layer not in files:
                continue
            fname, t, meta, probs = files[layer]
            check(not probs, f"{label} layer {layer}: file structure", "; ".join(probs))
            check(fname == f"tiny-random-llama_L{L}_layer{layer:02d}.safetensors", f"{label} layer {layer}: file name", fname)
            check(set(t) == names, f"{label} layer {layer}: tensor names", f"{sorted(t)}")
            want = {"q": [L, HQ, D], "k": [L, HKV, D], "v": [L, HKV, D], "attn_out": [L, HQ, D]}
            for name in names & set(t):
                check(list(t[name].shape) == want[name], f"{label} layer {layer}: shape of {name}", f"{list(t[name].shape)}")
                want_dt = "F32" if name == "attn_out" else dtype
                check(t[name].st_dtype == want_dt, f"{label} layer {layer}: dtype of {name}", t[name].st_dtype)
                x = t[name].float()
                check(bool(torch.isfinite(x).all()), f"{label} layer {layer}: {name} finite")
                check(float(x.abs().max()) > 0, f"{label} layer {layer}: {name} not all zero")
            if "k" in t:
                check(float((t["k"][1:] - t["k"][:1]).abs().max()) > 0, f"{label} layer {layer}: k varies with position")
            rope = json.loads(meta.get("rope", "{}") or "{}")
            check(meta.get("format") == "fp2bench-qkv" and meta.get("layer") == str(layer)
                  and meta.get("length") == str(L) and meta.get("hq") == str(HQ) and meta.get("hkv") == str(HKV)
                  and meta.get("head_dim") == str(D) and meta.get("model") == "tiny-random-llama"
                  and meta.get("dtype") == label,
                  f"{label} layer {layer}: metadata", json.dumps(meta)[:600])
            check(float(rope.get("rope_theta", 0)) > 0, f"{label} layer {layer}: rope theta in metadata", meta.get("rope"))
            sc = meta.get("scaling", "")
            try:
                sc_ok = abs(float(sc) - D ** -0.5) < 1e-9
            except ValueError:
                sc_ok = False
            check(sc_ok, f"{label} layer {layer}: scaling 1/sqrt(D) in metadata", sc)

    # 3. bf16 files hold the f32 values rounded to bf16
    for layer in LAYERS:
        if layer in f32 and layer in f16:
            for name in ("q", "k", "v"):
                a, b = f32[layer][1].get(name), f16[layer][1].get(name)
                if a is None or b is None:
                    continue
                err = (b.float() - a).abs()
                tol = a.abs() * 2.0 ** -7 + 1e-6
                check(bool((err <= tol).all()), f"layer {layer}: bf16 {name} is f32 {name} rounded",
                      f"worst {float((err - tol).max()):.3g} over tolerance")

    # 4. post-RoPE, pre-GQA, and the attention they reproduce, against an independent eager run
    rq = load_recorder_module()
    model, cap = reference_run(rq)
    rope = rq.rope_info(model.config)
    theta = float(rope.get("rope_theta", 10000.0))
    rtype = rope.get("rope_type", "default")
    check(rtype in (None, "default"), "tiny model uses the default rope", f"rope {rope}")
    for layer in LAYERS:
        if layer not in f32 or ("x", layer) not in cap:
            check(False, f"layer {layer}: reference capture", "missing")
            continue
        t = f32[layer][1]
        attn = model.model.layers[layer].self_attn
        x = cap[("x", layer)][0].double()                        # [L, hidden]

        def proj(lin, heads):
            y = x @ lin.weight.detach().double().T
            if lin.bias is not None:
                y = y + lin.bias.detach().double()
            return y.reshape(L, heads, D)

        q_raw, k_raw, v_ref = proj(attn.q_proj, HQ), proj(attn.k_proj, HKV), proj(attn.v_proj, HKV)
        q_ref, k_ref = rope_by_hand(q_raw, theta), rope_by_hand(k_raw, theta)
        e = rel_max(t["q"], q_ref)
        check(e < 2e-4, f"layer {layer}: recorded q = rope(q_proj(x))", f"rel max err {e:.3g}")
        e = rel_max(t["k"], k_ref)
        check(e < 2e-4, f"layer {layer}: recorded k = rope(k_proj(x)) [Hkv heads, before GQA expansion]", f"rel max err {e:.3g}")
        e = rel_max(t["v"], v_ref)
        check(e < 2e-4, f"layer {layer}: recorded v = v_proj(x)", f"rel max err {e:.3g}")
        e = rel_l2(t["k"][1:], k_raw[1:])
        check(e > 0.05, f"layer {layer}: recorded k is not the un-rotated projection (post-RoPE)", f"rel l2 diff {e:.3g}")

        o_hand = attention_by_hand(t["q"], t["k"], t["v"])
        o_model = cap[("o", layer)][0].reshape(L, HQ, D)
        e = rel_max(o_hand, o_model)
        check(e < 1e-4, f"layer {layer}: causal GQA attention of recorded q,k,v = the layer's attention output (eager run)",
              f"rel max err {e:.3g}")
        e = rel_max(t["attn_out"], o_hand)
        check(e < 1e-4, f"layer {layer}: saved attn_out = attention of recorded q,k,v", f"rel max err {e:.3g}")
        wrong = attention_by_hand(t["q"], t["k"][:, [1, 0]], t["v"][:, [1, 0]])
        check(rel_l2(wrong, o_model) > 1e-2, f"layer {layer}: swapping the KV heads breaks the match (the check has teeth)")

    # 5. the --model path (AutoConfig, from_pretrained with the capture implementation) on the
    #    same tiny model saved to a directory, and the --text path
    mdir = os.path.join(tmp, "tiny-model")
    model.save_pretrained(mdir)
    dm = os.path.join(tmp, "from-dir")
    rc, _, err = run_recorder(dm, "--model", mdir, "--random-tokens", "--len", str(L), "--layers", layers_arg,
                              "--dtype", "f32", "--device", "cpu", "--model-dtype", "f32")
    check(rc == 0, "record --model DIR (saved tiny model) exits 0", f"rc {rc}: {err.strip()[-2000:]}")
    fm = load_dir(dm)
    for layer in LAYERS:
        if layer in fm and layer in f32:
            name_ok = fm[layer][0] == f"tiny-model_L{L}_layer{layer:02d}.safetensors"
            check(name_ok and fm[layer][2].get("model") == mdir, f"layer {layer}: --model file name and metadata",
                  fm[layer][0])
            for name in ("q", "k", "v"):
                e = rel_max(fm[layer][1][name], f32[layer][1][name])
                check(e < 1e-5, f"layer {layer}: --model DIR {name} = --tiny-random {name}", f"rel max err {e:.3g}")
        else:
            check(False, f"layer {layer}: --model DIR file", f"have {sorted(fm)}")
    txt = os.path.join(tmp, "prompt.txt")
    with open(txt, "w", encoding="utf-8") as f:
        f.write("A needle in a haystack: the magic number is 7481. ")
    dt = os.path.join(tmp, "text")
    rc, _, err = run_recorder(dt, "--tiny-random", "--text", txt, "--len", "300", "--repeat-text", "--layers", "1",
                              "--device", "cpu")
    ft = load_dir(dt)
    check(rc == 0 and 1 in ft and ft[1][2].get("length") == "300" and list(ft[1][1]["q"].shape) == [300, HQ, D]
          and "repeated" in ft[1][2].get("input", ""), "record --text FILE --len 300 --repeat-text",
          f"rc {rc}: {err.strip()[-800:]}")
    rc, _, err = run_recorder(os.path.join(tmp, "text-short"), "--tiny-random", "--text", txt, "--len", "300",
                              "--layers", "1", "--device", "cpu")
    check(rc == 2 and "fewer than --len" in err and "Traceback" not in err,
          "text shorter than --len without --repeat-text: exit 2, clear message", f"rc {rc}: {err.strip()[-500:]}")

    # 6. errors: one line, exit code 2, no traceback
    rc, _, err = run_recorder(os.path.join(tmp, "bad1"), "--tiny-random", "--len", "16", "--layers", "0,2",
                              "--device", "cpu")
    check(rc == 2 and "out of range" in err and "Traceback" not in err,
          "layer out of range: exit 2, clear message", f"rc {rc}: {err.strip()[-500:]}")
    missing = os.path.join(tmp, "no-such-model")
    rc, _, err = run_recorder(os.path.join(tmp, "bad2"), "--model", missing, "--random-tokens", "--len", "16",
                              "--layers", "0", "--device", "cpu")
    check(rc == 2 and "cannot load model" in err and "Traceback" not in err,
          "model that cannot be loaded: exit 2, clear message", f"rc {rc}: {err.strip()[-500:]}")
    check(not load_dir(os.path.join(tmp, "bad2")), "no file written for a failed load")

    # 7. the fallback writer (used when the safetensors package is missing) writes files that
    #    this reader and, where installed, the safetensors package read back exactly
    gen = torch.Generator().manual_seed(3)
    sample = {"q": torch.randn(5, 3, 4, generator=gen).to(torch.bfloat16),
              "k": torch.randn(7, generator=gen), "idx": torch.arange(4, dtype=torch.int32).reshape(2, 2)}
    path = os.path.join(tmp, "fallback.safetensors")
    had = "safetensors.torch" in sys.modules
    saved = sys.modules.get("safetensors.torch")
    sys.modules["safetensors.torch"] = None          # makes `from safetensors.torch import ...` fail
    try:
        rq.write_safetensors(path, sample, {"format": "fp2bench-qkv", "note": "fallback writer"})
    finally:
        if had:
            sys.modules["safetensors.torch"] = saved
        else:
            del sys.modules["safetensors.torch"]
    back, meta, probs = read_safetensors(path)
    check(not probs and meta.get("note") == "fallback writer", "fallback writer: header and metadata", "; ".join(probs))
    check(set(back) == set(sample) and all(torch.equal(back[n], sample[n]) for n in sample if n in back),
          "fallback writer: tensors read back exactly")
    try:
        from safetensors import safe_open
    except Exception:
        safe_open = None
    if safe_open is not None:
        with safe_open(path, framework="pt") as f:
            same = set(f.keys()) == set(sample) and all(torch.equal(f.get_tensor(n), sample[n]) for n in sample)
            check(same and (f.metadata() or {}).get("note") == "fallback writer",
                  "fallback writer: the safetensors package reads it back exactly")

    # 8. CUDA, when present: f32 agrees with the CPU, bf16 compute (flash/cuDNN sdpa) is consistent
    if torch.cuda.is_available():
        dc32, dc16 = os.path.join(tmp, "cuda-f32"), os.path.join(tmp, "cuda-bf16")
        rc, _, err = run_recorder(dc32, "--tiny-random", "--len", str(L), "--layers", layers_arg,
                                  "--dtype", "f32", "--device", "cuda", "--save-attn-output")
        check(rc == 0, "record f32 on cuda exits 0", f"rc {rc}: {err.strip()[-2000:]}")
        rc, _, err = run_recorder(dc16, "--tiny-random", "--len", str(L), "--layers", layers_arg,
                                  "--device", "cuda", "--model-dtype", "bf16", "--save-attn-output")
        check(rc == 0, "record bf16 (bf16 compute) on cuda exits 0", f"rc {rc}: {err.strip()[-2000:]}")
        c32, c16 = load_dir(dc32), load_dir(dc16)
        for layer in LAYERS:
            if layer in c32 and layer in f32:
                for name in ("q", "k", "v", "attn_out"):
                    e = rel_l2(c32[layer][1][name], f32[layer][1][name])
                    check(e < 1e-3, f"layer {layer}: cuda f32 {name} = cpu f32 {name}", f"rel l2 {e:.3g}")
            if layer in c16 and layer in f32:
                t = c16[layer][1]
                for name in ("q", "k", "v"):
                    check(t[name].st_dtype == "BF16", f"layer {layer}: cuda bf16 {name} dtype", t[name].st_dtype)
                    e = rel_l2(t[name], f32[layer][1][name])
                    check(e < 5e-2, f"layer {layer}: cuda bf16-compute {name} close to cpu f32", f"rel l2 {e:.3g}")
                e = rel_l2(attention_by_hand(t["q"], t["k"], t["v"]), t["attn_out"])
                check(e < 2e-2, f"layer {layer}: cuda bf16 attn_out = attention of its recorded q,k,v", f"rel l2 {e:.3g}")
    else:
        print("note: no CUDA device; the cuda checks were not run")

    return finish()


def finish():
    return finish()


if __name__ == "__main__":
    sys.exit(main())
