"""The LM head of a verify step on CPU: `linear` against W @ hᵀ (`specviz.lm.engine.lm_head`), side by side.

Run `make models` once, then `python benchmarks/bench_lm_head.py` (part of `make bench`). One
process, one torch thread. Three tables, each pair of variants interleaved A B A B in one run,
the fastest of each kept (another program only ever adds time):

1. the product alone: SmolLM2-135M's LM head (49,152 × 576, fp32) times a (k, 576) block;
2. one cached target forward over k new positions (a verify step's forward), the whole model;
3. decoding on the benchmark's free-text prompt at T = 1 and greedy: plain, the learned head
   (γ auto) and prompt lookup (γ auto), with the LM head as transformers has it and with
   `rows_as_columns`; the speed-ups are over plain decoding with transformers' head, and
   greedy outputs are checked to be the same token for token.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import torch  # noqa: E402

from specviz.lm import autoregressive_generate, load_pair, speculative_generate  # noqa: E402
from specviz.lm.engine.lm_head import rows_as_columns  # noqa: E402
from specviz.lm.stats.prompts import TASK_PROMPTS  # noqa: E402

MARK = "bench_lm_head"


def restore(lm) -> None:
    """Undo `rows_as_columns` (its forward is an instance attribute over nn.Linear's)."""
    if getattr(lm, "specviz_rows_as_columns", False):
        del lm.forward
        lm.specviz_rows_as_columns = False


def best_of(fns: dict, rounds: int) -> dict:
    """{key: fastest seconds} of each zero-argument callable, run in turn `rounds` times."""
    out = {k: float("inf") for k in fns}
    for _ in range(rounds):
        for k, f in fns.items():
            t = time.perf_counter()
            f()
            out[k] = min(out[k], time.perf_counter() - t)
    return out


def with_head(lm, on: bool, fn):
    """fn() with the LM head as transformers has it (on=False) or as rows_as_columns makes it."""

    def run():
        restore(lm)
        if on:
            rows_as_columns(lm)
        return fn()

    return run


def table(rows: list) -> str:
    keys = list(rows[0])
    lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    for r in rows:
        lines.append("| " + " | ".join(f"{v:.2f}" if isinstance(v, float) else str(v) for v in r.values()) + " |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--new-tokens", type=int, default=120)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    if args.quick:
        args.rounds, args.new_tokens = 2, 24
    torch.set_num_threads(1)
    pair = load_pair("smollm2-135m", draft="smollm2-head", device="cpu", progress=False, hf_progress=False)
    lookup = load_pair(pair.target, "prompt-lookup", tokenizer=pair.tokenizer, progress=False)
    hf = pair.target.model
    lm = hf.get_output_embeddings()
    print(f"{pair.describe()}; torch {torch.__version__}, one thread, best of {args.rounds}")

    rows = []
    W = lm.weight.detach()
    for k in (1, 2, 3, 4, 8):
        h = torch.randn(1, k, W.shape[1])
        t = best_of(
            {
                "linear": lambda: torch.nn.functional.linear(h, W),
                "W @ hT": lambda: (W @ h[0].T).T,
            },
            args.rounds * 4,
        )
        rows.append(
            {"k": k, "linear ms": t["linear"] * 1e3, "W @ hT ms": t["W @ hT"] * 1e3, "ratio": t["linear"] / t["W @ hT"]}
        )
    print(f"<!-- {MARK}_product -->\n{table(rows)}\n<!-- /{MARK}_product -->\n", flush=True)

    ids = pair.encode(TASK_PROMPTS["free text"])
    rows = []
    for k in (1, 2, 3, 4, 8):
        x = torch.randint(0, pair.target.vocab_size, (k,)).tolist()

        def forward(x=x):
            s = pair.target.session(ids)
            t = time.perf_counter()
            s.feed(x)
            return time.perf_counter() - t

        got = {"transformers": float("inf"), "rows_as_columns": float("inf")}
        for _ in range(args.rounds):
            for key, on in (("transformers", False), ("rows_as_columns", True)):
                restore(lm)
                if on:
                    rows_as_columns(lm)
                got[key] = min(got[key], forward())
        rows.append(
            {
                "k": k,
                "transformers ms": got["transformers"] * 1e3,
                "rows_as_columns ms": got["rows_as_columns"] * 1e3,
                "ratio": got["transformers"] / got["rows_as_columns"],
            }
        )
    print(f"<!-- {MARK}_forward -->\n{table(rows)}\n<!-- /{MARK}_forward -->\n", flush=True)

    N, rows = args.new_tokens, []
    for T in (1.0, 0.0):
        kw = dict(temperature=T, stop_at_eos=True, threads=None)
        runs = {}
        for on in (False, True):
            tag = "columns" if on else "linear"
            runs[f"plain {tag}"] = with_head(lm, on, lambda: autoregressive_generate(pair, ids, N, seed=1, **kw))
            runs[f"head auto {tag}"] = with_head(
                lm, on, lambda: speculative_generate(pair, ids, N, "auto", seed=1, **kw)
            )
            runs[f"lookup auto {tag}"] = with_head(
                lm, on, lambda: speculative_generate(lookup, ids, N, "auto", seed=1, **kw)
            )
        outs, best = {}, {k: float("inf") for k in runs}
        for _ in range(max(2, args.rounds // 2)):
            for key, fn in runs.items():
                c = time.process_time()
                r = fn()
                best[key] = min(best[key], (time.process_time() - c) / max(len(r.new_ids), 1))
                outs[key] = r.new_ids
        if T == 0 and len({tuple(v) for v in outs.values()}) != 1:
            raise SystemExit("greedy outputs differ between the variants")
        base = best["plain linear"]
        row = {"T": T, "plain tok/s": 1 / base}
        row.update({k: base / v for k, v in best.items() if k != "plain linear"})
        rows.append(row)
    restore(lm)
    print(f"<!-- {MARK}_decode -->\n{table(rows)}\n<!-- /{MARK}_decode -->", flush=True)


if __name__ == "__main__":
    sys.exit(main())
