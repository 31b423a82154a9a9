"""The project's one GPU check: correctness on the device, then speed, in under five minutes.

    python benchmarks/bench_gpu.py                  # CUDA when torch sees a GPU, else CPU
    python benchmarks/bench_gpu.py --device cpu     # the same checks on the CPU (smaller big pair)
    python benchmarks/bench_gpu.py --quick          # fewer tokens (a smoke run)
    python benchmarks/bench_gpu.py --only tree      # the draft-tree checks and rows only

Needs only torch + transformers + numpy + scipy + pytest (no plotly / jupyter), so it runs on a bare
GPU image. It prints markdown tables and writes them, with a JSON copy, to $OUT (or ./artifacts/).

Checks (each PASS/FAIL; a CUDA-only check on a CPU reads "skipped"):
1. the lm tests that need no plotting (`pytest tests/test_lm_engine.py tests/test_lm_compat.py ...`,
   the draft-tree tests among them) run with SPECVIZ_TEST_DEVICE set to this device;
2. greedy equality on the device: the bundled pair, speculative (γ = 1, 4) == plain == transformers'
   `generate(do_sample=False)`, token for token;
3. the cached session's next-token distribution == an uncached forward, every step, on the device;
4. the torch sampler on the device: verify_chain_torch on the tutorial's p, q, 10^6 rows, chi-square
   against p (false-alarm rate 1e-3), and no token with p = 0;
5. the tree walk on CUDA with no host synchronisation (`pytest tests/test_tree_verify.py -k cuda`);
6. greedy draft trees on the device: the bundled pair, tree (3, 2, 1) and tree "auto" == plain decoding.

Speed (batch 1, temperature 1, no top-k, after a warm-up):
- per-token floor of each model: eager with a host sync every token, eager without syncs, static
  cache + torch.compile (CUDA graphs on a GPU; with --compile on a CPU, where warm-up is long);
- tokens/s: plain decoding, speculative γ sweep, transformers `generate`, transformers assisted
  generation, for the bundled pair and a random-init GPT-2 pair (~300 M / ~25 M in bf16 on a GPU;
  a smaller one on a CPU), with the cost-model prediction E[tokens/step] t_target / (γ t_draft + t_verify);
- draft trees, on both pairs: the verify cost of one target forward over n = 1, 4, 16, 64 tree nodes
  (and the chain of n) in plain steps (the forward over one token), wall clock with device syncs,
  median of repeats in shuffled order; tokens/s and tokens per target call of plain decoding, chain
  auto, tree (3, 2, 1), tree (4, 2, 1, 1) and tree auto on the same seeds (the decoders' order rotating
  per seed), with tree auto / chain auto.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_tree import forward_calls, tree_name  # noqa: E402 - pure helpers; bench_tree imports no plotly

from specviz.lm import HFModel, Pair, autoregressive_generate, load_pair, speculative_generate  # noqa: E402
from specviz.lm.stats.stats import spec_stats  # noqa: E402
from specviz.samplers.torch_sampling import verify_chain_torch  # noqa: E402

PROMPTS = ["ROMEO:\nBut soft, what light", "HAMLET:\nTo be, or not to be,", "KING HENRY:\nOnce more unto the"]
LM_TESTS = [
    "tests/test_lm_engine.py",
    "tests/test_lm_compat.py",
    "tests/test_lm_stats.py",
    "tests/test_lm_prompt_lookup.py",
    "tests/test_lm_static_cache.py",
    "tests/test_tree_verify.py",
    "tests/test_lm_tree_sessions.py",
    "tests/test_lm_tree_engine.py",
    "tests/test_lm_tree_lookup.py",
    "tests/test_lm_tree_auto.py",
]
TREE_CUDA_TEST = ["tests/test_tree_verify.py", "-k", "cuda"]  # the walk with CUDA's sync detector on
TREES = (None, (3, 2, 1), (4, 2, 1, 1), "auto")  # the tree rows' decoders besides plain: None is chain auto
TREE_NODES = (1, 4, 16, 64)  # the verify-cost rows: nodes in one target forward
VERDICT = {True: "PASS", False: "FAIL", None: "skipped"}  # None: a CUDA-only check off CUDA
RANDOM_PROMPT = list(range(10, 42))  # the random-init pair's prompt ids


def sync(dev):
    if dev.type == "cuda":
        torch.cuda.synchronize()


def table(header, rows) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


# ------------------------------------------------------------------------------ checks


def run_pytest(dev, args: list, timeout: float) -> tuple[int | None, str, float]:
    """(exit code or None on a timeout, pytest's last line, seconds) of `pytest -q -m "not slow" args` on this device."""
    env = dict(os.environ, SPECVIZ_TEST_DEVICE=dev.type, SPECVIZ_SKIP_SMOLLM2="1")
    cmd = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "-m", "not slow", *args]
    t0 = time.perf_counter()
    try:
        r = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"timed out after {timeout:.0f} s", time.perf_counter() - t0
    last = (r.stdout.strip().splitlines() or ["(no output)"])[-1]
    return r.returncode, last, time.perf_counter() - t0


