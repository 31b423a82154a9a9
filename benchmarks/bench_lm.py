"""Speculative decoding on a real pair vs plain decoding vs transformers' assisted generation.

Run with `make bench` (or `python benchmarks/bench_lm.py [--target T --draft D]`). All
contenders run in one process on the same pair, prompts and sampling settings
(temperature 1, no top-k/top-p), batch 1, one torch thread on CPU, after a warm-up,
with repeats; only generated tokens count.

Columns: tokens/s; acceptance = accepted / drafted; α = mean sum min(p, q); speedup over
plain autoregressive decoding with this engine's loop; the textbook bound
(1 - α^(γ+1)) / ((1 - α)(γ c + 1)) with c = draft/target per-token time; and the
cost-model prediction E[tokens/step] · t_target / (γ t_draft + t_verify) from measured times.
"""

from __future__ import annotations

import argparse
import time

import torch

from specviz.lm import autoregressive_generate, load_pair, speculative_generate
from specviz.lm.stats.stats import spec_stats

PROMPTS = [
    "ROMEO:\nBut soft, what light",
    "KING HENRY:\nOnce more unto the",
    "HAMLET:\nTo be, or not to be,",
    "First Citizen:\nBefore we proceed any further,",
]


def timed(fn, repeats):
    """Run fn() `repeats` times; return (results, total generated tokens, total seconds)."""
    results, secs = [], 0.0
    for _ in range(repeats):
        t0 = time.perf_counter()
        r = fn()
        secs += time.perf_counter() - t0
        results.append(r)
    return results, secs


def hf_generate(model, tok, prompt, n, assistant=None, seed=0):
    torch.manual_seed(seed)
    enc = tok(prompt, return_tensors="pt").to(model.device)
    kw = dict(
        max_new_tokens=n,
        do_sample=True,
        top_k=0,
        top_p=1.0,
        temperature=1.0,
        pad_token_id=tok.eos_token_id if tok.eos_token_id is not None else 0,
    )
    if assistant is not None:
        kw["assistant_model"] = assistant
    with torch.inference_mode():
        out = model.generate(**enc, **kw)
    return out.shape[1] - enc["input_ids"].shape[1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", default="bundled")
    ap.add_argument("--draft", default="bundled")
    ap.add_argument("--device", default="auto")
    ap.add_argument("--new-tokens", type=int, default=128)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--gammas", default="1,2,3,4,5,6,7,8")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    pair = load_pair(args.target, args.draft, device=args.device)
    tok = pair.tokenizer
    N, R = args.new_tokens, args.repeats
    print(
        f"pair: {pair.describe()}; {len(PROMPTS)} prompts x {R} repeats x {N} new tokens; "
        f"torch threads {torch.get_num_threads()}\n"
    )

    def per_prompt(fn):
        res, secs = [], 0.0
        for i, prompt in enumerate(PROMPTS):
            fn(prompt, 10_000 + i)  # warm-up
            r, s = timed(lambda: fn(prompt, i), R)
            res += r
            secs += s
        return res, secs

    rows = []
    # plain autoregressive sampling with this package's loop: target, then draft (for c)
    ar, ar_s = per_prompt(lambda pr, sd: autoregressive_generate(pair, pr, N, seed=sd, threads=None))
    ar_tps = sum(len(r.new_ids) for r in ar) / ar_s
    t_target = ar_s / sum(len(r.new_ids) for r in ar)
    dr, dr_s = per_prompt(lambda pr, sd: autoregressive_generate(pair.draft, tok.encode(pr), N, seed=sd, threads=None))
    t_draft = dr_s / sum(len(r.new_ids) for r in dr)
    c = t_draft / t_target
    rows.append(("autoregressive (target, this loop)", ar_tps, "", "", 1.0, "", ""))
    # transformers
    tm, dm = pair.target.model, pair.draft.model
    hf, hf_s = per_prompt(lambda pr, sd: hf_generate(tm, tok, pr, N, seed=sd))
    rows.append(("transformers generate (target)", sum(hf) / hf_s, "", "", sum(hf) / hf_s / ar_tps, "", ""))
    hfa, hfa_s = per_prompt(lambda pr, sd: hf_generate(tm, tok, pr, N, assistant=dm, seed=sd))
    hfa_tps = sum(hfa) / hfa_s
    rows.append(("transformers assisted generation", hfa_tps, "", "", hfa_tps / ar_tps, "", ""))
    best = None
    for g in [int(x) for x in args.gammas.split(",")]:
        res, secs = per_prompt(lambda pr, sd: speculative_generate(pair, pr, N, g, seed=sd, threads=None))
        st = spec_stats(res)
        tps = sum(len(r.new_ids) for r in res) / secs
        pred = st.predicted_speedup(t_target)
        rows.append(
            (
                f"specviz speculative, γ={g}",
                tps,
                f"{st.acceptance_rate:.3f}",
                f"{st.alpha:.3f}",
                tps / ar_tps,
                f"{st.bound(c):.2f}",
                f"{pred:.2f}",
            )
        )
        if best is None or tps > best[1]:
            best = (g, tps, tps / ar_tps, pred)

    print(f"per-token time: target {t_target * 1e3:.2f} ms, draft {t_draft * 1e3:.2f} ms, c = {c:.3f}\n")
    print("| decoder | tokens/s | acceptance | α | speedup vs AR | bound | cost model |")
    print("|---|---|---|---|---|---|---|")
    for name, tps, acc, alpha, sp, bound, pred in rows:
        print(f"| {name} | {tps:.0f} | {acc} | {alpha} | {sp:.2f}x | {bound} | {pred} |")
    g, tps, sp, pred = best
    print(
        f"\nbest γ = {g}: {tps:.0f} tokens/s = {tps / hfa_tps:.2f}x transformers' assisted generation; "
        f"measured speedup {sp:.2f}x = {sp / pred:.2f} of the cost-model prediction {pred:.2f}x"
    )


if __name__ == "__main__":
    main()
