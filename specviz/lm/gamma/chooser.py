"""The contract the engine calls each step (`GammaChooser`), a fixed γ, and the checks of a chooser and its settings.

The engine asks a chooser for each step's number of drafts before drafting (`choose`) and tells
it what the step did afterwards (`observe`); `specviz.lm.gamma.adaptive` holds `gamma="auto"` and the
argument why any such choice stays lossless. `check_chooser` is what the engine checks of a
chooser it is given; `whole`, `seconds` and `setting` check a chooser's arguments and settings,
naming each and its range. A γ itself is read by `specviz.foundation.checks.gamma_setting` and bounded by
`specviz.foundation.checks.MAX_GAMMA`, the one parser and the one bound.

>>> FixedGamma(4).choose(10), FixedGamma(4).choose(10, Summary(proposes=1, match=3))
(4, 1)
>>> setting(2, "prior_acceptance", 0, 1)
Traceback (most recent call last):
...
ValueError: prior_acceptance must be a number in [0, 1], got 2
"""

from __future__ import annotations

from dataclasses import dataclass

from ...foundation.checks import MAX_GAMMA, brief, gamma_setting, integer, real

__all__ = [
    "FixedGamma",
    "GammaChooser",
    "Summary",
    "check_chooser",
    "chooser_name",
    "seconds",
    "setting",
    "summary_of",
    "whole",
]


@dataclass(frozen=True)
class Summary:
    """What a draft can propose this step, before it proposes (`specviz.lm.drafts`): what a chooser may key on."""

    proposes: int | None = None  # the most tokens it can propose (None: as many as asked)
    match: int | None = None  # how far the text agrees with its proposal's source (prompt lookup); None: unknown


class GammaChooser:
    """Chooses each step's number of drafts; the engine calls choose() before the step and observe() after.

    `choose(room, summary=None)`: `room` is the most drafts this step may verify, `summary` the
    draft's `Summary` of what it can propose (how many tokens, `proposes`, and how far the text
    agrees with their source, `match`), None for a draft that gives none (a model draft); it
    returns a whole number 0..room. The older form `choose(room, run, match)` (a run's token ids
    and its agreement) is read into a summary by `summary_of`. Subclasses must decide before a
    drafted token is drawn (see `specviz.lm.gamma.adaptive`: why a chosen γ stays lossless).
    """

    name = "chooser"
    max_gamma = MAX_GAMMA  # the most it ever chooses (prompt lookup proposes no longer run)

    @property
    def label(self) -> int | str:
        """What a result records as its γ setting: the whole number for a fixed γ, else the name."""
        return self.name

    def choose(self, room: int, summary: Summary | None = None) -> int:  # pragma: no cover
        raise NotImplementedError(f"{type(self).__name__} must define choose(room, summary=None)")

    def observe(self, gamma: int, accepted: int, draft_s: float, verify_s: float, match: int | None = None) -> None:
        """What the last step did: drafts verified, drafts accepted, its draft and verify seconds."""


class FixedGamma(GammaChooser):
    """The same γ every step (less near the end of a run, or when a lookup proposes fewer)."""

    def __init__(self, gamma: int, checked: bool = False):
        """`checked=True`: `gamma` is a whole number read already (`as_chooser`), not read again."""
        self.gamma = self.max_gamma = gamma if checked else gamma_setting(gamma)
        self.name = str(self.gamma)

    @property
    def label(self) -> int:
        return self.gamma

    def choose(self, room, summary=None, match=None, run=None) -> int:
        room = whole(room, "room")
        summary = summary_of(summary, match, run)
        most = room if summary is None or summary.proposes is None else summary.proposes
        return min(self.gamma, room, most)


def summary_of(summary=None, match: int | None = None, run: list | None = None) -> Summary | None:
    """A chooser's `summary` argument as a `Summary` (or None); the older (run, match) form read into one.

    >>> summary_of([4, 2, 7], 3), summary_of(None), summary_of(run=[], match=None)
    (Summary(proposes=3, match=3), None, Summary(proposes=0, match=None))
    """
    if summary is None and run is None:
        return None if match is None else Summary(None, match)
    if isinstance(summary, Summary):
        return summary
    run = summary if summary is not None else run
    return Summary(len(run), match)


def whole(x, name: str, lo: int = 0, hi: int | None = None) -> int:
    """`integer(x, name, lo, hi)`, with a fast path for a plain int in range (the engine calls it every step)."""
    if x.__class__ is int and x >= lo and (hi is None or x <= hi):
        return x
    return integer(x, name, lo=lo, hi=hi)


def seconds(x, name: str) -> float:
    """A finite number of seconds >= 0 (a plain float in range passes at once)."""
    if x.__class__ is float and 0.0 <= x < float("inf"):
        return x
    return real(x, name, lo=0)


def setting(x, name: str, lo: float, hi: float, integral: bool = False, lo_open: bool = False):
    """A tuning setting in its range; a ValueError names the setting and the whole range, not just the side missed."""
    try:
        return integer(x, name, lo=lo, hi=hi) if integral else real(x, name, lo=lo, hi=hi, lo_open=lo_open)
    except ValueError:
        span = f"{lo:g}..{hi:g}" if integral else f"{'(' if lo_open else '['}{lo:g}, {hi:g}]"
        kind = "whole number" if integral else "number"
        raise ValueError(f"{name} must be a {kind} in {span}, got {brief(x)}") from None


def chooser_name(x, name: str) -> str:
    """A chooser's name, as a result records its γ setting: a non-empty string that is no whole number."""
    if not isinstance(x, str) or not x.strip():
        raise TypeError(f"{name} must be a non-empty string (what a result records as its γ setting), got {x!r}")
    if x.strip().lstrip("+-").isdigit():
        raise ValueError(f"{name} must be a name, not a number ({x!r} would read as a fixed γ); FixedGamma is that")
    return x


def check_chooser(chooser: GammaChooser, name: str = "gamma") -> GammaChooser:
    """`chooser` if the engine can use it: a choose(), max_gamma in 0..MAX_GAMMA, a label a result can record as γ."""
    kind = type(chooser).__name__
    if type(chooser).choose is GammaChooser.choose:
        raise TypeError(f"{name}: {kind} must define choose(room, summary=None)")
    setting(chooser.max_gamma, f"{name}: {kind}.max_gamma", 0, MAX_GAMMA, integral=True)
    if isinstance(chooser, FixedGamma):  # only a fixed γ's label is a number; 123 from any other would read as one
        setting(chooser.label, f"{name}: {kind}.label", 0, MAX_GAMMA, integral=True)
    else:
        chooser_name(chooser.label, f"{name}: {kind}.label")
    return chooser
