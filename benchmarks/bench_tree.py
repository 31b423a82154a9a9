"""Draft trees against chains, transformers' prompt lookup and plain decoding, on CPU (issue 34, part 6).

Run `make models` once, then `python benchmarks/bench_tree.py` (part of `make bench`; `--quick`
for a smoke run, `--json PATH` to keep the rows). One process, one torch thread, the same ids
for every decoder.

Part 1, SmolLM2-135M-Instruct with the prompt-lookup draft: greedy, chat template, every decoder
stopping at the end of the turn, on the five prompts of `specviz.lm.stats.prompts.TASK_PROMPTS` (those of
bench_prompt_lookup.py). Decoders: plain decoding; chain prompt lookup (gamma="auto"); tree prompt
lookup (tree="auto" and the fixed tries of `--lookup-trees`); transformers'
`generate(prompt_lookup_num_tokens=10)`; "plain again", the control. Every decoder runs once per
round in a rotating order, and a speed-up is plain decoding's fastest process CPU time over its own
fastest (bench_prompt_lookup's `paired` and `speedups`). Every output is checked token for token
against plain decoding: a difference stops the benchmark.

Part 2, the bundled pair (a model draft) at T = 1, fixed length: plain, fixed γ 1..4 (the best one
picked on the even rounds and scored on the odd ones, as bench_prompt_lookup's bundled part does),
chain auto, tree auto, and the fixed trees (3, 2, 1) and (2, 2, 2, 1) for reference. Each decoder
runs the same seeds per round, and plain decoding runs twice (the control).

Part 3, what one verify forward costs: the target reads n = 1 ... 32 positions, as a chain (`feed`)
and as a draft tree under the pending token with its 4-D mask (`Session.feed_tree`). Costs are in
plain steps (the forward over one token), the median of `--cost-reps` repeats in shuffled order,
for both targets. The cost model: a decoder's tokens per target call over its plain steps per call
predicts its speed-up (with the prompt's prefill, measured, on both sides). A call costs the verify
forward over a step's nodes + 1 positions (from the curve) plus the draft, priced at the draft's share
of the steps' own clocks. Per row it says how many tokens per call tree auto would have needed to be
1.10x chain auto at its cost.

Goals (issue 34). Each row is judged against its own control, as bench_auto_vs_plain's `row_verdict`
does: the distance of "plain again" from 1 is the run's timing bias on that row.
1. tree auto >= 0.97x chain auto and >= 0.97x plain decoding on every row;
2. tree auto >= 1.10x chain auto on the edit and code prompts, or on the bundled pair;
3. greedy outputs identical to plain decoding (checked as it runs, or the run stops).
A decoder the engine refuses with a ValueError (a feature not built yet) is reported as
"not available: <its error>", and its cells read "n/a".
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import random
import statistics
import time

# One thread in every pool, before torch starts (see bench_prompt_lookup.py).
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import torch  # noqa: E402
from bench_auto_gamma_replay import verify_cost  # noqa: E402
from bench_auto_vs_plain import row_verdict  # noqa: E402
from bench_prompt_lookup import PROMPTS, hf_greedy, paired, speedups, table  # noqa: E402

from specviz.lm import autoregressive_generate, load_pair, spec_stats, speculative_generate  # noqa: E402
from specviz.lm.engine.inputs import eos_ids  # noqa: E402

MARK = "bench_tree"
FLOOR, GAIN = 0.97, 1.10  # goal 1: tree auto >= 0.97x chain auto and plain; goal 2: >= 1.10x chain auto
GAIN_PROMPTS = ("edit", "code")  # where prompt lookup finds several candidates
BUNDLED = "bundled pair"  # the prefix of part 2's row label
GAMMAS = (1, 2, 3, 4)  # part 2's fixed chains
NODES = (1, 2, 4, 8, 16, 32)  # part 3's forward sizes (positions)
NA = "n/a"
VERDICTS = ("NOT met", "not available", "not measurable", "met")  # worst first


# ----------------------------------------------------------------------------- pure helpers


def parse_trees(text: str) -> list:
    """The tree settings of `--lookup-trees` / `--bundled-trees`, separated by ";".

    >>> parse_trees("auto; 3; 4,2")
    ['auto', 3, (4, 2)]
    """
    out = []
    for part in filter(None, (p.strip() for p in text.split(";"))):
        widths = None if part == "auto" else tuple(int(w) for w in part.split(","))
        out.append("auto" if widths is None else widths if len(widths) > 1 else widths[0])
    return out


def tree_name(tree) -> str:
    """A decoder's column name: 'tree auto', 'tree 3', 'tree (4, 2)'."""
    return f"tree {tree}"


