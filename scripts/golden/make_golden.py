#!/usr/bin/env python3
"""Golden vectors for whole-model parity tests: tiny GPT-2 and tiny Llama-style models written
in plain PyTorch, following Hugging Face transformers' modeling_gpt2.py / modeling_llama.py
(Conv1D weights [in, out] for GPT-2, Linear weights [out, in] for Llama, HF parameter names),
run in float64 on a fixed left-padded batch.

Writes, per model, into test/golden/<name>/:
  config.json            Hugging Face config
  model.safetensors      initial weights (HF names, F32)
  golden.safetensors     inputs, logits, loss, every parameter gradient (grad.<name>), the
                         clipped grad norm, and parameters after one clipped AdamW step (adamw.<name>)
  golden.json            the settings used (batch, AdamW hyper-parameters, tolerances hint)

Run with Debian's PyTorch:  /usr/bin/python3 scripts/golden/make_golden.py
"""
import json
import math
import os
import struct
import sys

import torch

torch.set_default_dtype(torch.float64)
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")

# One fixed batch for both models: B=3, T=7, left padding of 0, 2 and 5 tokens.
BATCH, SEQ = 3, 7
PADS = [0, 2, 5]
ADAMW = dict(lr=1e-2, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01)
MAX_GRAD_NORM = 1.0


def write_safetensors(path, tensors, metadata=None):
    header = {}
    if metadata:
        header["__metadata__"] = metadata
    offset = 0
    blobs = []
    for name in sorted(tensors):
        t = tensors[name].detach().to(torch.float32).contiguous()
        data = t.numpy().tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * ((8 - len(raw) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(raw)))
        f.write(raw)
        for b in blobs:
            f.write(b)


def attention_mask(pads, seq):
    """[B, 1, T, T] additive mask: key j visible to query i iff pad <= j <= i (as HF with left padding)."""
    m = torch.full((len(pads), 1, seq, seq), float("-inf"))
    for b, p in enumerate(pads):
        for i in range(seq):
            for j in range(p, i + 1):
                m[b, 0, i, j] = 0.0
    # Query rows that are padding see nothing; give them one visible key so softmax stays finite
    # (their outputs never reach the loss).
    for b, p in enumerate(pads):
        for i in range(min(p, seq)):
            m[b, 0, i, i] = 0.0
    return m


def positions(pads, seq):
    return torch.tensor([[max(t - p, 0) for t in range(seq)] for p in pads])


def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def gpt2_forward(p, cfg, ids, pads):
    B, T = ids.shape
    D, H = cfg["n_embd"], cfg["n_head"]
    Dh = D // H
    x = p["transformer.wte.weight"][ids] + p["transformer.wpe.weight"][positions(pads, T)]
    mask = attention_mask(pads, T)
    ln = lambda x, w, b: torch.nn.functional.layer_norm(x, (D,), p[w], p[b], cfg["layer_norm_epsilon"])
    for i in range(cfg["n_layer"]):
        pre = f"transformer.h.{i}."
        h = ln(x, pre + "ln_1.weight", pre + "ln_1.bias")
        qkv = h @ p[pre + "attn.c_attn.weight"] + p[pre + "attn.c_attn.bias"]
        q, k, v = qkv.split(D, dim=2)
        q, k, v = (t.view(B, T, H, Dh).transpose(1, 2) for t in (q, k, v))
        att = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(Dh) + mask, dim=-1)
        o = (att @ v).transpose(1, 2).reshape(B, T, D)
        x = x + o @ p[pre + "attn.c_proj.weight"] + p[pre + "attn.c_proj.bias"]
        h = ln(x, pre + "ln_2.weight", pre + "ln_2.bias")
        h = gelu_new(h @ p[pre + "mlp.c_fc.weight"] + p[pre + "mlp.c_fc.bias"])
        x = x + h @ p[pre + "mlp.c_proj.weight"] + p[pre + "mlp.c_proj.bias"]
    x = ln(x, "transformer.ln_f.weight", "transformer.ln_f.bias")
    return x @ p["transformer.wte.weight"].T


