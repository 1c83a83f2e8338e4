#!/usr/bin/env python3
"""Tiny random checkpoints in exactly the Hugging Face Hub's file layout, for the Hub loading
tests (these machines cannot reach the Hub). Served by Vite from test/fixtures/hub/, a URL
such as /test/fixtures/hub/<owner>/<name>/resolve/main/config.json is what
https://huggingface.co/<owner>/<name>/resolve/main/config.json is on the Hub.

Fixtures (all seeded; 50-150 KB each, about 600 KB with golden.json):
  rubric-fixtures/tiny-gpt2            GPT-2, F32, one model.safetensors with the real gpt2
                                       checkpoint's names (no "transformer." prefix, attn.bias
                                       buffers), byte-level BPE tokenizer, no chat template
  rubric-fixtures/tiny-smollm-sharded  Llama (SmolLM2-style, GQA, untied head), F32, three
                                       shards + model.safetensors.index.json, ChatML template
  rubric-fixtures/tiny-qwen2-bf16      Qwen2 (q/k/v bias, tied), BF16, Qwen-style template
  rubric-fixtures/tiny-qwen3-f16       Qwen3 (q/k norm, head_dim 16 != hidden/heads, tied), F16

test/fixtures/hub/golden.json holds, per fixture, a prompt, the token ids the model must see
for it (chat template applied, tokenized by an independent byte-level BPE written here) and
float64 logits of the last rows, computed from the weights as stored (rounded to BF16/F16).

Run with Debian's PyTorch:  /usr/bin/python3 scripts/hub_fixtures.py
"""
import json
import math
import os
import re
import struct
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden"))
import make_golden as mg  # noqa: E402  (float64 GPT-2 / Llama forwards, the same as the model parity goldens)

torch.set_default_dtype(torch.float64)
ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
OUT = os.path.join(ROOT, "test", "fixtures", "hub")
OWNER = "rubric-fixtures"
# Logit rows kept in golden.json (the last ones: every earlier position feeds them through attention).
GOLDEN_ROWS = 3

# ---------------------------------------------------------------- byte-level BPE tokenizer


def bytes_to_unicode():
    """GPT-2's byte -> printable character table."""
    printable = list(range(33, 127)) + list(range(161, 173)) + list(range(174, 256))
    table, extra = {}, 0
    for b in range(256):
        if b in printable:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + extra)
            extra += 1
    return table


BYTE_CHARS = bytes_to_unicode()
MERGES = [("Ġ", "t"), ("h", "e"), ("Ġt", "he"), ("l", "l"), ("o", "r"), ("Ġ", "w"), ("e", "r"), ("i", "n"),
          ("a", "s"), ("he", "ll"), ("Ġw", "or"), ("u", "s"), ("s", "e"), ("Ġ", "a"), ("Ġ", "i"), ("Ġi", "s")]