def check_pytest(dev, quick) -> tuple[bool, str]:
    rc, last, took = run_pytest(dev, [f for f in LM_TESTS if (ROOT / f).exists()], timeout=240)
    return rc == 0, f"{last} ({took:.0f} s)"


def cuda_test_verdict(device_type: str, rc: int | None, summary: str) -> bool | None:
    """A CUDA-only test's verdict: on CUDA it must have run and passed; elsewhere None (skipped) if pytest ran clean.

    >>> cuda_test_verdict("cuda", 0, "1 passed, 9 deselected in 2.1s"), cuda_test_verdict("cuda", 0, "1 skipped")
    (True, False)
    >>> cuda_test_verdict("cpu", 0, "1 skipped, 9 deselected in 1.0s"), cuda_test_verdict("cpu", 1, "1 failed")
    (None, False)
    """
    if rc != 0:
        return False
    if device_type == "cuda":
        return "passed" in summary and "skipped" not in summary
    return None


def check_tree_cuda(dev) -> tuple[bool | None, str]:
    """The tree walk on CUDA under CUDA's sync detector (tests/test_tree_verify.py -k cuda); skipped off CUDA."""
    rc, last, took = run_pytest(dev, TREE_CUDA_TEST, timeout=120)
    return cuda_test_verdict(dev.type, rc, last), f"{' '.join(TREE_CUDA_TEST)}: {last} ({took:.0f} s)"


def check_tree_greedy(pair, n) -> tuple[bool, str]:
    """Greedy draft trees (3, 2, 1) and "auto" on the device == plain greedy decoding, token for token."""
    bad = []
    for prompt in PROMPTS:
        ids = pair.tokenizer.encode(prompt, add_special_tokens=False)
        plain = autoregressive_generate(pair, ids, n, temperature=0).new_ids
        for tree in ((3, 2, 1), "auto"):
            gamma = "auto" if tree == "auto" else len(tree)
            if speculative_generate(pair, ids, n, gamma, temperature=0, tree=tree).new_ids != plain:
                bad.append(f"{prompt[:12]!r} {tree_name(tree)}")
    detail = f"{len(PROMPTS)} prompts x tree in ((3, 2, 1), auto), {n} tokens"
    return not bad, detail + (f"; differ: {bad}" if bad else "")


def check_greedy(pair, dev, n) -> tuple[bool, str]:
    tok = pair.tokenizer
    bad = []
    for prompt in PROMPTS:
        ids = tok.encode(prompt, add_special_tokens=False)
        ar = autoregressive_generate(pair, ids, n, temperature=0).new_ids
        x = torch.tensor([ids], device=dev)
        with torch.inference_mode():
            hf = pair.target.model.generate(
                x, attention_mask=torch.ones_like(x), do_sample=False, max_new_tokens=n, pad_token_id=tok.eos_token_id
            )[0, len(ids) :].tolist()
        for g in (1, 4):
            spec = speculative_generate(pair, ids, n, g, temperature=0).new_ids
            if not (spec == ar == hf):
                bad.append(f"{prompt[:12]!r} γ={g}")
    return not bad, f"{len(PROMPTS)} prompts x γ in (1, 4), {n} tokens" + (f"; differ: {bad}" if bad else "")


