#!/usr/bin/env python3
"""Pretrains the embedded default policy, public/models/tiny-gpt2-byte/, from scratch on the
synthetic instruction corpus of scripts/corpus/ (generated on the fly, never stored).

    /usr/bin/python3 scripts/pretrain_default.py            # train (resumes from its checkpoint)
    /usr/bin/python3 scripts/pretrain_default.py --fresh    # ignore the checkpoint

Model: GPT-2 exactly as gpt2_forward in scripts/golden/make_golden.py (learned positions,
LayerNorm eps 1e-5, gelu_new, tied embeddings, Conv1D weights [in, out], HF names
transformer.*), over a byte vocabulary: ids 0-255 are bytes, 256 <|bos|>, 257 <|endoftext|>,
258 <|pad|>. An example is <|bos|> "Instruction: {i}\\nResponse: " {response} <|endoftext|>.
Examples are packed whole into rows of 256 tokens; attention stays inside each example and
positions restart at 0 for each one, exactly as the app sees a single prompt. The loss is the
mean next-token cross-entropy over every real token (instruction, response and the final
<|endoftext|>), never over padding; --loss response keeps only the response and EOS targets
(it learned more slowly here: predicting the instruction helps the model read it).

Writes config.json, model.safetensors (F32, HF names), tokenizer.json (ByteLevel BPE, no merges),
tokenizer_config.json, generation_config.json and RECIPE.md (with losses, timings and sample
completions from the trained model).

Speed: Debian's PyTorch 1.13 multiplies matrices with a generic loop (about 2 GFLOP/s here),
so every matrix product goes through oneDNN's sgemm (libdnnl, which that same PyTorch depends
on) through ctypes; elsewhere torch.matmul is used.
"""
import argparse
import ctypes
import ctypes.util
import json
import math
import os
import random
import sys
import tempfile
import time

os.environ.setdefault("OMP_NUM_THREADS", "2")
# The machine is shared: spinning OpenMP threads stall badly when other processes hold the cores.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
sys.dont_write_bytecode = True  # keep __pycache__ out of the repository

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "corpus"))
sys.path.insert(0, os.path.join(HERE, "golden"))

import generate as corpus  # noqa: E402
import make_golden  # noqa: E402  (sets float64 as the default dtype; reset below)

torch.set_default_dtype(torch.float32)
torch.set_num_threads(2)

BOS, EOS, PAD, VOCAB = 256, 257, 258, 259
CONFIG = dict(
    model_type="gpt2", architectures=["GPT2LMHeadModel"], vocab_size=VOCAB, n_embd=128, n_layer=4, n_head=4,
    n_inner=512, n_positions=256, n_ctx=256, layer_norm_epsilon=1e-5, activation_function="gelu_new",
    bos_token_id=BOS, eos_token_id=EOS, pad_token_id=PAD, tie_word_embeddings=True, initializer_range=0.02,
    resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, scale_attn_weights=True, use_cache=True, torch_dtype="float32",
)
CONTEXT = CONFIG["n_positions"]
PROMPT_TEMPLATE = corpus.format_prompt("{prompt}")
TRAIN_PAIRS, TRAIN_SEED = 30000, 1
HELDOUT_PAIRS, HELDOUT_SEED = 1000, 2
OUT_DIR = os.path.join(ROOT, "public", "models", "tiny-gpt2-byte")


# ---- matrix products through oneDNN -------------------------------------------------------

def _load_dnnl():
    for name in ("libdnnl.so.2", "libdnnl.so.3", ctypes.util.find_library("dnnl")):
        if not name:
            continue
        try:
            lib = ctypes.CDLL(name)
        except OSError:
            continue
        c = ctypes
        lib.dnnl_sgemm.argtypes = [c.c_char, c.c_char, c.c_int64, c.c_int64, c.c_int64, c.c_float, c.c_void_p,
                                   c.c_int64, c.c_void_p, c.c_int64, c.c_float, c.c_void_p, c.c_int64]
        lib.dnnl_sgemm.restype = c.c_int
        return lib
    return None


DNNL = _load_dnnl()


def _gemm(a, b, ta, tb):
    """op(a) @ op(b) for float32 matrices or batches of them (op = transpose when the flag is set)."""
    if DNNL is None or a.dtype != torch.float32:
        return (a.transpose(-1, -2) if ta else a) @ (b.transpose(-1, -2) if tb else b)
    a, b = a.contiguous(), b.contiguous()
    m, k = (a.shape[-1], a.shape[-2]) if ta else (a.shape[-2], a.shape[-1])
    n = b.shape[-2] if tb else b.shape[-1]
    batch = a.shape[:-2]
    out = torch.empty(*batch, m, n)
    g = out.numel() // (m * n) if out.numel() else 0
    a3, b3, c3 = a.reshape(-1, *a.shape[-2:]), b.reshape(-1, *b.shape[-2:]), out.view(-1, m, n)
    lda, ldb = a.shape[-1], b.shape[-1]
    sa, sb, sc = a3.stride(0) * 4, b3.stride(0) * 4, m * n * 4
    pa, pb, pc = a3.data_ptr(), b3.data_ptr(), c3.data_ptr()
    fa, fb = b"T" if ta else b"N", b"T" if tb else b"N"
    for i in range(g):
        status = DNNL.dnnl_sgemm(fa, fb, m, n, k, 1.0, pa + i * sa, lda, pb + i * sb, ldb, 0.0, pc + i * sc, n)
        if status != 0:
            raise RuntimeError(f"dnnl_sgemm failed with status {status}")
    return out