def tree_parents(n: int) -> list:
    """A binary tree of n nodes, breadth first: node 0 (the pending token) under the root, two children per node.

    >>> tree_parents(6)
    [-1, 0, 0, 1, 1, 2]
    """
    return [-1] + [(j - 1) // 2 for j in range(1, n)]


def unavailable(tries: dict) -> dict:
    """{name: error} for each zero-argument call in `tries` that raises ValueError (a feature not built yet)."""
    missing = {}
    for name, call in tries.items():
        try:
            call()
        except ValueError as e:
            missing[name] = str(e)
    return missing


def step_nodes(step) -> tuple:
    """("tree", N) for a tree step, ("chain", γ) for a chain step (γ = 0: a plain step)."""
    return ("tree", len(step.tree.tokens)) if step.tree is not None else ("chain", step.gamma)


def call_cost(nodes: list, curves: dict) -> float:
    """Mean plain steps of the verify forwards of steps with these (kind, nodes): each reads nodes + 1 positions.

    >>> call_cost([("chain", 0), ("tree", 3)], {"chain": {1: 1.0, 4: 1.5}, "tree": {1: 1.1, 4: 1.7}})
    1.35
    """
    return statistics.fmean(verify_cost({"verify_cost": curves[kind]}, n + 1) for kind, n in nodes)


def predicted_speedup(tokens_per_call: float, cost_per_call: float, prefill: float = 0.0, tokens: float = 1.0) -> float:
    """The cost model's speed-up over plain decoding, in plain steps: (prefill + tokens) / (prefill + calls x cost).

    Plain decoding spends the prefill and one plain step per token; the decoder the same prefill and
    `cost_per_call` per `tokens_per_call` tokens. Without a prefill: tokens per call over cost per call.

    >>> predicted_speedup(3.0, 1.5), predicted_speedup(3.0, 1.5, prefill=10, tokens=30)  # 40 / (10 + 10 x 1.5)
    (2.0, 1.6)
    """
    return (prefill + tokens) / (prefill + tokens / tokens_per_call * cost_per_call)


def needed_tokens_per_call(goal: float, chain_tokens_per_step: float, tree_cost: float) -> float:
    """Tokens per call a tree costing `tree_cost` plain steps per call needs for `goal` x a chain's tokens per plain step.

    >>> round(needed_tokens_per_call(1.1, 2.0, 2.5), 6)
    5.5
    """
    return goal * chain_tokens_per_step * tree_cost


def worst(verdicts: list) -> str:
    """All of them must hold: the worst verdict ("not available" when there is none)."""
    return min(verdicts, key=VERDICTS.index) if verdicts else "not available"


def best(verdicts: list) -> str:
    """One of them must hold: the best verdict ("not available" when there is none)."""
    return max(verdicts, key=VERDICTS.index) if verdicts else "not available"


def floor_verdict(row: dict) -> str:
    """Goal 1 on one row: tree auto >= 0.97x chain auto and >= 0.97x plain, against the row's control.

    >>> floor_verdict({"plain again": 1.02, "tree auto": 1.5, "tree auto / chain auto": 1.0})
    'met'
    >>> floor_verdict({"plain again": 1.0, "tree auto": 0.9, "tree auto / chain auto": 1.0})
    'NOT met'
    """
    if not isinstance(row.get("tree auto"), (int, float)):
        return "not available"
    control = row["plain again"]
    return worst(
        [row_verdict(row["tree auto"], control, FLOOR), row_verdict(row["tree auto / chain auto"], control, FLOOR)]
    )


def gain_verdict(rows: list) -> str:
    """Goal 2: tree auto >= 1.10x chain auto on both edit and code, or on the bundled pair (each against its control)."""

    def one(row):
        if not isinstance(row.get("tree auto / chain auto"), (int, float)):
            return "not available"
        return row_verdict(row["tree auto / chain auto"], row["plain again"], GAIN)

    by = {r["prompt"]: one(r) for r in rows}
    lookup = worst([by.get(p, "not available") for p in GAIN_PROMPTS])
    bundled = worst([v for p, v in by.items() if p.startswith(BUNDLED)])
    return best([lookup, bundled])


def goal_lines(rows: list, checked: int) -> list:
    """The goals, one line each with its verdict (rows: parts 1 and 2; checked: greedy outputs compared)."""
    floors = [(r["prompt"], floor_verdict(r)) for r in rows]
    ratios = [
        f"{r['prompt']} {r['tree auto / chain auto']:.2f}" for r in rows if isinstance(r.get("tree auto"), (int, float))
    ]
    return [
        f"goal 1 (tree auto >= {FLOOR}x chain auto and plain on every row): {worst([v for _, v in floors])} "
        f"({'; '.join(f'{p}: {v}' for p, v in floors)})",
        f"goal 2 (tree auto >= {GAIN}x chain auto on edit and code, or on the bundled pair): {gain_verdict(rows)} "
        f"(tree auto / chain auto: {', '.join(ratios) or 'none measured'})",
        f"goal 3 (greedy outputs identical to plain decoding): {'met' if checked else 'not available'} "
        f"({checked} outputs checked token for token)",
    ]


def explain(calls: list) -> list:
    """Per row, the cost model's reading of tree auto against chain auto: what 1.10x would have needed."""
    by = {(c["prompt"], c["decoder"]): c for c in calls}
    lines = []
    for prompt in dict.fromkeys(c["prompt"] for c in calls):
        chain, tree = by.get((prompt, "chain auto")), by.get((prompt, "tree auto"))
        if chain is None or tree is None:
            continue
        cost = tree["verify cost / call"] + tree["draft cost / call"]
        need = needed_tokens_per_call(GAIN, chain["tokens / plain step"], cost)
        lines.append(
            f"{prompt}: tree auto {tree['tokens / call']:.2f} tokens per call at {cost:.2f} plain steps per call "
            f"(predicted {tree['predicted']:.2f}x, measured {tree['measured']:.2f}x); chain auto "
            f"{chain['tokens / call']:.2f} at {chain['verify cost / call'] + chain['draft cost / call']:.2f} "
            f"(predicted {chain['predicted']:.2f}x, measured {chain['measured']:.2f}x); "
            f"{GAIN}x chain auto needs {need:.2f} tokens per call at the tree's cost"
        )
    return lines


def finite(v):
    """A number for the tables and the JSON: NaN as None."""
    return None if isinstance(v, float) and not math.isfinite(v) else v


# ----------------------------------------------------------------------------- measuring


def shape_name(shape: str) -> str:
    """A step shape as the tables print it: "3,2,1" a tree, "chain 4" for "1,1,1,1", "plain" as it is.

    >>> shape_name("3,2,1"), shape_name("1,1,1,1"), shape_name("plain")
    ('3,2,1', 'chain 4', 'plain')
    """
    parts = shape.split(",")
    return f"chain {len(parts)}" if all(p == "1" for p in parts) else shape


def call_row(prompt: str, name: str, results: list, speedup: float, cost: tuple, prefill: float) -> dict:
    """One decoder's tokens per target call, nodes per step and the cost model's prediction beside its speed-up.

    `cost`: part 3's (plain step seconds, curves) for the target; `prefill`: the prompt's prefill in plain steps.
    """
    curves = cost[1]
    st = spec_stats(results)
    steps = [s for r in results for s in r.steps]
    verify = call_cost([step_nodes(s) for s in steps], curves)
    # the draft's share, from the steps' own clocks (wall time, which a busy machine stretches for draft and
    # verify alike), priced against the verify cost from part 3's curve
    verify_s = sum(s.verify_s for s in steps)
    draft = verify * sum(s.draft_s for s in steps) / verify_s if verify_s > 0 else 0.0
    tokens = statistics.fmean(len(r.new_ids) for r in results)
    return {
        "prompt": prompt,
        "decoder": name,
        "tokens / call": st.tokens_per_call,
        "nodes / step": finite(st.nodes_per_step),
        "mean depth": statistics.fmean(st.gammas),
        "verify cost / call": verify,
        "draft cost / call": draft,
        "tokens / plain step": st.tokens_per_call / (verify + draft),
        "predicted": predicted_speedup(st.tokens_per_call, verify + draft, prefill, tokens),
        "measured": speedup,
        "shapes (most used)": "; ".join(f"{shape_name(shape)} x{n}" for shape, n in getattr(st, "shapes", ())[:3]),
    }


def cpu_times(calls: dict, reps: int, seed: int = 0) -> dict:
    """{key: [process CPU seconds of call()]}: each (call, undo) of `calls`, `reps` times in shuffled order, undo untimed.

    One collection first, then the garbage collector stays off throughout: here a full collection takes
    ~0.2 s, more than most forwards timed, so a collection before every call (bench_prompt_lookup's
    `timed`) would cost part 3 more than its forwards.
    """
    keys, times, rnd = list(calls), {k: [] for k in calls}, random.Random(seed)
    gc.collect()
    gc.disable()
    try:
        for _ in range(reps):
            rnd.shuffle(keys)
            for key in keys:
                call, undo = calls[key]
                c = time.process_time()
                call()
                times[key].append(time.process_time() - c)
                undo()
    finally:
        gc.enable()
    return times


def prefill_steps(model, ids: list, plain_step_s: float, reps: int) -> float:
    """What the target's prefill of `ids` costs in plain steps (process CPU time, median of `reps`)."""
    with torch.inference_mode():
        ts = cpu_times({"prefill": (lambda: model.session(ids), lambda: None)}, reps)["prefill"]
    return statistics.median(ts) / plain_step_s


def forward_calls(session, base: list, nodes) -> dict:
    """{("chain" | "tree", n): (one forward over n positions, its undo)} on `session` (which read `base`).

    The chain is `feed` of n tokens, the tree `feed_tree` of n nodes (`tree_parents(n)`) under the last
    committed token; each undo puts the cache back as it was. What this benchmark and bench_gpu.py time.
    """
    fill = (base * (max(nodes) // len(base) + 1))[: max(nodes)]
    length, logits = session.length, session.next_logits
    calls = {}
    for n in nodes:
        calls[("chain", n)] = (lambda n=n: session.feed(fill[:n]), lambda: session.truncate(length, logits))
        calls[("tree", n)] = (
            lambda n=n: session.feed_tree(fill[:n], tree_parents(n)),
            lambda: session.keep_path([], logits),
        )
    return calls


def verify_costs(model, base: list, nodes=NODES, reps: int = 9, seed: int = 0) -> tuple:
    """(plain step seconds, {"chain": {n: plain steps}, "tree": {n: plain steps}}) of one forward over n positions.

    The chain is `feed` of n tokens, the tree `feed_tree` of n nodes (`tree_parents(n)`); the plain step
    is the chain of one. Process CPU time, median of `reps` in shuffled order, the cache rolled back after each.
    """
    if 1 not in nodes:
        raise ValueError(f"nodes must include 1 (the plain step), got {nodes}")
    with torch.inference_mode():
        times = cpu_times(forward_calls(model.session(base), base, nodes), reps, seed)
    step = statistics.median(times[("chain", 1)])
    return step, {k: {n: statistics.median(times[(k, n)]) / step for n in nodes} for k in ("chain", "tree")}


def smollm2_part(args, pair, cost: tuple) -> tuple:
    """Part 1: (rows, call rows, {decoder: error}, outputs checked)."""
    eos = sorted(eos_ids(pair))
    N, kw = args.new_tokens, dict(temperature=0, stop_at_eos=True, threads=None)
    trees = parse_trees(args.lookup_trees)
    rows, calls, missing, checked = [], [], {}, [0]
    print(f"\n{pair.describe()}; greedy, up to {N} new tokens, stop at the end of the turn, {args.rounds} rounds")
    for label, text in PROMPTS.items():
        if args.prompts and label not in args.prompts.split(","):
            continue
        ids = pair.encode(text)
        decoders = {"chain auto": lambda n: speculative_generate(pair, ids, n, "auto", **kw)}
        for tree in trees:
            gamma = "auto" if tree == "auto" else args.lookup_gamma
            decoders[tree_name(tree)] = lambda n, t=tree, g=gamma: speculative_generate(pair, ids, n, g, tree=t, **kw)
        why = unavailable({k: (lambda d=d: d(8)) for k, d in decoders.items()})  # (also the decoders' warm-up)
        missing.update(why)
        want = autoregressive_generate(pair, ids, N, **kw).new_ids  # (also plain decoding's warm-up)

        def check(key, r, label=label, want=want):
            if (r if isinstance(r, list) else r.new_ids) != want:
                raise SystemExit(f"{label}, {key}: output differs from plain greedy decoding")
            checked[0] += 1

        run = {"plain": lambda: autoregressive_generate(pair, ids, N, **kw)}
        run["plain again"] = run["plain"]  # the control
        run.update({k: (lambda d=d: d(N)) for k, d in decoders.items() if k not in why})
        run["transformers lookup"] = lambda: hf_greedy(pair.target.model, ids, N, eos, lookup=args.hf_lookup)
        res, cpu, _ = paired(run, args.rounds, check)
        sp = speedups(cpu)
        row = {"prompt": label, "tokens": len(want), "plain tok/s": len(want) / min(cpu["plain"])}
        row.update({k: sp.get(k, NA) for k in ("plain again", "chain auto", *map(tree_name, trees))})
        row["transformers lookup"] = sp["transformers lookup"]
        has_auto = "tree auto" in sp
        row["tree auto / chain auto"] = sp["tree auto"] / sp["chain auto"] if has_auto else NA
        rows.append(row)
        prefill = prefill_steps(pair.target, ids, cost[0], args.cost_reps)
        calls += [call_row(label, k, [res[k]], sp[k], cost, prefill) for k in decoders if k not in why]
        print(table(rows[-1:]), flush=True)
    return rows, calls, missing, checked[0]


def bundled_part(args, pair, cost: tuple) -> tuple:
    """Part 2: ([one row], call rows, {decoder: error}); the best fixed γ chosen on even rounds, scored on odd ones."""
    ids = pair.encode("PROSPERO:\nNow the")
    N, seeds = min(args.new_tokens, 200), range(args.bundled_seeds)
    kw = dict(temperature=1.0, threads=None)
    decoders = {f"γ={g}": (lambda n, s, g=g: speculative_generate(pair, ids, n, g, seed=s, **kw)) for g in GAMMAS}
    decoders["chain auto"] = lambda n, s: speculative_generate(pair, ids, n, "auto", seed=s, **kw)
    for tree in parse_trees(args.bundled_trees):
        gamma = "auto" if tree == "auto" else len(tree) if isinstance(tree, tuple) else max(GAMMAS)
        decoders[tree_name(tree)] = lambda n, s, t=tree, g=gamma: speculative_generate(
            pair, ids, n, g, tree=t, seed=s, **kw
        )
    missing = unavailable({k: (lambda d=d: d(16, 0)) for k, d in decoders.items()})  # (also the warm-up)
    run = {"plain": lambda: [autoregressive_generate(pair, ids, N, seed=s, **kw) for s in seeds]}
    run["plain again"] = run["plain"]
    run.update({k: (lambda d=d: [d(N, s) for s in seeds]) for k, d in decoders.items() if k not in missing})
    res, cpu, _ = paired(run, args.bundled_rounds)
    work = {k: sum(len(r.new_ids) for r in res[k]) for k in run}  # every run has N tokens (no end token in use)
    sp_pick, sp = (
        speedups({k: ts[0::2] for k, ts in cpu.items()}, work),
        speedups({k: ts[1::2] for k, ts in cpu.items()}, work),
    )
    best_g = max(GAMMAS, key=lambda g: sp_pick[f"γ={g}"])
    row = {"prompt": f"{BUNDLED}, T=1, {len(seeds)} seeds", "tokens": work["plain"]}
    row["plain tok/s"] = work["plain"] / min(cpu["plain"])
    row.update({k: sp.get(k, NA) for k in run if k != "plain"})
    row.update({k: NA for k in missing})
    row["best γ"] = best_g
    has_auto = "tree auto" in sp
    row["tree auto / chain auto"] = sp["tree auto"] / sp["chain auto"] if has_auto else NA
    row["tree auto / best γ"] = sp["tree auto"] / sp[f"γ={best_g}"] if has_auto else NA
    prefill = prefill_steps(pair.target, ids, cost[0], args.cost_reps)
    calls = [call_row(row["prompt"], k, res[k], sp[k], cost, prefill) for k in run if k not in ("plain", "plain again")]
    return [row], calls, missing


def cost_table(curves: dict) -> str:
    """Part 3's table: plain steps per forward over n positions, chain and tree, per target."""
    rows = []
    for n in NODES:
        row = {"positions": n}
        for name, (_, c) in curves.items():
            row[f"{name} chain"], row[f"{name} tree"] = c["chain"][n], c["tree"][n]
        rows.append(row)
    steps = ", ".join(f"{name} {1e3 * s:.2f} ms" for name, (s, _) in curves.items())
    return table(rows) + f"\n\n(one plain step, the forward over one token: {steps})"


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", default="smollm2-135m")
    ap.add_argument("--new-tokens", type=int, default=160)
    ap.add_argument("--rounds", type=int, default=5, help="rounds of every decoder (part 1)")
    ap.add_argument("--bundled-rounds", type=int, default=10, help="rounds of every decoder over all seeds (part 2)")
    ap.add_argument("--bundled-seeds", type=int, default=8)
    ap.add_argument("--lookup-trees", default="auto;3;4,2", help='part 1\'s trees, ";"-separated: auto, k or k1,k2,...')
    ap.add_argument("--lookup-gamma", default="auto", help="γ (the depth cap) of part 1's fixed tries")
    ap.add_argument("--bundled-trees", default="auto;3,2,1;2,2,2,1", help="part 2's trees (γ: the shape's depth)")
    ap.add_argument("--hf-lookup", type=int, default=10, help="transformers' prompt_lookup_num_tokens")
    ap.add_argument("--cost-reps", type=int, default=9, help="repeats of each forward (part 3)")
    ap.add_argument("--prompts", default="", help="comma-separated prompt names (default: all): " + ", ".join(PROMPTS))
    ap.add_argument("--bundled-only", action="store_true", help="parts 2 and 3 on the bundled pair (no SmolLM2)")
    ap.add_argument("--json", default="", help="write every row and verdict to this file")
    ap.add_argument("--quick", action="store_true", help="a smoke run: 8 tokens, edit and code, one round")
    args = ap.parse_args(argv)
    if args.quick:
        args.rounds, args.bundled_rounds, args.new_tokens, args.bundled_seeds, args.cost_reps = 1, 2, 8, 1, 1
        args.prompts = args.prompts or ",".join(GAIN_PROMPTS)
    if args.lookup_gamma != "auto":
        args.lookup_gamma = int(args.lookup_gamma)
    torch.set_num_threads(1)
    clock, took = time.perf_counter(), {}
    bundled = load_pair("bundled", "bundled", device="cpu", progress=False, hf_progress=False)
    smol = (
        None
        if args.bundled_only
        else load_pair(args.target, "prompt-lookup", device="cpu", progress=False, hf_progress=False)
    )
    # part 3 first: its curves price every step of parts 1 and 2
    base_text = PROMPTS["copy"]
    curves = {"bundled": verify_costs(bundled.target, bundled.encode(base_text[:100]), reps=args.cost_reps)}
    if smol is not None:
        curves["SmolLM2"] = verify_costs(smol.target, smol.encode(base_text)[:100], reps=args.cost_reps)
    took["loading and part 3"], clock = time.perf_counter() - clock, time.perf_counter()
    rows, calls, missing, checked = smollm2_part(args, smol, curves["SmolLM2"]) if smol else ([], [], {}, 0)
    took["part 1"], clock = time.perf_counter() - clock, time.perf_counter()
    brows, bcalls, bmissing = bundled_part(args, bundled, curves["bundled"])
    took["part 2"] = time.perf_counter() - clock
    print(f"<!-- {MARK} -->")
    print("\n\n".join(table(r) for r in (rows, brows, calls + bcalls) if r))
    print("\n" + cost_table(curves))
    print(f"<!-- /{MARK} -->\n")
    for name, error in {**missing, **bmissing}.items():
        print(f"{name}: not available: {error}")
    allrows = rows + brows
    noise = max(abs(r["plain again"] - 1.0) for r in allrows)
    print(f"control: plain decoding against itself differs by up to {noise:.1%} in this run")
    goals = goal_lines(allrows, checked)
    print("\n".join(goals + explain(calls + bcalls)))
    print("wall time: " + ", ".join(f"{k} {v:.0f} s" for k, v in took.items()))
    out = {
        "quick": args.quick,
        "smollm2": rows,
        "bundled": brows,
        "calls": calls + bcalls,
        "verify cost": {k: {"plain step s": s, **c} for k, (s, c) in curves.items()},
        "not available": {**missing, **bmissing},
        "goals": goals,
    }
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=1, ensure_ascii=False)
        print(f"wrote {args.json}")
    return out


if __name__ == "__main__":
    main()
