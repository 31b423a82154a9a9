"""The live view's runs on a real pair: the prompt as token ids, a warm-up, timing rounds, the γ sweep, as functions.

Each run takes one `specviz.lm.engine.settings.GenerationSettings` (what a click asked for) and
passes it to the engine whole.

>>> from specviz.lm import NGramModel, Pair
>>> pair = Pair(NGramModel.random(6, seed=0), NGramModel.random(6, seed=1))
>>> prompt_ids_for(pair, "0, 3 1")
[0, 3, 1]
>>> data = gamma_sweep_run(pair, [0], GenerationSettings(max_new_tokens=40, seed=0), gammas=[1, 2])
>>> data["gammas"], len(data["measured"]), data["stopped"]
([1, 2], 2, False)
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from ...foundation.checks import AUTO
from ...foundation.i18n import t
from ...lm.engine.loop import autoregressive_generate, speculative_generate
from ...lm.engine.pair import format_prompt
from ...lm.engine.settings import MAX_SEED, GenerationSettings
from ...lm.stats.stats import spec_stats
from .settings import GAMMAS


def prompt_ids_for(pair, text: str, chat: bool = True) -> list:
    """The prompt box's text as token ids: tokenized, or read as ids ("0 3 1") for a pair without tokenizer.

    With `chat` and a tokenizer that has a chat template (an instruct model), the text is one
    user turn inside that template (`specviz.lm.engine.pair.format_prompt`), as the engine's
    chat="auto" encodes it; otherwise it is tokenized as typed.
    """
    tok = getattr(pair, "tokenizer", None)
    if tok is None:
        parts = text.replace(",", " ").split()
        if not parts:
            raise ValueError(t("live.prompt_empty_ids"))
        try:
            ids = [int(s) for s in parts]
        except ValueError:
            raise ValueError(t("live.prompt_not_ids", text=text[:40])) from None
    else:
        if not text:
            raise ValueError(t("live.prompt_empty"))
        if chat and getattr(tok, "chat_template", None):
            ids = format_prompt(tok, text, chat=True)
        else:
            ids = list(tok.encode(text, add_special_tokens=False))
        if not ids:
            raise ValueError(t("live.prompt_empty_tokens"))
    V = pair.target.vocab_size
    bad = [i for i in ids if not 0 <= i < V]
    if bad:
        raise ValueError(t("live.prompt_outside", token=bad[0], vocab=V))
    return ids


WARMUP_TOKENS = 8
"""New tokens of each warm-up run (speculative at WARMUP_GAMMA, then plain) on a newly loaded pair."""

WARMUP_GAMMA = 4
"""The warm-up's fixed γ: a verify pass over several tokens, as a drafting run makes (no auto memory is touched)."""

WARMUP = GenerationSettings(max_new_tokens=WARMUP_TOKENS, gamma=WARMUP_GAMMA, seed=0)
"""The settings of both warm-up runs."""


def warm_up(pair, ids, warmed: set) -> float | None:
    """Run a pair once, untimed, before anything is measured; its seconds, or None if `warmed` already holds it.

    First calls pay one-off costs (memory for the prompt's length and the KV cache, kernels chosen
    for each shape): on the first Generate they landed in the measured speculative run, which the
    plain baseline after it then beat. So a newly loaded pair decodes the whole prompt here, a few
    tokens speculatively (a verify pass over WARMUP_GAMMA + 1 tokens) and a few plainly.
    """
    if id(pair) in warmed:
        return None
    t0 = time.perf_counter()
    room = min(m.max_positions or 10**9 for m in (pair.target, pair.draft))
    ids = list(ids)[-max(1, room - 2 * WARMUP_TOKENS - WARMUP_GAMMA) :]
    if len(ids) + WARMUP_TOKENS + WARMUP_GAMMA < room:
        speculative_generate(pair, ids, settings=WARMUP)
        autoregressive_generate(pair, ids, settings=WARMUP)
    warmed.add(id(pair))
    return time.perf_counter() - t0


TIMING_S = 8.0
"""Rounds of speculative-then-plain decoding go on until together they have taken this many seconds..."""

MAX_ROUNDS = 8
"""... or this many rounds: one round of a short run is noise (the bundled pair's 200 tokens take 0.6 s, and
the same run's speed-up reads 0.86-1.26x from one round to the next on an idle machine)."""


