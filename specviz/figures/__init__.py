"""Plotly figure builders: data in, `plotly.graph_objects.Figure` out (no widgets here).

One module per view, each importing only `style` and the core (never the widgets):
`style` (the colour language, the base layout, the helpers the builders share),
`money` (the money diagram and the joint table), `sampling` (importance and rejection
sampling, a(x)), `empirical` (samples against the exact p), `pitfalls` (verification
rules and lossy relaxations), `standardization` (mismatched sampling settings),
`gamma_steps` (γ and speedup), `multidraft` (tree verification), `draft_tree` (a draft
tree, node by node), `coupling` (lossless couplings under the min(p, q) bound), `numerics`
(dtypes), `export` (HTML and images) and `static` (PNGs beside interactive outputs, for
readers without a kernel). The views of a real model's run (`specviz.lm`): `run_data` (what
they share), `per_position`, `accepted_hist`, `throughput`, `gamma_sweep`, `gamma_per_step`,
`payoff`, `position_money` (one generated token's p and q), `acceptance_panels` (the two
acceptance panels side by side, for a vLLM server) and `live_panels` (all of them in the
live view's one figure). Everything public is importable from `specviz.figures`; all
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

from .acceptance_panels import ACCEPTANCE_PANELS, acceptance_panels_figure, acceptance_patches, apply_acceptance_patches
from .accepted_hist import accepted_hist_figure, accepted_hist_patch
from .coupling import coupling_acceptances, coupling_figure
from .draft_tree import STATUS_STYLE, draft_tree_figure, tree_layout
from .empirical import DEFAULT_NS, convergence_figure, empirical_figure, monte_carlo_figure, tv_reference_constant
from .export import export_figure, find_browser
from .gamma_per_step import gamma_steps_figure, gamma_steps_patch
from .gamma_steps import (
    DEFAULT_ALPHAS,
    accepted_length_figure,
    expected_tokens_figure,
    gamma_figure,
    simulate_accepted_lengths,
    speedup_heatmap,
)
from .gamma_sweep import gamma_sweep_figure, gamma_sweep_patch
from .live_panels import LIVE_PANELS, apply_live_patch, live_figure, panel_title, placeholder_money_patch
from .money import MONEY_STEPS, joint_table, money_diagram, money_diagram_patch, money_summary
from .multidraft import multidraft_figure
from .numerics import numerics_figure
from .payoff import payoff_figure
from .per_position import per_position_figure, per_position_patch
from .pitfalls import rule_description, rule_figure, rules_figure, tradeoff_figure
from .position_money import (
    distinct_labels,
    position_money_diagram,
    position_money_patch,
    target_only_figure,
    token_label,
    top_union,
    with_other,
)
from .run_data import OTHER, empty_stats, host_array, nan_list, other_label, stat_of
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
from .throughput import THROUGHPUT_BARS, throughput_bars, throughput_figure, throughput_patch

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
    # a real model's run (specviz.lm): shared helpers, one module per view, the live view's figure
    "OTHER",
    "empty_stats",
    "host_array",
    "nan_list",
    "other_label",
    "stat_of",
    "per_position_figure",
    "per_position_patch",
    "accepted_hist_figure",
    "accepted_hist_patch",
    "ACCEPTANCE_PANELS",
    "acceptance_panels_figure",
    "acceptance_patches",
    "apply_acceptance_patches",
    "THROUGHPUT_BARS",
    "throughput_bars",
    "throughput_figure",
    "throughput_patch",
    "gamma_sweep_figure",
    "gamma_sweep_patch",
    "gamma_steps_figure",
    "gamma_steps_patch",
    "payoff_figure",
    "distinct_labels",
    "position_money_diagram",
    "position_money_patch",
    "target_only_figure",
    "token_label",
    "top_union",
    "with_other",
    "LIVE_PANELS",
    "apply_live_patch",
    "live_figure",
    "panel_title",
    "placeholder_money_patch",
]
