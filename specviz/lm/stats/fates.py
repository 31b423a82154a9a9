"""Token fates: what happened to each generated token, its colour and name, and the coloured text.

Pure HTML (no widgets, no torch), so a finished run shows itself in a notebook
(`GenerationResult._repr_html_`) the way the live view (`specviz.widgets.live`) does.

>>> from specviz.lm import NGramModel, Pair, speculative_generate
>>> r = speculative_generate(Pair(NGramModel.random(5, seed=0), NGramModel.random(5, seed=1)), [0], 12, 3, seed=0)
>>> fates_html(r, legend=False).count("class='specviz-tok ") == len(r.new_ids) == len(fates_of(r.steps))
True
>>> FATE_LABELS["accepted"], rgba(FATE_COLORS["accepted"], 0.5)
('accepted draft', 'rgba(0,114,178,0.5)')
"""

from __future__ import annotations

import html
from collections.abc import Mapping

from ...foundation.i18n import t
from ...foundation.palette import (  # the fate colours are palette entries (specviz.foundation.palette)
    FATE_COLORS,
    INK,
    rgba,
)

FATES = ("accepted", "resampled", "bonus", "target")
FATE_KEYS = {
    "accepted": "live.fate_accepted",
    "resampled": "live.fate_resampled",
    "bonus": "live.fate_bonus",
    "target": "live.fate_target",
}
"""The message (specviz.foundation.messages) naming each token fate."""


class _FateLabels(Mapping):
    """FATE_LABELS[fate]: the fate's name in the current language (read at each lookup)."""

    def __getitem__(self, fate: str) -> str:
        return t(FATE_KEYS[fate])

    def __iter__(self):
        return iter(FATE_KEYS)

    def __len__(self) -> int:
        return len(FATE_KEYS)


FATE_LABELS = _FateLabels()
"""The name of each token fate, e.g. FATE_LABELS["accepted"] == "accepted draft" in English."""


DIM_STYLE = f"color:{INK['dim']}"
"""CSS of secondary text (the prompt, notes)."""


def fates_of(steps) -> list:
    """Per emitted token, from step records: "accepted", then the step's kind ("resampled"/"bonus"/"target")."""
    out = []
    for s in steps:
        out += ["accepted"] * s.accepted + ([] if s.token is None else [s.kind])
    return out


class PieceDecoder:
    """The text each generated token adds, decoded defensively.

    Decodes the whole prefix (prompt + tokens so far) and takes the difference, so a
    tokenizer that merges or re-spaces across tokens is handled; trailing U+FFFD (bytes of
    a character not complete yet, e.g. from a byte-level model) are held back until a later
    token completes the character, or shown as U+FFFD at the end (`finish`). Without a
    tokenizer the "text" of a token is its id. The pieces always join to the decoded
    continuation.
    """

    def __init__(self, tokenizer, prompt_ids):
        self.tokenizer = tokenizer
        self.prompt_ids = [int(t) for t in prompt_ids]
        self.base = self.decode(self.prompt_ids) if tokenizer is not None else ""
        self.stable = ""

    def decode(self, ids) -> str:
        """The tokenizer's text of `ids` (special tokens skipped, spacing untouched)."""
        return self.tokenizer.decode(list(ids), skip_special_tokens=True, clean_up_tokenization_spaces=False)

    def prompt_text(self) -> str:
        """The prompt as shown before the generated tokens (its ids when there is no tokenizer)."""
        return self.base if self.tokenizer is not None else " ".join(map(str, self.prompt_ids)) + " "

    def continuation(self, new_ids) -> str:
        """The decoded text of `new_ids` after the prompt."""
        full = self.decode(self.prompt_ids + list(new_ids))
        if full.startswith(self.base):
            return full[len(self.base) :]
        return self.decode(new_ids)  # a tokenizer that re-spaces across the boundary

    def piece(self, new_ids, i: int) -> str:
        """Text added by token i, given tokens new_ids[:i+1] (call for i = 0, 1, 2, ... in order)."""
        if self.tokenizer is None:
            return f"{int(new_ids[i])} "
        stable = self.continuation(new_ids[: i + 1]).rstrip("\ufffd")
        if stable.startswith(self.stable):
            out = stable[len(self.stable) :]
        else:  # earlier text changed: show only what is new from the first difference
            k = 0
            while k < min(len(stable), len(self.stable)) and stable[k] == self.stable[k]:
                k += 1
            out = stable[k:]
        self.stable = stable
        return out

    def finish(self, new_ids) -> str:
        """Whatever the held-back bytes decode to at the very end ('' if nothing was held back)."""
        if self.tokenizer is None or not new_ids:
            return ""
        rest = self.continuation(new_ids)
        if rest.startswith(self.stable) and len(rest) > len(self.stable):
            out = rest[len(self.stable) :]
            self.stable = rest
            return out
        return ""


