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

Draft trees (issue 34) are replayed the same way, policies as the engine builds them (`tree_plan`):
plain, chain auto, fixed trees and tree="auto" (`specviz.lm.trees.shape.TreeAuto`), each also as a
second run started from the first's measurements (what `recall` does between gamma="auto" runs):

* prompt lookup on the recorded outputs: the session's trie of candidate runs (`propose_tree`) cut to
  each step's shape, walked along the recorded tokens; a trie step costs verify_cost[N] for its N
  nodes plus the tree step's own work (`TREE_WALK_SECONDS`: the host-built mask and the walk);
* a model draft, the bundled pair at T = 1 simulated: each node's first accepted child drawn from
  `PAIR_ACCEPTANCE` (measured on the bundled pair: a chain of 3 emits 2.53 tokens per target call,
  (3, 2, 1) 2.91, (4, 2, 1, 1) 3.36), each step's seconds from `PAIR_COSTS`: this CPU (plain 302,
  chain γ=3 389, tree (3, 2, 1) 296 tokens/s, a target forward over 16 nodes 1.6 plain steps), and a
  GPU-like device whose forward barely grows with the nodes it reads.

Issue 34's goals on it: tree auto >= 0.97x chain auto and >= 0.97x plain on every row; >= 1.10x
chain auto where several candidates pay (the GPU-like row's second run; here, on this CPU, trees
cost more than they bring and auto runs chains, and the recorded lookups gain nothing from a trie).
"""

from __future__ import annotations

import argparse
import json
import math
import random
from pathlib import Path
from types import SimpleNamespace

from specviz.lm.drafts.prompt_lookup import PromptLookupModel
from specviz.lm.engine.results import TreeStep
from specviz.lm.gamma.adaptive import AutoGamma, FixedGamma
from specviz.lm.trees.shape import tree_plan

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


# ------------------------------------------------------------------------------ draft trees
# A step's record, as the engine hands it to a plan (`observe_step`): a chain's has no tree.
TREE_WALK_SECONDS = 0.85e-3  # a tree step's own work on this CPU: the host-built mask (~0.1 ms) and the walk (~0.75 ms)
PAIR_ACCEPTANCE = {  # the bundled pair at T = 1: first child's acceptance by depth, and P(all k missed) / P(first missed)
    "first": (0.65, 0.74, 0.8, 0.82, 0.84, 0.85, 0.86, 0.87),  # a chain of 3: 1 + .65 + .48 + .38 = 2.52 tokens/call
    "miss": (1.0, 0.72, 0.58, 0.52),  # (3, 2, 1): 2.96 tokens/call, as measured 2.91; (4, 2, 1, 1): 3.5 (3.36)
}
PAIR_COSTS = {  # a model draft's step seconds: plain, per drafted token, verify per token read (in plain steps)
    # this CPU, the bundled pair, 1 thread: plain 3.31 ms (302 tokens/s), a chain of 3 6.5 ms (389 tokens/s), the tree
    # (3, 2, 1) 9.8 ms (its target forward over 16 nodes 1.6 plain steps; the draft's masked level reads)
    "cpu": {"plain": 3.31e-3, "draft": 0.93e-3, "verify": 0.04, "walk": 0.85e-3, "per_level": 0.1e-3, "node": 0.09e-3},
    # a GPU-like device: a forward reads up to ~64 positions for about the price of one; the draft is cheap
    "gpu": {"plain": 8e-3, "draft": 0.6e-3, "verify": 0.002, "walk": 0.2e-3, "per_level": 0.02e-3, "node": 0.002e-3},
}


def tree_record(widths, parents, walk) -> SimpleNamespace:
    """A plan's view of a tree step: `walk` is [(children, accepted index or None)] for each node the walk stood at."""
    fates, path = [-1] * len(parents), []
    for kids, j in walk:
        for i, c in enumerate(kids):
            fates[c] = 1 if i == j else 0 if j is None or i < j else -1
        if j is not None:
            path.append(kids[j])
    ones = [0.5] * len(parents)
    return SimpleNamespace(tree=TreeStep(tuple(widths), [0] * len(parents), list(parents), fates, path, ones, ones))


def full_tree(widths) -> tuple:
    """(parents, children of each node: -1 the root) of a model draft's full tree, breadth first."""
    parents, level = [], [-1]
    for w in widths:
        first = len(parents)
        parents += [p for p in level for _ in range(w)]
        level = list(range(first, len(parents)))
    kids: dict = {}
    for i, p in enumerate(parents):
        kids.setdefault(p, []).append(i)
    return parents, kids


