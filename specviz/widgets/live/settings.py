"""The live view's settings: their ranges, their widgets, and the one `GenerationSettings` each click builds.

The ranges are the view's own (a slider's ends, the most tokens one live run asks for), each
error naming the setting and its whole range; `live_settings` checks them, then builds the
`specviz.lm.engine.settings.GenerationSettings` the engines take, which reads γ ("auto" or a whole
number) and the tree's shape (as typed in the tree box), once. Top-k 0 and top-p 1 mean off. The defaults
(γ, the tree, max new tokens) and the bound on new tokens are `specviz.lm.engine.settings`' own, not copies.

>>> s = live_settings(" Auto ", 0.8, 0, 1.0, 50, 1)
>>> s.gamma, s.temperature, s.top_k, s.top_p, s.max_new_tokens, s.seed, s.stop_at_eos
('auto', 0.8, None, None, 50, 1, True)
>>> gamma, temperature, top_k, top_p, n, seed, ar = sampling_widgets(s, True, {})
>>> gamma.value, temperature.value, top_k.value, top_p.value, n.value, ar.value
('auto', 0.8, 0, 1.0, 50, True)
>>> [label for label, _ in gamma_options(4)][:3]
['auto', '0', '1']

A draft tree is one more setting: off (a chain), k drafts per node at every depth up to γ (one number, as
`specviz run --tree k` reads it), or drafts per depth; typed text is read once, by `GenerationSettings`.

>>> live_settings(4, 1.0, 0, 1.0, 50, 0, tree=(3, 2, 1)).tree, tree_text((3, 2, 1)), tree_text(None)
((3, 2, 1), '3, 2, 1', 'off (a chain)')
>>> live_settings("auto", 1.0, 0, 1.0, 50, 0, tree=tree_words(" 3 ")).tree, tree_words("关（单链）")
(3, None)
>>> read_tree("3, 2, 1"), read_tree("2"), read_tree(" off (a chain) "), read_tree("关（单链）")
((3, 2, 1), 2, None, None)
>>> read_tree("3,0")
Traceback (most recent call last):
...
ValueError: tree[1] must be an integer >= 1, got 0
"""

from __future__ import annotations

import ipywidgets as W

from ...foundation.checks import AUTO, brief, integer, real, tree_setting
from ...foundation.i18n import LANGUAGES, t
from ...lm.engine.settings import DEFAULT_GAMMA, DEFAULT_TREE, MAX_NEW_TOKENS, MAX_SEED, GenerationSettings

GAMMAS = tuple(range(1, 9))
"""The γ values of the live view's sweep."""

GAMMA_CHOICES = (AUTO, *range(0, 9))
"""What the γ control offers: "auto" (the engine picks each step's draft length) and 0..8 (0: plain target steps)."""

PLACEHOLDER_GAMMA = 4
"""How many draft positions the empty plots show before a γ-auto run has drafted anything."""

TEMPERATURE_MAX = 2.0
"""The highest temperature the live view offers (its slider's end)."""

TOP_P_MIN = 0.01
"""The smallest top-p the live view offers (its slider's start; 1 = off)."""

TOP_K_MAX = 10_000_000
"""The largest top-k the live view takes (0 = off)."""

TREE_SHAPES = (None, 2, (3, 2, 1))
"""What the tree control offers: off (a chain), 2 drafts per node at every depth, and 3, 2, 1 per depth."""


def in_range(check, x, name: str, lo, hi, note: str = ""):
    """check(x, name, lo=lo, hi=hi) (`specviz.foundation.checks.real` or `integer`); its error also states the whole range."""
    try:
        return check(x, name, lo=lo, hi=hi)
    except (TypeError, ValueError) as e:
        raise type(e)(f"{e} (valid: {brief(lo)} to {brief(hi)}{note})") from None


def live_settings(
    gamma, temperature, top_k, top_p, max_new_tokens, seed, stop_at_eos=True, tree=DEFAULT_TREE
) -> GenerationSettings:
    """One run's settings from the controls' values, checked in the live view's ranges (errors name the setting).

    `gamma`: "auto" or a whole number, the γ control's value (it always holds one: with a tree it caps the depth).
    `stop_at_eos`: end the run at the end token (an instruct model's end of turn). `tree`: a draft tree's
    shape (None: a chain) or the tree box's text ("3, 2, 1", "3": k at every depth), read once by
    `GenerationSettings.from_text` (`specviz.foundation.checks.tree_setting`).
    """
    if gamma is None:  # (GenerationSettings would take None for its default: the γ control has no such value)
        raise TypeError("gamma must be a whole number >= 0 or 'auto' (the γ control's values), got None")
    top_k = 0 if top_k is None else in_range(integer, top_k, "top_k", 0, TOP_K_MAX, "; 0 = off")
    top_p = 1.0 if top_p is None else in_range(real, top_p, "top_p", TOP_P_MIN, 1.0, "; 1 = off")
    return GenerationSettings.from_text(
        text=("tree",),  # γ comes from the dropdown: a value, not text
        max_new_tokens=in_range(integer, max_new_tokens, "max_new_tokens", 1, MAX_NEW_TOKENS),
        gamma=gamma,
        temperature=in_range(real, temperature, "temperature", 0.0, TEMPERATURE_MAX, "; 0 = greedy"),
        top_k=top_k or None,
        top_p=top_p if top_p < 1 else None,
        seed=in_range(integer, seed, "seed", 0, MAX_SEED),
        stop_at_eos=stop_at_eos,
        tree=tree,
    )


