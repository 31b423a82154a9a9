"""Per-token cost of the three cache paths: DynamicCache (HFModel), StaticCache eager, StaticCache compiled.

Run with `python benchmarks/bench_static_cache.py [--device cpu|cuda] [--no-compile]`. One process,
the bundled pair, batch 1, one torch thread on CPU. Prints, for the target and the draft:

- the decode step (1 token) in ms/token, and a verify chunk of γ+1 tokens in ms/chunk;
- the compile warm-up (the 1-token step plus chunks padded to 2 or γ+1 tokens); it is shorter when
  inductor's on-disk cache (TORCHINDUCTOR_CACHE_DIR) already holds these graphs from an earlier run;
- greedy plain and speculative decoding in tokens/s through `specviz.lm`'s engine with each pair,
  checking that all three paths give the same tokens;

with every figure's ratio to the DynamicCache path beside it. Contenders are interleaved and each
figure is the median of `--repeats` runs (other processes on a shared machine add noise). On
CUDA the step timings synchronise once at the end of each run; the generations synchronise as the
engine does.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from specviz.lm import HFModel, Pair, autoregressive_generate, load_pair, speculative_generate
from specviz.lm.engine.static_cache import StaticHFModel

PROMPTS = ["ROMEO:\nBut soft, what light", "HAMLET:\nTo be, or not to be,", "KING HENRY:\nOnce more unto the"]


def _sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


def step_ms(model, chunk: int, n_tokens: int) -> float:
    """Milliseconds per feed of `chunk` tokens, over about n_tokens tokens (rolling back to stay in the context)."""
    prompt = list(range(65, 81))
    s = model.session(prompt)
    feeds = max(1, n_tokens // chunk)
    limit = (model.max_positions or 10**9) - chunk
    ids = [(7 * i) % 200 + 32 for i in range(chunk)]
    s.feed(ids)  # first call outside the clock
    _sync(model.device)
    t0 = time.perf_counter()
    for _ in range(feeds):
        if s.length > limit:
            s.truncate(len(prompt), s.next_logits)  # no re-read: timing only
        s.feed(ids)
    _sync(model.device)
    return (time.perf_counter() - t0) / feeds * 1e3


def median_of(fn, repeats):
    return statistics.median(fn() for _ in range(repeats))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--gamma", type=int, default=4)
    ap.add_argument("--tokens", type=int, default=200, help="tokens per step-timing run")
    ap.add_argument("--new-tokens", type=int, default=120, help="tokens per generation")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--no-compile", action="store_true", help="skip the compiled path (its warm-up is long on CPU)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    pair = load_pair(device=args.device)
    V, bucket = pair.target.vocab_size, args.gamma + 1
    print(f"torch {torch.__version__}, device {args.device}, 1 thread; {pair.describe()}")

    paths = {"dynamic": {}, "static": {}, "compiled": {}}
    if args.no_compile:
        del paths["compiled"]
    for role in ("target", "draft"):
        hf = getattr(pair, role).model
        paths["dynamic"][role] = HFModel(hf, role, vocab_size=V)
        paths["static"][role] = StaticHFModel(hf, role, vocab_size=V)
        if "compiled" in paths:
            m = StaticHFModel(hf, role, vocab_size=V, compile=True, verify_bucket=(2, bucket))
            print(f"compiling {role} (1-token step, chunks padded to 2 or {bucket})... ", end="", flush=True)
            print(f"warm-up {m.warmup():.1f} s")
            paths["compiled"][role] = m

    def row(label, figures, unit, better_low=True):
        base = figures["dynamic"]
        cells = []
        for path, v in figures.items():
            ratio = base / v if better_low else v / base
            cells.append(f"{path} {v:8.3f} {unit} ({ratio:4.2f}x)")
        print(f"  {label:<28}" + "   ".join(cells))

    print(f"\nper-step cost, median of {args.repeats} (speed-up over dynamic in brackets)")
    for role in ("target", "draft"):
        for chunk, label in ((1, f"{role} decode step"), (bucket, f"{role} verify chunk of {bucket}")):
            runs = {p: [] for p in paths}
            for _ in range(args.repeats):  # interleaved
                for p in paths:
                    runs[p].append(step_ms(paths[p][role], chunk, args.tokens))
            row(label, {p: statistics.median(v) for p, v in runs.items()}, "ms")

    print(
        f"\ngreedy generation, {args.new_tokens} new tokens x {len(PROMPTS)} prompts, tokens/s "
        f"(median of {args.repeats}; speed-up over dynamic in brackets)"
    )
    pairs = {p: Pair(paths[p]["target"], paths[p]["draft"], pair.tokenizer) for p in paths}
    for label, gamma in (("plain", 0), (f"speculative gamma={args.gamma}", args.gamma)):
        runs, outputs = {p: [] for p in paths}, {p: None for p in paths}
        for _ in range(args.repeats):
            for p, pr in pairs.items():
                t0, n, ids = time.perf_counter(), 0, []
                for prompt in PROMPTS:
                    if gamma:
                        r = speculative_generate(pr, prompt, args.new_tokens, gamma=gamma, temperature=0)
                    else:
                        r = autoregressive_generate(pr, prompt, args.new_tokens, temperature=0)
                    n += len(r.new_ids)
                    ids.append(r.new_ids)
                runs[p].append(n / (time.perf_counter() - t0))
                outputs[p] = ids
        row(label, {p: statistics.median(v) for p, v in runs.items()}, "tok/s", better_low=False)
        same = all(o == outputs["dynamic"] for o in outputs.values())
        print(f"  {'':<28}same tokens on every path: {same}")
        if not same:
            raise SystemExit("the cache paths disagree on greedy output")


if __name__ == "__main__":
    main()