def pair_step_seconds(c: dict, widths: tuple) -> float:
    """A model draft's step: plain, a chain of len(widths) (all ones), or a tree (its nodes, its draft's level reads)."""
    g = len(widths)
    if not g:
        return c["plain"]
    parents, _ = full_tree(widths)
    n, last = len(parents), math.prod(widths)
    step = c["plain"] * (1 + c["verify"] * n) + g * c["draft"]
    return step if max(widths) == 1 else step + c["walk"] + g * c["per_level"] + c["node"] * (n - last - (g - 1))


def pair_replay(costs: dict, make_policy, n_tokens=200, noise=0.1, seed=0, acceptance=PAIR_ACCEPTANCE) -> tuple:
    """(seconds, [widths per step]) of a policy on a simulated model draft: each walk node's first accepted child
    drawn from the acceptance table, each step's time from `pair_step_seconds` with log-normal `noise`."""
    chooser, plan = make_policy()
    rnd, t, total, shapes = random.Random(seed), 0, 0.0, []
    first, miss = acceptance["first"], acceptance["miss"]
    while t < n_tokens:
        g = chooser.choose(n_tokens - t - 1)
        widths = tuple(plan.widths(g)) if plan is not None and g else (1,) * g
        parents, kids = full_tree(widths)
        walk, node = [], -1
        for d in range(g):
            u, c = rnd.random(), first[min(d, len(first) - 1)]
            w = len(kids[node])
            j = next((k for k in range(w) if u < 1 - (1 - c) * miss[min(k, len(miss) - 1)]), None)
            walk.append((kids[node], j))
            if j is None:
                break
            node = kids[node][j]
        acc = min(sum(j is not None for _, j in walk), n_tokens - t - 1)
        walk = walk[: acc + (acc < len(walk))]
        seconds = pair_step_seconds(costs, widths) * (math.exp(rnd.gauss(0.0, noise)) if noise else 1.0)
        draft_s = min(g * costs["draft"], seconds)
        if shapes:  # the engine learns nothing from the first step (it reads only the prompt's logits)
            chooser.observe(g, acc, draft_s, seconds - draft_s)
            if plan is not None:
                plan.observe_step(
                    tree_record(widths, parents, walk) if max(widths, default=1) > 1 else SimpleNamespace(tree=None)
                )
        total += seconds
        shapes.append(widths)
        t += acc + 1
    return total, shapes


def lookup_tree_replay(data: dict, name: str, make_policy, noise: float = 0.0, seed: int = 0) -> tuple:
    """(plain steps spent, [widths per step]) of a policy with prompt-lookup tries on the recorded greedy output, as
    the engine runs it: the session's trie (`propose_tree`) cut to the step's shape; a trie step costs the verify
    forward over its nodes plus the tree step's own work (`TREE_WALK_SECONDS`); a child is accepted when it is the
    recorded token."""
    chooser, plan = make_policy()
    rec = data["prompts"][name]
    ids, ref, eos, n_max = rec["prompt_ids"], rec["greedy_ids"], set(data["eos"]), data["max_new_tokens"]
    rnd, session = random.Random(seed), PromptLookupModel(data["vocab_size"]).session(ids)
    seq, t, total, shapes = list(ids), 0, 0.0, []
    while t < len(ref):
        room, run, match, trie = n_max - t - 1, None, None, None
        if room > 0:
            session.read(seq[session.length :])
            limit = min(room, chooser.max_gamma)
            trie, match = session.propose_tree(limit, plan.widths(limit) if plan is not None else (1,) * limit, eos)
            run = trie.run
        g = chooser.choose(room, run, match)
        widths = plan.widths(g) if plan is not None and g else (1,) * g
        trie = trie.cut(widths) if trie is not None and g else None
        if trie is not None and trie.chain is None:  # a tree step: walk the trie along the recorded tokens
            parents = list(trie.parents)
            kids = {}
            for i, p in enumerate(parents):
                kids.setdefault(p, []).append(i)
            walk, node = [], -1
            while node in kids and t + len(walk) < len(ref) - 1:
                j = next((i for i, c in enumerate(kids[node]) if trie.tokens[c] == ref[t + len(walk)]), None)
                walk.append((kids[node], j))
                if j is None:
                    break
                node = kids[node][j]
            acc, n_nodes = sum(j is not None for _, j in walk), len(parents)
            step = SimpleNamespace(tree=tree_record(trie.widths, parents, walk).tree)
            cost = verify_cost(data, n_nodes) + TREE_WALK_SECONDS / data["plain_step_seconds"]
            gamma = len(trie.widths)
        else:
            drafts = (trie.chain if trie is not None else [])[:g]
            acc = 0
            while acc < len(drafts) and t + acc < len(ref) and drafts[acc] == ref[t + acc]:
                acc += 1
            acc, gamma, step = min(acc, len(ref) - t - 1), len(drafts), SimpleNamespace(tree=None)
            cost = verify_cost(data, gamma)
        cost *= math.exp(rnd.gauss(0.0, noise)) if noise else 1.0
        if shapes:
            chooser.observe(gamma, acc, 2e-4 * (gamma > 0), cost * data["plain_step_seconds"], match)
            if plan is not None:
                plan.observe_step(step)
        total += cost
        shapes.append(tuple(widths))
        seq += ref[t : t + acc + 1]
        t += acc + 1
    return total, shapes