class MatMul(torch.autograd.Function):
    """C = op(A) @ op(B) with oneDNN in both directions."""

    @staticmethod
    def forward(ctx, a, b, ta, tb):
        ctx.save_for_backward(a, b)
        ctx.flags = (ta, tb)
        return _gemm(a, b, ta, tb)

    @staticmethod
    def backward(ctx, dc):
        a, b = ctx.saved_tensors
        ta, tb = ctx.flags
        da = _gemm(b, dc, tb, True) if ta else _gemm(dc, b, False, not tb)
        db = _gemm(dc, a, True, ta) if tb else _gemm(a, dc, not ta, False)
        return da, db, None, None


def mm(a, b, ta=False, tb=False):
    return MatMul.apply(a, b, ta, tb)


# ---- the model ----------------------------------------------------------------------------

def init_params(cfg, seed):
    """GPT-2 initialisation: N(0, 0.02), residual projections scaled by 1/sqrt(2 n_layer)."""
    g = torch.Generator().manual_seed(seed)
    D, V, P, L, Fi = cfg["n_embd"], cfg["vocab_size"], cfg["n_positions"], cfg["n_layer"], cfg["n_inner"]
    r = lambda std, *s: torch.randn(*s, generator=g) * std  # noqa: E731
    resid = 0.02 / math.sqrt(2 * L)
    p = {"transformer.wte.weight": r(0.02, V, D), "transformer.wpe.weight": r(0.01, P, D)}
    for i in range(L):
        pre = f"transformer.h.{i}."
        p.update({
            pre + "ln_1.weight": torch.ones(D), pre + "ln_1.bias": torch.zeros(D),
            pre + "attn.c_attn.weight": r(0.02, D, 3 * D), pre + "attn.c_attn.bias": torch.zeros(3 * D),
            pre + "attn.c_proj.weight": r(resid, D, D), pre + "attn.c_proj.bias": torch.zeros(D),
            pre + "ln_2.weight": torch.ones(D), pre + "ln_2.bias": torch.zeros(D),
            pre + "mlp.c_fc.weight": r(0.02, D, Fi), pre + "mlp.c_fc.bias": torch.zeros(Fi),
            pre + "mlp.c_proj.weight": r(resid, Fi, D), pre + "mlp.c_proj.bias": torch.zeros(D),
        })
    p["transformer.ln_f.weight"] = torch.ones(D)
    p["transformer.ln_f.bias"] = torch.zeros(D)
    return p


def hidden_states(p, cfg, ids, pos, mask, cache=None):
    """Final hidden states [B, T, D]; the same math as make_golden.gpt2_forward, in float32.
    pos: [B, T] position ids; mask: additive [B, 1, T, S] (0 = visible, -inf = hidden) over the
    S = cached + T keys. cache: None, or a list (one entry per layer) of [k, v] of shape
    [B*H, cached, Dh], extended in place (an empty list starts one)."""
    B, T = ids.shape
    D, H = cfg["n_embd"], cfg["n_head"]
    Dh = D // H
    eps = cfg["layer_norm_epsilon"]
    x = F.embedding(ids, p["transformer.wte.weight"]) + F.embedding(pos, p["transformer.wpe.weight"])
    for i in range(cfg["n_layer"]):
        pre = f"transformer.h.{i}."
        h = F.layer_norm(x, (D,), p[pre + "ln_1.weight"], p[pre + "ln_1.bias"], eps)
        qkv = mm(h.reshape(B * T, D), p[pre + "attn.c_attn.weight"]) + p[pre + "attn.c_attn.bias"]
        q, k, v = qkv.view(B, T, 3, H, Dh).permute(2, 0, 3, 1, 4).reshape(3, B * H, T, Dh).unbind(0)
        if cache is not None:
            if len(cache) <= i:
                cache.append([k, v])
            else:
                cache[i] = [torch.cat([cache[i][0], k], 1), torch.cat([cache[i][1], v], 1)]
            k, v = cache[i]
        S = k.shape[1]
        scores = mm(q, k, False, True).view(B, H, T, S) / math.sqrt(Dh) + mask
        att = torch.softmax(scores, dim=-1).view(B * H, T, S)
        o = mm(att, v).view(B, H, T, Dh).transpose(1, 2).reshape(B * T, D)
        x = x + (mm(o, p[pre + "attn.c_proj.weight"]) + p[pre + "attn.c_proj.bias"]).view(B, T, D)
        h = F.layer_norm(x, (D,), p[pre + "ln_2.weight"], p[pre + "ln_2.bias"], eps)
        h = F.gelu(mm(h.reshape(B * T, D), p[pre + "mlp.c_fc.weight"]) + p[pre + "mlp.c_fc.bias"], approximate="tanh")
        x = x + (mm(h, p[pre + "mlp.c_proj.weight"]) + p[pre + "mlp.c_proj.bias"]).view(B, T, D)
    return F.layer_norm(x, (D,), p["transformer.ln_f.weight"], p["transformer.ln_f.bias"], eps)


