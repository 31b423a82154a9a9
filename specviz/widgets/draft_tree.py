"""The draft-tree app (`specviz.samplers.tree`, drawn by figures.draft_tree): k drafts per node, one verification, exact odds."""

from __future__ import annotations

import ipywidgets as W

from ..exact.multidraft import CHILD_RULES, check_rule
from ..figures.draft_tree import draft_tree_figure
from ..foundation.checks import integer
from ..foundation.examples import TUTORIAL_P, TUTORIAL_Q, TUTORIAL_VOCAB
from ..foundation.i18n import t
from ..foundation.validate import as_pair
from ..htmlkit import html_table
from ..samplers.tree import draft_tree, node_acceptance, tree_expected_tokens, tree_size
from .base import App, safe_callback
from .figure_sync import figure_widget, sync_figure
from .multidraft import MULTIDRAFT_P, MULTIDRAFT_Q
from .weights import parse_weights

MAX_DRAWN_LEAVES = 32
"""The widest tree the app draws (k^depth leaves); wider ones get an error message."""

TREE_PRESETS = {
    "tutorial": (TUTORIAL_P, TUTORIAL_Q, TUTORIAL_VOCAB, "multi_draft"),
    "far": (MULTIDRAFT_P, MULTIDRAFT_Q, None, "multi_draft"),
    "distinct": (MULTIDRAFT_P, MULTIDRAFT_Q, None, "deterministic"),
    "perfect": (TUTORIAL_P, TUTORIAL_P, TUTORIAL_VOCAB, "multi_draft"),
}
"""Preset key -> (p, q, vocab, rule) of the draft-tree app; "distinct": q's top k as children, deterministic rule."""


def _preset_labels() -> list[tuple[str, str]]:
    return [
        (t("tree.preset.tutorial"), "tutorial"),
        (t("tree.preset.far"), "far"),
        (t("tree.preset.distinct"), "distinct"),
        (t("tree.preset.perfect"), "perfect"),
    ]


def _rule_labels() -> list[tuple[str, str]]:
    labels = {"multi_draft": t("tree.rule.multi_draft"), "deterministic": t("tree.rule.deterministic")}
    return [(labels[rule], rule) for rule in CHILD_RULES]


def _weights_text(v) -> str:
    return ", ".join(f"{float(x):g}" for x in v)