def check_cache(pair, n) -> tuple[bool, str]:
    m = pair.target
    ids = pair.tokenizer.encode(PROMPTS[0], add_special_tokens=False)
    s = m.session(ids)
    worst = 0.0
    for i in range(n):
        full = m.full_logits(s.tokens)[-1]
        worst = max(worst, float((torch.softmax(full, -1) - torch.softmax(s.next_logits, -1)).abs().max()))
        s.feed([int(s.next_logits.argmax())] * (1 + i % 3))
        if i % 4 == 3:
            s.truncate(s.length - 2)
    return worst < 1e-4, f"{n} steps (feeds of 1-3 tokens, truncations), max |Δp| = {worst:.1e}"


def check_sampler(dev, rows) -> tuple[bool, str]:
    from scipy import stats

    p = torch.tensor([0.6, 0.3, 0.1, 0.0], dtype=torch.float64, device=dev)
    q = torch.tensor([0.4, 0.5, 0.05, 0.05], dtype=torch.float64, device=dev)
    gen = torch.Generator(device=dev).manual_seed(0)
    P, Q = p.expand(rows, 4), q.expand(rows, 4)  # each row: one γ=1 step, no bonus
    drafts = torch.multinomial(Q, 1, generator=gen)[:, 0]
    # one verify per row, batched: draft j is row j; verify_chain_torch's row-wise parts do the work
    p_x, q_x = P.gather(-1, drafts[:, None])[:, 0], Q.gather(-1, drafts[:, None])[:, 0]
    u = torch.rand(rows, generator=gen, device=dev, dtype=torch.float64)
    from specviz.samplers.torch_sampling import categorical_torch, residual_rows

    out = torch.where(u * q_x < p_x, drafts, categorical_torch(residual_rows(P, Q), gen))
    counts = torch.bincount(out, minlength=4).cpu().numpy()
    v = verify_chain_torch(P[:3], Q[:3], drafts[:3], gen)  # the engine's entry point runs on this device
    ok_zero = counts[3] == 0
    pv = stats.chisquare(counts[:3], p[:3].cpu().numpy() * rows).pvalue
    return bool(ok_zero and pv >= 1e-3 and int(v.accepted) <= 3), (
        f"{rows:,} rows, chi-square p = {pv:.3f}, tokens with p = 0: {counts[3]}"
    )


# ------------------------------------------------------------------------------ speed


def per_token_floor(model: HFModel, dev, n, compile_static) -> dict:
    """ms/token of one model with a KV cache: host sync every token / no sync / static cache (+ compile)."""
    ids = list(range(1, 9))
    out = {}
    s = model.session(ids)
    s.feed([1] * 4)
    sync(dev)
    t0 = time.perf_counter()
    for _ in range(n):
        s.feed([int(s.next_logits.argmax())])  # int(): a host sync every token
    out["eager, host sync every token"] = (time.perf_counter() - t0) / n * 1e3
    s = model.session(ids)
    sync(dev)
    t0 = time.perf_counter()
    for _ in range(n):
        s.feed(s.next_logits.argmax()[None])  # stays on the device
    sync(dev)
    out["eager, no sync"] = (time.perf_counter() - t0) / n * 1e3
    try:
        from specviz.lm.engine.static_cache import StaticHFModel
    except ImportError:
        return out
    for compiled in (False, True) if compile_static else (False,):
        fast = StaticHFModel(
            model.model,
            model.name + "-static",
            vocab_size=model.vocab_size,
            max_length=len(ids) + n + 16,
            compile=compiled,
        )
        t_w = time.perf_counter()
        if compiled:
            fast.warmup()
        s = fast.session(ids)
        for _ in range(3):
            s.feed(s.next_logits.argmax()[None])
        sync(dev)
        warm = time.perf_counter() - t_w
        s = fast.session(ids)
        sync(dev)
        t0 = time.perf_counter()
        for _ in range(n):
            s.feed(s.next_logits.argmax()[None])
        sync(dev)
        key = "static cache + torch.compile" if compiled else "static cache, eager"
        out[key] = (time.perf_counter() - t0) / n * 1e3
        if compiled:
            out["compile warm-up s"] = warm
    return out


def hf_tps(model, tok_ids, n, dev, assistant=None) -> float:
    x = torch.tensor([tok_ids], device=dev)
    kw = dict(
        max_new_tokens=n,
        min_new_tokens=n,
        do_sample=True,
        top_k=0,
        top_p=1.0,
        temperature=1.0,
        attention_mask=torch.ones_like(x),
        pad_token_id=0,
    )
    if assistant is not None:
        kw["assistant_model"] = assistant
    torch.manual_seed(0)
    with torch.inference_mode():
        model.generate(x, **dict(kw, max_new_tokens=4, min_new_tokens=4))
        sync(dev)
        t0 = time.perf_counter()
        out = model.generate(x, **kw)
        sync(dev)
    return (out.shape[1] - x.shape[1]) / (time.perf_counter() - t0)


