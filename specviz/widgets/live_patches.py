"""What the live view redraws, as patches of its one figure (`specviz.figures.live_figure`): plain data, no widgets.

>>> [panel for panel, _ in plot_patches(None, 3)]
['per_position', 'accepted_hist', 'gamma_steps']
>>> throughput_panel_patch(None, None)[0]
'throughput'
"""

from __future__ import annotations

import math

from .. import figures as LF
from ..i18n import t
from .live_render import cost_ratio, target_token_seconds


def plot_patches(stats, gamma, steps=(), setting=None, layout: bool = True) -> list:
    """The acceptance panels' and the γ-per-step panel's patches; `layout=False`: trace data and axis ranges.

    `gamma` sizes the empty per-position plots (the longest draft so far); `setting` is the
    run's γ ("auto" or a whole number) for the γ-per-step panel's subtitle.
    """
    out = []
    drafted = [len(s.drafted) for s in steps]
    for key, patch in (
        ("per_position", LF.per_position_patch(stats, gamma)),
        ("accepted_hist", LF.accepted_hist_patch(stats, gamma)),
        ("gamma_steps", LF.gamma_steps_patch(drafted, [s.accepted for s in steps], setting)),
    ):
        ranges = {k: v for k, v in patch["layout"].items() if k.endswith("_range")}  # they grow with the run
        out.append((key, patch if layout else {"data": patch["data"], "layout": ranges}))
    return out


def throughput_panel_patch(stats, ar_result, speed=None) -> tuple:
    """The tokens/s panel: speculative and autoregressive, the cost-model prediction, when it pays.

    `speed` (live_sweep.SpeedRounds): the two tokens/s pooled over rounds, in place of this run's and its baseline's.
    """
    spec = stats.tokens_per_second if stats is not None else float("nan")
    ar = ar_result.tokens_per_second if ar_result is not None else float("nan")
    if speed is not None and stats is not None:
        spec, ar = speed.spec_tps, speed.ar_tps
    t_t = target_token_seconds(ar_result)
    pred = ar * stats.predicted_speedup(t_t) if (stats is not None and t_t and stats.steps) else float("nan")
    patch = LF.throughput_patch(spec, ar, pred)
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


__all__ = ["plot_patches", "throughput_panel_patch"]
