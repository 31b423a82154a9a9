"""Prompt-lookup drafting on SmolLM2-135M-Instruct: plain greedy decoding vs speculative decoding, on CPU.

Run `make models` once, then `python benchmarks/bench_prompt_lookup.py` (part of `make bench`).

One process, one torch thread, greedy decoding (temperature 0), batch 1, stopping at the
end-of-turn token, the chat template applied to both prompts:

* copy: the model is asked to repeat an ~80-token paragraph word for word, so most of
  its answer is already in the context and prompt lookup can propose it;
* free text: a short story, where the answer is new text and lookups rarely match.

Each configuration runs after a warm-up, `--repeats` times interleaved with the others,
and its best time counts. Both wall-clock and process CPU time are measured: with one
torch thread, CPU time is what the decoding itself costs, and it is far less disturbed
than wall time when other programs share the cores. Every speculative output is checked
token for token against plain decoding. Columns: tokens/s (wall clock); speed-up over
plain decoding with this engine's loop, by wall clock and by CPU time; drafted tokens
per verify step; acceptance rate (accepted / drafted); mean acceptance length (tokens
emitted per verify step, the bonus or replacement token included, as vLLM counts it).
transformers' own greedy `generate` and its `prompt_lookup_num_tokens` are shown for
reference, and so is prompt lookup that never matches on a single token (min n-gram 2),
which drafts less on free text.
"""

from __future__ import annotations

import argparse
import time

import torch

from specviz.lm import autoregressive_generate, load_pair, speculative_generate
from specviz.lm.loading import Pair
from specviz.lm.prompt_lookup import PromptLookupModel

PARAGRAPH = (
    "The lighthouse stood on a narrow spit of rock at the mouth of the harbour. Every evening the keeper "
    "climbed the one hundred and twelve steps, trimmed the wick, wound the clockwork that turned the lens, "
    "and wrote the weather in a leather-bound log. Ships passed in the dark without ever seeing him, "
    "guided only by the steady white flash that swept the water every ten seconds."
)
PROMPTS = {
    "copy": "Repeat the following paragraph word for word, and write nothing else.\n\n" + PARAGRAPH,
    "free text": "Write a short story about a lighthouse keeper who finds a message in a bottle.",
}
MARK = "bench_prompt_lookup"


def timed(fn):
    """(fn(), wall seconds, process CPU seconds)."""
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w, time.process_time() - c


