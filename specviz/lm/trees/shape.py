"""Each verify step's draft tree shape: a fixed one cut to the step's depth (`TreePlan`), or `tree="auto"` (`TreeAuto`).

The engine asks its plan for the widths of a step whose depth the γ chooser picked
(`widths(g)`), and tells it each step's record afterwards (`observe_step`). A fixed plan
keeps `tree[:g]` (an int k: k at every depth). A shape of all ones is a chain, and the
engine then runs its chain step; the depth 0 (a plain target step) is the chooser's to pick.
Which shape a step uses never depends on that step's draws, so every step stays exact
(the argument of `specviz.lm.gamma.adaptive`, with the shape in place of γ).

>>> plan = TreePlan((3, 2, 1))
>>> plan.widths(2), plan.widths(5), TreePlan(2).widths(3)
((3, 2), (3, 2, 1), (2, 2, 2))

**`tree="auto"`.** `TreeAuto` wraps the run's γ chooser (`AutoGamma` for "auto", `FixedGamma` for a number), which still
decides plain or drafting step and a chain's depth g; it runs that chain or a tree of the family below,
up to 1.5 g deep (a fixed γ caps it), whichever it expects to emit more tokens per second.

* **Acceptance per width.** Where a step's walk stood with w children, the child accepted first (if any)
  says for every k <= w whether one of k would have been (the first k are tested as a k-wide node's);
  a chain's positions are nodes with w = 1. Hence c_d, the first child's acceptance at depth d (as
  `AutoGamma.conditionals`; prompt lookup: the γ chooser's rate by agreement), and m_k = P(all k
  rejected) / P(the first rejected) on the same nodes (prior 1 / (1 + rescue (k - 1))). Width k at
  depth d: a = 1 - (1 - c_d) m_k; a shape (k_1, ..., k_D) emits 1 + Σ_i Π_{j<=i} a(j - 1, k_j) tokens.
* **Cost.** A shape's median step time (draft, verify, the loop) over its last `span` steps. A chain of
  g: shrunk towards a line through all chains timed. A tree of depth D, N nodes: the chain of D times
  a ratio (its time over that chain's when it ran: a busy machine slows both) on a line r0 + r1 (N - D)
  through all trees timed (prior 1 + `prior_overhead` + `prior_node` (N - D)), shrunk to its own.
  A tree must beat the best chain of depth <= g, priced alike, by `tree_margin`.
* **The family.** Heads (k,) and (k, k'), 2 <= k' <= k <= `max_width` (4), then ones, at most `max_nodes`
  (a lookup: tries (k,) * g). Width pays at the top: depth i is reached with chance Π a, so a child
  deeper buys less for the same cost (EAGLE-2's and Sequoia's trees are wide at the top, thin below);
  i.i.d. drafts repeat tokens, so a fifth child rarely rescues what four missed.
* **Exploit, explore.** Priced every `reprice_every` drafting steps (microseconds count on a CPU), a
  tree runs once `min_tries` trees were timed, its head timed, no larger than a tree timed. One drafting
  step in 1 / `explore_share` (10) may try the head whose rate times 1 + `explore_bonus` / sqrt(1 + its
  tries + half of all) beats the best, at most `max_tries` times: a head the measurements say loses
  is left, and exploring never takes more than that share of the steps.
* **The γ chooser's view.** A tree step reaches it as the chain it holds (its first children: how many
  were accepted in a row is an exact sample of a chain step's) at its own price for that chain.

**Why it stays lossless.** A step's shape is fixed before any of its drafts is drawn, from counts and
clocks of finished steps (exploring by the step count); given the history each step emits tokens
distributed as p (the multi-draft rule, `specviz.samplers.tree`): `specviz.lm.gamma.adaptive`'s argument, with the
shape in place of γ.

>>> from specviz.lm.gamma.chooser import FixedGamma
>>> auto = TreeAuto(FixedGamma(3))
>>> auto.choose(10), auto.widths(3), auto.label      # nothing measured yet: the chooser's chain
(3, (1, 1, 1), 'auto')
>>> auto.heads[:3]                                    # the family's heads (`specviz.lm.trees.shape.tree_family`)
((2,), (3,), (4,))

What it reads and fits: the family of shapes it prices, which child the walk accepted where it stood,
and the shrunk least-squares lines of its cost model.

>>> tree_family(3, max_nodes=64)
((2,), (3,), (2, 2), (3, 2), (3, 3))
>>> line = cost_line([(1, 1.2, 4), (3, 1.4, 4)], prior_slope=0.0, ridge=0.0)   # (x0, y0, slope)
>>> [round(v, 3) for v in line], round(line_at(line, 5, 4.0, None), 3), round(line_at(line, 5, 4.0, (2.0, 4)), 3)
([2.0, 1.3, 0.1], 1.6, 1.8)
"""