# GPT-2's pre-tokenizer pattern, with \p{L} / \p{N} narrowed to ASCII: the prompts here are ASCII.
PRETOKENIZE = re.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?[A-Za-z]+| ?[0-9]+| ?[^\sA-Za-z0-9]+|\s+(?!\S)|\s+""")


def base_vocab():
    vocab = {BYTE_CHARS[b]: b for b in range(256)}
    for a, b in MERGES:
        vocab[a + b] = len(vocab)
    return vocab


def bpe_word(word, ranks):
    parts = list(word)
    while len(parts) > 1:
        pairs = [(ranks.get((parts[i], parts[i + 1]), math.inf), i) for i in range(len(parts) - 1)]
        rank, i = min(pairs)
        if rank == math.inf:
            break
        parts = parts[:i] + [parts[i] + parts[i + 1]] + parts[i + 2:]
    return parts


def encode(text, vocab, specials):
    """Splits on special tokens, then GPT-2 pre-tokenization, byte mapping and BPE merges."""
    ranks = {pair: r for r, pair in enumerate(MERGES)}
    ids = []
    pattern = "(" + "|".join(re.escape(s) for s in specials) + ")" if specials else None
    for segment in (re.split(pattern, text) if pattern else [text]):
        if segment in specials:
            ids.append(vocab[segment])
            continue
        for piece in PRETOKENIZE.findall(segment):
            word = "".join(BYTE_CHARS[b] for b in piece.encode("utf-8"))
            ids.extend(vocab[p] for p in bpe_word(word, ranks))
    return ids


def added_token(content, id_):
    return {"id": id_, "content": content, "single_word": False, "lstrip": False, "rstrip": False,
            "normalized": False, "special": True}


def tokenizer_files(specials, tokenizer_config):
    """tokenizer.json (HF tokenizers format) and tokenizer_config.json for a byte-level BPE."""
    vocab = base_vocab()
    for s in specials:
        vocab[s] = len(vocab)
    tokenizer = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [added_token(s, vocab[s]) for s in specials],
        "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
        "post_processor": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True},
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
                  "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                  "vocab": vocab, "merges": [f"{a} {b}" for a, b in MERGES]},
    }
    config = dict(tokenizer_config)
    config["added_tokens_decoder"] = {str(vocab[s]): {k: v for k, v in added_token(s, vocab[s]).items() if k != "id"}
                                      for s in specials}
    return tokenizer, config, vocab


# Chat templates (Jinja, as in the real repositories, shortened) and their Python renderings.
SMOLLM_TEMPLATE = (
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\nYou are a tiny test model.<|im_end|>\n' }}{% endif %}"
    "{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
QWEN_TEMPLATE = (
    "{%- if messages[0]['role'] == 'system' %}{{- '<|im_start|>system\n' + messages[0]['content'] + '<|im_end|>\n' }}"
    "{%- else %}{{- '<|im_start|>system\nYou are Qwen.<|im_end|>\n' }}{%- endif %}"
    "{%- for message in messages %}{%- if message.role != 'system' %}"
    "{{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>' + '\n' }}{%- endif %}{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\n' }}{%- endif %}"
)


def smollm_chat(user):
    return f"<|im_start|>system\nYou are a tiny test model.<|im_end|>\n<|im_start|>user\n{user}<|im_end|>\n<|im_start|>assistant\n"


def qwen_chat(user):
    return f"<|im_start|>system\nYou are Qwen.<|im_end|>\n<|im_start|>user\n{user}<|im_end|>\n<|im_start|>assistant\n"


# ---------------------------------------------------------------- safetensors with dtypes

DTYPES = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}


def stored(t, dtype):
    """The tensor as the file holds it, read back in float64 (what the golden forward uses)."""
    return t.detach().to(DTYPES[dtype]).to(torch.float64)


def safetensors_bytes(tensors, dtype):
    header = {"__metadata__": {"format": "pt"}}
    offset, blobs = 0, []
    for name in sorted(tensors):
        t = tensors[name].detach().to(DTYPES[dtype]).contiguous()
        # numpy has no bfloat16: write the 16-bit patterns.
        raw = t.view(torch.int16).numpy().tobytes() if dtype != "F32" else t.numpy().tobytes()
        header[name] = {"dtype": dtype, "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
        blobs.append(raw)
    head = json.dumps(header, separators=(",", ":")).encode()
    head += b" " * ((8 - len(head) % 8) % 8)
    return struct.pack("<Q", len(head)) + head + b"".join(blobs)


def write_json(path, obj, compact=False):
    with open(path, "w") as f:
        if compact:
            json.dump(obj, f, separators=(",", ":"), ensure_ascii=False)
        else:
            json.dump(obj, f, indent=2, ensure_ascii=False)
        f.write("\n")


# ---------------------------------------------------------------- forwards (float64)


def llama_family_forward(p, cfg, ids, attention_bias, qk_norm):
    """make_golden.llama_forward plus Qwen2's q/k/v biases and Qwen3's per-head q/k RMSNorm."""
    B, T = ids.shape
    D, Hq, Hkv, Dh = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["head_dim"]
    eps = cfg["rms_norm_eps"]
    inv_freq = 1.0 / (cfg["rope_theta"] ** (torch.arange(0, Dh, 2).double() / Dh))
    freqs = mg.positions([0] * B, T).double()[..., None] * inv_freq
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos()[:, None], emb.sin()[:, None]
    mask = mg.attention_mask([0] * B, T)
    x = p["model.embed_tokens.weight"][ids]
    for i in range(cfg["num_hidden_layers"]):
        pre = f"model.layers.{i}."

        def proj(name, heads):
            y = h @ p[pre + f"self_attn.{name}.weight"].T
            if attention_bias:
                y = y + p[pre + f"self_attn.{name}.bias"]
            return y.view(B, T, heads, Dh)

        h = mg.rms_norm(x, p[pre + "input_layernorm.weight"], eps)
        q, k, v = proj("q_proj", Hq), proj("k_proj", Hkv), proj("v_proj", Hkv)
        if qk_norm:
            q = mg.rms_norm(q, p[pre + "self_attn.q_norm.weight"], eps)
            k = mg.rms_norm(k, p[pre + "self_attn.k_norm.weight"], eps)
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))
        q = q * cos + mg.rotate_half(q) * sin
        k = k * cos + mg.rotate_half(k) * sin
        k = k.repeat_interleave(Hq // Hkv, dim=1)
        v = v.repeat_interleave(Hq // Hkv, dim=1)
        att = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(Dh) + mask, dim=-1)
        o = (att @ v).transpose(1, 2).reshape(B, T, Hq * Dh)
        x = x + o @ p[pre + "self_attn.o_proj.weight"].T
        h = mg.rms_norm(x, p[pre + "post_attention_layernorm.weight"], eps)
        x = x + (torch.nn.functional.silu(h @ p[pre + "mlp.gate_proj.weight"].T) * (h @ p[pre + "mlp.up_proj.weight"].T)) @ p[pre + "mlp.down_proj.weight"].T
    x = mg.rms_norm(x, p["model.norm.weight"], eps)
    head = p["model.embed_tokens.weight"] if cfg["tie_word_embeddings"] else p["lm_head.weight"]
    return x @ head.T


def llama_family_params(cfg, g, attention_bias, qk_norm):
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
        if attention_bias:
            p.update({pre + "self_attn.q_proj.bias": r(Hq * Dh), pre + "self_attn.k_proj.bias": r(Hkv * Dh),
                      pre + "self_attn.v_proj.bias": r(Hkv * Dh)})
        if qk_norm:
            p.update({pre + "self_attn.q_norm.weight": 1 + r(Dh), pre + "self_attn.k_norm.weight": 1 + r(Dh)})
    p["model.norm.weight"] = 1 + r(D)
    if not cfg["tie_word_embeddings"]:
        p["lm_head.weight"] = r(V, D)
    return p


def check_forward_against_make_golden():
    """The extended Llama forward must equal make_golden's on a plain Llama."""
    cfg = mg.MODELS["llama-tiny"]["config"]
    p = mg.llama_params(cfg, torch.Generator().manual_seed(5))
    ids = torch.randint(0, cfg["vocab_size"], (1, 6), generator=torch.Generator().manual_seed(6))
    ours = llama_family_forward(p, cfg, ids, attention_bias=False, qk_norm=False)
    theirs = mg.llama_forward(p, cfg, ids, [0])
    assert torch.allclose(ours, theirs, atol=1e-12), "llama_family_forward disagrees with make_golden.llama_forward"


