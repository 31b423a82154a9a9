"""Plotly figure builders: data in, `plotly.graph_objects.Figure` out (no widgets here).

One module per view, each importing only `style` and the core (never the widgets):
`style` (the colour language, the base layout, the helpers the builders share),
`money` (the money diagram and the joint table), `sampling` (importance and rejection
sampling, a(x)), `empirical` (samples against the exact p), `pitfalls` (verification
rules and lossy relaxations), `standardization` (mismatched sampling settings),
`gamma_steps` (γ and speedup), `multidraft` (tree verification), `numerics` (dtypes)
and `export` (HTML and images). Everything public is importable from `specviz.figures`.

Every builder validates p (target) and q (draft) through the core, computes what it
shows with the core's exact functions, and tags each trace with `meta` (a stable name
that survives `FigureWidget`, whose `uid`s change), so tests and the widgets can find
traces by name: ``trace_by_meta(fig, "overlap")``.

One colour language everywhere (`PALETTE`): blue = min(p, q), the overlap that is
accepted; green = (p - q)+, the residual that rejection resamples; red outline = the
target p; grey = the draft q; orange (hatched where static) = the draft mass that gets
rejected.

>>> fig = money_diagram([0.6, 0.3, 0.1], [0.4, 0.5, 0.1])
>>> [float(v) for v in trace_by_meta(fig, "overlap").y]
[0.4, 0.3, 0.1]
>>> [round(float(v), 12) for v in trace_by_meta(fig, "residual").y]
[0.2, 0.0, 0.0]
"""

from .empirical import DEFAULT_NS, convergence_figure, empirical_figure, monte_carlo_figure, tv_reference_constant
from .export import export_figure, find_browser
from .gamma_steps import (
    DEFAULT_ALPHAS,
    accepted_length_figure,
    expected_tokens_figure,
    gamma_figure,
    simulate_accepted_lengths,
    speedup_heatmap,
)
from .money import MONEY_STEPS, joint_table, money_diagram, money_diagram_patch, money_summary
from .multidraft import multidraft_figure
from .numerics import numerics_figure
from .pitfalls import rule_figure, rules_figure, tradeoff_figure
from .sampling import acceptance_figure, importance_figure, rejection_figure
from .standardization import standardization_figure
from .style import (
    PALETTE,
    TRANSPARENT,
    TUTORIAL_VOCAB,
    apply_patch,
    bar_labels,
    base_layout,
    default_vocab,
    exact_tick,
    float_pair,
    p_outline,
    q_fill,
    trace_by_meta,
    trace_metas,
    vocab_names,
    y_top,
)

__all__ = [
    # style and shared helpers
    "PALETTE",
    "TRANSPARENT",
    "TUTORIAL_VOCAB",
    "apply_patch",
    "bar_labels",
    "base_layout",
    "default_vocab",
    "exact_tick",
    "float_pair",
    "p_outline",
    "q_fill",
    "trace_by_meta",
    "trace_metas",
    "vocab_names",
    "y_top",
    # the lossless step
    "MONEY_STEPS",
    "joint_table",
    "money_diagram",
    "money_diagram_patch",
    "money_summary",
    # sampling and empirical checks
    "acceptance_figure",
    "importance_figure",
    "rejection_figure",
    "DEFAULT_NS",
    "convergence_figure",
    "empirical_figure",
    "monte_carlo_figure",
    "tv_reference_constant",
    # pitfalls
    "rule_figure",
    "rules_figure",
    "tradeoff_figure",
    "standardization_figure",
    # γ, speedup, multi-draft
    "DEFAULT_ALPHAS",
    "accepted_length_figure",
    "expected_tokens_figure",
    "gamma_figure",
    "multidraft_figure",
    "simulate_accepted_lengths",
    "speedup_heatmap",
    # numerics and export
    "numerics_figure",
    "export_figure",
    "find_browser",
]