from __future__ import annotations

import math
import statistics
from collections import deque
from typing import TYPE_CHECKING

from ...foundation.checks import AUTO, MAX_TREE_NODES, MAX_TREE_WIDTH, gamma_setting
from ..gamma.chooser import GammaChooser, seconds, setting, summary_of, whole

if TYPE_CHECKING:
    from ..engine.results import StepRecord

__all__ = [
    "SETTINGS",
    "TreeAuto",
    "TreePlan",
    "cost_line",
    "first_accepted",
    "line_at",
    "tree_family",
    "tree_plan",
    "tree_widths",
]


def tree_widths(tree: tuple | int, depth: int) -> tuple:
    """The shape of a step of `depth` levels: the first `depth` widths of a tuple, or (k,) * depth for an int k."""
    if isinstance(tree, int):
        return (tree,) * depth
    return tuple(tree[:depth])


class TreePlan:
    """A fixed tree shape: each step drafts `tree_widths(tree, g)` for the chooser's depth g."""

    def __init__(self, tree: tuple | int):
        self.tree = tree

    @property
    def label(self) -> tuple | int:
        """What a result records as its tree setting."""
        return self.tree

    def widths(self, g: int) -> tuple:
        """The widths of a step of depth g (g >= 1)."""
        return tree_widths(self.tree, g)

    def observe_step(self, record: StepRecord) -> None:
        """What the last step did (a fixed shape learns nothing)."""


def tree_plan(tree, chooser: GammaChooser) -> tuple:
    """(plan, chooser) for a run: (None, chooser) without a tree; "auto" is a `TreeAuto` that is both."""
    if tree is None:
        return None, chooser
    if tree == AUTO:
        auto = TreeAuto(chooser)
        return auto, auto
    return TreePlan(tree), chooser


SETTINGS = {  # name -> (default, low, high, whole number)
    "max_width": (4, 2, MAX_TREE_WIDTH, True),
    "max_nodes": (64, 2, MAX_TREE_NODES, True),
    "explore_share": (0.1, 0.0, 1.0, False),  # 0: never explore
    "explore_bonus": (0.3, 0.0, 1000.0, False),
    "min_tries": (2, 1, 1000, True),  # tree steps timed before a tree is chosen for its estimate
    "max_tries": (8, 1, 1000, True),  # exploring steps per head at most
    "reprice_every": (5, 1, 1000, True),  # drafting steps between two pricings of the family
    "tree_margin": (0.03, 0.0, 1.0, False),
    "warmup": (4, 1, 1000, True),  # drafting steps timed before a tree is priced
    "span": (16, 1, 256, True),
    "shrink": (4.0, 0.0, 1000.0, False),
    "prior_overhead": (0.2, 0.0, 100.0, False),  # a tree's cost over its depth's chain, as a share of the chain's
    "prior_node": (0.01, 0.0, 100.0, False),  # and per node beyond the chain's
    "node_ridge": (16.0, 0.0, 1e6, False),  # how firmly the ratio's slope holds to prior_node (weight × nodes²)
    "prior_slope": (0.05, 0.0, 100.0, False),  # a chain's seconds per draft, in plain steps, until two γ are timed
    "prior_acceptance": (0.6, 0.0, 1.0, False),
    "prior_rescue": (0.35, 0.0, 10.0, False),
    "prior_weight": (4.0, 1e-9, 1000.0, False),
}


