"""The distribution editor's widgets, built but not wired (their look in one place)."""

from __future__ import annotations

import ipywidgets as W

from ..foundation.i18n import CATALOGUE, t
from ..foundation.palette import PALETTE
from .presets import PRESETS


def mode_toggle() -> W.ToggleButtons:
    """The "rescale others" / "free + normalise" switch."""
    return W.ToggleButtons(
        options=[(t("editor.rescale"), "rescale"), (t("editor.free"), "free")],
        value="rescale",
        description=t("editor.sliders"),
        tooltips=[t("editor.rescale_tip"), t("editor.free_tip")],
        style={"button_width": "130px"},
    )


def vocab_slider(V: int, vocab_range: tuple[int, int]) -> W.IntSlider:
    """The vocabulary-size slider (its range widened to include V)."""
    lo, hi = min(vocab_range[0], V), max(vocab_range[1], V)
    style = {"description_width": "initial"}
    return W.IntSlider(
        value=V, min=lo, max=hi, description=t("editor.vocabulary"), continuous_update=False, style=style
    )


def preset_buttons() -> dict[str, W.Button]:
    """One button per preset, by key (labelled in the current language: message "editor.preset.<key>")."""

    def label(key: str) -> str:
        message = f"editor.preset.{key}"
        return t(message) if message in CATALOGUE else PRESETS[key]

    return {key: W.Button(description=label(key), layout=W.Layout(width="auto")) for key in PRESETS}


def weights_text(which: str, example: str) -> W.Text:
    """A text box for typed weights of p or q."""
    style, layout = {"description_width": "50px"}, W.Layout(width="260px")
    return W.Text(
        description=t("editor.type", which=which),
        placeholder=t("editor.example", example=example),
        style=style,
        layout=layout,
    )


def probability_slider(which: str, name: str, value: float, units: int, readout_format: str) -> W.FloatSlider:
    """The slider of p(name) or q(name), on a grid of 1/units, in p's or q's colour."""
    slider = W.FloatSlider(
        value=value,
        min=0.0,
        max=1.0,
        step=1 / units,
        description=f"{which}({name})",
        readout_format=readout_format,
        continuous_update=True,
        style={"description_width": "70px", "handle_color": PALETTE[which]},
        layout=W.Layout(width="330px"),
    )
    slider.add_class(f"specviz-slider-{which}")
    return slider