def gamma_options(gamma=DEFAULT_GAMMA) -> list:
    """(label, value) of the γ control: "auto" in the current language, then whole numbers (`gamma` too)."""
    values = list(GAMMA_CHOICES)
    if gamma not in values:
        values.append(gamma)
    return [(t("live.gamma_auto"), AUTO) if v == AUTO else (str(v), v) for v in values]


def tree_choices() -> tuple:
    """The tree control's suggestions: `TREE_SHAPES`, and "auto" (each step's shape from the run's measurements)."""
    return (*TREE_SHAPES, AUTO)


def tree_text(tree) -> str:
    """A tree setting as the tree control shows it: off and auto in the current language, "2", "3, 2, 1"."""
    if tree is None or tree == AUTO:
        return t("live.tree_off") if tree is None else t("live.gamma_auto")
    return str(tree) if isinstance(tree, int) else ", ".join(str(w) for w in tree)


def tree_words(text) -> str | None:
    """The tree control's text with its words read: off (in either language) or empty -> None, auto (either
    language) -> "auto", anything else the text as typed, for `GenerationSettings` to read (its one parse)."""
    words = {
        t(key, lang): value for lang in LANGUAGES for key, value in (("live.tree_off", None), ("live.gamma_auto", AUTO))
    }
    typed = str(text).strip()
    return words.get(typed) if not typed or typed in words else typed


def read_tree(text) -> tuple | int | str | None:
    """The tree control's text as a setting: off -> None, "auto", one number k (k at every depth up to γ, as
    `specviz run --tree k` reads it), or drafts per depth "3, 2, 1", read by `specviz.foundation.checks.tree_setting` (a
    ValueError naming tree otherwise). A run reads it inside `GenerationSettings` instead (`tree_words`)."""
    return tree_setting(tree_words(text), text=True)


def tree_widget(start: GenerationSettings, lab: dict) -> W.Combobox:
    """The tree control at `start.tree`: a box that takes any shape typed, suggesting `tree_choices()`."""
    options = [tree_text(v) for v in tree_choices()]
    value = tree_text(start.tree)
    return W.Combobox(
        value=value,
        options=options + ([] if value in options else [value]),
        ensure_option=False,
        description=t("live.tree"),
        placeholder=t("live.tree_off"),
        style=lab,
        layout=W.Layout(width="230px"),
    )


def sampling_widgets(start: GenerationSettings, ar_baseline: bool, lab: dict) -> tuple:
    """The settings' controls at `start`: (gamma, temperature, top_k, top_p, max_new_tokens, seed, ar_checkbox)."""
    slider = dict(style=lab, continuous_update=False)
    box = dict(style=lab, layout=W.Layout(width="230px"))
    gamma = W.Dropdown(options=gamma_options(start.gamma), value=start.gamma, description=t("live.gamma"), **box)
    temperature = W.FloatSlider(
        value=start.temperature, min=0.0, max=TEMPERATURE_MAX, step=0.05, description=t("live.temperature"), **slider
    )
    top_k = W.BoundedIntText(value=start.top_k or 0, min=0, max=TOP_K_MAX, description=t("live.top_k"), **box)
    top_p = W.FloatSlider(
        value=1.0 if start.top_p is None else start.top_p,
        min=TOP_P_MIN,
        max=1.0,
        step=0.01,
        description=t("live.top_p"),
        **slider,
    )
    max_new_tokens = W.BoundedIntText(
        value=start.max_new_tokens, min=1, max=MAX_NEW_TOKENS, description=t("live.max_new_tokens"), **box
    )
    seed = W.IntText(value=start.seed, description=t("live.seed"), **box)
    ar_checkbox = W.Checkbox(
        value=ar_baseline, description=t("live.ar_checkbox"), indent=False, layout=W.Layout(width="320px")
    )
    return gamma, temperature, top_k, top_p, max_new_tokens, seed, ar_checkbox


__all__ = [
    "GAMMAS",
    "GAMMA_CHOICES",
    "MAX_NEW_TOKENS",
    "PLACEHOLDER_GAMMA",
    "TEMPERATURE_MAX",
    "TOP_K_MAX",
    "TOP_P_MIN",
    "TREE_SHAPES",
    "gamma_options",
    "in_range",
    "live_settings",
    "sampling_widgets",
    "read_tree",
    "tree_choices",
    "tree_words",
    "tree_text",
    "tree_widget",
]
