"""One speculative run against plain decoding, with vLLM's statistics: what `specviz run` reports (`specviz.cli.run`).

>>> from specviz.lm import NGramModel, Pair
>>> pair = Pair(NGramModel.random(4, seed=0, name="t"), NGramModel.random(4, seed=1, name="d"))
>>> out = compare(pair, [0], max_new_tokens=20, gamma=3, seed=0)
>>> sorted(k for k in ("speedup", "acceptance_rate", "alpha") if k in out)
['acceptance_rate', 'alpha', 'speedup']
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ..engine.inputs import check_pair
from ..engine.settings import MAX_NEW_TOKENS, GenerationSettings, settings_or

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..engine.pair import Pair

__all__ = ["compare"]


def compare(
    pair: Pair,
    prompt: str | Sequence[int],
    max_new_tokens: int = 64,
    gamma: int | str = "auto",
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
    seed: int | None = 0,
    threads: int | None = 1,
    chat: str | bool = "auto",
    warmup_tokens: int = 8,
    ignore_eos: bool = False,
    tree: tuple | int | None = None,
    *,
    settings: GenerationSettings | None = None,
) -> dict:
    """Run speculative and plain decoding on the same prompt; return one JSON-ready dict of figures.

    Keys include `text`, `ids` (the speculative continuation), `ar_text`, `ar_ids` (plain decoding,
    same seed), `tokens_per_second`, `ar_tokens_per_second`, `speedup`, `acceptance_rate`
    (accepted / drafted), `mean_acceptance_length` (tokens per verify step, bonus included),
    `per_position_acceptance` and `alpha` (mean Σ min(p, q) over verified positions). Both
    decoders are warmed up first on a few tokens. With temperature 0 `greedy_equal` says whether
    the two outputs are identical, as they must be.

    Both decoders stop at the end of the turn (the tokenizer's end token and the generation
    config's end ids) unless `ignore_eos` (vLLM's benchmark flag: fixed-length timing);
    `finish_reason` / `ar_finish_reason` say "stop" or "length", and each decoder's tokens/s
    counts its own tokens. `gamma` is a whole number or "auto" (`gamma_per_step` lists what
    each verify step drafted). `settings=GenerationSettings(...)` gives the settings at once
    instead of the keywords (its `stop_at_eos` then says where both decoders stop).

    `tree` (drafts per node at each depth, or k at every depth; γ caps the depth) drafts a tree
    that the target verifies in one call: `tree` is the setting, `tree_widths` the shape the
    drafting steps used (the deepest, when each was a prefix of it), `tree_shapes` how many steps ran each
    shape ("3,1,1" a tree, "1,1" a chain of 2, "plain"; what tree="auto" chose), `per_position_acceptance`
    is then acceptance per depth along the accepted path, `nodes_per_step` the nodes verified
    per drafting step and `tokens_per_call` the tokens per target call (`specviz.lm.stats.stats`).
    """
    import copy
    import dataclasses

    from ...foundation.checks import chat_setting, flag, integer
    from ..engine.loop import autoregressive_generate, speculative_generate
    from .stats import spec_stats

    check_pair(pair)
    if isinstance(prompt, (bytes, bytearray, memoryview)):
        raise TypeError(
            f"the prompt must be text (a str) or token ids, got {type(prompt).__name__}: decode it first "
            "(prompt.decode('utf-8'))"
        )
    ignore_eos = flag(ignore_eos, "ignore_eos")
    chat = chat_setting(chat)
    keywords = dict(max_new_tokens=max_new_tokens, gamma=gamma, temperature=temperature, top_k=top_k, top_p=top_p)
    keywords.update(seed=seed, threads=threads, chat=chat, tree=tree)
    if settings is None:  # the keyword form: both decoders stop at the end of the turn unless ignore_eos
        settings = GenerationSettings(**keywords, stop_at_eos=not ignore_eos)
    else:
        settings = settings_or(settings, compare, **keywords, ignore_eos=ignore_eos)
        # checked again (a copy), as built: an object.__setattr__ past the frozen fields must not reach the engine;
        # γ and the tree are read once per run (their one parse), so they are not read here
        settings = copy.copy(settings)
        settings._check([f.name for f in dataclasses.fields(settings) if f.name not in ("gamma", "tree")])
        chat_setting(settings.chat, "settings.chat")
    warmup_tokens = integer(warmup_tokens, "warmup_tokens", lo=0, hi=MAX_NEW_TOKENS)
    if warmup_tokens:
        warm = settings.replace(max_new_tokens=min(warmup_tokens, settings.max_new_tokens), stop_at_eos=False)
        autoregressive_generate(pair, prompt, settings=warm)
        speculative_generate(pair, prompt, settings=warm)
    ar = autoregressive_generate(pair, prompt, settings=settings)
    spec = speculative_generate(pair, prompt, settings=settings)
    st = spec_stats(spec).to_dict()
    tps, ar_tps = spec.tokens_per_second, ar.tokens_per_second
    out = {
        "target": pair.target.name,
        "draft": pair.draft.name,
        "device": str(getattr(pair, "device", "cpu")),
        "prompt_ids": list(spec.prompt_ids),
        "gamma": spec.gamma,
        "tree": list(settings.tree) if isinstance(settings.tree, tuple) else settings.tree,
        "ignore_eos": not settings.stop_at_eos,
        "finish_reason": spec.finish_reason,
        "ar_finish_reason": ar.finish_reason,
        "temperature": settings.temperature,
        "top_k": settings.top_k,
        "top_p": settings.top_p,
        "seed": settings.seed,
        "text": spec.text,
        "ids": list(spec.new_ids),
        "ar_text": ar.text,
        "ar_ids": list(ar.new_ids),
        "tokens_per_second": tps,
        "ar_tokens_per_second": ar_tps,
        "speedup": tps / ar_tps if ar_tps > 0 and math.isfinite(ar_tps) else None,
        "fates": spec.fates(),
    }
    out.update(
        {
            k: st[k]
            for k in (
                "acceptance_rate",
                "mean_acceptance_length",
                "per_position_acceptance",
                "per_position_acceptance_conditional",
                "alpha",
                "verify_steps",
                "drafted_tokens",
                "accepted_tokens",
                "num_drafts",
                "tokens_per_step",
                "tokens_per_call",
                "nodes_per_step",
                "tree_widths",
                "tree_shapes",
                "gamma_per_step",
            )
        }
    )
    if settings.temperature == 0:
        out["greedy_equal"] = spec.new_ids == ar.new_ids
    return out
