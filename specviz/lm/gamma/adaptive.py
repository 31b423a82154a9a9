"""How many tokens to draft at each verify step: a fixed γ, or `gamma="auto"` chosen from what the run measured.

`AutoGamma` is a small cost model, refitted after every step from this run's own clock:

* the verify time as a function of the number of drafts g (the target reads g + 1 tokens),
  a per-g running mean, filled in between by a straight-line fit; before anything is
  measured, a slope of `prior_slope` plain steps per extra token;
* the draft's time per drafted token (a model draft) or per lookup (prompt lookup);
* the acceptance of each drafted position. For prompt lookup it is kept by *agreement*: how
  many tokens before the proposal's source already equal the end of the text (`propose_run`
  measures it). A proposal whose context agreed for m tokens is accepted at an estimated rate
  c(m), counted per bucket of m and Beta-smoothed towards a prior m / (m + 3) that rises with m;
  each accepted draft lengthens the agreement by one, so a copy in progress earns long runs
  (up to 64 drafts) while free text, whose agreements stay short and fail, stops drafting. For
  a model draft: the acceptance of the first draft c_0 and the conditional acceptance c_i at
  each deeper position i given that 0..i-1 were accepted (sglang's conditional per-position
  rate), Beta-smoothed; a position not tested yet borrows from the nearest tested one.

Drafting g tokens then emits E(g) = 1 + c_0 + c_0 c_1 + ... + c_0 ... c_{g-1} tokens in
draft(g) + verify(g) seconds (with one rate a for every position: 1 + a + ... + a^g); the
chooser takes the g in 0..max_gamma with the most tokens per second, where g = 0 is a plain
target step at the plain decoding rate (for prompt lookup a draft must promise `draft_margin`,
30 %, more than a plain step: estimates made from a few noisy steps err, and on text that
does not repeat itself a wasted verify step costs far more than a missed chance). When
nothing pays it drafts nothing, and it probes (with at most `probe_max` = 4 drafts, the
number the model rates best) after 4, 8, 16, ... steps of zero (back to 4 after a drafting
step that beat a plain step), at the first proposal whose context agrees for 3 tokens or
more (a one-token match is too weak a sign to pay for a look), so a run that starts to
repeat itself is noticed. Prompt lookup starts by trying up to 4 of its run when its context
agrees for 2 tokens or more (else with a plain step), and never drafts more than 4 times the longest
run accepted so far (4, 16, 64 in a copy): the deep end of a run is priced by a prior until
the text has shown it copies that far, and on free text one 3-token match must not buy a
30-token verify. The constants (prior m / (m + 3) with 2
pseudo-drafts, the 30 % margin, probes of at most 4 at agreements of 3 or more, the first
step at 2 or more, growth by at most 4x) were chosen in a noise-free replay of
the benchmark's five prompts (greedy outputs recorded once, step costs from SmolLM2's measured
verify-cost curve on this project's CPU, 10 % noise per step); neighbouring settings moved no
prompt by more than a few per cent.
For a model draft the cost model picks how many to draft, but whether to draft at all is
decided by the measured tokens per second of its drafting steps against its plain steps
(three plain steps first, then six drafting ones; a switch needs a 3 % better rate; the
other mode is revisited one step in 8 to 64), because there the two are often within a
few per cent and one step's time is noisy.

`gamma="auto"` (`as_chooser`) also remembers: a run starts from what the last auto run on the
same draft and target objects with the same sampling settings measured (`recall`, `remember`,
`forget`): the clock and, for a model draft, its acceptance (scaled down to 32 drafts per
position) and its draft-or-plain mode, so a short run, or the second of a lecture's runs,
does not spend its first dozen steps measuring. transformers keeps its heuristic number of
assistant tokens on the assistant model between `generate` calls in the same way. Prompt
lookup carries only the clock: how well a text copies itself says nothing about the next one.

Anchors: transformers' `num_assistant_tokens_schedule="heuristic"` (+2 drafts after a step
where all were accepted, -1 otherwise) and `assistant_confidence_threshold` (the draft stops
when its own probability of the token it just drafted falls below a threshold), in
src/transformers/generation/candidate_generator.py (v4.52-v5); SpecDec++ (K. Huang et al.,
arXiv:2405.19715: a trained head predicts the rejection and stops drafting); vLLM keeps a
fixed `num_speculative_tokens` per request (vllm/config/speculative.py).

**Why any such choice stays lossless.** Fix the history h (everything emitted so far). The
verify step accepts draft x_j with probability min(1, p_j(x_j)/q_j(x_j)) and otherwise draws
from (p_j - q_j)+ / Z; for a draft x_j ~ q_j that produces exactly p_j at that position
(the theorem of tutorial 04), and once x_j is accepted the next position starts from the
longer history. So each position's token is drawn from p given all earlier tokens as long as
*whether x_j is verified at all* is decided before x_j is drawn: from h, from the earlier
drafts x_1..x_{j-1}, from q_j, from clocks and past acceptance counts, even from p at any
position those determine. In probability terms the number of drafts must be a *stopping
time* of the draft process. What breaks it is a choice that looks at the drafted token
itself and drops it: "leave x_j out when p(x_j)/q(x_j) is small" (peeking at the target's
verdict), or "leave x_j out when q(x_j) is small" (the draft's confidence in a token it has
already sampled). transformers' confidence threshold keeps the low-confidence token and
stops after it: a stopping time, so lossless. A deterministic draft (prompt lookup) has
nothing random to peek at: its proposal is a function of h, so any rule over it is a
function of h. `specviz.lm.gamma.peeking` plants both peeking choosers in the engine and the
exact-distribution check in `tests/test_lm_adaptive_peeking.py` catches them, while the
stopping rule passes; `specviz.exact.stopping` computes all of them exactly, and notebook 09 shows it.

>>> auto = AutoGamma(max_gamma=8)
>>> auto.choose(room=10)                       # a model draft, nothing measured: plain steps first
0
>>> for _ in range(3):
...     auto.observe(gamma=0, accepted=0, draft_s=0.0, verify_s=0.010)
>>> for _ in range(6):
...     auto.observe(gamma=4, accepted=4, draft_s=0.004, verify_s=0.013)
>>> auto.choose(room=10) >= 4                   # 5 tokens in 17 ms beat 1 in 10 ms: draft, and more
True
"""