def speed_table(pair, prompt_ids, n, gammas, dev, hf=True) -> tuple[list, dict]:
    """Rows of (decoder, tokens/s, acceptance, α, speed-up vs plain, cost model) on one pair."""
    kw = dict(temperature=1.0, threads=1 if dev.type == "cpu" else None)
    autoregressive_generate(pair, prompt_ids, 8, seed=0, **kw)
    speculative_generate(pair, prompt_ids, 8, 2, seed=0, **kw)
    ar = autoregressive_generate(pair, prompt_ids, n, seed=0, **kw)
    ar_tps = ar.tokens_per_second
    t_target = 1 / ar_tps
    rows = [["plain decoding (this engine)", f"{ar_tps:.0f}", "", "", "1.00x", ""]]
    if hf:
        rows.append(["transformers generate", f"{hf_tps(pair.target.model, prompt_ids, n, dev):.0f}", "", "", "", ""])
        try:
            a = hf_tps(pair.target.model, prompt_ids, n, dev, assistant=pair.draft.model)
            rows.append(["transformers assisted generation", f"{a:.0f}", "", "", f"{a / ar_tps:.2f}x", ""])
        except Exception as e:  # noqa: BLE001 - report, don't stop the check
            rows.append(["transformers assisted generation", f"failed: {type(e).__name__}", "", "", "", ""])
    best = {"gamma": None, "speedup": 0.0, "predicted": float("nan")}
    for g in (*gammas, "auto"):
        r = speculative_generate(pair, prompt_ids, n, g, seed=0, **kw)
        st = spec_stats(r)
        sp = r.tokens_per_second / ar_tps
        pred = st.predicted_speedup(t_target)
        if g == "auto":  # adaptive γ: its own row, never the "best fixed γ"
            gs = st.gammas
            rows.append(
                [
                    f"speculative γ=auto (mean γ {sum(gs) / max(len(gs), 1):.1f})",
                    f"{r.tokens_per_second:.0f}",
                    f"{st.acceptance_rate:.3f}",
                    f"{st.alpha:.3f}",
                    f"{sp:.2f}x",
                    "",
                ]
            )
            best["auto"] = sp
            continue
        rows.append(
            [
                f"speculative γ={g}",
                f"{r.tokens_per_second:.0f}",
                f"{st.acceptance_rate:.3f}",
                f"{st.alpha:.3f}",
                f"{sp:.2f}x",
                f"{pred:.2f}x",
            ]
        )
        if sp > best["speedup"]:
            best = {"gamma": g, "speedup": sp, "predicted": pred}
    return rows, best


def rotated(names: list, i: int) -> list:
    """Round i's order of the decoders: the list rotated by i, so that each runs first in turn.

    >>> rotated(["a", "b", "c"], 4)
    ['b', 'c', 'a']
    """
    k = i % len(names)
    return names[k:] + names[:k]


def tree_decoders() -> dict:
    """{row name: (γ, tree)} of the tree rows' speculative decoders: a fixed tree's γ is its depth.

    >>> tree_decoders()
    {'chain auto': ('auto', None), 'tree (3, 2, 1)': (3, (3, 2, 1)), 'tree (4, 2, 1, 1)': (4, (4, 2, 1, 1)), \
'tree auto': ('auto', 'auto')}
    """
    return {"chain auto" if t is None else tree_name(t): ("auto" if t in (None, "auto") else len(t), t) for t in TREES}


