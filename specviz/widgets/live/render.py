"""What the live views draw, as plain data: HTML of the tables and the status line, patches of the one figure.

Pure functions of results and statistics (no widgets, no threads), so the live view can
redraw from any thread: the run's statistics against theory, the verify steps, vLLM's
counters, and the patches of `specviz.figures.live_figure`'s panels. The coloured text of a
run (`fates_html`) is `specviz.lm.stats.fates`.

>>> fmt_number(float("nan")), fmt_number(1.23456, ".2f", "×")
('—', '1.23×')
>>> gamma_text(4), "specviz-step-tok" in steps_table_html([])
('4', False)
>>> [panel for panel, _ in plot_patches(None, 3)], throughput_panel_patch(None, None)[0]
(['per_position', 'accepted_hist', 'gamma_steps'], 'throughput')
"""

from __future__ import annotations

import html
import math
from typing import TYPE_CHECKING

from ...figures import accepted_hist_patch, gamma_steps_patch, per_position_patch, throughput_patch
from ...foundation.checks import AUTO
from ...foundation.i18n import t
from ...foundation.palette import INK
from ...htmlkit import html_table
from ...lm.stats.fates import DIM_STYLE, FATE_COLORS, rgba, step_fates

if TYPE_CHECKING:
    from ...lm.serve.vllm import SpecCounters


def fmt_number(v, spec=".3f", suffix="") -> str:
    """A number for a table cell: formatted with `spec`, or '—' when it is None or not finite."""
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "—"
    return f"{v:{spec}}{suffix}"


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
    if gamma == AUTO:
        return t("live.gamma_auto") if longest is None else t("live.gamma_auto_longest", longest=longest)
    return str(gamma)


def stats_table_html(stats, ar_result=None, gamma=None, speed=None) -> str:
    """ "This run vs theory": the acceptance statistics and speeds of a run next to their formulas.

    `gamma`: the run's γ setting ("auto" shows as "auto (longest N)"; None: the statistics' γ).
    `speed` (`sweep.SpeedRounds`): tokens/s and the speed-up pooled over its rounds, in place of this run's.
    """
    if stats is None or not stats.steps:
        return f"<i style='{DIM_STYLE}'>{html.escape(t('live.stats_empty'))}</i>"
    t_t = target_token_seconds(ar_result)
    ar_tps = ar_result.tokens_per_second if ar_result is not None else None
    spec_tps, over = stats.tokens_per_second, ""
    if speed is not None and ar_tps is not None:
        over = " " + (t("live.over_rounds", n=speed.rounds) if speed.rounds != 1 else t("live.over_one_round"))
        spec_tps, ar_tps = speed.spec_tps, speed.ar_tps
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
        [t("live.stats_spec_tps"), fmt_number(spec_tps, ".1f")],
        [t("live.stats_ar_tps"), fmt_number(ar_tps, ".1f")],
        [t("live.stats_speedup"), fmt_number(spec_tps / ar_tps if ar_tps else None, ".2f", "×") + html.escape(over)],
        [t("live.stats_cost"), fmt_number(c)],
        [t("live.stats_bound"), fmt_number(stats.bound(c) if c is not None else None, ".2f", "×")],
        [t("live.stats_predicted"), fmt_number(stats.predicted_speedup(t_t) if t_t else None, ".2f", "×")],
        [t("live.stats_gamma"), fmt_number(stats.suggested_gamma(t_t) if t_t else None, "d")],
    ]
    note = "" if t_t else f"<div style='{DIM_STYLE};font-size:12px'>{html.escape(t('live.stats_note'))}</div>"
    title = html.escape(t("live.stats_title"))
    return f"<div style='padding:8px'><b>{title}</b>" + html_table(rows) + note + "</div>"


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
            c = FATE_COLORS.get(fate, INK["zeroline"])
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


def status_html(result, final: bool, max_new_tokens: int | None = None, ar_result=None, speed=None) -> str:
    """The status line of a run: progress while generating, the totals when done or stopped (`speed`: the
    speed-up over its rounds, `sweep.SpeedRounds`)."""
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
    if speed is not None and ar_result is not None:
        key = "live.status_speedup" if speed.rounds != 1 else "live.status_speedup_one"
        text += t(key, speedup=fmt_number(speed.speedup, ".2f", "×"), n=speed.rounds)
    return text


