#!/usr/bin/env python3
"""Golden vectors for LoRA parity tests: the tiny GPT-2 and tiny Llama (GQA) of make_golden.py
with LoRA adapters on every linear module of every block, in float64.

The adapters follow PEFT: lora_A.weight [r, in] (kaiming-uniform, a = sqrt(5)), lora_B.weight
[out, r] (random here, not PEFT's zeros, so every gradient is non-trivial), output
W·x + scale·B·A·x with scale = lora_alpha / r (or lora_alpha / sqrt(r) with use_rslora).
GPT-2's Conv1D stores W as [in, out] (fan_in_fan_out = true) and its c_attn is ONE module with
one A and a lora_B of 3·n_embd rows (q, k, v). The forward runs make_golden.py's forward on the
effective weights W + scale·B·A (transposed for Conv1D): the same function as PEFT's
x·W + scale·(x·Aᵀ)·Bᵀ, and autograd gives the adapter gradients. The base weights are frozen.
lora_dropout is 0 (dropout draws cannot match across implementations).

Writes, per model, into test/golden/lora-<name>/:
  config.json                   Hugging Face config (as make_golden.py)
  model.safetensors             base weights (HF names, F32)
  adapter_model.safetensors     the adapter before training (PEFT names, F32)
  adapter_config.json           PEFT LoraConfig
  golden.safetensors            inputs, logits, logits_base (adapters off), loss, grad.<PEFT name>
                                of every A and B, the clipped grad norm over the adapters, and
                                adamw.<PEFT name> after one clipped AdamW step on the adapters
  golden.json                   the settings used

Run with Debian's PyTorch:  /usr/bin/python3 scripts/golden/make_lora_golden.py
"""
import json
import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_golden import (  # noqa: E402  (the shared models, batch and writer)
    ADAMW, BATCH, MAX_GRAD_NORM, MODELS, PADS, ROOT, SEQ, write_safetensors,
)

torch.set_default_dtype(torch.float64)

LORA = {
    # GPT-2: every Conv1D of the blocks; "c_proj" matches attn.c_proj and mlp.c_proj (PEFT's suffix match).
    "gpt2-tiny": dict(r=4, lora_alpha=6.0, use_rslora=False, target_modules=["c_attn", "c_proj", "c_fc"]),
    # Llama: all seven projections, rsLoRA scaling.
    "llama-tiny": dict(r=4, lora_alpha=8.0, use_rslora=True,
                       target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]),
}


def modules(name, cfg):
    """(module path, base weight name, in, out) of every targeted module; Conv1D weights are [in, out]."""
    out = []
    if name.startswith("gpt2"):
        D, F = cfg["n_embd"], cfg["n_inner"]
        for i in range(cfg["n_layer"]):
            pre = f"transformer.h.{i}."
            out += [(pre + "attn.c_attn", D, 3 * D), (pre + "attn.c_proj", D, D), (pre + "mlp.c_fc", D, F), (pre + "mlp.c_proj", F, D)]
    else:
        D, F = cfg["hidden_size"], cfg["intermediate_size"]
        q, kv = cfg["num_attention_heads"] * cfg["head_dim"], cfg["num_key_value_heads"] * cfg["head_dim"]
        for i in range(cfg["num_hidden_layers"]):
            pre = f"model.layers.{i}."
            out += [(pre + "self_attn.q_proj", D, q), (pre + "self_attn.k_proj", D, kv), (pre + "self_attn.v_proj", D, kv),
                    (pre + "self_attn.o_proj", q, D), (pre + "mlp.gate_proj", D, F), (pre + "mlp.up_proj", D, F),
                    (pre + "mlp.down_proj", F, D)]
    return out


def adapter_params(name, cfg, lora, g):
    r = lora["r"]
    p = {}
    for path, fan_in, fan_out in modules(name, cfg):
        bound = 1.0 / math.sqrt(fan_in)  # kaiming_uniform_(a=sqrt(5)) on [r, in]
        p[f"base_model.model.{path}.lora_A.weight"] = (torch.rand(r, fan_in, generator=g) * 2 - 1) * bound
        p[f"base_model.model.{path}.lora_B.weight"] = torch.randn(fan_out, r, generator=g) * 0.1
    return p


def effective(name, cfg, lora, base, adapters):
    scale = lora["lora_alpha"] / (math.sqrt(lora["r"]) if lora["use_rslora"] else lora["r"])
    conv1d = name.startswith("gpt2")
    p = dict(base)
    for path, _, _ in modules(name, cfg):
        a = adapters[f"base_model.model.{path}.lora_A.weight"]
        b = adapters[f"base_model.model.{path}.lora_B.weight"]
        delta = scale * (b @ a)  # [out, in]
        p[path + ".weight"] = base[path + ".weight"] + (delta.T if conv1d else delta)
    return p, scale