def forward_costs(model: HFModel, base: list, dev, nodes=TREE_NODES, reps: int = 20) -> tuple[float, dict]:
    """(plain step ms, {"chain": {n: plain steps}, "tree": {n: plain steps}}) of one forward over n positions.

    The chain is `feed` of n tokens, the tree `Session.feed_tree` of n nodes (bench_tree's `forward_calls`: a
    binary tree under the last committed token); the plain step is the chain of one. Wall clock
    with a device sync on both sides, median of `reps` in shuffled order after one untimed round, the
    cache rolled back after each.
    """
    with torch.inference_mode():
        calls = forward_calls(model.session(base), base, nodes)
        keys, times, rnd = list(calls), {k: [] for k in calls}, random.Random(0)
        for rep in range(reps + 1):  # round 0: the warm-up
            rnd.shuffle(keys)
            for key in keys:
                call, undo = calls[key]
                sync(dev)
                t0 = time.perf_counter()
                call()
                sync(dev)
                if rep:
                    times[key].append(time.perf_counter() - t0)
                undo()
    step = statistics.median(times[("chain", 1)])
    curves = {k: {n: statistics.median(times[(k, n)]) / step for n in nodes} for k in ("chain", "tree")}
    return step * 1e3, curves


def cost_rows(costs: dict) -> list:
    """The verify-cost table's rows: per n, each pair's chain and tree forward in plain steps.

    >>> cost_rows({"bundled": (0.5, {"chain": {1: 1.0, 4: 1.2}, "tree": {1: 1.1, 4: 1.3}})})
    [[1, '1.00', '1.10'], [4, '1.20', '1.30']]
    """
    nodes = next(iter(costs.values()))[1]["tree"]
    return [[n, *(f"{c[k][n]:.2f}" for _, c in costs.values() for k in ("chain", "tree"))] for n in nodes]


def tree_rows(totals: dict) -> tuple[list, float]:
    """(rows of decoder, tokens/s, tokens per target call, nodes per step, vs plain; tree auto / chain auto).

    `totals[name]`: {"tokens", "seconds", "calls", "nodes"} summed over the seeds ("nodes": drafted
    nodes per drafting step, NaN for plain decoding); plain decoding is "plain".

    >>> rows, ratio = tree_rows({"plain": {"tokens": 100, "seconds": 2.0, "calls": 100, "nodes": float("nan")},
    ...     "chain auto": {"tokens": 100, "seconds": 1.0, "calls": 40, "nodes": 3.0},
    ...     "tree auto": {"tokens": 100, "seconds": 0.8, "calls": 25, "nodes": 7.5}})
    >>> rows[0], rows[-1], round(ratio, 3)
    (['plain', '50', '1.00', '', '1.00x'], ['tree auto', '125', '4.00', '7.5', '2.50x'], 1.25)
    """
    tps = {k: t["tokens"] / t["seconds"] for k, t in totals.items()}
    rows = [
        [k, f"{tps[k]:.0f}", f"{t['tokens'] / t['calls']:.2f}", "" if t["nodes"] != t["nodes"] else f"{t['nodes']:.1f}"]
        + [f"{tps[k] / tps['plain']:.2f}x"]
        for k, t in totals.items()
    ]
    ratio = tps["tree auto"] / tps["chain auto"] if {"tree auto", "chain auto"} <= set(tps) else float("nan")
    return rows, ratio


def tree_speed(pair, prompt_ids, n, seeds, dev) -> tuple[list, float, dict]:
    """tree_rows of plain, chain auto and the trees on one pair at T = 1, each decoder on the same seeds.

    One untimed 16-token warm-up per decoder (auto's memory starts there too), then per seed every
    decoder once in a rotating order; the engine's own clock (`result.seconds`), target calls from
    the steps (one per token for plain decoding).
    """
    kw = dict(temperature=1.0, threads=1 if dev.type == "cpu" else None)
    runs = {"plain": lambda m, s: autoregressive_generate(pair, prompt_ids, m, seed=s, **kw)}
    for name, (gamma, tree) in tree_decoders().items():
        runs[name] = lambda m, s, g=gamma, t=tree: speculative_generate(pair, prompt_ids, m, g, tree=t, seed=s, **kw)
    for run in runs.values():
        run(16, 0)
    results = {k: [] for k in runs}
    for i, seed in enumerate(seeds):
        for name in rotated(list(runs), i):
            results[name].append(runs[name](n, seed))
    totals, shapes = {}, {}
    for name, rs in results.items():
        st = spec_stats(rs) if name != "plain" else None
        totals[name] = {
            "tokens": sum(len(r.new_ids) for r in rs),
            "seconds": sum(r.seconds for r in rs),
            "calls": sum(len(r.steps) for r in rs) if st else sum(len(r.new_ids) for r in rs),
            "nodes": st.nodes_per_step if st else float("nan"),
        }
        if st:
            shapes[name] = list(st.shapes[:3])
    rows, ratio = tree_rows(totals)
    return rows, ratio, {"totals": totals, "shapes (most used)": shapes}