def logits_of(p, h):
    """Tied head: h [..., D] @ wte^T."""
    return mm(h.reshape(-1, h.shape[-1]), p["transformer.wte.weight"], False, True).view(*h.shape[:-1], -1)


def left_padded_inputs(pads, seq):
    """Positions and additive mask for left-padded rows, as make_golden.positions/attention_mask."""
    t = torch.arange(seq)
    pad = torch.tensor(pads)[:, None]
    pos = (t[None, :] - pad).clamp(min=0)
    visible = (t[None, None, :] >= pad[:, :, None]) & (t[None, None, :] <= t[None, :, None])
    visible |= torch.eye(seq, dtype=torch.bool)[None] & (t[None, :, None] < pad[:, :, None])  # pad rows see themselves
    mask = torch.zeros(len(pads), 1, seq, seq).masked_fill(~visible[:, None], float("-inf"))
    return pos, mask


def check_against_golden(p, cfg):
    """Our fast float32 forward vs make_golden.gpt2_forward (float64) on a left-padded batch."""
    g = torch.Generator().manual_seed(7)
    pads, seq = [0, 3, 9], 24
    ids = torch.randint(0, 256, (3, seq), generator=g)
    pos, mask = left_padded_inputs(pads, seq)
    with torch.no_grad():
        ours = logits_of(p, hidden_states(p, cfg, ids, pos, mask)).double()
        ref = make_golden.gpt2_forward({k: v.double() for k, v in p.items()}, cfg, ids, pads)
    keep = torch.tensor([[t >= pd for t in range(seq)] for pd in pads])
    err = (ours - ref)[keep].abs().max().item()
    scale = ref[keep].abs().max().item()
    if not err <= 1e-4 * max(1.0, scale):
        raise AssertionError(f"forward differs from make_golden.gpt2_forward: max |diff| {err:.3g} (logit scale {scale:.3g})")
    # The sampler's KV-cache path: prefill 20 tokens, then 4 one-token steps, vs the full forward.
    cache, pad = [], torch.tensor(pads)[:, None]
    with torch.no_grad():
        pos20, mask20 = left_padded_inputs(pads, 20)
        steps = [hidden_states(p, cfg, ids[:, :20], pos20, mask20, cache)[:, -1]]
        for t in range(20, seq):
            m = torch.zeros(3, 1, 1, t + 1).masked_fill(~(torch.arange(t + 1)[None, :] >= pad)[:, None, None, :], float("-inf"))
            steps.append(hidden_states(p, cfg, ids[:, t:t + 1], (t - pad).clamp(min=0), m, cache)[:, -1])
        cached = logits_of(p, torch.stack(steps, 1)).double()
    cache_err = (cached - ours[:, 19:]).abs().max().item()
    if not cache_err <= 1e-4 * max(1.0, scale):
        raise AssertionError(f"KV-cache decoding differs from the full forward: max |diff| {cache_err:.3g}")
    return max(err, cache_err)


# ---- data -------------------------------------------------------------------------------------

def encode_example(instruction, response):
    return [BOS] + list(corpus.example_bytes(instruction, response)) + [EOS]


def prompt_ids(instruction):
    return [BOS] + list(corpus.format_prompt(instruction).encode("utf-8"))


def pack(examples, seed):
    """First-fit-decreasing packing of whole examples into rows of CONTEXT tokens, in shuffled
    chunks. Returns ids [R, T] (PAD-filled), pos [R, T], seg [R, T] (-1 on padding) and
    resp [R, T] (True on response bytes and the final EOS)."""
    rng = random.Random(seed)
    order = list(range(len(examples)))
    rng.shuffle(order)
    rows = []
    for start in range(0, len(order), 1024):
        chunk = sorted(order[start:start + 1024], key=lambda i: -len(examples[i]))
        bins = []  # [free, [example indices]]
        for i in chunk:
            n = len(examples[i])
            for b in bins:
                if b[0] >= n:
                    b[0] -= n
                    b[1].append(i)
                    break
            else:
                bins.append([CONTEXT - n, [i]])
        rows += [b[1] for b in bins]
    rng.shuffle(rows)
    ids = torch.full((len(rows), CONTEXT), PAD, dtype=torch.long)
    pos = torch.zeros((len(rows), CONTEXT), dtype=torch.long)
    seg = torch.full((len(rows), CONTEXT), -1, dtype=torch.long)
    resp = torch.zeros((len(rows), CONTEXT), dtype=torch.bool)
    starts = response_starts(examples)
    for r, members in enumerate(rows):
        at = 0
        for j, i in enumerate(members):
            ex = examples[i]
            ids[r, at:at + len(ex)] = torch.tensor(ex)
            pos[r, at:at + len(ex)] = torch.arange(len(ex))
            seg[r, at:at + len(ex)] = j
            resp[r, at + starts[i]:at + len(ex)] = True
            at += len(ex)
    return ids, pos, seg, resp


