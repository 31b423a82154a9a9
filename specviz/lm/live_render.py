"""HTML of the live view: generated text coloured by each token's fate, the legend, the statistics table.

Pure functions of results and statistics (no widgets, no threads), so a notebook can show
a finished run the way the live view does (`fates_html`) and the live view can redraw from
any thread.

>>> from specviz.lm import NGramModel, Pair, speculative_generate
>>> r = speculative_generate(Pair(NGramModel.random(5, seed=0), NGramModel.random(5, seed=1)), [0], 12, 3, seed=0)
>>> fates_html(r, legend=False).count("class='specviz-tok ") == len(r.new_ids) == len(fates_of(r.steps))
True
>>> fmt_number(float("nan")), fmt_number(1.23456, ".2f", "×")
('—', '1.23×')
"""

from __future__ import annotations

import html
import math

from ..htmlkit import html_table  # noqa: F401  (re-exported for the live view)
from ..i18n import t
from .results import FATE_COLORS, FATE_LABELS, FATES

DIM_STYLE = "color:#57606a"
"""CSS of secondary text (the prompt, notes)."""


def rgba(hex_color: str, opacity: float) -> str:
    """A '#rrggbb' colour as a CSS 'rgba(r,g,b,opacity)' string."""
    h = hex_color.lstrip("#")
    r, g, b = (int(h[i : i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r},{g},{b},{opacity})"


def fmt_number(v, spec=".3f", suffix="") -> str:
    """A number for a table cell: formatted with `spec`, or '—' when it is None or not finite."""
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "—"
    return f"{v:{spec}}{suffix}"


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
    c = FATE_COLORS.get(fate, "#999999")
    style = f"background:{rgba(c, 0.22)};border-bottom:2px solid {c}"
    if not piece:  # a token that only carried part of a character: keep it visible
        style += ";display:inline-block;min-width:4px;height:1em"
    if selected:
        style += ";outline:2px solid #24292f"
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
        "font-size:14px;line-height:1.7;border:1px solid #d0d7de;border-radius:6px;padding:8px;"
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


def target_token_seconds(ar_result) -> float | None:
    """Seconds per token of an autoregressive run (the target's step time), None without one."""
    if ar_result is None or not ar_result.new_ids or ar_result.seconds <= 0:
        return None
    return ar_result.seconds / len(ar_result.new_ids)


def cost_ratio(stats, ar_result) -> float | None:
    """c = the draft's time per token / the target's time per token (None until both are measured)."""
    t_t = target_token_seconds(ar_result)
    if stats is None or not t_t or not math.isfinite(stats.draft_token_s):
        return None
    return stats.draft_token_s / t_t


def gamma_text(gamma, longest: int | None = None) -> str:
    """A γ setting as shown: the number, or "auto (longest N)" in the current language."""
    if gamma == "auto":
        return t("live.gamma_auto") if longest is None else t("live.gamma_auto_longest", longest=longest)
    return str(gamma)


def stats_table_html(stats, ar_result=None, gamma=None) -> str:
    """ "This run vs theory": the acceptance statistics and speeds of a run next to their formulas.

    `gamma`: the run's γ setting ("auto" shows as "auto (longest N)"; None: the statistics' γ).
    """
    if stats is None or not stats.steps:
        return f"<i style='{DIM_STYLE}'>{html.escape(t('live.stats_empty'))}</i>"
    t_t = target_token_seconds(ar_result)
    ar_tps = ar_result.tokens_per_second if ar_result is not None else None
    c = cost_ratio(stats, ar_result)
    rows = [
        [
            t("live.stats_counts"),
            f"{gamma_text(stats.gamma if gamma is None else gamma, stats.gamma)} · {stats.steps} · {stats.generated}",
        ],
        [t("live.stats_rate"), fmt_number(stats.acceptance_rate)],
        [t("live.stats_alpha"), fmt_number(stats.alpha)],
        [t("live.stats_tokens_measured"), fmt_number(stats.mean_acceptance_length)],
        [t("live.stats_tokens_theory"), fmt_number(stats.expected_tokens_per_step)],
        [t("live.stats_spec_tps"), fmt_number(stats.tokens_per_second, ".1f")],
        [t("live.stats_ar_tps"), fmt_number(ar_tps, ".1f")],
        [t("live.stats_speedup"), fmt_number(stats.tokens_per_second / ar_tps if ar_tps else None, ".2f", "×")],
        [t("live.stats_cost"), fmt_number(c)],
        [t("live.stats_bound"), fmt_number(stats.bound(c) if c is not None else None, ".2f", "×")],
        [t("live.stats_predicted"), fmt_number(stats.predicted_speedup(t_t) if t_t else None, ".2f", "×")],
        [t("live.stats_gamma"), fmt_number(stats.suggested_gamma(t_t) if t_t else None, "d")],
    ]
    note = "" if t_t else f"<div style='{DIM_STYLE};font-size:12px'>{html.escape(t('live.stats_note'))}</div>"
    title = html.escape(t("live.stats_title"))
    return f"<div style='padding:8px'><b>{title}</b>" + html_table(rows) + note + "</div>"


def step_fates(step) -> list:
    """The fates of the tokens one verify step emitted: its accepted drafts, then its own token's kind."""
    return ["accepted"] * step.accepted + ([] if step.token is None else [step.kind])


def steps_table_html(steps, pieces=(), limit: int = 40) -> str:
    """The verify steps, latest first: the γ each one drafted, how many it kept, and the tokens it emitted.

    `pieces` are the generated tokens' texts (`token_pieces`); each step's tokens are shown
    coloured by their fates (marked as data: generated text, not interface text).
    """
    steps = list(steps)
    if not steps:
        return f"<i style='{DIM_STYLE}'>{html.escape(t('live.steps_empty'))}</i>"
    shown = steps[-int(limit) :][::-1]
    rows = []
    for s in shown:
        toks = []
        for k, fate in enumerate(step_fates(s)):
            i = s.start + k
            if i >= len(pieces):  # not shown (yet), or cut at the end token
                break
            c = FATE_COLORS.get(fate, "#999999")
            fill = "" if pieces[i] else ";display:inline-block;min-width:4px;height:1em"
            toks.append(
                f"<span class='specviz-data specviz-step-tok' style='background:{rgba(c, 0.22)};"
                f"border-bottom:2px solid {c};white-space:pre{fill}'>{html.escape(pieces[i].replace(chr(10), '⏎'))}</span>"
            )
        rows.append([str(s.index + 1), str(len(s.drafted)), str(s.accepted), "".join(toks)])
    header = [
        t("live.steps_col_step"),
        t("live.steps_col_gamma"),
        t("live.steps_col_accepted"),
        t("live.steps_col_tokens"),
    ]
    more = ""
    if len(steps) > len(shown):
        more = f" <span style='{DIM_STYLE};font-size:12px'>{html.escape(t('live.steps_more', shown=len(shown), total=len(steps)))}</span>"
    title = html.escape(t("live.steps_title"))
    return (
        f"<div style='padding:8px'><b>{title}</b>{more}"
        f"<div style='max-height:320px;overflow-y:auto'>{html_table(rows, header=header)}</div></div>"
    )


def status_html(result, final: bool, max_new_tokens: int | None = None, ar_result=None) -> str:
    """The status line of a run: progress while generating, the totals when done or stopped."""
    if result is None:
        return ""
    n, steps = len(result.new_ids), len(result.steps)
    tps = fmt_number(result.tokens_per_second, ".0f")
    if not final:
        return f"<i>{t('live.status_generating', n=n, max=max_new_tokens, steps=steps, tps=tps)}</i>"
    what = t("live.status_stopped") if result.stopped else t("live.status_done")
    text = f"<b>{what}</b> " + t("live.status_final", n=n, steps=steps, seconds=result.seconds, tps=tps)
    if ar_result is not None:
        text += t("live.status_ar", tps=fmt_number(ar_result.tokens_per_second, ".0f"))
    return text


__all__ = [
    "DIM_STYLE",
    "PieceDecoder",
    "cost_ratio",
    "fates_html",
    "fates_of",
    "fmt_number",
    "gamma_text",
    "html_table",
    "legend_html",
    "prompt_span",
    "rgba",
    "stats_table_html",
    "status_html",
    "step_fates",
    "steps_table_html",
    "target_token_seconds",
    "text_box",
    "token_pieces",
    "token_span",
]
