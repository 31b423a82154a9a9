"""ipywidgets apps: controls wired to the figure builders of `specviz.figures`.

Every app is one call that returns a displayable container (an `ipywidgets.VBox`
subclass) whose useful parts are attributes, so a test can drive it without a browser:

>>> app = money_diagram_app()
>>> app.sliders_p[0].description, app.sliders_p[0].value
('p(cat)', 0.6)
>>> app.sliders_p[0].value = 0.5                    # the other p sliders rescale

Plots are `plotly.graph_objects.FigureWidget`s built with their real initial data and
updated in place inside `batch_update()`; their traces carry `meta` names (see the
builders). Anything the core rejects (a ValueError) becomes a message in
`app.message`, never a traceback, and the app stays usable. The editor keeps p and q
on a grid of 1/100, so what a slider shows is what the figures use:

>>> snap(parse_weights("0.6, 0.3, 0.1")).tolist()
[60, 30, 10]

One module per job: `base` (the `App` base class and the message helpers),
`figure_sync` (FigureWidgets updated in place), `fastload` (the first FigureWidget made
faster, on first use: importing this package changes nothing else), `weights` and
`presets` (the editor's arithmetic), `editor_controls` and `editor` (`DistributionEditor`),
`editor_app` (`EditorApp`, the base of the apps driven by the editor), one module per
app (`money`, `monte_carlo`, `pitfalls`, `prediction` (`predict`, a guess box), `gamma`, `multidraft`, `draft_tree`, `standardization`,
`numerics`) and `dashboard`. The live views of real models (`live_app`, `vllm_live_app`:
`specviz.lm` underneath, so torch for `live_app`) are the `live` package, loaded on first
use: importing this package imports no torch.
"""

from importlib import import_module

from ..foundation.examples import TUTORIAL_P, TUTORIAL_Q
from ..lm import LM_EXTRA, NEEDS_TORCH
from .base import ERROR_STYLE, INFO_STYLE, App, error_html, safe_callback, verdict_html
from .dashboard import DASHBOARD_TABS, DashboardApp, dashboard_app
from .draft_tree import DraftTreeApp, draft_tree_app
from .editor import VOCAB_MAX, VOCAB_MIN, DistributionEditor
from .editor_app import EditorApp
from .fastload import defer_rfc3987_syntax
from .figure_sync import figure_widget, sync_figure, transition
from .gamma import GammaApp, gamma_app
from .money import MoneyDiagramApp, money_diagram_app
from .monte_carlo import N_CHOICES, MonteCarloApp, monte_carlo_app
from .multidraft import MULTIDRAFT_P, MULTIDRAFT_Q, MultiDraftApp, multidraft_app
from .numerics import VOCAB_CHOICES, NumericsApp, numerics_app
from .pitfalls import PitfallApp, pitfall_app
from .prediction import PredictApp, parse_guess, predict
from .presets import PRESETS, preset_weights
from .standardization import (
    DEFAULT_DRAFT_LOGITS,
    DEFAULT_TARGET_LOGITS,
    SamplingRow,
    StandardizationApp,
    standardization_app,
)
from .weights import parse_weights, rescale_others, snap

LIVE = {"LiveApp": "live", "live_app": "live", "VLLMLiveApp": "live", "vllm_live_app": "live"}
"""The live views of real models, loaded on first use (PEP 562): name -> module."""


def __getattr__(name: str):
    """`live_app` and the other live views, imported when first asked for."""
    if name not in LIVE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        return getattr(import_module(f"{__name__}.{LIVE[name]}"), name)  # the package loads its part on first use
    except ImportError as e:  # the light install: no torch
        if (e.name or "").split(".")[0] in NEEDS_TORCH:
            raise ImportError(LM_EXTRA, name=e.name) from e
        raise


__all__ = [
    "App",
    "DASHBOARD_TABS",
    "DEFAULT_DRAFT_LOGITS",
    "DEFAULT_TARGET_LOGITS",
    "DashboardApp",
    "DistributionEditor",
    "DraftTreeApp",
    "ERROR_STYLE",
    "EditorApp",
    "GammaApp",
    "INFO_STYLE",
    "MULTIDRAFT_P",
    "MULTIDRAFT_Q",
    "MoneyDiagramApp",
    "MonteCarloApp",
    "MultiDraftApp",
    "N_CHOICES",
    "NumericsApp",
    "PRESETS",
    "PitfallApp",
    "PredictApp",
    "SamplingRow",
    "StandardizationApp",
    "TUTORIAL_P",
    "TUTORIAL_Q",
    "VOCAB_CHOICES",
    "VOCAB_MAX",
    "VOCAB_MIN",
    "dashboard_app",
    "defer_rfc3987_syntax",
    "error_html",
    "figure_widget",
    "gamma_app",
    "money_diagram_app",
    "monte_carlo_app",
    "multidraft_app",
    "draft_tree_app",
    "numerics_app",
    "parse_guess",
    "parse_weights",
    "pitfall_app",
    "predict",
    "preset_weights",
    "rescale_others",
    "safe_callback",
    "snap",
    "standardization_app",
    "sync_figure",
    "transition",
    "verdict_html",
]
