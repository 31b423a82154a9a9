"""The live view's runs on a real pair: the prompt as token ids, a warm-up, and the γ sweep as a plain function.

>>> from specviz.lm import NGramModel, Pair
>>> pair = Pair(NGramModel.random(6, seed=0), NGramModel.random(6, seed=1))
>>> prompt_ids_for(pair, "0, 3 1")
[0, 3, 1]
>>> data = gamma_sweep_run(pair, [0], dict(max_new_tokens=40, seed=0), gammas=[1, 2])
>>> data["gammas"], len(data["measured"]), data["stopped"]
([1, 2], 2, False)
"""

from __future__ import annotations

from ..i18n import t
from ..lm.engine import autoregressive_generate, speculative_generate
from ..lm.loading import format_prompt
from ..lm.stats import spec_stats
from .live_settings import AUTO, GAMMAS, gamma_setting


def prompt_ids_for(pair, text: str, chat: bool = True) -> list:
    """The prompt box's text as token ids: tokenized, or read as ids ("0 3 1") for a pair without tokenizer.

    With `chat` and a tokenizer that has a chat template (an instruct model), the text is one
    user turn inside that template (`specviz.lm.loading.format_prompt`), as the engine's
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


def warm_up(pair, ids, warmed: set) -> None:
    """One tiny run per pair before anything is timed (first calls allocate and compile); ids in `warmed`."""
    if id(pair) in warmed:
        return
    short = ids[-8:]
    room = min(m.max_positions or 10**9 for m in (pair.target, pair.draft))
    if len(short) + 4 < room:
        speculative_generate(pair, short, 2, 1, seed=0)
        autoregressive_generate(pair, short, 2, seed=0)
    warmed.add(id(pair))


def gamma_sweep_run(pair, ids, kw, gammas=GAMMAS, keep_going=lambda *_: True, on_progress=None) -> dict:
    """Speculative decoding at each γ against one autoregressive baseline: measured speedup vs theory.

    `gammas` are whole numbers and may include "auto" (the engine picks each step's draft
    length): its run is kept apart, in data["auto"] = dict(measured, alpha, mean_gamma,
    longest, result), since it has no single γ to plot against. `on_progress(done, total,
    what, data)` is called before each run (what: "baseline" or the γ) and once at the end
    (what None); `data` holds the points so far. Returns dict(gammas, measured, bound,
    predicted, alpha, results, auto, ar, stopped).
    """
    gammas = [gamma_setting(g) for g in gammas]
    total = len(gammas) + 1
    progress = on_progress or (lambda *a: None)
    data = dict(gammas=[], measured=[], bound=[], predicted=[], alpha=[], results=[], auto=None, ar=None, stopped=False)
    progress(0, total, "baseline", data)
    ar = autoregressive_generate(pair, ids, on_token=keep_going, **kw)
    if not ar.new_ids or ar.seconds <= 0:
        raise ValueError(t("live.baseline_empty"))
    data["ar"] = ar
    t_t = ar.seconds / len(ar.new_ids)
    for k, g in enumerate(gammas, start=1):
        if not keep_going():
            break
        progress(k, total, g, data)
        r = speculative_generate(pair, ids, gamma=g, on_step=keep_going, **kw)
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
    "gamma_sweep_run",
    "prompt_ids_for",
    "warm_up",
]
