"""Lossless only up to the hardware: the exact lossless output computed in fp64, fp32, fp16 and bf16.

Building a numerics figure imports torch (through `specviz.exact.numerics`); importing this module does not.

>>> from specviz.figures.style import trace_metas
>>> from specviz.exact import numerics
>>> fig = numerics_figure(*numerics.example_logits(V=8), dtypes=("float64", "float32"))
>>> trace_metas(fig)
['p_tv', 'verify_tv', 'out_tv', 'abs_err:float64', 'abs_err:float32']
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..foundation.i18n import t
from .style import PALETTE, base_layout


def numerics_figure(
    target_logits=None,
    draft_logits=None,
    dtypes=("float64", "float32", "float16", "bfloat16"),
    temperature=1.0,
    draft_dtype=None,
    report=None,
) -> go.Figure:
    """The lossless output computed exactly in fp64 / fp32 / fp16 / bf16, vs the fp64 target p.

    Left: per dtype, TV(p in dtype, p) ("p_tv"), TV(output in dtype, p) ("out_tv") and
    TV(output, p in dtype) ("verify_tv"), log scale (exact zeros are not drawn).
    Right: |output(x) − p(x)| per token, tokens sorted by p, one trace per dtype
    ("abs_err:<dtype>"). No sampling: everything is exact arithmetic in that dtype.
    Pass `report` (from `specviz.exact.numerics.precision_report`) to reuse a computed one.
    """
    from ..exact import numerics  # torch is imported only when a numerics figure is built

    if report is None:
        if target_logits is None or draft_logits is None:
            target_logits, draft_logits = numerics.example_logits()
        report = numerics.precision_report(target_logits, draft_logits, dtypes, temperature, draft_dtype)
    p64 = None
    if target_logits is not None:
        p64 = numerics.softmax_in(target_logits, "float64", temperature).numpy()
    names = [r.dtype for r in report]
    fig = make_subplots(
        rows=1,
        cols=2,
        column_widths=[0.4, 0.6],
        horizontal_spacing=0.1,
        subplot_titles=(t("numerics.panel_distance"), t("numerics.panel_error")),
    )
    for key, label, colour in (
        ("p_tv", t("numerics.p_tv"), PALETTE["rejected"]),
        ("verify_tv", t("numerics.verify_tv"), PALETTE["residual"]),
        ("out_tv", t("numerics.out_tv"), PALETTE["p"]),
    ):
        vals = [getattr(r, key) for r in report]
        fig.add_bar(
            x=names,
            y=vals,
            meta=key,
            name=label,
            marker=dict(color=colour),
            hovertemplate="%{x}: %{y:.3e}<extra>" + key + "</extra>",
            row=1,
            col=1,
        )
    ref = p64 if p64 is not None else report[0].p
    order = np.argsort(-ref, kind="stable")
    ranks = np.arange(1, ref.size + 1)
    for r in report:
        err = np.abs(r.output - ref)[order]
        fig.add_scatter(
            x=ranks,
            y=err,
            mode="markers",
            meta=f"abs_err:{r.dtype}",
            name=t("numerics.abs_err", dtype=r.dtype, max=r.max_abs)
            + (t("numerics.underflow", n=r.underflow) if r.underflow else ""),
            marker=dict(size=6, color=PALETTE["dtypes"].get(r.dtype)),
            row=1,
            col=2,
        )
    fig.update_yaxes(type="log", exponentformat="power", row=1, col=1)
    fig.update_yaxes(type="log", exponentformat="power", row=1, col=2)
    fig.update_xaxes(title_text=t("numerics.dtype"), row=1, col=1)
    fig.update_xaxes(title_text=t("numerics.rank"), row=1, col=2)
    V = ref.size
    base_layout(
        fig,
        t("numerics.title", V=V, T=temperature),
        height=470,
        barmode="group",
    )
    return fig
