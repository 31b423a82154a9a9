"""A noise-controlled replay of gamma="auto" with prompt lookup: the policy's speed without the machine's noise.

On a shared 2-core machine two identical decoders differ by up to ~6 % from round to round
(the "plain again" control of bench_prompt_lookup.py), which is as large as the differences a
choice of γ makes on free text. Under greedy decoding, though, every decoder emits the same
tokens, and what a policy costs is fixed by *which* steps it takes: how many drafts each step
verifies. So this script replays the engine's loop on recorded data:

* `benchmarks/data/auto_gamma_replay.json`: SmolLM2-135M-Instruct's greedy output for the five
  prompts of bench_prompt_lookup.py, and its measured cost of a verify step with g drafts and
  of each prefill, in plain decoding steps (re-record with `--record` after `make models`);
* the real `PromptLookupModel` session proposes each run (the end token cuts it, as in the
  engine); a draft is accepted while it equals the recorded greedy token;
* each step costs verify_cost[g] plain steps times a log-normal factor (`--noise`, 10 %
  by default: what one step's clock does here), and the chooser is told that noisy time.

It prints, per prompt, the speed-up over plain decoding (prefill included) of `gamma="auto"`
(mean over `--seeds` noise seeds, and the worst seed), of fixed γ, and of transformers'
prompt lookup policy (`prompt_lookup_num_tokens=10`, `max_matching_ngram_size=2`, the
leftmost match, candidates cut before the end token: `PromptLookupCandidateGenerator`,
src/transformers/generation/candidate_generator.py, transformers 5.24.0) replayed the same way.
tests/test_auto_gamma_replay.py asserts issue 17's goals on it.
"""

from __future__ import annotations

import argparse
import json
import math
import random
from pathlib import Path

from specviz.lm.adaptive import AutoGamma, FixedGamma
from specviz.lm.prompt_lookup import PromptLookupModel

DATA = Path(__file__).resolve().parent / "data" / "auto_gamma_replay.json"
FIXED = (3, 4, 6, 10, 16)


def load(path: Path = DATA) -> dict:
    """The recorded data, with the cost tables keyed by int."""
    data = json.loads(path.read_text())
    data["verify_cost"] = {int(k): v for k, v in data["verify_cost"].items()}
    return data


def verify_cost(data: dict, g: int) -> float:
    """Plain steps for a verify step with g drafts: measured, else linear between the measured g (or beyond the last)."""
    curve = data["verify_cost"]
    if g in curve:
        return curve[g]
    ks = sorted(curve)
    lo = max(k for k in ks if k <= g)
    hi = min((k for k in ks if k >= g), default=None)
    if hi is None:
        a, b = ks[-2], ks[-1]
        return curve[b] + (g - b) * (curve[b] - curve[a]) / (b - a)
    return curve[lo] + (curve[hi] - curve[lo]) * (g - lo) / (hi - lo)


def replay(data: dict, name: str, chooser, noise: float = 0.0, seed: int = 0) -> tuple[float, list]:
    """(plain steps spent after the prefill, [(γ, accepted, agreement) per step]) for one chooser on one prompt."""
    rec = data["prompts"][name]
    ids, ref, eos = rec["prompt_ids"], rec["greedy_ids"], set(data["eos"])
    n_max = data["max_new_tokens"]
    rnd = random.Random(seed)
    session = PromptLookupModel(data["vocab_size"]).session(ids)
    seq, t, total, steps = list(ids), 0, 0.0, []
    while t < len(ref):
        room = n_max - t - 1
        run = match = None
        if room > 0:
            session.read(seq[session.length :])
            run, match = session.propose_run(min(room, chooser.max_gamma))
            end = next((i for i, x in enumerate(run) if x in eos), None)
            if end is not None:
                run = run[: end + 1]
        g = chooser.choose(room, run, match)
        drafts = (run or [])[:g]
        acc = 0
        while acc < len(drafts) and t + acc < len(ref) and drafts[acc] == ref[t + acc]:
            acc += 1
        acc = min(acc, len(ref) - t - 1)  # the recorded output ends there (its end token, or the length)
        cost = verify_cost(data, g) * (math.exp(rnd.gauss(0.0, noise)) if noise else 1.0)
        if steps:  # the engine learns nothing from the first step (it reads only the prompt's logits)
            chooser.observe(g, acc, 2e-4 * (g > 0), cost * data["plain_step_seconds"], match)
        total += cost
        steps.append((g, acc, match))
        seq += ref[t : t + acc + 1]
        t += acc + 1
    return total, steps


def transformers_replay(data: dict, name: str, num_tokens: int = 10, max_ngram: int = 2) -> float:
    """Plain steps spent by transformers' prompt-lookup policy (leftmost match, cut before the end token)."""
    rec = data["prompts"][name]
    ids, ref, eos = rec["prompt_ids"], rec["greedy_ids"], set(data["eos"])
    seq, t, total = list(ids), 0, 0.0
    while t < len(ref):
        run = []
        for n in range(min(max_ngram, len(seq) - 1), 0, -1):
            suffix = seq[-n:]
            for start in range(len(seq) - n):  # left to right, as transformers' unfold + nonzero
                if seq[start : start + n] == suffix and start + n < len(seq):
                    run = seq[start + n : start + n + num_tokens]
                    break
            if run:
                break
        run = run[: data["max_new_tokens"] - t - 1]
        for i, x in enumerate(run):
            if x in eos:
                run = run[:i]
                break
        acc = 0
        while acc < len(run) and t + acc < len(ref) and run[acc] == ref[t + acc]:
            acc += 1
        acc = min(acc, len(ref) - t - 1)
        total += verify_cost(data, len(run))
        seq += ref[t : t + acc + 1]
        t += acc + 1
    return total