def counters_table_html(c: SpecCounters | None) -> str:
    """vLLM's figures of one reading or interval as a table (what `specviz vllm-stats` prints)."""
    if c is None:
        return f"<i style='{DIM_STYLE}'>{html.escape(t('vllm.table_empty'))}</i>"
    what = t("vllm.last_seconds", seconds=c.seconds) if c.seconds else t("vllm.totals")
    rows = [
        [t("vllm.row_server"), f"{html.escape(c.url)} · {len(c.engines) or 1}"],
        *([[t("vllm.model"), html.escape(c.model)]] if c.model else []),
        [t("vllm.row_over"), what + (t("vllm.restarted") if c.restarted else "")],
        [t("vllm.row_counts"), f"{int(c.drafts)} · {int(c.draft_tokens)} · {int(c.accepted)}"],
        [t("vllm.row_rate"), fmt_number(c.acceptance_rate)],
        [t("vllm.row_length"), fmt_number(c.mean_acceptance_length, ".2f")],
        [t("vllm.row_per_position"), ", ".join(fmt_number(v) for v in c.per_position_acceptance)],
        [t("vllm.row_alpha"), fmt_number(c.implied_alpha)],
        [t("vllm.row_tps"), fmt_number(c.accepted / c.seconds if c.seconds else None, ".1f")],
    ]
    title = html.escape(t("vllm.table_title"))
    return f"<div style='padding:8px'><b>{title}</b>" + html_table(rows) + "</div>"


# ------------------------------------------------------------------ patches of the one figure


def plot_patches(stats, gamma, steps=(), setting=None, layout: bool = True) -> list:
    """The acceptance panels' and the γ-per-step panel's patches; `layout=False`: trace data and axis ranges.

    `gamma` sizes the empty per-position plots (the longest draft so far); `setting` is the
    run's γ ("auto" or a whole number) for the γ-per-step panel's subtitle.
    """
    out = []
    drafted = [len(s.drafted) for s in steps]
    for key, patch in (
        ("per_position", per_position_patch(stats, gamma)),
        ("accepted_hist", accepted_hist_patch(stats, gamma)),
        ("gamma_steps", gamma_steps_patch(drafted, [s.accepted for s in steps], setting)),
    ):
        ranges = {k: v for k, v in patch["layout"].items() if k.endswith("_range")}  # they grow with the run
        out.append((key, patch if layout else {"data": patch["data"], "layout": ranges}))
    return out


def throughput_panel_patch(stats, ar_result, speed=None) -> tuple:
    """The tokens/s panel: speculative and autoregressive, the cost-model prediction, when it pays.

    `speed` (`sweep.SpeedRounds`): the two tokens/s pooled over rounds, in place of this run's and its baseline's.
    """
    spec = stats.tokens_per_second if stats is not None else float("nan")
    ar = ar_result.tokens_per_second if ar_result is not None else float("nan")
    if speed is not None and stats is not None:
        spec, ar = speed.spec_tps, speed.ar_tps
    t_t = target_token_seconds(ar_result)
    pred = ar * stats.predicted_speedup(t_t) if (stats is not None and t_t and stats.steps) else float("nan")
    patch = throughput_patch(spec, ar, pred)
    if stats is not None and stats.steps and math.isfinite(stats.alpha):
        c = cost_ratio(stats, ar_result)
        if c is None:
            lines = [t("live.pay_only", alpha=stats.alpha)]
        else:
            cheap = c < stats.alpha
            verdict = t("live.cheap_enough") if cheap else t("live.too_costly")
            lines = [t("live.pay_here", c=c, op="<" if cheap else "≥", alpha=stats.alpha, verdict=verdict)]
            if math.isfinite(stats.verify_step_s):
                lines.append(t("live.verify_cost", ratio=stats.verify_step_s / t_t))
        patch["layout"]["annotation_text"] = "<br>".join(lines)
    return ("throughput", patch)


__all__ = [
    "cost_ratio",
    "counters_table_html",
    "fmt_number",
    "gamma_text",
    "plot_patches",
    "stats_table_html",
    "status_html",
    "steps_table_html",
    "target_token_seconds",
    "throughput_panel_patch",
]