def make(name, seed):
    spec, lora = MODELS[name], LORA[name]
    cfg = spec["config"]
    g = torch.Generator().manual_seed(seed)
    base = {k: v.detach() for k, v in spec["params"](cfg, g).items()}
    adapters0 = adapter_params(name, cfg, lora, g)
    adapters = {k: v.clone().requires_grad_(True) for k, v in adapters0.items()}
    V = cfg["vocab_size"]
    ids = torch.randint(0, V, (BATCH, SEQ), generator=g)
    targets = torch.randint(0, V, (BATCH, SEQ), generator=g)
    loss_mask = torch.tensor([[1.0 if t > p else 0.0 for t in range(SEQ)] for p in PADS])

    eff, scale = effective(name, cfg, lora, base, adapters)
    logits = spec["forward"](eff, cfg, ids, PADS)
    logits_base = spec["forward"](base, cfg, ids, PADS)
    logp = torch.log_softmax(logits, dim=-1).gather(-1, targets[..., None])[..., 0]
    loss = -(logp * loss_mask).sum() / loss_mask.sum()
    loss.backward()
    names = sorted(adapters)
    grads = {n: adapters[n].grad.detach().clone() for n in names}
    norm = torch.nn.utils.clip_grad_norm_([adapters[n] for n in names], MAX_GRAD_NORM)
    opt = torch.optim.AdamW([adapters[n] for n in names], **ADAMW)
    opt.step()

    out_dir = os.path.normpath(os.path.join(ROOT, "test", "golden", "lora-" + name))
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    write_safetensors(os.path.join(out_dir, "model.safetensors"), base, {"format": "pt"})
    write_safetensors(os.path.join(out_dir, "adapter_model.safetensors"), adapters0, {"format": "pt"})
    with open(os.path.join(out_dir, "adapter_config.json"), "w") as f:
        json.dump({
            "peft_type": "LORA", "task_type": "CAUSAL_LM", "base_model_name_or_path": None, "r": lora["r"],
            "lora_alpha": lora["lora_alpha"], "lora_dropout": 0.0, "target_modules": lora["target_modules"],
            "use_rslora": lora["use_rslora"], "fan_in_fan_out": name.startswith("gpt2"), "bias": "none",
            "modules_to_save": None, "init_lora_weights": True, "layers_to_transform": None, "layers_pattern": None,
            "rank_pattern": {}, "alpha_pattern": {}, "use_dora": False, "inference_mode": True,
        }, f, indent=2)
    golden = {
        "input_ids": ids.double(), "target_ids": targets.double(), "loss_mask": loss_mask,
        "pads": torch.tensor(PADS).double(), "logits": logits.detach(), "logits_base": logits_base.detach(),
        "loss": loss.detach().reshape(1), "grad_norm": norm.detach().reshape(1),
    }
    golden.update({"grad." + n: g_ for n, g_ in grads.items()})
    golden.update({"adamw." + n: adapters[n].detach() for n in names})
    write_safetensors(os.path.join(out_dir, "golden.safetensors"), golden)
    with open(os.path.join(out_dir, "golden.json"), "w") as f:
        json.dump({
            "generator": "scripts/golden/make_lora_golden.py", "torch": torch.__version__, "dtype": "float64, stored as F32",
            "seed": seed, "batch": BATCH, "seq": SEQ, "pads": PADS, "lora": lora, "scale": scale,
            "loss": "mean over loss_mask of -log_softmax(logits)[target_ids]",
            "adamw": {"learning_rate": ADAMW["lr"], "adam_beta1": ADAMW["betas"][0], "adam_beta2": ADAMW["betas"][1],
                      "adam_epsilon": ADAMW["eps"], "weight_decay": ADAMW["weight_decay"], "max_grad_norm": MAX_GRAD_NORM},
        }, f, indent=2)
    print(f"lora-{name}: loss {loss.item():.6f} (base {(-(torch.log_softmax(logits_base, -1).gather(-1, targets[..., None])[..., 0] * loss_mask).sum() / loss_mask.sum()).item():.6f}), "
          f"grad norm {norm.item():.6f}, {len(names)} adapter tensors, scale {scale} -> {out_dir}")


if __name__ == "__main__":
    for i, name in enumerate(LORA):
        make(name, seed=4321 + i)