def evaluate(data: dict, make_auto=AutoGamma, noise: float = 0.1, seeds=range(8)) -> dict:
    """{prompt: {"auto", "auto worst", "best fixed", "best γ", "transformers lookup"}}: speed-ups over plain decoding."""
    out = {}
    for name, rec in data["prompts"].items():
        prefill = data["prefill_cost"][name]
        plain = prefill + len(rec["greedy_ids"])  # one plain step per token
        fixed = {g: plain / (prefill + replay(data, name, FixedGamma(g))[0]) for g in FIXED}
        autos = [plain / (prefill + replay(data, name, make_auto(), noise, s)[0]) for s in seeds]
        best = max(fixed, key=fixed.get)
        out[name] = {
            "auto": sum(autos) / len(autos),
            "auto worst": min(autos),
            "best fixed": fixed[best],
            "best γ": best,
            "transformers lookup": plain / (prefill + transformers_replay(data, name)),
            **{f"γ={g}": v for g, v in fixed.items()},
        }
    return out


def record(path: Path = DATA, new_tokens: int = 128, repeats: int = 9) -> None:
    """Record the greedy outputs and the cost tables again (needs SmolLM2: `make models`)."""
    import statistics
    import time

    import torch
    from bench_prompt_lookup import PROMPTS

    from specviz.lm import autoregressive_generate, load_pair
    from specviz.lm.inputs import eos_ids

    torch.set_num_threads(1)
    pair = load_pair("smollm2-135m", "prompt-lookup", device="cpu", progress=False, hf_progress=False)
    prompts, prefill = {}, {}
    with torch.inference_mode():
        for name, text in PROMPTS.items():
            ids = pair.encode(text)
            r = autoregressive_generate(pair, ids, new_tokens, temperature=0, stop_at_eos=True, threads=None)
            prompts[name] = {"prompt_ids": ids, "greedy_ids": r.new_ids}
            ts = []
            for _ in range(3):
                c = time.process_time()
                pair.target.session(ids)
                ts.append(time.process_time() - c)
            prefill[name] = statistics.median(ts)
        long = pair.encode(PROMPTS["copy"]) * 2
        session = pair.target.session(long[:120])
        base, times = session.length, {g: [] for g in (0, 1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 48, 64)}
        rnd = random.Random(0)
        for _ in range(repeats):
            order = list(times)
            rnd.shuffle(order)
            for g in order:
                c = time.process_time()
                session.feed(long[base : base + g + 1])
                times[g].append(time.process_time() - c)
                session.truncate(base)
    step = statistics.median(times[0])
    data = {
        **{k: v for k, v in json.loads(path.read_text()).items() if k == "about"},
        "model": "smollm2-135m",
        "eos": sorted(eos_ids(pair)),
        "vocab_size": pair.target.vocab_size,
        "max_new_tokens": new_tokens,
        "plain_step_seconds": step,
        "verify_cost": {str(g): round(statistics.median(v) / step, 4) for g, v in times.items()},
        "prefill_cost": {k: round(v / step, 3) for k, v in prefill.items()},
        "prompts": prompts,
    }
    path.write_text(json.dumps(data, indent=1))
    print(f"recorded {path}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--noise", type=float, default=0.1, help="log-normal noise of one step's time (0.1 = 10 %%)")
    ap.add_argument("--seeds", type=int, default=8)
    ap.add_argument("--record", action="store_true", help="record the data again from SmolLM2 (after `make models`)")
    args = ap.parse_args()
    if args.record:
        record()
    data = load()
    res = evaluate(data, noise=args.noise, seeds=range(args.seeds))
    print(f"replay of {data['model']} with prompt lookup, {args.noise:.0%} noise per step, {args.seeds} seeds")
    print(
        "| prompt | auto | auto (worst seed) | "
        + " | ".join(f"γ={g}" for g in FIXED)
        + " | auto / best γ | transformers lookup | auto / transformers |"
    )
    print("|---|" + "---|" * (len(FIXED) + 5))
    for name, r in res.items():
        cells = [r["auto"], r["auto worst"], *(r[f"γ={g}"] for g in FIXED), r["auto"] / r["best fixed"]]
        cells += [r["transformers lookup"], r["auto"] / r["transformers lookup"]]
        print(f"| {name} | " + " | ".join(f"{c:.2f}" for c in cells) + " |")
    gm = math.exp(sum(math.log(r["auto"] / r["transformers lookup"]) for r in res.values()) / len(res))
    print(
        f"worst auto (mean over seeds) {min(r['auto'] for r in res.values()):.3f}; "
        f"worst auto / best γ {min(r['auto'] / r['best fixed'] for r in res.values()):.3f}; "
        f"auto over transformers, geometric mean {gm:.3f}"
    )


if __name__ == "__main__":
    main()