# ---------------------------------------------------------------- fixtures


def repo_dir(name):
    path = os.path.join(OUT, OWNER, name, "resolve", "main")
    os.makedirs(path, exist_ok=True)
    return path


def golden_entry(name, prompt, ids, logits, dtype, notes):
    rows = logits[0, -GOLDEN_ROWS:]
    return {
        "id": f"{OWNER}/{name}",
        "dtype": dtype,
        "prompt": prompt,
        "prompt_ids": ids,
        "vocab_size": logits.shape[-1],
        "rows_from": len(ids) - rows.shape[0],
        # 9 significant digits: below the float32 engine's error, and small enough to commit.
        "logits": [[float(f"{v:.9g}") for v in row.tolist()] for row in rows],
        "notes": notes,
    }


def gpt2_fixture(seed):
    name = "tiny-gpt2"
    specials = ["<|endoftext|>"]
    tokenizer, tok_config, vocab = tokenizer_files(specials, {
        "add_bos_token": False, "add_prefix_space": False, "bos_token": "<|endoftext|>",
        "clean_up_tokenization_spaces": False, "eos_token": "<|endoftext|>", "errors": "replace",
        "model_max_length": 32, "pad_token": None, "tokenizer_class": "GPT2Tokenizer", "unk_token": "<|endoftext|>",
    })
    eos = vocab["<|endoftext|>"]
    # As transformers writes a GPT-2 config.json (n_inner null means 4 * n_embd).
    cfg = {
        "activation_function": "gelu_new", "architectures": ["GPT2LMHeadModel"], "attn_pdrop": 0.1,
        "bos_token_id": eos, "embd_pdrop": 0.1, "eos_token_id": eos, "initializer_range": 0.02,
        "layer_norm_epsilon": 1e-05, "model_type": "gpt2", "n_ctx": 32, "n_embd": 32, "n_head": 4, "n_inner": None,
        "n_layer": 2, "n_positions": 32, "reorder_and_upcast_attn": False, "resid_pdrop": 0.1,
        "scale_attn_by_inverse_layer_idx": False, "scale_attn_weights": True, "summary_activation": None,
        "summary_first_dropout": 0.1, "summary_proj_to_labels": True, "summary_type": "cls_index",
        "summary_use_proj": True, "torch_dtype": "float32", "transformers_version": "4.46.0", "use_cache": True,
        "vocab_size": len(vocab),
    }
    params = mg.gpt2_params({**cfg, "n_inner": 4 * cfg["n_embd"]}, torch.Generator().manual_seed(seed))
    prompt = "hello the world, is it 42?"
    ids = [eos] + encode(prompt, vocab, specials)
    logits = mg.gpt2_forward(params, {**cfg, "n_inner": 4 * cfg["n_embd"]}, torch.tensor([ids]), [0])
    # The real gpt2 checkpoint: bare GPT2Model names (no "transformer."), plus the causal-mask buffers.
    P = cfg["n_positions"]
    on_disk = {k[len("transformer."):]: v for k, v in params.items()}
    for i in range(cfg["n_layer"]):
        on_disk[f"h.{i}.attn.bias"] = torch.tril(torch.ones(P, P)).view(1, 1, P, P)
    d = repo_dir(name)
    write_json(os.path.join(d, "config.json"), cfg)
    write_json(os.path.join(d, "tokenizer.json"), tokenizer)
    write_json(os.path.join(d, "tokenizer_config.json"), tok_config)
    with open(os.path.join(d, "model.safetensors"), "wb") as f:
        f.write(safetensors_bytes(on_disk, "F32"))
    return golden_entry(name, prompt, ids, logits, "F32", "BOS + prompt (no chat template); weights without the transformer. prefix")