from __future__ import annotations

import bisect
import weakref
from dataclasses import dataclass, field

from ...foundation.checks import AUTO, MAX_GAMMA, flag, gamma_setting, real
from .chooser import FixedGamma, GammaChooser, check_chooser, chooser_name, seconds, setting, summary_of, whole

__all__ = ["AutoGamma", "FixedGamma", "GammaChooser", "as_chooser", "forget", "recall", "remember"]

AGREEMENT_EDGES = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64)  # bucket j holds agreements in [edge j-1, edge j)
AGREEMENT_MIDDLE = (0, 1, 2, 3, 5, 7, 10, 14, 20, 28, 40, 56, 64)  # the m that stands for bucket j in the prior


def agreement_bucket(m: int) -> int:
    """The bucket of an agreement length m: 0 for m < 1, ..., len(AGREEMENT_EDGES) for m >= 64."""
    return bisect.bisect_right(AGREEMENT_EDGES, m)


@dataclass
class _Mean:
    """A running mean that forgets slowly (the last ~`span` samples count)."""

    span: int = 16
    n: int = 0
    value: float = 0.0

    def add(self, x: float) -> None:
        self.n += 1
        w = 1.0 / min(self.n, self.span)
        self.value += w * (x - self.value)


def _carried(m: _Mean, weight: int = 8) -> _Mean:
    """A copy of a running mean from an earlier run that counts as at most `weight` samples."""
    return _Mean(span=m.span, n=min(m.n, weight), value=m.value)