def response_starts(examples):
    """Token index of the first response byte in each example (after "Response: ")."""
    marker = list(b"\nResponse: ")
    out = []
    for ex in examples:
        at = next((i for i in range(len(ex) - len(marker)) if ex[i:i + len(marker)] == marker), None)
        if at is None:
            raise ValueError("an example without \"\\nResponse: \"")
        out.append(at + len(marker))
    return out


def batch_loss(p, cfg, ids, pos, seg, response_from=None):
    """Mean next-token cross-entropy over real tokens (targets inside the same example).
    With response_from ([R, T] bool: position is a response byte or the EOS), only those targets."""
    B, T = ids.shape
    t = torch.arange(T)
    visible = (seg[:, :, None] == seg[:, None, :]) & (t[None, None, :] <= t[None, :, None])
    mask = torch.zeros(B, 1, T, T).masked_fill(~visible[:, None], float("-inf"))
    h = hidden_states(p, cfg, ids, pos, mask)
    valid = (seg[:, 1:] == seg[:, :-1]) & (seg[:, :-1] >= 0)
    if response_from is not None:
        valid &= response_from[:, 1:]
    logits = logits_of(p, h[:, :-1][valid])
    return F.cross_entropy(logits, ids[:, 1:][valid], reduction="sum"), int(valid.sum())


# ---- training -----------------------------------------------------------------------------

def lr_at(step, steps, peak, warmup, floor):
    if step < warmup:
        return peak * (step + 1) / warmup
    progress = (step - warmup) / max(1, steps - warmup)
    return peak * (floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * min(1.0, progress))))


def batches(examples, batch, seed):
    """An endless, deterministic stream of (epoch, index-in-epoch, rows) batches."""
    epoch = 0
    while True:
        rows = pack(examples, seed * 1000 + epoch)
        for i in range(0, rows[0].shape[0] - batch + 1, batch):
            yield epoch, i // batch, tuple(x[i:i + batch] for x in rows)
        epoch += 1


def evaluate(p, cfg, packed):
    ids, pos, seg, response_mask = packed
    total = {"all": [0.0, 0], "response": [0.0, 0]}
    with torch.no_grad():
        for i in range(0, ids.shape[0], 32):
            sl = slice(i, i + 32)
            s, n = batch_loss(p, cfg, ids[sl], pos[sl], seg[sl])
            total["all"][0] += s.item()
            total["all"][1] += n
            s, n = batch_loss(p, cfg, ids[sl], pos[sl], seg[sl], response_mask[sl])
            total["response"][0] += s.item()
            total["response"][1] += n
    return {k: v[0] / v[1] for k, v in total.items()}


