"""The live view's sampling controls and run buttons, built with their checked starting values.

>>> g, temp, top_k, top_p, n, seed, ar = sampling_widgets("auto", 0.7, 0, 1.0, 50, 3, True, {})
>>> g.value, temp.value, n.value, ar.value, [label for label, _ in gamma_options(4)][:3]
('auto', 0.7, 50, True, ['auto', '0', '1'])
>>> [b.disabled for b in run_buttons()]
[False, True, False, False]
"""

from __future__ import annotations

import ipywidgets as W

from ..i18n import t
from .live_settings import AUTO, MAX_NEW_TOKENS, TEMPERATURE_MAX, TOP_K_MAX, TOP_P_MIN

GAMMA_CHOICES = (AUTO, *range(0, 9))
"""What the γ control offers: "auto" (the engine picks each step's draft length) and 0..8 (0: plain target steps)."""


def gamma_options(gamma=4) -> list:
    """(label, value) of the γ control: "auto" in the current language, then whole numbers (`gamma` too)."""
    values = list(GAMMA_CHOICES)
    if gamma not in values:
        values.append(gamma)
    return [(t("live.gamma_auto"), AUTO) if v == AUTO else (str(v), v) for v in values]


def sampling_widgets(g, temperature, top_k, top_p, max_new_tokens, seed, ar_baseline, lab) -> tuple:
    """The sampling controls from checked values (g: the γ setting): (gamma, temperature, top_k, top_p, max_new_tokens, seed, ar_checkbox)."""
    gamma = W.Dropdown(
        options=gamma_options(g), value=g, description=t("live.gamma"), style=lab, layout=W.Layout(width="230px")
    )
    temperature = W.FloatSlider(
        value=temperature,
        min=0.0,
        max=TEMPERATURE_MAX,
        step=0.05,
        description=t("live.temperature"),
        style=lab,
        continuous_update=False,
    )
    top_k = W.BoundedIntText(
        value=top_k,
        min=0,
        max=TOP_K_MAX,
        description=t("live.top_k"),
        style=lab,
        layout=W.Layout(width="230px"),
    )
    top_p = W.FloatSlider(
        value=top_p,
        min=TOP_P_MIN,
        max=1.0,
        step=0.01,
        description=t("live.top_p"),
        style=lab,
        continuous_update=False,
    )
    max_new_tokens = W.BoundedIntText(
        value=max_new_tokens,
        min=1,
        max=MAX_NEW_TOKENS,
        description=t("live.max_new_tokens"),
        style=lab,
        layout=W.Layout(width="230px"),
    )
    seed = W.IntText(value=seed, description=t("live.seed"), style=lab, layout=W.Layout(width="230px"))
    ar_checkbox = W.Checkbox(
        value=ar_baseline,
        description=t("live.ar_checkbox"),
        indent=False,
        layout=W.Layout(width="320px"),
    )
    return gamma, temperature, top_k, top_p, max_new_tokens, seed, ar_checkbox


def run_buttons() -> tuple:
    """The buttons that start and stop jobs: (generate, stop, baseline, sweep); Stop is enabled only while one runs."""
    generate_button = W.Button(description=t("live.generate"), button_style="primary", layout=W.Layout(width="110px"))
    stop_button = W.Button(
        description=t("live.stop"),
        button_style="danger",
        disabled=True,
        layout=W.Layout(width="80px"),
        tooltip=t("live.stop_tip"),
    )
    baseline_button = W.Button(
        description=t("live.baseline"),
        layout=W.Layout(width="120px"),
        tooltip=t("live.baseline_tip"),
    )
    sweep_button = W.Button(
        description=t("live.sweep"),
        layout=W.Layout(width="100px"),
        tooltip=t("live.sweep_tip"),
    )
    return generate_button, stop_button, baseline_button, sweep_button


__all__ = ["GAMMA_CHOICES", "gamma_options", "run_buttons", "sampling_widgets"]