@dataclass
class AutoGamma(GammaChooser):
    """Each step, the γ in 0..max_gamma with the most expected tokens per second, from this run's measurements."""

    max_gamma: int = 64  # prompt lookup: a copy in progress pays for long runs
    max_model_gamma: int = 16  # and for a model draft at most this (each drafted token costs a draft forward)
    prior_slope: float = 0.05  # verify time per extra token, in plain steps, until two γ values are measured
    name: str = AUTO
    # what a run measured (not arguments: `warm_start` carries them from an earlier run)
    verify: dict = field(default_factory=dict, init=False)  # g -> _Mean of verify seconds
    draft: _Mean = field(default_factory=_Mean, init=False)  # seconds per drafted token
    first: dict = field(default_factory=dict, init=False)  # a model draft: {None: [accepted, tested]} at position 0
    deeper: list = field(default_factory=list, init=False)  # a model draft: position i >= 1 -> [accepted, tested]
    agreed: list = field(  # prompt lookup: [accepted, tested] per agreement bucket
        default_factory=lambda: [[0, 0] for _ in AGREEMENT_EDGES] + [[0, 0]], init=False
    )
    zero_streak: int = field(default=0, init=False)
    probe_after: int = 4  # steps of zero drafts before the first probe (doubling up to 256 while probes fail)
    line: tuple | None = field(default=None, init=False)  # the verify line for g >= 1, see _fit
    last: int = field(default=0, init=False)
    shrink: float = 4.0  # samples of the fitted verify line that a per-γ mean is weighed against
    hysteresis: float = 0.03  # a model draft leaves or resumes drafting only for a rate this much better
    draft_margin: float = 0.3  # prompt lookup drafts only when the model expects a rate this much above plain
    probe_max: int = 4  # a probe (a drafting step when nothing pays) drafts at most this many
    probe_agreement: int = 3  # ...and waits for a proposal whose context agrees for at least this many tokens
    first_agreement: int = 2  # the first step tries the lookup's run only when its context agrees this far
    growth: float = 4.0  # prompt lookup drafts at most this many times the longest run accepted so far
    longest: int = field(default=0, init=False)  # the most drafts one step of this run has had accepted
    prior_acceptance: float = 0.6  # a model draft's first-draft acceptance before any is seen
    prior_agreement: float = 3.0  # prompt lookup's prior acceptance after m agreeing tokens: m / (m + 3)
    agreement_weight: float = 2.0  # pseudo-drafts behind that prior
    prior_weight: float = 4.0  # pseudo-drafts behind prior_acceptance
    drafting: _Mean = field(default_factory=lambda: _Mean(span=32), init=False)  # tokens per drafting step
    drafting_s: _Mean = field(default_factory=lambda: _Mean(span=32), init=False)  # seconds per drafting step
    mode: bool = field(default=False, init=False)  # a model draft: drafting (True) or plain steps
    mode_steps: int = field(default=0, init=False)
    explore_every: int = 8  # a model draft: one step of the other mode in this many (doubling up to 64)
    remember: bool = False  # gamma="auto": start from the last auto run on the same models and settings (`recall`)

    def __post_init__(self):
        """Check every setting, naming it and its range (as the engine checks its own arguments)."""
        for key, lo, hi in (
            ("max_gamma", 1, MAX_GAMMA),
            ("max_model_gamma", 1, MAX_GAMMA),
            ("probe_max", 1, MAX_GAMMA),
            ("probe_agreement", 0, MAX_GAMMA),
            ("first_agreement", 0, MAX_GAMMA),
            ("probe_after", 1, 256),
            ("explore_every", 1, 64),
        ):
            setattr(self, key, setting(getattr(self, key), key, lo, hi, integral=True))
        for key, lo, hi, lo_open in (
            ("prior_slope", 0, 100, False),
            ("shrink", 0, 1000, False),
            ("hysteresis", 0, 1, False),
            ("draft_margin", 0, 100, False),
            ("growth", 0, 1000, False),
            ("prior_acceptance", 0, 1, False),
            ("prior_agreement", 0, 1000, True),  # a prior m / (m + 0) would be 0/0 at m = 0
            ("agreement_weight", 0, 1000, True),  # and so would an estimate with no pseudo-drafts behind it
            ("prior_weight", 0, 1000, True),
        ):
            setattr(self, key, setting(getattr(self, key), key, lo, hi, lo_open=lo_open))
        self.name = chooser_name(self.name, "name")
        self.remember = flag(self.remember, "remember")

    def warm_start(self, last: AutoGamma, cap: float = 32.0) -> None:
        """Start from what an earlier run on the same models and settings measured (`recall` calls this).

        Carried: the clock (verify seconds per γ, the draft's time per token) and, for a model
        draft, its acceptance counts (scaled down to at most `cap` drafts per position, so this
        run's own drafts soon outweigh them) and its draft-or-plain mode with the rates behind it.
        Each carried mean counts as 8 samples, so this run's own clock takes over within a few
        dozen steps (a machine that got busier, or quieter, since), and the mode not chosen is
        tried again after 8 steps, as in a fresh run.
        Not carried for prompt lookup: the acceptance per agreement length and the longest
        accepted run, which depend on how much the new text repeats itself.
        """
        if not isinstance(last, AutoGamma):
            raise TypeError(f"last must be an AutoGamma (an earlier run's chooser), got {type(last).__name__}")
        cap = real(cap, "cap", lo=0, lo_open=True)
        self.verify = {g: _carried(m) for g, m in last.verify.items()}
        self.draft = _carried(last.draft)
        self._fit()
        if last.agreed_any():  # a prompt-lookup run: the clock only
            return
        shrink = min(1.0, cap / max(last.first.get(None, (0, 1))[1], 1))
        self.first = {k: [a * shrink, t * shrink] for k, (a, t) in last.first.items()}
        self.deeper = [[a * min(1.0, cap / max(t, 1)), t * min(1.0, cap / max(t, 1))] for a, t in last.deeper]
        self.drafting, self.drafting_s = _carried(last.drafting), _carried(last.drafting_s)
        self.mode = last.mode  # and the other mode is looked at again after 8 steps (explore_every starts at 8)

    def agreed_any(self) -> bool:
        """True once a prompt-lookup step was observed (acceptance counted by agreement length)."""
        return any(t for _, t in self.agreed)

    def acceptance(self, match: int | None = None) -> float:
        """Estimated acceptance of the first draft: after `match` agreeing tokens (prompt lookup), or None (a model draft).

        A model draft: Beta-smoothed towards `prior_acceptance` with `prior_weight` pseudo-drafts
        (one early rejection must not stop a run from drafting). Prompt lookup: see `agreement_rate`.
        """
        if match is not None:
            return self.agreement_rate(match)
        acc, tested = self.first.get(None, (0, 0))
        return (acc + self.prior_weight * self.prior_acceptance) / (tested + self.prior_weight)

    def agreement_rate(self, m: int) -> float:
        """Prompt lookup: estimated acceptance of a proposal whose context agreed with its source for m tokens.

        Counted per bucket of m (1, 2, 3, 4-5, 6-7, 8-11, ..., 64+), each Beta-smoothed with
        `agreement_weight` pseudo-drafts towards a prior that rises with m, m / (m + 3), and is
        never below the estimate of the bucket under it (a longer agreement is no worse a sign):
        on free text the short agreements learn a low rate and the drafts stop; in a copy the
        rate climbs with every token that holds.
        """
        return self.agreement_rates()[agreement_bucket(m)]

    def agreement_rates(self) -> list:
        """The estimate of every agreement bucket, shortest first (see `agreement_rate`)."""
        out, est = [], 0.0
        for r, (acc, tested) in zip(AGREEMENT_MIDDLE, self.agreed):
            prior = max(r / (r + self.prior_agreement), est)
            est = (acc + self.agreement_weight * prior) / (tested + self.agreement_weight)
            out.append(est)
        return out

    def conditionals(self, first: float, g: int) -> list:
        """[c_0, ..., c_{g-1}]: c_0 = `first`, c_i the acceptance at position i given 0..i-1 were accepted.

        Drafts after a match that held tend to hold (a copied passage), so deeper positions are
        kept apart from the first one; each is Beta-smoothed (4 pseudo-drafts) towards the
        estimate of the position before it, so an untested or barely tested position borrows
        from its neighbour.
        """
        out, est = [], first
        for i in range(g):
            if i > 0:
                acc, tested = self.deeper[i - 1] if i - 1 < len(self.deeper) else (0, 0)
                est = (acc + 4.0 * est) / (tested + 4.0)
            out.append(est)
        return out

    def expected(self, top: int, match: int | None = None) -> list:
        """Expected tokens from a step with g = 0..top drafts: 1 + c_0 + c_0 c_1 + ... (chained acceptances).

        Prompt lookup: c_i is the rate after match + i agreeing tokens (each accepted draft
        lengthens the agreement). A model draft: `conditionals`.
        """
        if match is not None:
            rates = self.agreement_rates()
            cs = [rates[agreement_bucket(match + i)] for i in range(top)]
        else:
            cs = self.conditionals(self.acceptance(None), top)
        out, run = [1.0], 1.0
        for c in cs:
            run *= c
            out.append(out[-1] + run)
        return out

    def plain_seconds(self) -> float:
        """Seconds of a plain step: measured, else the verify line at 0 drafts, else NaN."""
        if 0 in self.verify:
            return self.verify[0].value
        if self.line is not None:
            k0, v0, slope = self.line
            slope = self.prior_slope * v0 / (1.0 + self.prior_slope * k0) if slope is None else slope
            return max(v0 - slope * k0, 1e-9)
        return float("nan")

    def verify_seconds(self, g: int) -> float:
        """Expected verify seconds with g drafts: the per-g mean, shrunk towards a line through all of them.

        g = 0 is a plain step (no acceptance test, a cheaper path) and is kept apart from the line.
        For g >= 1 the measured mean at g (if any) counts as its number of samples (up to the
        mean's span) against `shrink` samples of the line fitted through every γ measured
        (weighted the same way): a γ whose few steps met a busy moment is not priced out for
        good, while a γ measured often keeps what makes it faster or slower than its neighbours.
        """
        if g == 0:
            return self.plain_seconds()
        plain = self.plain_seconds()
        if self.line is None:  # nothing drafted yet: a plain step plus the prior slope per token read
            return plain * (1.0 + self.prior_slope * g)
        k0, v0, slope = self.line
        if slope is None:  # one γ measured: the prior slope through it
            slope = self.prior_slope * (plain if 0 in self.verify else v0 / (1.0 + self.prior_slope * k0))
        on_line = max(v0 + slope * (g - k0), 1e-9)
        m = self.verify.get(g)
        if m is None or not m.n:
            return on_line
        w = min(m.n, m.span)
        return (w * m.value + self.shrink * on_line) / (w + self.shrink)

    def _fit(self) -> None:
        """Refit the verify line (g >= 1), each γ's mean weighted by its samples: (centre g, seconds there, slope or None)."""
        pts = [(k, v.value, min(v.n, v.span)) for k, v in self.verify.items() if v.n and k > 0]
        if not pts:
            self.line = None
            return
        n = sum(w for _, _, w in pts)
        mx = sum(w * k for k, _, w in pts) / n
        my = sum(w * v for _, v, w in pts) / n
        if len(pts) == 1:
            self.line = (mx, my, None)
            return
        sxx = sum(w * (k - mx) ** 2 for k, _, w in pts)
        self.line = (mx, my, max(sum(w * (k - mx) * (v - my) for k, v, w in pts) / sxx, 0.0))

    def rates(self, top: int, match: int | None = None) -> list:
        """Expected tokens per second for g = 0..top drafts (the cost model).

        A model draft's verify prices never fall as g grows (reading more tokens costs no less): a γ
        whose few steps met a quiet moment is not taken for cheaper than a plain step.
        """
        td = self.draft.value if self.draft.n else 0.0
        out, least = [], 0.0
        for g, tokens in enumerate(self.expected(top, match)):
            verify = least = max(self.verify_seconds(g), least) if match is None else self.verify_seconds(g)
            cost = g * td + verify
            out.append(tokens / cost if cost > 0 else 0.0)
        return out

    def choose(self, room, summary=None, match=None, run=None) -> int:
        room = whole(room, "room")
        summary = summary_of(summary, match, run)
        run = None if summary is None else summary.proposes  # how many the draft proposes (a lookup), or None
        match = None if summary is None or summary.match is None else whole(summary.match, "match")
        if run is not None:  # the unknown deep end of a run is priced by a prior: grow into it step by step
            top = min(self.max_gamma, room, run, max(self.probe_max, int(self.growth * self.longest)))
        else:
            top = min(self.max_gamma, self.max_model_gamma, room)
        if top <= 0:
            return 0
        if not self.verify:  # nothing measured: a lookup tries its run if the context agrees, a model draft measures
            if run is None or (match or 0) < self.first_agreement:  # a plain step first
                return 0
            return min(top, 4)
        if run is None:
            return self._choose_model_draft(top)
        rates = self.rates(top, match)
        rates[0] *= 1.0 + self.draft_margin  # drafting must promise this much more than a plain step
        best = max(range(len(rates)), key=lambda g: (rates[g], -g))
        if best == 0:
            self.zero_streak += 1
            due = self.zero_streak >= self.probe_after and (match or 0) >= self.probe_agreement
            if due:  # look again (where the context agrees for a few tokens): the number of drafts the model rates best
                self.zero_streak = 0
                self.probe_after = min(2 * self.probe_after, 256)
                cap = min(len(rates) - 1, self.probe_max)  # a cheap look: a probe that fails costs little
                return max(range(1, cap + 1), key=lambda g: (rates[g], -g))
            return 0
        self.zero_streak = 0
        return best

    def _choose_model_draft(self, top: int) -> int:
        """A model draft: how many to draft comes from the cost model; whether to draft at all, from the clock.

        Drafting and plain steps are each timed over many steps (tokens per second as measured,
        the draft's catching up included), because the two are often within a few per cent of
        each other and single-step times are noisy. The mode changes only for a rate
        `hysteresis` better, and the other mode gets one step in `explore_every` (8, then
        doubling to 64 while the choice holds), so a change in the text is noticed.
        """

        def g_best() -> int:  # priced only on a step that drafts (a plain step skips the cost model)
            rates = self.rates(top)
            return max(range(1, len(rates)), key=lambda g: (rates[g], -g))

        plain, drafting = self.verify.get(0), self.drafting
        if plain is None or plain.n < 3:
            return 0
        if drafting.n < 6:
            return g_best()
        rate_plain = 1.0 / plain.value if plain.value > 0 else 0.0
        rate_draft = drafting.value / self.drafting_s.value if self.drafting_s.value > 0 else 0.0
        now = self.last > 0
        margin = (1.0 - self.hysteresis) if now else (1.0 + self.hysteresis)
        want = rate_draft > margin * rate_plain
        self.mode_steps = self.mode_steps + 1 if want == self.mode else 1
        if want != self.mode:
            self.explore_every = 8
        self.mode = want
        if self.mode_steps % self.explore_every == 0:  # one step of the other mode, now and then
            self.explore_every = min(2 * self.explore_every, 64)
            want = not want
        return g_best() if want else 0

    def observe(self, gamma, accepted, draft_s, verify_s, match=None) -> None:
        gamma = gamma_setting(gamma)
        accepted = whole(accepted, "accepted", hi=gamma)
        draft_s, verify_s = seconds(draft_s, "draft_s"), seconds(verify_s, "verify_s")
        match = None if match is None else whole(match, "match")
        self.verify.setdefault(gamma, _Mean()).add(verify_s)
        self.last = gamma
        self.longest = max(self.longest, accepted)
        if gamma == 0:
            return
        self.drafting.add(accepted + 1.0)
        self.drafting_s.add(draft_s + verify_s)
        self._fit()
        self.draft.add(draft_s / gamma)
        if match is not None:  # prompt lookup: positions 0..k tested (k = accepted, capped at γ - 1)
            for i in range(min(accepted + 1, gamma)):
                c = self.agreed[agreement_bucket(match + i)]
                c[0] += i < accepted
                c[1] += 1
        else:
            c = self.first.setdefault(None, [0, 0])
            c[0] += accepted > 0
            c[1] += 1
            while len(self.deeper) < gamma - 1:
                self.deeper.append([0, 0])
            for i in range(1, min(accepted + 1, gamma)):  # positions 1..k verified (k = accepted, capped at γ - 1)
                d = self.deeper[i - 1]
                d[0] += accepted > i
                d[1] += 1
        plain = self.verify.get(0)
        if plain is not None and plain.value > 0 and (accepted + 1.0) / (draft_s + verify_s) > 1.0 / plain.value:
            self.probe_after = 4  # this drafting step beat a plain step: look again soon after the next zero