def token_pieces(tokenizer, prompt_ids, new_ids) -> list:
    """The text each of `new_ids` adds after `prompt_ids` (see `PieceDecoder`)."""
    dec = PieceDecoder(tokenizer, prompt_ids)
    pieces = [dec.piece(new_ids, i) for i in range(len(new_ids))]
    if pieces:
        pieces[-1] += dec.finish(new_ids)
    return pieces


def token_span(i: int, fate: str, piece: str, selected: bool = False) -> str:
    """One generated token as `<span class='specviz-tok specviz-tok-FATE'>`, coloured by its fate."""
    c = FATE_COLORS.get(fate, INK["zeroline"])
    style = f"background:{rgba(c, 0.22)};border-bottom:2px solid {c}"
    if not piece:  # a token that only carried part of a character: keep it visible
        style += ";display:inline-block;min-width:4px;height:1em"
    if selected:
        style += f";outline:2px solid {INK['text']}"
    label = f"#{i}: {FATE_LABELS.get(fate, fate)}"
    return (
        f"<span class='specviz-tok specviz-tok-{fate}' data-pos='{i}' title='{html.escape(label)}' "
        f"style='{style}'>{html.escape(piece)}</span>"
    )


def prompt_span(text: str) -> str:
    """The prompt, in grey, before the coloured tokens."""
    return f"<span class='specviz-prompt' style='{DIM_STYLE}'>{html.escape(text)}</span>"


def text_box(inner: str) -> str:
    """The framed, whitespace-preserving box the coloured text is shown in."""
    return (
        "<div class='specviz-text' style='white-space:pre-wrap;font-family:DejaVu Sans Mono,monospace;"
        f"font-size:14px;line-height:1.7;border:1px solid {INK['border']};border-radius:6px;padding:8px;"
        f"max-height:260px;overflow-y:auto'>{inner}</div>"
    )


def legend_html() -> str:
    """The colour key of every fate a generated token can have (`results.FATES`), in the current language."""
    items = " ".join(
        f"<span class='specviz-legend-{f}' style='background:{rgba(FATE_COLORS[f], 0.22)};"
        f"border-bottom:3px solid {FATE_COLORS[f]};padding:0 4px'>{html.escape(FATE_LABELS[f])}</span>"
        for f in FATES
    )
    prompt = html.escape(t("live.legend_prompt"))
    return f"<div style='font-size:12px;margin:2px 0'>{items} <span style='{DIM_STYLE}'>{prompt}</span></div>"


def fates_html(result, tokenizer=None, legend: bool = True) -> str:
    """A finished speculative GenerationResult as HTML: the prompt in grey, each token coloured by its fate."""
    pieces = token_pieces(tokenizer, result.prompt_ids, result.new_ids)
    fates = result.fates()
    prompt = PieceDecoder(tokenizer, result.prompt_ids).prompt_text()
    body = prompt_span(prompt) + "".join(token_span(i, f, pc) for i, (f, pc) in enumerate(zip(fates, pieces)))
    return (legend_html() if legend else "") + text_box(body)


def step_fates(step) -> list:
    """The fates of the tokens one verify step emitted: its accepted drafts, then its own token's kind."""
    return ["accepted"] * step.accepted + ([] if step.token is None else [step.kind])


__all__ = [
    "DIM_STYLE",
    "FATES",
    "FATE_COLORS",
    "FATE_KEYS",
    "FATE_LABELS",
    "PieceDecoder",
    "fates_html",
    "fates_of",
    "legend_html",
    "prompt_span",
    "rgba",
    "step_fates",
    "text_box",
    "token_pieces",
    "token_span",
]