def llama_like_fixture(name, seed, model_type, dtype, template, render, tok_extra, cfg_extra, attention_bias, qk_norm,
                       shards, prompt, notes):
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    tokenizer, tok_config, vocab = tokenizer_files(specials, {
        "add_prefix_space": False, "clean_up_tokenization_spaces": False, "eos_token": "<|im_end|>",
        "model_max_length": 64, "pad_token": "<|endoftext|>", "unk_token": None, "chat_template": template, **tok_extra,
    })
    cfg = {
        "architectures": [{"llama": "LlamaForCausalLM", "qwen2": "Qwen2ForCausalLM", "qwen3": "Qwen3ForCausalLM"}[model_type]],
        "attention_dropout": 0.0, "hidden_act": "silu", "hidden_size": 32, "initializer_range": 0.02,
        "intermediate_size": 48, "max_position_embeddings": 64, "model_type": model_type, "num_attention_heads": 4,
        "num_hidden_layers": 2, "num_key_value_heads": 2, "rms_norm_eps": 1e-06, "rope_scaling": None,
        "torch_dtype": {"F32": "float32", "F16": "float16", "BF16": "bfloat16"}[dtype],
        "transformers_version": "4.46.0", "use_cache": True, "vocab_size": len(vocab), **cfg_extra,
    }
    cfg.setdefault("head_dim", cfg["hidden_size"] // cfg["num_attention_heads"])
    # Special token ids are given by name above: the ids of this tokenizer.
    for key in ("bos_token_id", "eos_token_id"):
        cfg[key] = vocab[cfg[key]]
    params = llama_family_params(cfg, torch.Generator().manual_seed(seed), attention_bias, qk_norm)
    rounded = {k: stored(v, dtype) for k, v in params.items()}
    ids = encode(render(prompt), vocab, specials)
    logits = llama_family_forward(rounded, cfg, torch.tensor([ids]), attention_bias, qk_norm)
    d = repo_dir(name)
    write_json(os.path.join(d, "config.json"), cfg)
    write_json(os.path.join(d, "tokenizer.json"), tokenizer)
    write_json(os.path.join(d, "tokenizer_config.json"), tok_config)
    if shards == 1:
        with open(os.path.join(d, "model.safetensors"), "wb") as f:
            f.write(safetensors_bytes(params, dtype))
    else:
        # As transformers shards: whole tensors in order (embeddings, layer by layer, norm, head).
        order = ["model.embed_tokens.weight"]
        for i in range(cfg["num_hidden_layers"]):
            order += sorted(k for k in params if k.startswith(f"model.layers.{i}."))
        order += [k for k in ("model.norm.weight", "lm_head.weight") if k in params]
        groups = [order[:1 + len(order) // (2 * shards)], *[[] for _ in range(shards - 1)]]
        rest = order[len(groups[0]):]
        per = math.ceil(len(rest) / (shards - 1))
        for s in range(1, shards):
            groups[s] = rest[(s - 1) * per:s * per]
        weight_map, total = {}, 0
        for s, group in enumerate(groups):
            file = f"model-{s + 1:05d}-of-{shards:05d}.safetensors"
            with open(os.path.join(d, file), "wb") as f:
                f.write(safetensors_bytes({k: params[k] for k in group}, dtype))
            for k in group:
                weight_map[k] = file
                total += params[k].numel() * (4 if dtype == "F32" else 2)
        write_json(os.path.join(d, "model.safetensors.index.json"),
                   {"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))})
    return golden_entry(name, prompt, ids, logits, dtype, notes)


def main():
    check_forward_against_make_golden()
    fixtures = [
        gpt2_fixture(seed=201),
        llama_like_fixture(
            "tiny-smollm-sharded", 202, "llama", "F32", SMOLLM_TEMPLATE, smollm_chat,
            {"bos_token": "<|im_start|>", "tokenizer_class": "GPT2Tokenizer"},
            {"bos_token_id": "<|im_start|>", "eos_token_id": "<|im_end|>", "pretraining_tp": 1, "rope_theta": 100000.0,
             "tie_word_embeddings": False, "attention_bias": False, "mlp_bias": False},
            attention_bias=False, qk_norm=False, shards=3, prompt="hello world",
            notes="three F32 shards + index; SmolLM2 chat template (default system turn)"),
        llama_like_fixture(
            "tiny-qwen2-bf16", 203, "qwen2", "BF16", QWEN_TEMPLATE, qwen_chat,
            {"bos_token": None, "tokenizer_class": "Qwen2Tokenizer"},
            {"bos_token_id": "<|endoftext|>", "eos_token_id": "<|im_end|>", "rope_theta": 1000000.0,
             "tie_word_embeddings": True, "use_sliding_window": False, "sliding_window": 32768, "max_window_layers": 2},
            attention_bias=True, qk_norm=False, shards=1, prompt="is the answer 42?",
            notes="BF16, q/k/v bias, tied head; golden from the BF16-rounded weights"),
        llama_like_fixture(
            "tiny-qwen3-f16", 204, "qwen3", "F16", QWEN_TEMPLATE, qwen_chat,
            {"bos_token": None, "tokenizer_class": "Qwen2Tokenizer"},
            {"bos_token_id": "<|endoftext|>", "eos_token_id": "<|im_end|>", "head_dim": 16,
             "rope_theta": 1000000.0, "tie_word_embeddings": True, "attention_bias": False,
             "use_sliding_window": False, "sliding_window": None, "max_window_layers": 2},
            attention_bias=False, qk_norm=True, shards=1, prompt="tell us as it is",
            notes="F16, q/k RMSNorm, head_dim 16 (q width 64 != hidden 32), tied head; golden from the F16-rounded weights"),
    ]
    write_json(os.path.join(OUT, "golden.json"), {
        "generator": "scripts/hub_fixtures.py",
        "torch": torch.__version__,
        "endpoint_layout": "<endpoint>/<owner>/<name>/resolve/<revision>/<file>",
        "logits": f"float64 forward of the stored weights on prompt_ids; the last {GOLDEN_ROWS} rows, starting at row rows_from",
        "fixtures": fixtures,
    }, compact=True)
    for fx in fixtures:
        print(f"{fx['id']}: {fx['dtype']}, {len(fx['prompt_ids'])} prompt tokens")


if __name__ == "__main__":
    main()