def as_chooser(gamma, checked: bool = False) -> GammaChooser:
    """A GammaChooser from a whole number, "auto" (read by `gamma_setting`), or a chooser (checked by `check_chooser`).

    Errors name `gamma`. "auto" is a new `AutoGamma(remember=True)` each call: one per run.
    `checked=True`: `gamma` was read already (a `GenerationSettings` field), and is not read again.
    """
    if isinstance(gamma, GammaChooser):
        return check_chooser(gamma)
    if hasattr(gamma, "choose") and hasattr(gamma, "observe"):  # a chooser of its own (numpy scalars have choose)
        raise TypeError(
            f"gamma: a chooser must subclass specviz.lm.gamma.adaptive.GammaChooser, got {type(gamma).__name__}"
        )
    gamma = gamma if checked else gamma_setting(gamma, auto=True)
    return AutoGamma(remember=True) if gamma == AUTO else FixedGamma(gamma, checked=True)


_MEMORY: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # draft model -> {(id(target), settings): AutoGamma}


def _slot(pair, settings) -> tuple:
    return _MEMORY.setdefault(pair.draft, {}), (id(pair.target), settings)


def recall(chooser: GammaChooser, pair, settings) -> None:
    """Warm-start an `AutoGamma(remember=True)` from the last auto run on this pair's models with these settings.

    transformers does the same with its `num_assistant_tokens_schedule="heuristic"`: the
    number of assistant tokens it learns is kept on the assistant model's generation config
    from one `generate` call to the next ("heuristic_transient" resets it). Lossless all the
    same: what an earlier run measured is part of the past. `forget(pair)` clears it. A tree="auto" run's
    `TreeAuto` (around such a chooser) warm-starts too; an AutoGamma takes the γ chooser inside one.
    """
    if not (getattr(chooser, "remember", False) is True and hasattr(chooser, "warm_start")):
        return
    memory, key = _slot(pair, settings)
    if key in memory:
        last = memory[key]
        chooser.warm_start(getattr(last, "inner", last) if isinstance(chooser, AutoGamma) else last)


def remember(chooser: GammaChooser, pair, settings) -> None:
    """Keep a finished `AutoGamma(remember=True)` (or `TreeAuto` around one) run's measurements (see `recall`)."""
    if getattr(chooser, "remember", False) is True and getattr(getattr(chooser, "inner", chooser), "verify", True):
        memory, key = _slot(pair, settings)
        memory[key] = chooser


def forget(pair=None) -> None:
    """Drop what auto runs on this pair (or on every pair, for None) remembered."""
    if pair is None:
        _MEMORY.clear()
    else:
        _MEMORY.pop(pair.draft, None)