def random_n(dev, n: int) -> int:
    """New tokens per run on the random-init pair: n on a GPU, at most 64 on a CPU."""
    return n if dev.type == "cuda" else min(n, 64)


def random_pair(dev, big: bool):
    """A random-init GPT-2 target/draft pair (~300 M / ~25 M params when big) sharing a 50,257 vocabulary."""
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    dtype = torch.bfloat16 if dev.type == "cuda" else torch.float32
    if big:
        t_cfg = dict(n_layer=24, n_embd=1024, n_head=16)
        d_cfg = dict(n_layer=2, n_embd=384, n_head=6)
    else:
        t_cfg = dict(n_layer=6, n_embd=512, n_head=8)
        d_cfg = dict(n_layer=1, n_embd=256, n_head=4)
    models = []
    for cfg, name in ((t_cfg, "random-target"), (d_cfg, "random-draft")):
        m = GPT2LMHeadModel(GPT2Config(vocab_size=50257, n_positions=1024, **cfg)).to(dev, dtype).eval()
        models.append(HFModel(m, name))
    params = [sum(p.numel() for p in m.model.parameters()) / 1e6 for m in models]
    return Pair(*models, tokenizer=None, device=dev.type), params


def chain_sections(args, pair, rpair, params, dev, n, gammas, results, report) -> None:
    """The per-token floor and the chain speed tables (bundled, compiled, SmolLM2, random pair), into report/results."""
    floor_rows = []
    for role, m in (("target", pair.target), ("draft", pair.draft)):
        f = per_token_floor(m, dev, 32 if args.quick else 128, compile_static=dev.type == "cuda" or args.compile)
        results[f"floor_{role}"] = f
        floor_rows += [(role, k, f"{v:.3f}" if "warm-up" not in k else f"{v:.1f} s") for k, v in f.items()]
    sec = [
        "## Per-token floor, bundled pair (ms/token, KV cache, batch 1)",
        "",
        table(["model", "path", "ms/token"], floor_rows),
        "",
    ]
    c_eager = results["floor_draft"]["eager, no sync"] / results["floor_target"]["eager, no sync"]
    sec.append(f"draft/target cost ratio c, eager without syncs: {c_eager:.2f}")
    if "static cache + torch.compile" in results["floor_target"]:
        c_floor = (
            results["floor_draft"]["static cache + torch.compile"]
            / results["floor_target"]["static cache + torch.compile"]
        )
        sec.append(f"c at the compiled floor: {c_floor:.2f}")
    print("\n".join(sec), flush=True)
    report += sec + [""]

    ids = pair.tokenizer.encode(PROMPTS[0], add_special_tokens=False)
    rows, best = speed_table(pair, ids, n, gammas, dev)
    sec = [
        "",
        "## Tokens/s, bundled pair",
        "",
        table(["decoder", "tokens/s", "acceptance", "α", "vs plain", "cost model"], rows),
        "",
        f"best γ = {best['gamma']}: {best['speedup']:.2f}x plain decoding, "
        f"{best['speedup'] / best['predicted']:.2f} of the cost-model prediction {best['predicted']:.2f}x; "
        f"γ=auto {best.get('auto', float('nan')):.2f}x",
    ]
    print("\n".join(sec), flush=True)
    report += sec
    results["bundled"] = {"rows": rows, "best": best}

    if dev.type == "cuda" or args.compile:
        t_c = time.perf_counter()
        cpair = load_pair(device=dev.type, compile=True, verify_bucket=(2, 5), progress=False)
        warm = time.perf_counter() - t_c
        crows, cbest = speed_table(cpair, ids, n, (1, 2, 4), dev, hf=False)
        plain_c = float(crows[0][1])
        floor_ms = results["floor_target"].get("static cache + torch.compile", float("nan"))
        sec = [
            "",
            f"## Tokens/s, bundled pair, static cache + torch.compile (warm-up {warm:.0f} s)",
            "",
            table(["decoder", "tokens/s", "acceptance", "α", "vs plain (compiled)", "cost model"], crows),
            "",
            f"plain decoding compiled: {plain_c:.0f} tokens/s = {1e3 / plain_c:.3f} ms/token, "
            f"{(1e3 / plain_c) / floor_ms:.2f}x the compiled per-token floor ({floor_ms:.3f} ms); best γ = "
            f"{cbest['gamma']}: {cbest['speedup']:.2f}x, {cbest['speedup'] / cbest['predicted']:.2f} of the "
            f"cost model's {cbest['predicted']:.2f}x",
        ]
        print("\n".join(sec), flush=True)
        report += sec
        results["bundled_compiled"] = {"rows": crows, "best": cbest, "warmup_s": warm}

    sec = ["", "## SmolLM2-135M + prompt lookup, greedy, stop at the end of the turn: plain vs γ=auto", ""]
    try:
        from specviz.lm.load import catalog

        path = catalog.local_path("smollm2-135m")
        if path is None or not path.exists():
            raise FileNotFoundError("smollm2-135m is not fetched on this machine (`specviz models fetch smollm2-135m`)")
        spair = load_pair("smollm2-135m", "prompt-lookup", device=dev.type, progress=False)
        srows = []
        for label, text in (
            ("copy", "Repeat this sentence word for word: the quick brown fox jumps over the lazy dog, twice."),
            ("free text", "Write a short story about a lighthouse keeper."),
        ):
            sids = spair.encode(text)
            skw = dict(temperature=0, stop_at_eos=True, threads=1 if dev.type == "cpu" else None)
            autoregressive_generate(spair, sids, 8, **skw)
            speculative_generate(spair, sids, 8, "auto", **skw)
            ar = autoregressive_generate(spair, sids, 128, **skw)
            au = speculative_generate(spair, sids, 128, "auto", **skw)
            same = "yes" if au.new_ids == ar.new_ids else "NO"
            ratio = au.tokens_per_second / ar.tokens_per_second
            srows.append([label, f"{ar.tokens_per_second:.0f}", f"{au.tokens_per_second:.0f}", f"{ratio:.2f}x", same])
        sec += [table(["prompt", "plain tok/s", "auto tok/s", "auto vs plain", "same tokens"], srows)]
        results["smollm2_lookup"] = srows
    except Exception as e:  # noqa: BLE001 - a missing model is reported, not fatal
        sec += [f"skipped: {e}"]
    print("\n".join(sec), flush=True)
    report += sec

    rows, best = speed_table(rpair, RANDOM_PROMPT, random_n(dev, n), gammas, dev)
    sec = [
        "",
        f"## Tokens/s, random-init GPT-2 pair {params[0]:.0f} M / {params[1]:.0f} M params "
        f"({'bf16' if dev.type == 'cuda' else 'fp32'})",
        "",
        table(["decoder", "tokens/s", "acceptance", "α", "vs plain", "cost model"], rows),
        "",
        f"best γ = {best['gamma']}: {best['speedup']:.2f}x plain decoding, "
        f"{best['speedup'] / best['predicted']:.2f} of the cost-model prediction {best['predicted']:.2f}x; "
        f"γ=auto {best.get('auto', float('nan')):.2f}x",
    ]
    print("\n".join(sec), flush=True)
    report += sec
    results["random_pair"] = {"params_m": params, "rows": rows, "best": best}


