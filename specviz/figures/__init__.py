"""Plotly figure builders: data in, `plotly.graph_objects.Figure` out (no widgets here).

One module per view, each importing only `style` and the core (never the widgets):
`style` (the colour language, the base layout, the helpers the builders share),
`money` (the money diagram and the joint table), `sampling` (importance and rejection
sampling, a(x)), `empirical` (samples against the exact p), `pitfalls` (verification
rules and lossy relaxations), `standardization` (mismatched sampling settings),
`gamma_steps` (γ and speedup), `multidraft` (tree verification), `draft_tree` (a draft
tree, node by node), `coupling` (lossless couplings under the min(p, q) bound), `numerics`
(dtypes), `export` (HTML and images) and `static` (PNGs beside interactive outputs, for
readers without a kernel). Everything public is importable from `specviz.figures`; all
text comes from the message catalogue (`specviz.messages`) in the current language.

Every builder validates p (target) and q (draft) through the core, computes what it
shows with the core's exact functions, and tags each trace with `meta` (a stable name
that survives `FigureWidget`, whose `uid`s change), so tests and the widgets can find
traces by name: ``trace_by_meta(fig, "overlap")``.

One colour language everywhere (`PALETTE`, Okabe & Ito's colour-blind-safe set): blue =
min(p, q), the overlap that is accepted; bluish green (dotted) = (p - q)+, the residual
that rejection resamples; vermillion outline = the target p; grey = the draft q; orange
(hatched) = the draft mass that gets rejected. Patterns (`style.PATTERNS`) and the marks
✓ ↻ ✗ in the bars carry the same facts without colour.

>>> fig = money_diagram([0.6, 0.3, 0.1], [0.4, 0.5, 0.1])
>>> [float(v) for v in trace_by_meta(fig, "overlap").y]
[0.4, 0.3, 0.1]
>>> [round(float(v), 12) for v in trace_by_meta(fig, "residual").y]
[0.2, 0.0, 0.0]
"""

from .coupling import coupling_acceptances, coupling_figure
from .draft_tree import STATUS_STYLE, draft_tree_figure, tree_layout
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
from .pitfalls import rule_description, rule_figure, rules_figure, tradeoff_figure
from .sampling import acceptance_figure, importance_figure, rejection_figure
from .standardization import standardization_figure
from .static import DEFAULT_WIDTH, StaticImageRenderer, figure_png, png_data_uri, static_image_problem
from .style import (
    COLORWAY,
    LOSSLESS_SERIES,
    LOSSY_SERIES,
    MASS_MARKS,
    PALETTE,
    PATTERNS,
    TRANSPARENT,
    TUTORIAL_VOCAB,
    apply_patch,
    bar_labels,
    base_layout,
    contrast_ratio,
    default_vocab,
    exact_tick,
    float_pair,
    mass_labels,
    mass_marker,
    p_outline,
    q_fill,
    relative_luminance,
    rgba,
    text_colour,
    trace_by_meta,
    trace_metas,
    vocab_names,
    y_top,
)

__all__ = [
    # style and shared helpers
    "PALETTE",
    "PATTERNS",
    "COLORWAY",
    "MASS_MARKS",
    "LOSSLESS_SERIES",
    "LOSSY_SERIES",
    "TRANSPARENT",
    "TUTORIAL_VOCAB",
    "apply_patch",
    "bar_labels",
    "base_layout",
    "contrast_ratio",
    "default_vocab",
    "exact_tick",
    "float_pair",
    "mass_labels",
    "mass_marker",
    "p_outline",
    "q_fill",
    "relative_luminance",
    "rgba",
    "text_colour",
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
    "rule_description",
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
    "draft_tree_figure",
    "STATUS_STYLE",
    "tree_layout",
    # optimality: lossless couplings
    "coupling_acceptances",
    "coupling_figure",
    "simulate_accepted_lengths",
    "speedup_heatmap",
    # numerics and export
    "numerics_figure",
    "export_figure",
    "find_browser",
    # static pictures for readers without a kernel
    "DEFAULT_WIDTH",
    "StaticImageRenderer",
    "figure_png",
    "png_data_uri",
    "static_image_problem",
]