class TreeAuto(GammaChooser):
    """Depth from the run's γ chooser, shape from measurements: chain or tree, whichever is expected to be faster."""

    name = "auto"

    def __init__(self, inner: GammaChooser, **settings):
        if not isinstance(inner, GammaChooser):
            raise TypeError(f"inner must be a GammaChooser (the run's γ chooser), got {type(inner).__name__}")
        for bad in sorted(set(settings) - set(SETTINGS))[:1]:
            raise TypeError(f"TreeAuto has no setting {bad!r}; its settings: {', '.join(SETTINGS)}")
        self.inner = inner
        for key, (default, lo, hi, integral) in SETTINGS.items():
            setattr(self, key, setting(settings.get(key, default), key, lo, hi, integral=integral))
        if self.max_tries < self.min_tries:
            raise ValueError(f"max_tries must be >= min_tries ({self.min_tries}), got {self.max_tries}")
        self.heads = tree_family(self.max_width, self.max_nodes)
        # times: shape -> deque of a plain (()) or chain step's seconds, a tree's ratio to its chain; medians: shape
        # -> (median, samples); sizes: tree shape -> mean nodes (a lookup's trie holds fewer than it may); first:
        # depth -> [first child accepted, tested]; misses: k -> [first k all rejected, first rejected]; tries: head
        self.times, self.medians, self.sizes, self.first, self.misses, self.tries = {}, {}, {}, [], {}, {}
        self.steps = 0  # drafting steps observed (this run)
        self.head = self.shape = self.pending = self.kept = None  # this step's tree; the last priced best
        self.chosen = False  # choose() ran for this step (before it the engine asks a lookup's widest trie)
        self.prior_line = self.ratio_line = (0.0, 1.0 + self.prior_overhead, self.prior_node)  # (x0, y0, slope)
        self.chain_line, self.timed, self.stale = None, 0, False  # drafting steps timed; lines to refit

    @property
    def max_gamma(self) -> int:
        return self.inner.max_gamma

    @property
    def remember(self) -> bool:
        """True when the γ chooser remembers across runs (gamma="auto"): then so does the tree's clock."""
        return bool(getattr(self.inner, "remember", False))

    # ------------------------------------------------------------------ the estimates

    def chain_seconds(self, g: int) -> float:
        """A chain step of g drafts: its median shrunk towards the line through every chain timed."""
        return max(line_at(self._fitted().chain_line, g, self.shrink, self.medians.get((1,) * g)), 1e-9)

    def conditionals(self, g: int, match: int | None = None) -> list:
        """[c_0, ..., c_{g-1}]: the first child's acceptance at each depth given the path so far."""
        expected = getattr(self.inner, "expected", None)
        if match is not None and expected is not None:  # prompt lookup: the chooser's rate by agreement length
            e = expected(g, match)
            return [(e[i + 1] - e[i]) / max(e[i] - e[i - 1], 1e-12) if i else e[1] - 1.0 for i in range(g)]
        out = [self.prior_acceptance]
        for acc, tested in self.first[:g] + [(0, 0)] * (g - len(self.first)):
            out.append((acc + self.prior_weight * out[-1]) / (tested + self.prior_weight))
        return out[1:]

    def miss_ratios(self) -> list:
        """[m_1, ..., m_max_width]: P(all of k children rejected) / P(the first rejected), never rising with k."""
        out = [1.0]
        for k in range(2, self.max_width + 1):
            prior = min(out[-1], 1.0 / (1.0 + self.prior_rescue * (k - 1)))
            miss_k, miss_1 = self.misses.get(k, (0, 0))
            out.append(min(out[-1], (miss_k + self.prior_weight * prior) / (miss_1 + self.prior_weight)))
        return out

    def price(self, g: int, top: int, match: int | None = None) -> tuple:
        """(the best chain's tokens per second at depths <= g, [(head, shape, tokens per second, nodes)] of the
        family to depth `top`; a prompt lookup's tries (k,) * g instead)."""
        cs, ms = self.conditionals(top, match), self.miss_ratios()
        secs, prods, cum = [1.0] + [self.chain_seconds(d) for d in range(1, top + 1)], [1.0], [1.0]
        for c in cs:  # prods[i]: the chance the chain reaches depth i; cum[d]: a chain of d's expected tokens
            prods.append(prods[-1] * c)
            cum.append(cum[-1] + prods[-1])
        out, ones = [], (1,) * top
        if match is not None:
            heads, top = [((k,), g) for k in range(2, self.max_width + 1)], g
        else:
            heads = [(h, len(h)) for h in self.heads if len(h) <= top]
        for head, depth in heads:
            shape = head * depth if match is not None else head
            tokens, run, nodes, level = 1.0, 1.0, 0, 1
            for d, k in enumerate(shape):
                run *= 1.0 - (1.0 - cs[d]) * ms[k - 1]
                tokens, level = tokens + run, level * k
                nodes += level
            for d in range(depth, top + 1):  # then ones: each level reached as a chain's is, from where the head ends
                full = nodes + (d - depth) * level
                if match is None and full > self.max_nodes:
                    break
                tail = run / prods[depth] * (cum[d] - cum[depth]) if prods[depth] > 0 else 0.0
                shape = shape + ones[: d - len(shape)]
                n = self.sizes.get(shape, min(full, d * max(head)) if match is not None else full)
                ratio = max(line_at(self.ratio_line, n - d, self.shrink, self.medians.get(shape)), 1.0)  # >= its chain
                out.append((head, shape, (tokens + tail) / (secs[d] * ratio), n))
        return max(cum[d] / secs[d] for d in range(1, g + 1)), out

    # ------------------------------------------------------------------ the choice

    def choose(self, room, summary=None, match=None, run=None) -> int:
        summary = summary_of(summary, match, run)
        match = None if summary is None else summary.match  # prompt lookup's agreement prices its tries
        g = self.inner.choose(room, summary)
        self.head = self.shape = None
        self.chosen = True
        if not g or self.timed < self.warmup:
            return g
        exploring = self.steps > 0 and self.explore_share > 0 and self.steps % round(1 / self.explore_share) == 0
        if not exploring and self.steps % self.reprice_every:  # between pricings: the last best, if it fits
            if self.kept is not None and len(self.kept[1]) <= room:
                self.head, self.shape = self.kept
            return g if self.shape is None else len(self.shape)
        timed = sum(n for k, (_, n) in self.medians.items() if max(k, default=1) > 1) >= self.min_tries
        if (not timed and not exploring) or self._fitted().chain_line is None:  # nothing to price, or no chain yet
            return g
        best, rates = self.price(g, min(whole(room, "room"), self.max_gamma, g + max(1, g // 2)), match)
        most = max(self.sizes.values(), default=0)
        for head, shape, r, nodes in rates:  # exploit: a head timed, no larger than a tree timed
            if timed and head in self.tries and nodes <= most and r > best * (1 + self.tree_margin * (not self.shape)):
                best, self.head, self.shape = r, head, shape
        self.kept = None if self.shape is None else (self.head, self.shape)
        if exploring:
            hope, pick = best, None
            pooled = sum(self.tries.values()) / 2  # every tree timed prices the others too
            for head, shape, r, _ in rates:
                tries = self.tries.get(head, 0)
                r *= 1.0 + self.explore_bonus / math.sqrt(1.0 + tries + pooled)
                if tries < self.max_tries and head != self.head and r > hope:
                    hope, pick = r, (head, shape)
            self.head, self.shape = pick or (self.head, self.shape)
        return g if self.shape is None else len(self.shape)

    def widths(self, g: int) -> tuple:
        """This step's widths: the chosen tree, else a chain of g; before `choose`, a lookup's widest trie."""
        if not self.chosen:
            return (self.max_width,) * g
        return self.shape if self.shape is not None and len(self.shape) == g else (1,) * g

    # ------------------------------------------------------------------ what a step did

    def observe(self, gamma, accepted, draft_s, verify_s, match=None) -> None:
        """Kept until `observe_step` brings the step's record (a step without one is counted as a chain)."""
        if self.pending is not None:
            self._count(None)
        gamma = gamma_setting(gamma)
        accepted = whole(accepted, "accepted", hi=gamma)
        draft_s, verify_s = seconds(draft_s, "draft_s"), seconds(verify_s, "verify_s")
        self.pending, self.chosen = (gamma, accepted, draft_s, verify_s, match, self.shape, self.head), False

    def observe_step(self, record) -> None:
        """The step's `StepRecord`: its tree's fates (None for a chain or plain step) and its clock."""
        if self.pending is not None:
            self._count(record.tree)

    def _count(self, tree) -> None:
        gamma, accepted, draft_s, verify_s, match, cap, head = (
            self.pending
        )  # cap: what was chosen (a trie may hold less)
        cap, self.pending = cap or (1,) * gamma, None
        if tree is None:  # a chain (a lookup's trie without a branch runs as one)
            nodes = [(d, 1, 0 if d < accepted else None) for d in range(min(accepted + 1, gamma))]
            self.inner.observe(gamma, accepted, draft_s, verify_s, match)
        else:  # the chain inside: its first children, at the chooser's price for that chain
            nodes = first_accepted(tree)
            in_a_row = next((i for i, (_, _, j) in enumerate(nodes) if j != 0), len(nodes))
            price = getattr(self.inner, "verify_seconds", None)  # (a chooser that prices no chain gets the tree's)
            if price is not None and self.inner.draft.n and math.isfinite(price(gamma)):
                self.inner.observe(gamma, in_a_row, gamma * self.inner.draft.value, price(gamma), match)
            else:
                self.inner.observe(gamma, in_a_row, draft_s, verify_s, match)
        if head is not None:
            self.tries[head] = self.tries.get(head, 0) + 1
        self.steps += bool(gamma)
        for d, w, j in nodes:
            self.first += [[0, 0] for _ in range(d + 1 - len(self.first))]
            self.first[d][0], self.first[d][1] = self.first[d][0] + (j == 0), self.first[d][1] + 1
            for k in range(2, self.max_width + 1):  # known where k were drafted, or fewer than the step allowed
                if k <= w or w < (cap[d] if d < len(cap) else 1):
                    m = self.misses.setdefault(k, [0, 0])
                    m[0] += j is None or j >= k
                    m[1] += j != 0
        shape = (1,) * gamma if tree is None else cap if max(cap) > 1 else tuple(tree.widths)
        if (tree_like := max(shape, default=1) > 1) and self._fitted().chain_line is None:
            return
        spent, window = draft_s + verify_s, self.times.setdefault(shape, deque(maxlen=self.span))
        if tree_like:  # a tree's seconds are kept as a ratio to its depth's chain: a busy machine slows both alike
            size = self.sizes.get(shape, len(tree.parents))
            self.sizes[shape] = size + (len(tree.parents) - size) / (len(window) + 1)
            spent /= self.chain_seconds(len(shape))
        window.append(spent)
        self.medians[shape] = (statistics.median(window), len(window))
        self.timed, self.stale = self.timed + bool(shape), True  # (refitted when next needed)

    def _fitted(self) -> TreeAuto:
        """Refit, if a step was timed since: the chain's line of seconds over g, the trees' line of cost ratio."""
        if not self.stale:
            return self
        self.stale = False
        chains = [(len(k), m, n) for k, (m, n) in self.medians.items() if k and max(k) == 1]
        if chains:
            plain = self.medians.get((), (sum(m * n for _, m, n in chains) / sum(n for *_, n in chains), 0))[0]
            self.chain_line = cost_line(chains, self.prior_slope * plain, self.shrink)
        trees = [(self.sizes[k] - len(k), m, n) for k, (m, n) in self.medians.items() if k and max(k) > 1]
        self.ratio_line = cost_line(trees, self.prior_node, self.node_ridge) if trees else self.prior_line
        return self

    def warm_start(self, last) -> None:
        """Start from an earlier run (`specviz.lm.gamma.adaptive.recall`): the γ chooser's memory, and a TreeAuto's clock
        (the last 8 steps of each shape), acceptance counts (at most 32 per depth and width) and tries."""
        inner_last = getattr(last, "inner", last)
        if hasattr(self.inner, "warm_start") and type(inner_last) is type(self.inner):
            self.inner.warm_start(inner_last)
        if not isinstance(last, TreeAuto):
            return
        self.times = {k: deque(list(w)[-8:], maxlen=self.span) for k, w in last.times.items()}
        self.medians = {k: (statistics.median(w), len(w)) for k, w in self.times.items()}
        self.sizes = dict(last.sizes)
        cap = lambda a, t: [a * min(1.0, 32 / max(t, 1)), min(t, 32)]  # noqa: E731
        self.first, self.misses = [cap(*c) for c in last.first], {k: cap(*c) for k, c in last.misses.items()}
        self.tries, self.timed, self.stale = dict(last.tries), sum(len(w) for k, w in self.times.items() if k), True


# ----------------------------------------------------------------------------- what tree="auto" reads and fits


def tree_family(max_width: int = 4, max_nodes: int = 64) -> tuple:
    """The heads a tree may start with: (k,) and (k, k') for 2 <= k' <= k <= max_width, at most max_nodes nodes."""
    ones = tuple((k,) for k in range(2, max_width + 1) if k <= max_nodes)
    return ones + tuple((k, j) for k in range(2, max_width + 1) for j in range(2, k + 1) if k + k * j <= max_nodes)


def first_accepted(tree) -> list:
    """[(depth, w, j)] for each node where the walk of a `TreeStep` stood with w >= 1 children: j the child
    index accepted first, None when all were rejected.

    >>> from specviz.lm.engine.results import TreeStep
    >>> t = TreeStep((3, 1), [5, 6, 7, 8, 9, 4], [-1, -1, -1, 0, 1, 2], [0, 1, -1, -1, 0, -1], [1], [0.1] * 6, [0.1] * 6)
    >>> first_accepted(t)       # the second root child accepted, then its one child rejected
    [(0, 3, 1), (1, 1, None)]
    """
    children, out, node = {}, [], -1
    for i, p in enumerate(tree.parents):
        children.setdefault(p, []).append(i)
    for d in range(len(tree.path) + 1):
        if not children.get(node):
            break
        nxt = tree.path[d] if d < len(tree.path) else None
        out.append((d, len(children[node]), None if nxt is None else children[node].index(nxt)))
        node = nxt
    return out


def cost_line(pts: list, prior_slope: float, ridge: float) -> tuple:
    """(x0, y0, slope): the weighted least-squares line through [(x, y, weight)], its slope >= 0 and pulled towards
    `prior_slope` as if by `ridge` more weight·spread² (a few noisy shapes must not tilt it far)."""
    n = sum(w for *_, w in pts)
    x0, y0 = sum(w * x for x, _, w in pts) / n, sum(w * y for _, y, w in pts) / n
    sxy, den = sum(w * (x - x0) * (y - y0) for x, y, w in pts), sum(w * (x - x0) ** 2 for x, _, w in pts) + ridge
    return x0, y0, max((sxy + ridge * prior_slope) / den if den > 0 else prior_slope, 0.0)


def line_at(line: tuple, x: float, shrink: float, own: tuple | None) -> float:
    """The line at x, shrunk towards a shape's own (median, samples) when it has them."""
    fit = line[1] + line[2] * (x - line[0])
    return fit if own is None else (own[1] * own[0] + shrink * fit) / (own[1] + shrink)