def tree_sections(pair, rpair, params, dev, n, seeds, results, report, reps) -> None:
    """The draft-tree rows on both pairs: verify cost per node count, then tokens/s and tokens per call."""
    pairs = {
        "bundled": (pair, pair.tokenizer.encode(PROMPTS[0], add_special_tokens=False), n),
        f"random {params[0]:.0f} M / {params[1]:.0f} M": (rpair, RANDOM_PROMPT, random_n(dev, n)),
    }
    costs = {name: forward_costs(p.target, ids, dev, reps=reps) for name, (p, ids, _) in pairs.items()}
    header = ["nodes n"] + [f"{name} {k}" for name in costs for k in ("chain", "tree")]
    steps = ", ".join(f"{name} {ms:.3f} ms" for name, (ms, _) in costs.items())
    sec = [
        "",
        "## Draft trees: one target forward over n positions, in plain steps (the forward over one token)",
        "",
        table(header, cost_rows(costs)),
        "",
        f"one plain step: {steps}; chain: `feed` of n tokens, tree: `feed_tree` of n nodes (a binary tree, "
        f"4-D mask); median of {reps} in shuffled order, device synced around each",
    ]
    results["tree_verify_cost"] = {name: {"plain step ms": ms, **c} for name, (ms, c) in costs.items()}
    for name, (p, ids, m) in pairs.items():
        print("\n".join(sec), flush=True)
        report += sec
        rows, ratio, extra = tree_speed(p, ids, m, seeds, dev)
        sec = [
            "",
            f"## Draft trees, tokens/s, {name} pair, T = 1, {m} tokens x seeds {list(seeds)}",
            "",
            table(["decoder", "tokens/s", "tokens / target call", "nodes / step", "vs plain"], rows),
            "",
            f"tree auto / chain auto: {ratio:.2f}x; tree auto's most used shapes: "
            + "; ".join(f"{shape} x{k}" for shape, k in extra["shapes (most used)"].get("tree auto", [])),
        ]
        results[f"tree_{name.split()[0]}"] = {"rows": rows, "tree auto / chain auto": ratio, **extra}
    print("\n".join(sec), flush=True)
    report += sec


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="auto", help="cuda, cpu or auto (default)")
    ap.add_argument("--quick", action="store_true", help="fewer tokens, fewer γ (a smoke run)")
    ap.add_argument("--compile", action="store_true", help="also time torch.compile on a CPU (long warm-up)")
    ap.add_argument("--skip-pytest", action="store_true")
    ap.add_argument("--only", choices=("all", "tree"), default="all", help="tree: the draft-tree checks and rows only")
    args = ap.parse_args(argv)
    dev = torch.device(
        "cuda"
        if args.device == "auto" and torch.cuda.is_available()
        else ("cpu" if args.device == "auto" else args.device)
    )
    if dev.type == "cpu":
        torch.set_num_threads(1)
    n = 32 if args.quick else 128
    gammas = (1, 4) if args.quick else (1, 2, 3, 4, 6, 8)
    import transformers

    name = torch.cuda.get_device_name(dev) if dev.type == "cuda" else f"CPU ({os.cpu_count()} cores, 1 thread)"
    report = [
        f"# specviz GPU check on {name}",
        "",
        f"torch {torch.__version__}, transformers {transformers.__version__}, python {sys.version.split()[0]}",
        "",
    ]
    results = {"device": name, "torch": torch.__version__, "transformers": transformers.__version__, "checks": {}}
    t_all = time.perf_counter()
    pair = load_pair(device=dev.type)
    checks = []
    if args.only == "all":
        if not args.skip_pytest:
            checks.append(("lm tests (pytest, not slow)", *check_pytest(dev, args.quick)))
        checks.append(("greedy equality (bundled pair)", *check_greedy(pair, dev, 24 if args.quick else 48)))
        checks.append(("cached == uncached distribution", *check_cache(pair, 16)))
        checks.append(("torch sampler chi-square", *check_sampler(dev, 200_000 if args.quick else 1_000_000)))
    checks.append(("tree walk on CUDA, no host sync", *check_tree_cuda(dev)))
    checks.append(("greedy draft trees == plain (bundled pair)", *check_tree_greedy(pair, 24 if args.quick else 48)))
    report += [
        "## Checks",
        "",
        table(["check", "result", "detail"], [(c, VERDICT[ok], d) for c, ok, d in checks]),
        "",
    ]
    results["checks"] = {c: {"pass": ok, "detail": d} for c, ok, d in checks}
    print("\n".join(report), flush=True)

    rpair, params = random_pair(dev, big=dev.type == "cuda")
    if args.only == "all":
        chain_sections(args, pair, rpair, params, dev, n, gammas, results, report)
    seeds = range(1) if args.quick else range(3)
    tree_sections(pair, rpair, params, dev, n, seeds, results, report, reps=3 if args.quick else 20)
    report += ["", f"total {time.perf_counter() - t_all:.0f} s"]
    print(report[-1])
    out = Path(os.environ.get("OUT") or ROOT / "artifacts")
    out.mkdir(parents=True, exist_ok=True)
    (out / "bench_gpu.md").write_text("\n".join(report) + "\n")
    (out / "bench_gpu.json").write_text(json.dumps(results, indent=1, default=str))
    return 0 if all(ok is not False for _, ok, _ in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
