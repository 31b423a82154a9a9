"""The live view's pair line and the checks of its model and device arguments (no widgets).

>>> from specviz.lm import NGramModel, Pair
>>> pair = Pair(NGramModel.random(6, seed=0), NGramModel.random(6, seed=1))
>>> check_device("cpu"), context_limit(pair), new_tokens_room(pair)
('cpu', None, 4096)
>>> "specviz-device" in describe_pair_html(pair)
True
"""

from __future__ import annotations

import html

from ...foundation.i18n import t
from .settings import MAX_NEW_TOKENS

DEVICES = ("auto", "cpu", "cuda")


def check_device(device) -> str:
    """`device` if the device control offers it ("auto", "cpu", "cuda"); errors name the choices."""
    if not isinstance(device, str):
        raise TypeError(f"device must be one of {', '.join(map(repr, DEVICES))}, got {device!r}")
    if device not in DEVICES:
        raise ValueError(f"device must be one of {', '.join(map(repr, DEVICES))}, got {device!r}")
    return device


def check_text(value, name: str) -> str:
    """`value` if it is a string (a prompt, a model name); TypeError naming `name` otherwise."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, got {value!r}")
    return value


def model_size_text(model) -> str:
    """A model's name, with its parameter count when it has weights ("gpt2 (0.12 M params)")."""
    name = str(getattr(model, "name", "?"))
    mod = getattr(model, "model", None)
    if mod is None:
        return name
    return t("live.model_size", name=name, millions=sum(p.numel() for p in mod.parameters()) / 1e6)


def describe_pair_text(pair) -> str:
    """One line in the current language: both models with their sizes, the vocabulary and the device."""
    try:
        return t(
            "live.pair_desc",
            target=model_size_text(pair.target),
            draft=model_size_text(pair.draft),
            vocab=pair.target.vocab_size,
            device=getattr(pair, "device", "cpu"),
        )
    except Exception:  # noqa: BLE001 - a description must never fail
        return f"{getattr(pair.target, 'name', '?')} + {getattr(pair.draft, 'name', '?')}"


def describe_pair_html(pair) -> str:
    """The pair line: both models, the vocabulary, the device, the context, a hint for a pair without tokenizer."""
    desc = describe_pair_text(pair)
    dev = getattr(pair, "device", "cpu")
    tok = "" if getattr(pair, "tokenizer", None) is not None else f" · <i>{html.escape(t('live.no_tokenizer'))}</i>"
    ctx = context_limit(pair)
    ctx_txt = t("live.pair_context", ctx=ctx) if ctx else ""
    return (
        f"<div style='font-size:13px'><b>{html.escape(t('live.pair_line'))}</b> {html.escape(desc)} · "
        f"<b>{html.escape(t('live.device_line'))}</b> <span class='specviz-device'>{html.escape(str(dev))}</span>"
        f"{html.escape(ctx_txt)}{tok}</div>"
    )


def context_limit(pair) -> int | None:
    """The smaller context (max positions) of the two models, None when neither has one."""
    ctx = [m.max_positions for m in (pair.target, pair.draft) if getattr(m, "max_positions", None)]
    return min(ctx) if ctx else None


def new_tokens_room(pair) -> int:
    """The most new tokens the max-new-tokens box allows for `pair` (its context less a margin for prompt and γ)."""
    ctx = context_limit(pair)
    return max(1, ctx - 16) if ctx else MAX_NEW_TOKENS


__all__ = [
    "DEVICES",
    "check_device",
    "check_text",
    "context_limit",
    "describe_pair_html",
    "describe_pair_text",
    "model_size_text",
    "new_tokens_room",
]