def hf_greedy(model, ids, n, eos, lookup=None):
    """transformers' greedy generate (optionally with prompt lookup): new ids."""
    x = torch.tensor([ids])
    kw = dict(max_new_tokens=n, do_sample=False, eos_token_id=eos, pad_token_id=eos, attention_mask=torch.ones_like(x))
    if lookup:
        kw["prompt_lookup_num_tokens"] = lookup
    with torch.inference_mode():
        out = model.generate(x, **kw)
    return out[0, len(ids) :].tolist()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", default="smollm2-135m")
    ap.add_argument("--new-tokens", type=int, default=128)
    ap.add_argument("--gammas", default="3,5,8,12")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--hf-lookup", type=int, default=10, help="transformers' prompt_lookup_num_tokens")
    ap.add_argument("--no-hf", action="store_true", help="skip the transformers reference rows")
    ap.add_argument("--min2-gammas", default="5,12", help="γ values for the min-n-gram-2 rows ('' for none)")
    ap.add_argument("--quick", action="store_true", help="one repeat, γ 5 and 12, no transformers rows")
    args = ap.parse_args()
    if args.quick:
        args.repeats, args.gammas, args.no_hf, args.min2_gammas = 1, "5,12", True, ""
    torch.set_num_threads(args.threads)
    gammas = [int(g) for g in args.gammas.split(",")]
    min2_gammas = [int(g) for g in args.min2_gammas.split(",") if g.strip()]
    N, R = args.new_tokens, args.repeats

    t0 = time.perf_counter()
    pair = load_pair(args.target, "prompt-lookup", device="cpu", progress=True, hf_progress=False)
    load_s = time.perf_counter() - t0
    tok = pair.tokenizer
    eos = tok.eos_token_id
    pair2 = Pair(pair.target, PromptLookupModel(pair.target.vocab_size, min_ngram=2), tok, pair.device)
    print(
        f"\n{pair.describe()}; loaded in {load_s:.1f} s; torch threads {torch.get_num_threads()}; "
        f"greedy, up to {N} new tokens, stop at {tok.eos_token!r}, best of {R}\n"
    )

    rows, ms_per_token, summary = [], None, []
    for label, text in PROMPTS.items():
        ids = pair.encode(text)
        run = {"plain": lambda: autoregressive_generate(pair, ids, N, temperature=0, stop_at_eos=True, threads=None)}
        for g in gammas:
            run[g] = lambda g=g: speculative_generate(pair, ids, N, g, temperature=0, stop_at_eos=True, threads=None)
        for g in min2_gammas:
            run[("min2", g)] = lambda g=g: speculative_generate(
                pair2, ids, N, g, temperature=0, stop_at_eos=True, threads=None
            )
        autoregressive_generate(pair, ids, 4, temperature=0, threads=None)  # warm-up
        speculative_generate(pair, ids, 8, max(gammas), temperature=0, threads=None)
        wall, cpu, results = {}, {}, {}
        if not args.no_hf:
            run["hf"] = lambda: hf_greedy(pair.target.model, ids, N, eos)
            run["hf-lookup"] = lambda: hf_greedy(pair.target.model, ids, N, eos, lookup=args.hf_lookup)
        for _ in range(R):
            for key, fn in run.items():
                r, w, c = timed(fn)
                new = r if isinstance(r, list) else r.new_ids
                if key not in ("plain", "hf", "hf-lookup") and new != results["plain"].new_ids:
                    raise SystemExit(f"{label}, {key}: speculative output differs from plain greedy decoding")
                results[key] = r
                wall[key], cpu[key] = min(wall.get(key, float("inf")), w), min(cpu.get(key, float("inf")), c)
        plain = results["plain"]
        n_new = len(plain.new_ids)
        plain_tps = n_new / wall["plain"]
        if label == "copy":
            ms_per_token = (1e3 * wall["plain"] / n_new, 1e3 * cpu["plain"] / n_new)
        rows.append((label, "plain decoding (this engine)", n_new, plain_tps, 1.0, 1.0, "", "", "", "="))
        for key in [*gammas, *(("min2", g) for g in min2_gammas)]:
            r = results[key]
            drafted = sum(s.gamma for s in r.steps)
            accepted = sum(s.accepted for s in r.steps)
            name = f"prompt lookup, γ={key}" if isinstance(key, int) else f"prompt lookup min n-gram 2, γ={key[1]}"
            rows.append(
                (
                    label,
                    name,
                    n_new,
                    n_new / wall[key],
                    wall["plain"] / wall[key],
                    cpu["plain"] / cpu[key],
                    f"{drafted / len(r.steps):.1f}",
                    f"{accepted / drafted:.2f}" if drafted else "–",
                    f"{n_new / len(r.steps):.2f}",
                    "yes",
                )
            )
        top = max(gammas, key=lambda g: cpu["plain"] / cpu[g])
        summary.append(
            f"{label}: best γ = {top}: {cpu['plain'] / cpu[top]:.2f}x plain decoding by CPU time, "
            f"{wall['plain'] / wall[top]:.2f}x by wall clock ({n_new / wall[top]:.1f} vs "
            f"{plain_tps:.1f} tokens/s)"
        )
        if not args.no_hf:
            for key, name in (
                ("hf", "transformers generate"),
                ("hf-lookup", f"transformers prompt_lookup_num_tokens={args.hf_lookup}"),
            ):
                o = results[key]
                # per generated token, against this engine's plain decoding per generated token
                rows.append(
                    (
                        label,
                        name,
                        len(o),
                        len(o) / wall[key],
                        (len(o) / wall[key]) / plain_tps,
                        (len(o) / cpu[key]) / (n_new / cpu["plain"]),
                        "",
                        "",
                        "",
                        "yes" if o == plain.new_ids else "no",
                    )
                )

    print(f"<!-- {MARK} -->")
    print(
        "| prompt | decoder | new tokens | tokens/s | speed-up (wall) | speed-up (CPU time) | drafted/step | "
        "acceptance | mean acceptance length | same tokens |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for label, name, n, tps, sp, sp_cpu, per_step, acc, mal, same in rows:
        print(
            f"| {label} | {name} | {n} | {tps:.1f} | {sp:.2f}x | {sp_cpu:.2f}x | {per_step} | {acc} | {mal} | {same} |"
        )
    print(f"<!-- /{MARK} -->\n")
    print(
        f"load {load_s:.1f} s; plain decoding on the copy prompt: {ms_per_token[0]:.1f} ms/token wall clock, "
        f"{ms_per_token[1]:.1f} ms/token CPU (prompt reading included)"
    )
    for line in summary:
        print(line)


if __name__ == "__main__":
    main()