@dataclass(frozen=True)
class SpeedRounds:
    """Speculative and plain decoding timed in alternating rounds: their pooled tokens/s and the speed-up.

    >>> s = SpeedRounds(spec_tokens=300, spec_seconds=1.0, ar_tokens=300, ar_seconds=1.5, rounds=3)
    >>> s.spec_tps, s.ar_tps, s.speedup
    (300.0, 200.0, 1.5)
    """

    spec_tokens: int
    spec_seconds: float
    ar_tokens: int
    ar_seconds: float
    rounds: int

    @property
    def spec_tps(self) -> float:
        return self.spec_tokens / self.spec_seconds if self.spec_seconds > 0 else float("nan")

    @property
    def ar_tps(self) -> float:
        return self.ar_tokens / self.ar_seconds if self.ar_seconds > 0 else float("nan")

    @property
    def speedup(self) -> float:
        return self.spec_tps / self.ar_tps

    @property
    def seconds(self) -> float:
        return self.spec_seconds + self.ar_seconds

    def plus(self, spec, ar) -> SpeedRounds:
        """These rounds and one more (a speculative and a plain GenerationResult)."""
        return SpeedRounds(
            self.spec_tokens + len(spec.new_ids),
            self.spec_seconds + spec.seconds,
            self.ar_tokens + len(ar.new_ids),
            self.ar_seconds + ar.seconds,
            self.rounds + 1,
        )


NO_ROUNDS = SpeedRounds(0, 0.0, 0, 0.0, 0)
"""Nothing timed yet."""


def speed_rounds(
    pair,
    ids,
    settings: GenerationSettings,
    first: SpeedRounds,
    keep_going=lambda *_: True,
    on_round=None,
    budget_s=TIMING_S,
) -> SpeedRounds:
    """`first` and more rounds (seed + 1, + 2, ...; plain first in every other round) until `budget_s` or MAX_ROUNDS.

    The speed-up of one short run swings with the machine (and, at temperature > 0, with the text the
    seed gives): pooling rounds measures decoding, as bench_auto_vs_plain's seeds and ABBA blocks do.
    `on_round(rounds)` is called before each new round.
    """
    rounds = first
    while rounds.rounds < MAX_ROUNDS and rounds.seconds < budget_s and keep_going():
        if on_round is not None:
            on_round(rounds)
        this_round = settings.replace(seed=((settings.seed or 0) + rounds.rounds) % (MAX_SEED + 1))
        spec_first = rounds.rounds % 2 == 0
        if spec_first:
            spec = speculative_generate(pair, ids, settings=this_round)
        ar = autoregressive_generate(pair, ids, settings=this_round)
        if not spec_first:
            spec = speculative_generate(pair, ids, settings=this_round)
        rounds = rounds.plus(spec, ar)
    return rounds


def gamma_sweep_run(
    pair, ids, settings: GenerationSettings, gammas=GAMMAS, keep_going=lambda *_: True, on_progress=None
) -> dict:
    """Speculative decoding at each γ against one autoregressive baseline: measured speedup vs theory.

    `gammas` are whole numbers and may include "auto" (the engine picks each step's draft
    length): its run is kept apart, in data["auto"] = dict(measured, alpha, mean_gamma,
    longest, result), since it has no single γ to plot against. `on_progress(done, total,
    what, data)` is called before each run (what: "baseline" or the γ) and once at the end
    (what None); `data` holds the points so far. Returns dict(gammas, measured, bound,
    predicted, alpha, results, auto, ar, stopped).
    """
    runs = [settings.replace(gamma=g) for g in gammas]  # each γ checked, before anything runs
    total = len(runs) + 1
    progress = on_progress or (lambda *a: None)
    data = dict(gammas=[], measured=[], bound=[], predicted=[], alpha=[], results=[], auto=None, ar=None, stopped=False)
    progress(0, total, "baseline", data)
    ar = autoregressive_generate(pair, ids, settings=settings, on_token=keep_going)
    if not ar.new_ids or ar.seconds <= 0:
        raise ValueError(t("live.baseline_empty"))
    data["ar"] = ar
    t_t = ar.seconds / len(ar.new_ids)
    for k, run in enumerate(runs, start=1):
        if not keep_going():
            break
        g = run.gamma
        progress(k, total, g, data)
        r = speculative_generate(pair, ids, settings=run, on_step=keep_going)
        st = spec_stats(r)
        if g == AUTO:
            drafted = [len(s.drafted) for s in r.steps]
            data["auto"] = dict(
                measured=st.tokens_per_second / ar.tokens_per_second,
                alpha=st.alpha,
                mean_gamma=sum(drafted) / len(drafted) if drafted else float("nan"),
                longest=max(drafted, default=0),
                result=r,
            )
            continue
        data["gammas"].append(g)
        data["measured"].append(st.tokens_per_second / ar.tokens_per_second)
        data["bound"].append(st.bound(st.draft_token_s / t_t))
        data["predicted"].append(st.predicted_speedup(t_t))
        data["alpha"].append(st.alpha)
        data["results"].append(r)
    data["stopped"] = not keep_going()
    progress(len(data["gammas"]) + (data["auto"] is not None) + 1, total, None, data)
    return data


__all__ = [
    "MAX_ROUNDS",
    "NO_ROUNDS",
    "TIMING_S",
    "SpeedRounds",
    "WARMUP_GAMMA",
    "WARMUP",
    "WARMUP_TOKENS",
    "gamma_sweep_run",
    "prompt_ids_for",
    "speed_rounds",
    "warm_up",
]