def train(args):
    train_pairs = corpus.make_pairs(TRAIN_PAIRS, TRAIN_SEED)
    held_pairs = corpus.make_pairs(HELDOUT_PAIRS, HELDOUT_SEED, exclude={(i, r) for i, r, _ in train_pairs})
    train_ex = [encode_example(i, r) for i, r, _ in train_pairs]
    held_ex = [encode_example(i, r) for i, r, _ in held_pairs]
    held = pack(held_ex, 99)
    # Does the response depend on the instruction? The same held-out responses after a
    # different example's instruction (about another topic) should cost more.
    probe = [(i, r) for i, r, k in held_pairs if k][:300]
    fits = [j for j, (_, r) in enumerate(probe) if len(encode_example(probe[(j + 1) % len(probe)][0], r)) <= CONTEXT]
    own_probe = pack([encode_example(*probe[j]) for j in fits], 99)
    swap_probe = pack([encode_example(probe[(j + 1) % len(probe)][0], probe[j][1]) for j in fits], 99)
    stats = corpus.statistics(train_pairs)
    print(f"corpus: {stats}", flush=True)

    cfg = CONFIG
    params = {k: v.requires_grad_(True) for k, v in init_params(cfg, args.seed).items()}
    decay = [v for k, v in params.items() if v.dim() == 2]
    no_decay = [v for k, v in params.items() if v.dim() != 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": args.weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=args.lr, betas=(0.9, 0.95), eps=1e-8)
    step, train_seconds, history, smooth = 0, 0.0, [], None
    if os.path.exists(args.checkpoint) and not args.fresh:
        ck = torch.load(args.checkpoint)
        if ck["config"] != cfg or ck["args"] != vars_for_checkpoint(args):
            print(f"checkpoint {args.checkpoint} is for other settings; starting fresh", flush=True)
        else:
            with torch.no_grad():
                for k, v in ck["params"].items():
                    params[k].copy_(v)
            opt.load_state_dict(ck["opt"])
            step, train_seconds, history, smooth = ck["step"], ck["train_seconds"], ck["history"], ck.get("smooth")
            print(f"resumed from {args.checkpoint} at step {step}", flush=True)

    nparams = sum(v.numel() for v in params.values())
    tokens_per_epoch = sum(len(e) for e in train_ex)
    print(f"model: {nparams} parameters ({nparams * 4 / 1e6:.2f} MB in F32); train {len(train_ex)} examples "
          f"({tokens_per_epoch} tokens), held-out {len(held_ex)}; oneDNN sgemm: {DNNL is not None}", flush=True)
    print(f"forward vs make_golden.gpt2_forward: max |diff| {check_against_golden(params, cfg):.2e}", flush=True)

    stream = batches(train_ex, args.batch, args.seed)
    for _ in range(step):  # skip what the checkpoint already trained on
        next(stream)
    t_last = time.time()
    while step < args.steps:
        epoch, _, (ids, pos, seg, resp) = next(stream)
        lr = lr_at(step, args.steps, args.lr, args.warmup, 0.1)
        for group in opt.param_groups:
            group["lr"] = lr
        total, n = batch_loss(params, cfg, ids, pos, seg, resp if args.loss == "response" else None)
        loss = total / n
        opt.zero_grad(set_to_none=True)
        loss.backward()
        gnorm = torch.nn.utils.clip_grad_norm_(list(params.values()), 1.0).item()
        opt.step()
        step += 1
        smooth = loss.item() if smooth is None else 0.95 * smooth + 0.05 * loss.item()
        if step % args.log_every == 0 or step == args.steps:
            now = time.time()
            train_seconds += now - t_last
            t_last = now
            print(f"step {step}/{args.steps} epoch {epoch} loss {loss.item():.4f} (smoothed {smooth:.4f}) lr {lr:.2e} "
                  f"grad norm {gnorm:.2f} tokens/step {n} elapsed {train_seconds / 60:.1f} min", flush=True)
        if step % args.eval_every == 0 or step == args.steps:
            ev = evaluate(params, cfg, held)
            ev_swap = evaluate(params, cfg, swap_probe)
            ev_own = evaluate(params, cfg, own_probe)
            gap = ev_swap["response"] - ev_own["response"]
            history.append({"step": step, "train_loss_smoothed": round(smooth, 4), "heldout_loss": round(ev["all"], 4),
                            "instruction_gap": round(gap, 4),
                            "heldout_response_loss": round(ev["response"], 4), "minutes": round(train_seconds / 60, 2)})
            print(f"  held-out loss {ev['all']:.4f} (response tokens only {ev['response']:.4f}); "
                  f"response loss after another topic's instruction is higher by {gap:.4f}", flush=True)
            t_last = time.time()  # evaluation time is not training time
        if step % args.checkpoint_every == 0 or step == args.steps:
            save_checkpoint(args, params, opt, step, train_seconds, history, smooth)
    final = evaluate(params, cfg, held)
    return params, {
        "stats": stats, "nparams": nparams, "steps": step, "train_seconds": train_seconds, "history": history,
        "final_train_loss_smoothed": history[-1]["train_loss_smoothed"] if history else None,
        "final_heldout": final, "tokens_per_epoch": tokens_per_epoch,
    }


def vars_for_checkpoint(args):
    return {k: getattr(args, k) for k in ("steps", "batch", "lr", "warmup", "weight_decay", "seed", "loss")}


def save_checkpoint(args, params, opt, step, train_seconds, history, smooth):
    tmp = args.checkpoint + ".tmp"
    torch.save({"config": CONFIG, "args": vars_for_checkpoint(args), "params": {k: v.detach() for k, v in params.items()},
                "opt": opt.state_dict(), "step": step, "train_seconds": train_seconds, "history": history,
                "smooth": smooth}, tmp)
    os.replace(tmp, args.checkpoint)


# ---- sampling and the rubric-style checks -----------------------------------------------------

SAMPLE_PROMPTS = [
    ("Describe cats.", "cats"), ("Write one sentence about the moon.", "moon"), ("Ask a question about rain.", "rain"),
    ("List three facts about bees.", "bees"), ("Explain volcanoes in under 15 words.", "volcanoes"),
    ("Say something nice about teachers.", "teachers"), ("Give a tip about camping.", "camping"),
    ("Tell me about Paris.", "Paris"), ("Write a short poem about snow.", "snow"), ("Do you like pizza?", "pizza"),
    ("Describe dogs.", "dogs"), ("Write one sentence about oceans.", "oceans"), ("Ask a question about Mars.", "Mars"),
    ("List three facts about trees.", "trees"), ("Explain sleep in under 10 words.", "sleep"),
    ("Say something nice about libraries.", "libraries"), ("Give a tip about running.", "running"),
    ("Tell me about whales.", "whales"), ("Explain gratitude to a child.", "gratitude"), ("Why do people like tea?", "tea"),
    ("Describe thunderstorms.", "thunderstorms"), ("Write one sentence about chess.", "chess"),
    ("Ask a question about penguins.", "penguins"), ("List two facts about Tokyo.", "Tokyo"),
    ("Explain math in under 20 words.", "math"), ("Say something nice about gardens.", "gardens"),
    ("Give a tip about exams.", "exams"), ("Tell me about honey.", "honey"), ("Compare cats and dogs.", "cats"),
    ("Describe happiness in one word.", "happiness"), ("Tell a short story about robots.", "robots"),
    ("Name three animals.", None), ("Describe fog.", "fog"), ("Write one sentence about trains.", "trains"),
    ("Ask a question about stars.", "stars"), ("List three facts about rivers.", "rivers"),
    ("Explain rainbows in under 12 words.", "rainbows"), ("Say something nice about soup.", "soup"),
    ("Give a tip about swimming.", "swimming"), ("Tell me about elephants.", "elephants"),
    # Topics the corpus never mentions: the model can only copy the word from the instruction.
    ("Describe dinosaurs.", "dinosaurs"), ("Write one sentence about Prague.", "Prague"),
    ("Ask a question about lanterns.", "lanterns"), ("List three facts about pirates.", "pirates"),
    ("Explain bubbles in under 15 words.", "bubbles"), ("Say something nice about volleyball.", "volleyball"),
    ("Give a tip about snowmen.", "snowmen"), ("Tell me about orchestras.", "orchestras"),
    ("Do you like hedgehogs?", "hedgehogs"), ("What do you think of ice skating?", "ice skating"),
]


def sample(p, cfg, instructions, temperature, max_new, seed):
    """Temperature sampling for a left-padded batch of prompts; returns (texts, finished flags)."""
    g = torch.Generator().manual_seed(seed)
    prompts = [prompt_ids(i) for i in instructions]
    width = max(len(x) for x in prompts)
    pads = [width - len(x) for x in prompts]
    seqs = [[PAD] * pd + x for pd, x in zip(pads, prompts)]
    done = [False] * len(seqs)
    outs = [[] for _ in seqs]
    pad = torch.tensor(pads)[:, None]
    cache = []
    with torch.no_grad():
        pos, mask = left_padded_inputs(pads, width)
        h = hidden_states(p, cfg, torch.tensor(seqs), pos, mask, cache)[:, -1]
        for t in range(width, width + min(max_new, CONTEXT - width)):
            logits = logits_of(p, h)
            nxt = torch.multinomial(torch.softmax(logits / temperature, dim=-1), 1, generator=g)[:, 0].tolist()
            for b, tok in enumerate(nxt):
                if done[b]:
                    tok = PAD
                elif tok == EOS or tok >= 256:
                    done[b] = True
                else:
                    outs[b].append(tok)
                seqs[b].append(tok)
            if all(done) or t + 1 >= CONTEXT:
                break
            # One new token per row, attending to every cached key after the row's padding.
            keys = torch.arange(t + 1)[None, :]
            mask = torch.zeros(len(seqs), 1, 1, t + 1).masked_fill(~(keys >= pad)[:, None, None, :], float("-inf"))
            h = hidden_states(p, cfg, torch.tensor(nxt)[:, None], (t - pad).clamp(min=0), mask, cache)[:, -1]
    return [bytes(o).decode("utf-8", errors="replace") for o in outs], done


def sample_report(p, cfg, seed):
    texts, finished = sample(p, cfg, [i for i, _ in SAMPLE_PROMPTS], 0.8, CONTEXT, seed)
    rows = []
    for (instr, kw), text, fin in zip(SAMPLE_PROMPTS, texts, finished):
        c = corpus.criteria(text, kw)
        c["finished"] = fin
        under = None
        if " in under " in instr:
            n = int(instr.split(" in under ")[1].split()[0])
            under = len(text.split()) < n
        rows.append({"instruction": instr, "keyword": kw, "completion": text, "criteria": c, "obeys_word_limit": under})
    counts = {k: sum(int(r["criteria"][k]) for r in rows) for k in rows[0]["criteria"]}
    limited = [r["obeys_word_limit"] for r in rows if r["obeys_word_limit"] is not None]
    counts["obeys_under_n_words"] = f"{sum(limited)}/{len(limited)}"
    with_kw = [r for r in rows if r["keyword"]]
    counts["mentions_topic"] = f"{sum(int(r['criteria']['mentions_topic']) for r in with_kw)}/{len(with_kw)}"
    return rows, counts


# ---- files --------------------------------------------------------------------------------------

def bytes_to_unicode():
    """GPT-2's reversible byte -> printable character table."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, (chr(c) for c in cs)))


SPECIALS = [(BOS, "<|bos|>"), (EOS, "<|endoftext|>"), (PAD, "<|pad|>")]


def tokenizer_json():
    vocab = {ch: b for b, ch in sorted(bytes_to_unicode().items())}
    for i, tok in SPECIALS:
        vocab[tok] = i
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
    return {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": i, "content": tok, "single_word": False, "lstrip": False, "rstrip": False,
                          "normalized": False, "special": True} for i, tok in SPECIALS],
        "normalizer": None, "pre_tokenizer": byte_level, "post_processor": None, "decoder": byte_level,
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "", "end_of_word_suffix": "",
                  "fuse_unk": False, "byte_fallback": False, "ignore_merges": False, "vocab": vocab, "merges": []},
    }


def write_model_files(params, out_dir):
    os.makedirs(out_dir, exist_ok=True)

    def dump(name, obj):
        with open(os.path.join(out_dir, name), "w", encoding="utf-8") as f:
            json.dump(obj, f, indent=2, ensure_ascii=False)
            f.write("\n")

    # The app's loader (src/model/load.ts) reads this block: byte tokenizer and the prompt template.
    dump("config.json", {**CONFIG, "rubric_playground": {"tokenizer": "byte", "prompt_template": PROMPT_TEMPLATE}})
    dump("generation_config.json", {"bos_token_id": BOS, "eos_token_id": EOS, "pad_token_id": PAD, "do_sample": True,
                                    "temperature": 0.8, "top_k": 0, "top_p": 1.0, "max_new_tokens": 200})
    dump("tokenizer_config.json", {
        "tokenizer_class": "GPT2Tokenizer", "bos_token": "<|bos|>", "eos_token": "<|endoftext|>", "pad_token": "<|pad|>",
        "unk_token": None, "add_bos_token": False, "add_prefix_space": False, "clean_up_tokenization_spaces": False,
        "model_max_length": CONTEXT,
        "added_tokens_decoder": {str(i): {"content": tok, "lstrip": False, "normalized": False, "rstrip": False,
                                          "single_word": False, "special": True} for i, tok in SPECIALS},
    })
    dump("tokenizer.json", tokenizer_json())
    make_golden.write_safetensors(os.path.join(out_dir, "model.safetensors"), {k: v.detach() for k, v in params.items()},
                                  {"format": "pt"})


def write_recipe(out_dir, args, info, rows, counts):
    s, h = info["stats"], info["final_heldout"]
    noted, generic = corpus.all_topics()
    size = os.path.getsize(os.path.join(out_dir, "model.safetensors"))
    lines = [
        "# tiny-gpt2-byte: the embedded default policy",
        "",
        "A GPT-2-style byte-level model pretrained from scratch by this repository on synthetic,",
        "license-clean instruction/response text. It loads with zero network access.",
        "",
        "## Rebuild",
        "",
        "```",
        "/usr/bin/python3 scripts/pretrain_default.py",
        "```",
        "",
        "Debian's PyTorch (`python3-torch`, 1.13), 2 CPU threads. The script resumes from its checkpoint",
        f"(`--checkpoint`, default in the temp dir) and rewrites every file here, this one included.",
        "Re-running gives the same data and the same initial weights; the trained weights match up to",
        "floating-point rounding in the matrix products.",
        "",
        "## Format",
        "",
        "- Vocabulary of 259 ids: bytes 0-255 are their own ids, 256 = `<|bos|>`, 257 = `<|endoftext|>` (EOS),",
        "  258 = `<|pad|>` (the app's `ByteTokenizer`; `tokenizer.json` is a ByteLevel BPE with no merges that",
        "  gives the same ids).",
        "- One example: `<|bos|>` + UTF-8 bytes of `\"Instruction: {instruction}\\nResponse: \"` + response bytes + `<|endoftext|>`.",
        "  Prompt the model with exactly `<|bos|>Instruction: ...\\nResponse: ` and sample until `<|endoftext|>`.",
        "",
        "## Data",
        "",
        f"`scripts/corpus/` generates {s['pairs']} distinct pairs (seed {TRAIN_SEED}; {s['tokens']} tokens, about "
        f"{s['tokens'] / 1e6:.1f} MB), and a held-out set of {HELDOUT_PAIRS} other pairs (seed {HELDOUT_SEED}). "
        f"{100 - round(corpus.GENERIC_SHARE * 100)}% of the examples are about {len(noted)} topics with notes (facts, tips, questions) "
        f"in {len(set(t.category for t in noted))} categories; {round(corpus.GENERIC_SHARE * 100)}% are about {len(generic)} everyday "
        "nouns with only general statements, so the model learns to copy any topic from the instruction.",
        "Every word comes from `scripts/corpus/topics.txt`, `generic.py` and the templates in `responses.py`,",
        "written for this repository. Instruction kinds: describe, one sentence, ask a question, list N facts,",
        "explain in under N words, say something nice, give a tip, tell me about, explain to a child, do you",
        "like, why do people like, short story, compare, one word, short poem, name N of a category, greetings.",
        f"Response length {s['response_words']['min']}-{s['response_words']['max']} words (median {s['response_words']['median']}):",
        "every example must fit the 256-token context, which caps responses near 45 words.",
        "",
        "Share of training responses that meet rubric-style checks: " + ", ".join(f"{k} {v:.1%}" for k, v in s["rates"].items()) + ".",
        "",
        "## Model and training",
        "",
        f"- GPT-2: n_embd {CONFIG['n_embd']}, n_layer {CONFIG['n_layer']}, n_head {CONFIG['n_head']}, n_inner {CONFIG['n_inner']}, "
        f"n_positions {CONFIG['n_positions']}, vocab {VOCAB}, tied embeddings: {info['nparams']:,} parameters, "
        f"model.safetensors {size / 1e6:.2f} MB (F32).",
        "- Same math as `gpt2_forward` in `scripts/golden/make_golden.py` (the script checks its forward against it).",
        f"- Examples packed whole into rows of {CONTEXT} tokens; attention stays inside each example and positions",
        "  restart at 0 for each, as for a single prompt in the app.",
        ("- Loss: mean next-token cross-entropy over the response bytes and the final EOS (the instruction is read, not predicted)."
         if args.loss == "response" else "- Loss: mean next-token cross-entropy over all real tokens (instruction, response and EOS)."),
        f"- AdamW (betas 0.9/0.95, eps 1e-8, weight decay {args.weight_decay} on matrices), peak lr {args.lr}, "
        f"{args.warmup} warmup steps, cosine decay to 10%, grad-norm clip 1.0, seed {args.seed}.",
        f"- {info['steps']} steps x {args.batch} rows x {CONTEXT} tokens ({info['steps'] * args.batch * CONTEXT / info['tokens_per_epoch']:.1f} "
        f"epochs of the corpus, counting padding); training wall time {info['train_seconds'] / 60:.1f} min on 2 CPU threads",
        "  (evaluation excluded; 0.3 s per step on an idle machine, up to 1-2 s while other jobs share the cores).",
        "- Matrix products go through oneDNN's sgemm (libdnnl, a dependency of Debian's PyTorch) because that",
        "  PyTorch build multiplies matrices with a generic loop at about 2 GFLOP/s.",
        "",
        "What did not work as well, at the same budget: 1200 steps of 32 rows at peak lr 2e-3 (held-out 0.52; the model",
        "ignored the instruction, instruction gap 0.08, and never named the topic), and training on response tokens only",
        "(held-out response loss 0.89 after 1000 steps vs 0.69 with the loss on every token).",
        "",
        "## Results",
        "",
        f"- Final held-out loss: {h['all']:.4f} nats/token over all tokens, {h['response']:.4f} over response tokens only.",
        f"- Final train loss (smoothed): {info['final_train_loss_smoothed']}.",
        "",
        "Losses in nats per byte token. \"Instruction gap\": how much higher the response loss is when",
        "held-out responses follow another example's instruction: how much the model conditions on the instruction.",
        "",
        "| step | train (smoothed) | held-out | held-out, response only | instruction gap | minutes |",
        "|---|---|---|---|---|---|",
    ]
    lines += [f"| {r['step']} | {r['train_loss_smoothed']} | {r['heldout_loss']} | {r['heldout_response_loss']} | "
              f"{r['instruction_gap']} | {r['minutes']} |" for r in info["history"]]
    lines += [
        "",
        f"## Sample completions (temperature 0.8, seed {args.sample_seed}, no top-k/top-p)",
        "",
        f"{len(rows)} prompts, one sample each (the last ten topics never occur in the corpus). Counts over all {len(rows)}:",
        "",
    ]
    for k, v in counts.items():
        lines.append(f"- {k}: {v}" + ("" if isinstance(v, str) else f"/{len(rows)}"))
    lines += [
        "",
        "The completions are short, mostly readable English with misspelled words and mixed-up facts now and",
        "then; facts about the noted topics are the least reliable part. Rubric criteria such as ends with a",
        "question, mentions the topic, under N words and uses a bullet list are met by some samples and missed",
        "by others, which is the variance GRPO needs.",
        "",
        "The first ten, and five on unseen topics:",
        "",
    ]
    shown = rows[:10] + rows[-10:-5]
    for r in shown:
        lines.append(f"**{r['instruction']}**")
        lines.append("")
        lines.append("```")
        lines.append(r["completion"] + ("" if r["criteria"]["finished"] else "  [no EOS]"))
        lines.append("```")
        lines.append("")
    with open(os.path.join(out_dir, "RECIPE.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    with open(os.path.join(tempfile.gettempdir(), "tiny-gpt2-byte-samples.json"), "w", encoding="utf-8") as f:
        json.dump({"rows": rows, "counts": counts}, f, indent=2, ensure_ascii=False)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=3200)
    ap.add_argument("--batch", type=int, default=16, help="rows of 256 tokens per step")
    ap.add_argument("--lr", type=float, default=4e-3)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--loss", choices=["response", "all"], default="all",
                    help="train on response tokens (and EOS) only, or on every real token")
    ap.add_argument("--weight-decay", dest="weight_decay", type=float, default=0.1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--sample-seed", dest="sample_seed", type=int, default=1)
    ap.add_argument("--log-every", dest="log_every", type=int, default=25)
    ap.add_argument("--eval-every", dest="eval_every", type=int, default=400)
    ap.add_argument("--checkpoint-every", dest="checkpoint_every", type=int, default=50)
    ap.add_argument("--checkpoint", default=os.path.join(tempfile.gettempdir(), "tiny-gpt2-byte.ckpt.pt"))
    ap.add_argument("--out", default=OUT_DIR)
    ap.add_argument("--fresh", action="store_true", help="ignore an existing checkpoint")
    args = ap.parse_args()
    params, info = train(args)
    write_model_files(params, args.out)
    rows, counts = sample_report(params, CONFIG, args.sample_seed)
    write_recipe(args.out, args, info, rows, counts)
    for r in rows:
        print(f"> {r['instruction']}\n{r['completion']}\n")
    print(f"criteria over {len(rows)} samples: {counts}")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
