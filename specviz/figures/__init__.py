"""Plotly figure builders: data in, `plotly.graph_objects.Figure` out (no widgets here).

One module per view, each importing only `style` and the core (never the widgets):
`style` (the base layout and the helpers the builders share, over `specviz.foundation.palette`'s colours),
`money` (the money diagram and the joint table), `sampling` (importance and rejection
sampling, a(x)), `empirical` (samples against the exact p), `pitfalls` (verification
rules and lossy relaxations), `standardization` (mismatched sampling settings),
`gamma_steps` (γ and speedup), `multidraft` (tree verification), `draft_tree` (a draft
tree, node by node), `coupling` (lossless couplings under the min(p, q) bound), `numerics`
(dtypes), `export` (HTML and images) and `static` (PNGs beside interactive outputs, for
readers without a kernel). The views of a real model's run (`specviz.lm`): `run_data` (what
they share), `per_position`, `accepted_hist`, `throughput`, `gamma_sweep`, `gamma_per_step`,
`payoff`, `position_money` (one generated token's p and q), `real_tree` (one verify step's draft
tree, and R where its walk stopped), `acceptance_panels` (the two
acceptance panels side by side, for a vLLM server) and `live_panels` (all of them in the
live view's one figure). All text comes from the message catalogue (`specviz.foundation.messages`) in
the current language.

`specviz.figures` itself exports figure builders only (`__all__`; tests/test_palette.py checks
the rule). A builder makes a new `plotly.graph_objects.Figure` from data: a public function
annotated `-> go.Figure` whose first parameter is not a figure. With them go their patches: a
`*_patch` / `*_patches` function returns the dict that changes a builder's figure in place, and
an `apply_*` function applies one (`apply_patch` any of them). Everything else stays in its
module: the colours in `specviz.foundation.palette` (re-exported by `style`), the layout and trace helpers
in `style` (`trace_by_meta`, `float_pair`, `vocab_names`, ...), constants such as
`empirical.DEFAULT_NS`, export in `export` and `static`, the run helpers in `run_data`.

Every builder validates p (target) and q (draft) through the core, computes what it
shows with the core's exact functions, and tags each trace with `meta` (a stable name
that survives `FigureWidget`, whose `uid`s change), so tests and the widgets can find
traces by name: ``style.trace_by_meta(fig, "overlap")``.

One colour language everywhere (`specviz.foundation.palette.PALETTE`, Okabe & Ito's colour-blind-safe set): blue =
min(p, q), the overlap that is accepted; bluish green (dotted) = (p - q)+, the residual
that rejection resamples; vermillion outline = the target p; grey = the draft q; orange
(hatched) = the draft mass that gets rejected. Patterns (`palette.PATTERNS`) and the marks
✓ ↻ ✗ in the bars carry the same facts without colour.

>>> from specviz.figures.style import trace_by_meta
>>> fig = money_diagram([0.6, 0.3, 0.1], [0.4, 0.5, 0.1])
>>> [float(v) for v in trace_by_meta(fig, "overlap").y]
[0.4, 0.3, 0.1]
>>> [round(float(v), 12) for v in trace_by_meta(fig, "residual").y]
[0.2, 0.0, 0.0]
"""

from .acceptance_panels import acceptance_panels_figure, acceptance_patches, apply_acceptance_patches
from .accepted_hist import accepted_hist_figure, accepted_hist_patch
from .coupling import coupling_figure
from .draft_tree import draft_tree_figure
from .empirical import convergence_figure, empirical_figure, monte_carlo_figure
from .gamma_per_step import gamma_steps_figure, gamma_steps_patch
from .gamma_steps import accepted_length_figure, expected_tokens_figure, gamma_figure, speedup_heatmap
from .gamma_sweep import gamma_sweep_figure, gamma_sweep_patch
from .live_panels import apply_live_patch, live_figure, placeholder_money_patch
from .money import joint_table, money_diagram, money_diagram_patch
from .multidraft import multidraft_figure
from .numerics import numerics_figure
from .payoff import payoff_figure
from .per_position import per_position_figure, per_position_patch
from .pitfalls import rule_figure, rules_figure, tradeoff_figure
from .position_money import position_money_diagram, position_money_patch, target_only_figure
from .real_tree import real_tree_figure
from .sampling import acceptance_figure, importance_figure, rejection_figure
from .standardization import standardization_figure
from .style import apply_patch
from .throughput import throughput_figure, throughput_patch

__all__ = [
    # the lossless step
    "joint_table",
    "money_diagram",
    "money_diagram_patch",
    # sampling and empirical checks
    "acceptance_figure",
    "importance_figure",
    "rejection_figure",
    "convergence_figure",
    "empirical_figure",
    "monte_carlo_figure",
    # pitfalls
    "rule_figure",
    "rules_figure",
    "tradeoff_figure",
    "standardization_figure",
    # γ, speedup, multi-draft, trees
    "accepted_length_figure",
    "expected_tokens_figure",
    "gamma_figure",
    "speedup_heatmap",
    "multidraft_figure",
    "draft_tree_figure",
    # optimality: lossless couplings
    "coupling_figure",
    # numerics
    "numerics_figure",
    # a real model's run (specviz.lm): one module per view, the live view's one figure
    "per_position_figure",
    "per_position_patch",
    "accepted_hist_figure",
    "accepted_hist_patch",
    "acceptance_panels_figure",
    "acceptance_patches",
    "apply_acceptance_patches",
    "throughput_figure",
    "throughput_patch",
    "gamma_sweep_figure",
    "gamma_sweep_patch",
    "gamma_steps_figure",
    "gamma_steps_patch",
    "payoff_figure",
    "position_money_diagram",
    "position_money_patch",
    "target_only_figure",
    "real_tree_figure",
    "live_figure",
    "apply_live_patch",
    "placeholder_money_patch",
    # any builder's patch, applied to its figure
    "apply_patch",
]
