"""FigureWidgets updated in place: `figure_widget`, `sync_figure` and the interrupting `transition`."""

from __future__ import annotations

import contextlib

import plotly.graph_objects as go

from .fastload import defer_rfc3987_syntax


def figure_widget(fig: go.Figure) -> go.FigureWidget:
    """A FigureWidget showing `fig`, as wide as its container (see `responsive`; the first one is made
    faster: see specviz.widgets.fastload)."""
    defer_rfc3987_syntax()
    return responsive(go.FigureWidget(fig))


def responsive(fw: go.FigureWidget) -> go.FigureWidget:
    """`fw`, re-fitted to its container's width on a window resize (plotly.js config `responsive`).

    A figure drawn while its dashboard tab is hidden gets plotly's default 700 px; the page
    helper (specviz.widgets.a11y) sends a resize when that happens, and this makes the figure
    follow it. Figures with a fixed layout width keep it.
    """
    fw._config = {**(fw._config or {}), "responsive": True}
    return fw


def sync_figure(fw: go.FigureWidget, fig: go.Figure) -> None:
    """Make FigureWidget `fw` show `fig`, in place (one `batch_update` message when the traces match).

    Only properties that changed are sent. If the number or types of traces differ,
    the traces are replaced instead.
    """
    new_data = [t.to_plotly_json() for t in fig.data]
    layout = fig.layout.to_plotly_json()
    layout.pop("template", None)
    same = len(new_data) == len(fw.data) and all(d["type"] == t.type for d, t in zip(new_data, fw.data))
    if not same:
        fw.data = []
        fw.add_traces(list(fig.data))
    with fw.batch_update():
        if same:
            for t, d in zip(fw.data, new_data):
                d = {k: v for k, v in d.items() if k not in ("type", "uid")}
                t.update(d)
        fw.layout.update(layout)


@contextlib.contextmanager
def transition(fw: go.FigureWidget, duration_ms: int = 250, easing: str = "cubic-in-out"):
    """Like `fw.batch_animate`, but each new transition interrupts the running one.

    Property changes made inside the block reach the browser as one `Plotly.animate`
    call that tweens bars from their old to their new heights over `duration_ms`.
    plotly.py's own `batch_animate` queues transitions (plotly.js mode "afterall"), so
    a dragged slider would lag behind; here the mode is "immediate". With
    `duration_ms <= 0`, or a plotly.py without the batch-animate internals used here,
    it falls back to an instant `batch_update`.
    """
    perform = getattr(fw, "_perform_batch_animate", None)
    if duration_ms <= 0 or perform is None or getattr(fw, "_in_batch_mode", True):
        with fw.batch_update():
            yield
        return
    fw._in_batch_mode = True
    try:
        yield
    finally:
        fw._in_batch_mode = False
        if fw._batch_trace_edits or fw._batch_layout_edits:  # nothing changed: no message
            perform(
                {
                    "transition": {"duration": int(duration_ms), "easing": easing},
                    "frame": {"duration": int(duration_ms), "redraw": True},
                    "mode": "immediate",
                }
            )