class DraftTreeApp(App):
    """A draft tree drawn and verified once, with P(accepted | parent reached) on every node.

    Handles: `figure` (`draft_tree_figure`), `k`, `depth`, `seed` (sliders), `preset`, `rule` (Dropdowns),
    `p_text`, `q_text` (editable weights), `numbers` (k = 1..k against expected tokens per step),
    `message`; `tree` (the last `DraftTree` drawn).
    """

    def __init__(self, p=None, q=None, vocab=None, n_drafts=2, depth=3, seed=0, rule="multi_draft"):
        super().__init__()
        self._loading = False
        style = {"description_width": "140px"}
        self.vocab = TUTORIAL_VOCAB if p is None and vocab is None else vocab
        p = TUTORIAL_P if p is None else p
        q = TUTORIAL_Q if q is None else q
        p, q = as_pair(p, q)  # a bad p or q from code is a ValueError here, before anything is drawn
        n_drafts = integer(n_drafts, "n_drafts (the k slider: 1..4)", lo=1, hi=4)
        depth = integer(depth, "depth (the depth slider: 1..5)", lo=1, hi=5)
        seed = integer(seed, "seed (the seed slider: 0..99)", lo=0, hi=99)
        if vocab is not None and (isinstance(vocab, (str, bytes)) or not hasattr(vocab, "__len__")):
            raise TypeError(f"vocab must be a list of {p.size} token names, got {vocab!r}")
        if vocab is not None and len(vocab) != p.size:
            raise ValueError(f"vocab has {len(vocab)} names for V = {p.size} tokens")
        self.k = W.IntSlider(value=n_drafts, min=1, max=4, description=t("tree.k"), style=style)
        self.depth = W.IntSlider(value=depth, min=1, max=5, description=t("tree.depth"), style=style)
        self.seed = W.IntSlider(value=seed, min=0, max=99, description=t("tree.seed"), style=style)
        self.preset = W.Dropdown(options=_preset_labels(), value=None, description=t("tree.preset"), style=style)
        self.rule = W.Dropdown(options=_rule_labels(), value=check_rule(rule), description=t("tree.rule"), style=style)
        text_layout = W.Layout(width="360px")
        self.p_text = W.Text(value=_weights_text(p), description=t("tree.p"), style=style, layout=text_layout)
        self.q_text = W.Text(value=_weights_text(q), description=t("tree.q"), style=style, layout=text_layout)
        for box in (self.p_text, self.q_text):
            box.continuous_update = False
        self.numbers = W.HTML()
        self.tree = draft_tree(p, q, self.k.value, self.depth.value, seed=int(self.seed.value), rule=self.rule.value)
        self.figure = figure_widget(draft_tree_figure(self.tree, self.vocab))
        for w in (self.k, self.depth, self.seed, self.rule, self.p_text, self.q_text):
            w.observe(lambda _: self.update(), names="value")
        self.preset.observe(lambda change: self.apply_preset(change["new"]), names="value")
        self.children = [
            W.HTML(f"<h3 style='margin:4px 0'>{t('tree.app_title')}</h3>"),
            W.HBox(
                [W.VBox([self.k, self.depth, self.seed]), W.VBox([self.preset, self.rule, self.p_text, self.q_text])]
            ),
            self.figure,
            self.numbers,
            self.message,
        ]
        self.update()

    def apply_preset(self, key) -> None:
        """Load preset `key` of TREE_PRESETS into the p and q boxes (and redraw)."""
        if key is None:
            return
        p, q, vocab, rule = TREE_PRESETS[key]
        self.vocab = vocab
        self._loading = True  # one redraw for the pair and the rule, not one per box
        try:
            self.p_text.value, self.q_text.value = _weights_text(p), _weights_text(q)
            self.rule.value = rule
        finally:
            self._loading = False
        self.update()

    @safe_callback
    def update(self):
        """Draw and verify a tree for the current p, q, k, depth and seed."""
        if self._loading:
            return
        p, q = as_pair(parse_weights(self.p_text.value, "p"), parse_weights(self.q_text.value, "q"))
        k, d = int(self.k.value), int(self.depth.value)
        if k**d > MAX_DRAWN_LEAVES:
            raise ValueError(t("tree.too_many", leaves=k**d, most=MAX_DRAWN_LEAVES))
        vocab = self.vocab if self.vocab is not None and len(self.vocab) == p.size else None
        rule = self.rule.value
        self.tree = draft_tree(p, q, k, d, seed=int(self.seed.value), rule=rule)
        sync_figure(self.figure, draft_tree_figure(self.tree, vocab))
        rows = []
        distinct = int((q > 0).sum()) if rule == "deterministic" else self.k.max  # distinct children q can give
        for kk in range(1, min(self.k.max, distinct) + 1):
            beta = node_acceptance(p, q, kk, rule)
            cells = [str(kk), f"{beta:.3f}", f"{tree_expected_tokens(p, q, kk, d, rule):.3f}", str(tree_size(kk, d))]
            rows.append([f"<b>{c}</b>" for c in cells] if kk == k else cells)
        headers = [t("tree.col.k"), t("tree.col.beta"), t("tree.col.tokens"), t("tree.col.nodes")]
        self.numbers.value = html_table(rows, headers)
        self.clear_message()


def draft_tree_app(p=None, q=None, vocab=None, n_drafts=2, depth=3, seed=0, rule="multi_draft") -> DraftTreeApp:
    """Draft-tree explorer: k drafts per node, `depth` levels; one verification and every node's exact odds.

    rule="multi_draft": children i.i.d. from q, SpecInfer's rule; rule="deterministic": q's top k as
    distinct children, accepted with R(x) and removed from R on rejection.
    """
    return DraftTreeApp(p, q, vocab, n_drafts, depth, seed, rule)