TREE_POLICIES = {  # name -> a fresh (chooser, plan) per run, as the engine's `tree_plan` makes them
    "plain": lambda: (FixedGamma(0), None),
    "chain auto": lambda: (AutoGamma(), None),
    "tree 3,2,1": lambda: tree_plan((3, 2, 1), FixedGamma(3))[::-1],
    "tree 4,2,1,1": lambda: tree_plan((4, 2, 1, 1), FixedGamma(4))[::-1],
    "tree auto": lambda: tree_plan("auto", AutoGamma())[::-1],
}
LOOKUP_POLICIES = {  # prompt lookup: depth from gamma="auto", tries of k runs per node or auto
    "chain auto": lambda: (AutoGamma(), None),
    "trie 2": lambda: tree_plan(2, AutoGamma())[::-1],
    "trie 4": lambda: tree_plan(4, AutoGamma())[::-1],
    "tree auto": lambda: tree_plan("auto", AutoGamma())[::-1],
}


def warmed(make, run_first):
    """A policy factory whose chooser starts from a first run's measurements (`run_first(factory)`), as the
    engine's `recall` starts a gamma="auto" run from the last one on the same models."""

    def make_warm():
        first = make()
        run_first(lambda: first)
        chooser, plan = make()
        chooser.warm_start(first[0])
        return chooser, None if plan is None else chooser

    return make_warm


def evaluate_trees(data: dict, noise: float = 0.1, seeds=range(8), policies=None, lookup=None) -> dict:
    """{row: {policy: tokens/s over plain (mean over seeds), policy + " worst": the worst seed's}}: the model draft's
    rows ("bundled cpu", "bundled gpu") and one row per recorded prompt with prompt-lookup tries."""
    out = {}
    for device, costs in PAIR_COSTS.items():
        plain = 200 * costs["plain"]
        row = out[f"bundled {device}"] = {}
        for name, make in (policies or TREE_POLICIES).items():
            ratios = [plain / pair_replay(costs, make, noise=noise, seed=s)[0] for s in seeds]
            row[name], row[f"{name} worst"] = sum(ratios) / len(ratios), min(ratios)
            if name.endswith("auto"):  # and a second run, started from the first's measurements
                ratios = [
                    plain
                    / pair_replay(costs, warmed(make, lambda m: pair_replay(costs, m, seed=99)), noise=noise, seed=s)[0]
                    for s in seeds
                ]
                row[f"{name} 2nd"], row[f"{name} 2nd worst"] = sum(ratios) / len(ratios), min(ratios)
    for prompt, rec in data["prompts"].items():
        prefill, row = data["prefill_cost"][prompt], {}
        plain = prefill + len(rec["greedy_ids"])
        for name, make in (lookup or LOOKUP_POLICIES).items():
            ratios = [plain / (prefill + lookup_tree_replay(data, prompt, make, noise, s)[0]) for s in seeds]
            row[name], row[f"{name} worst"] = sum(ratios) / len(ratios), min(ratios)
        out[prompt] = row
    return out


def record(path: Path = DATA, new_tokens: int = 128, repeats: int = 9) -> None:
    """Record the greedy outputs and the cost tables again (needs SmolLM2: `make models`)."""
    import statistics
    import time

    import torch
    from bench_prompt_lookup import PROMPTS

    from specviz.lm import autoregressive_generate, load_pair
    from specviz.lm.engine.inputs import eos_ids

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
    trees = evaluate_trees(data, noise=args.noise, seeds=range(args.seeds))
    print(f"\ndraft trees: tokens/s over plain decoding, mean over {args.seeds} seeds (the worst seed for tree auto)")
    for row, r in trees.items():
        cells = ", ".join(f"{k} {v:.2f}" for k, v in r.items() if not k.endswith("worst"))
        print(
            f"- {row}: {cells}; tree auto / chain auto {r['tree auto'] / r['chain auto']:.3f} (worst seed "
            f"{r['tree auto worst'] / r['chain auto']:.3f})"
            + (f", 2nd runs {r['tree auto 2nd'] / r['chain auto 2nd']:.3f}" if "tree auto 2nd" in r else "")
        )


if __name__ == "__main__":
    main()