def gpt2_params(cfg, g):
    D, V, P, L = cfg["n_embd"], cfg["vocab_size"], cfg["n_positions"], cfg["n_layer"]
    F = cfg["n_inner"]
    r = lambda *s: torch.randn(*s, generator=g) * 0.1
    p = {"transformer.wte.weight": r(V, D), "transformer.wpe.weight": r(P, D)}
    for i in range(L):
        pre = f"transformer.h.{i}."
        p.update({
            pre + "ln_1.weight": 1 + r(D), pre + "ln_1.bias": r(D),
            pre + "attn.c_attn.weight": r(D, 3 * D), pre + "attn.c_attn.bias": r(3 * D),
            pre + "attn.c_proj.weight": r(D, D), pre + "attn.c_proj.bias": r(D),
            pre + "ln_2.weight": 1 + r(D), pre + "ln_2.bias": r(D),
            pre + "mlp.c_fc.weight": r(D, F), pre + "mlp.c_fc.bias": r(F),
            pre + "mlp.c_proj.weight": r(F, D), pre + "mlp.c_proj.bias": r(D),
        })
    p["transformer.ln_f.weight"] = 1 + r(D)
    p["transformer.ln_f.bias"] = r(D)
    return p


def rms_norm(x, w, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def llama_forward(p, cfg, ids, pads):
    B, T = ids.shape
    D, Hq, Hkv, Dh = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["head_dim"]
    eps = cfg["rms_norm_eps"]
    inv_freq = 1.0 / (cfg["rope_theta"] ** (torch.arange(0, Dh, 2).double() / Dh))
    freqs = positions(pads, T).double()[..., None] * inv_freq  # [B, T, Dh/2]
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos()[:, None], emb.sin()[:, None]  # [B, 1, T, Dh]
    mask = attention_mask(pads, T)
    x = p["model.embed_tokens.weight"][ids]
    for i in range(cfg["num_hidden_layers"]):
        pre = f"model.layers.{i}."
        h = rms_norm(x, p[pre + "input_layernorm.weight"], eps)
        q = (h @ p[pre + "self_attn.q_proj.weight"].T).view(B, T, Hq, Dh).transpose(1, 2)
        k = (h @ p[pre + "self_attn.k_proj.weight"].T).view(B, T, Hkv, Dh).transpose(1, 2)
        v = (h @ p[pre + "self_attn.v_proj.weight"].T).view(B, T, Hkv, Dh).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        rep = Hq // Hkv
        k = k.repeat_interleave(rep, dim=1)
        v = v.repeat_interleave(rep, dim=1)
        att = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(Dh) + mask, dim=-1)
        o = (att @ v).transpose(1, 2).reshape(B, T, Hq * Dh)
        x = x + o @ p[pre + "self_attn.o_proj.weight"].T
        h = rms_norm(x, p[pre + "post_attention_layernorm.weight"], eps)
        gate = h @ p[pre + "mlp.gate_proj.weight"].T
        up = h @ p[pre + "mlp.up_proj.weight"].T
        x = x + (torch.nn.functional.silu(gate) * up) @ p[pre + "mlp.down_proj.weight"].T
    x = rms_norm(x, p["model.norm.weight"], eps)
    return x @ p["lm_head.weight"].T


def llama_params(cfg, g):
    D, V, L, F = cfg["hidden_size"], cfg["vocab_size"], cfg["num_hidden_layers"], cfg["intermediate_size"]
    Hq, Hkv, Dh = cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["head_dim"]
    r = lambda *s: torch.randn(*s, generator=g) * 0.1
    p = {"model.embed_tokens.weight": r(V, D)}
    for i in range(L):
        pre = f"model.layers.{i}."
        p.update({
            pre + "input_layernorm.weight": 1 + r(D),
            pre + "self_attn.q_proj.weight": r(Hq * Dh, D),
            pre + "self_attn.k_proj.weight": r(Hkv * Dh, D),
            pre + "self_attn.v_proj.weight": r(Hkv * Dh, D),
            pre + "self_attn.o_proj.weight": r(D, Hq * Dh),
            pre + "post_attention_layernorm.weight": 1 + r(D),
            pre + "mlp.gate_proj.weight": r(F, D),
            pre + "mlp.up_proj.weight": r(F, D),
            pre + "mlp.down_proj.weight": r(D, F),
        })
    p["model.norm.weight"] = 1 + r(D)
    p["lm_head.weight"] = r(V, D)
    return p


MODELS = {
    "gpt2-tiny": dict(
        config=dict(model_type="gpt2", architectures=["GPT2LMHeadModel"], vocab_size=61, n_embd=32, n_layer=2, n_head=4,
                    n_inner=80, n_positions=16, layer_norm_epsilon=1e-5, activation_function="gelu_new",
                    bos_token_id=60, eos_token_id=60, tie_word_embeddings=True),
        params=gpt2_params, forward=gpt2_forward),
    "llama-tiny": dict(
        config=dict(model_type="llama", architectures=["LlamaForCausalLM"], vocab_size=67, hidden_size=32,
                    num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, head_dim=8,
                    intermediate_size=48, max_position_embeddings=16, rms_norm_eps=1e-6, rope_theta=10000.0,
                    tie_word_embeddings=False, hidden_act="silu", bos_token_id=1, eos_token_id=2),
        params=llama_params, forward=llama_forward),
}


def make(name, spec, seed):
    cfg = spec["config"]
    g = torch.Generator().manual_seed(seed)
    params = {k: v.clone().requires_grad_(True) for k, v in spec["params"](cfg, g).items()}
    V = cfg["vocab_size"]
    ids = torch.randint(0, V, (BATCH, SEQ), generator=g)
    targets = torch.randint(0, V, (BATCH, SEQ), generator=g)
    # Loss on positions after the padding, except each sequence's first real token (a "prompt").
    loss_mask = torch.tensor([[1.0 if t > p else 0.0 for t in range(SEQ)] for p in PADS])
    logits = spec["forward"](params, cfg, ids, PADS)
    logp = torch.log_softmax(logits, dim=-1).gather(-1, targets[..., None])[..., 0]
    loss = -(logp * loss_mask).sum() / loss_mask.sum()
    loss.backward()
    names = sorted(params)
    grads = {n: params[n].grad.detach().clone() for n in names}
    norm = torch.nn.utils.clip_grad_norm_([params[n] for n in names], MAX_GRAD_NORM)
    opt = torch.optim.AdamW([params[n] for n in names], **ADAMW)
    opt.step()

    out_dir = os.path.normpath(os.path.join(ROOT, "test", "golden", name))
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    init = {k: v for k, v in spec["params"](cfg, torch.Generator().manual_seed(seed)).items()}
    write_safetensors(os.path.join(out_dir, "model.safetensors"), init, {"format": "pt"})
    golden = {
        "input_ids": ids.double(), "target_ids": targets.double(), "loss_mask": loss_mask,
        "pads": torch.tensor(PADS).double(), "logits": logits.detach(), "loss": loss.detach().reshape(1),
        "grad_norm": norm.detach().reshape(1),
    }
    golden.update({"grad." + n: g_ for n, g_ in grads.items()})
    golden.update({"adamw." + n: params[n].detach() for n in names})
    write_safetensors(os.path.join(out_dir, "golden.safetensors"), golden)
    with open(os.path.join(out_dir, "golden.json"), "w") as f:
        json.dump({
            "generator": "scripts/golden/make_golden.py", "torch": torch.__version__, "dtype": "float64, stored as F32",
            "seed": seed, "batch": BATCH, "seq": SEQ, "pads": PADS,
            "loss": "mean over loss_mask of -log_softmax(logits)[target_ids]",
            "adamw": {"learning_rate": ADAMW["lr"], "adam_beta1": ADAMW["betas"][0], "adam_beta2": ADAMW["betas"][1],
                      "adam_epsilon": ADAMW["eps"], "weight_decay": ADAMW["weight_decay"], "max_grad_norm": MAX_GRAD_NORM},
        }, f, indent=2)
    print(f"{name}: loss {loss.item():.6f}, grad norm {norm.item():.6f}, {len(names)} tensors -> {out_dir}")


if __name__ == "__main__":
    for i, (name, spec) in enumerate(MODELS.items()):
        make(name, spec, seed=1234 + i)


def make_byte_fixture():
    """A tiny random byte-level GPT-2 in the HF layout (with the rubric_playground block) for
    tests of model loading, the trainer and the headless runner: test/fixtures/tiny-byte-gpt2/."""
    cfg = dict(model_type="gpt2", architectures=["GPT2LMHeadModel"], vocab_size=259, n_embd=32, n_layer=2, n_head=4,
               n_inner=64, n_positions=128, layer_norm_epsilon=1e-5, activation_function="gelu_new",
               bos_token_id=256, eos_token_id=257, pad_token_id=258, tie_word_embeddings=True,
               rubric_playground={"tokenizer": "byte", "prompt_template": "Instruction: {prompt}\nResponse: "})
    params = gpt2_params(cfg, torch.Generator().manual_seed(99))
    out_dir = os.path.normpath(os.path.join(ROOT, "test", "fixtures", "tiny-byte-gpt2"))
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    write_safetensors(os.path.join(out_dir, "model.safetensors"), params, {"format": "pt"})
    print(f"tiny-byte-gpt2 fixture -> {out_dir}")


if __name__ == "__main__":
    make_byte_fixture()
