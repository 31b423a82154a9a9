"""A draft tree verified on the device (specviz.lm.trees.verify) against exact laws, the toy, and planted bugs.

Every goodness-of-fit check is a chi-square test (`stats_helpers.chi_square_pvalue`, cells
expecting under 5 pooled) at ALPHA = 1e-5 with a fixed seed: a correct walk fails a given check
with probability 1e-5 for a random seed, and this file's 50 or so checks together with under
5e-4. With the fixed seed each outcome is deterministic. A planted bug passes its test only if
one of its checks gives a p-value below ALPHA.

The toy pair is two random bigrams over V = 5 tokens (`NGramModel.random`), so every row of P
and Q is known exactly: after a prefix ending in token c, the target's next-token law is
PT[c] and the draft's QT[c] (both after temperature / top-k / top-p, `process_probs`). Each
trial drafts a fresh tree from the draft, children i.i.d. from their parent's q with
replacement (as `specviz.samplers.tree` does), so the emitted law must equal the target's whatever tree
is drawn. The one-hot walk (`one_hot=True`: each child its own point-mass q, as prompt lookup's
trie drafts) is checked on fixed tries against the plain enumeration of where it stops and what
it emits there.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from lm_fixtures import spy_host_reads  # noqa: E402
from stats_helpers import chi_square_pvalue  # noqa: E402

from specviz.exact.multidraft import multi_draft_acceptance_rate, multi_draft_output_dist  # noqa: E402
from specviz.exact.standardize import Sampling  # noqa: E402
from specviz.lm.engine.logits import process_probs  # noqa: E402
from specviz.lm.engine.models import NGramModel  # noqa: E402
from specviz.lm.trees import verify as tree_verify  # noqa: E402
from specviz.lm.trees.verify import tree_layout, verify_tree_torch  # noqa: E402
from specviz.samplers.tree import child_acceptance  # noqa: E402

ALPHA = 1e-5
V = 5
ROOT = 2  # the prompt's last token
SHAPES = [(3,), (2, 2), (3, 2, 1), (1, 1, 1), (4, 1)]
SAMPLINGS = {
    "T=1": Sampling(1.0),
    "top-k": Sampling(1.0, top_k=3),
    "top-p": Sampling(1.0, top_p=0.8),
    "one-hot q": Sampling(1.0),  # the draft proposes one token per context, as prompt lookup does
}
TRIALS = 2000
TOY_TRIALS = 1000


def tables(sampling: str = "T=1"):
    """(PT, QT): (V, V) float64 next-token laws of the target and the draft after each token."""
    target = NGramModel.random(V, order=2, seed=0, name="target")
    draft = NGramModel.random(V, order=2, seed=1, name="draft")
    s = SAMPLINGS[sampling]
    PT = process_probs(torch.stack([target.logits_for([c]) for c in range(V)]), s)
    QT = process_probs(torch.stack([draft.logits_for([c]) for c in range(V)]), s)
    if sampling == "one-hot q":
        QT = torch.eye(V, dtype=torch.float64)[(torch.arange(V) * 3 + 1) % V]
    return PT, QT


def draft_tree(shape, root: int, QT: torch.Tensor, rng: np.random.Generator):
    """(tokens, parents) of a tree drafted breadth-first: shape[d] children per node of depth d, i.i.d. from q."""
    q = QT.numpy()
    tokens, parents, level = [], [], [(-1, root)]
    for k in shape:
        below = []
        for node, tok in level:
            for x in rng.choice(V, size=k, p=q[tok] / q[tok].sum()):
                parents.append(node)
                tokens.append(int(x))
                below.append((len(tokens) - 1, int(x)))
        level = below
    return tokens, parents


def one_step(verify, shape, PT, QT, last: int, rng, gen, **kw) -> list[int]:
    """Draft a tree after token `last`, verify it, and return the emitted tokens (the path, then the final token)."""
    tokens, parents = draft_tree(shape, last, QT, rng)
    rows = torch.tensor([last] + tokens)
    v = verify(PT[rows], QT[rows], torch.tensor(tokens, dtype=torch.int64), parents, gen, **kw)
    return [tokens[i] for i in v.path.tolist() if i >= 0] + [int(v.token)]


def first_two_counts(verify, shape, sampling: str, trials: int = TRIALS, seed: int = 0):
    """Counts of the first emitted token (V,) and of the first two (V*V,), steps repeated until two are out."""
    PT, QT = tables(sampling)
    rng, gen = np.random.default_rng(seed), torch.Generator().manual_seed(seed)
    one, two = np.zeros(V, dtype=np.int64), np.zeros(V * V, dtype=np.int64)
    for _ in range(trials):
        out = []
        while len(out) < 2:
            out += one_step(verify, shape, PT, QT, out[-1] if out else ROOT, rng, gen)
        one[out[0]] += 1
        two[out[0] * V + out[1]] += 1
    p1 = PT[ROOT].numpy()
    return one, two, p1, (p1[:, None] * PT.numpy()).ravel()


def law_pvalues(verify, shape, sampling: str, trials: int = TRIALS) -> tuple[float, float]:
    """p-values of the first token against p(x1) and of the first two against p(x1) p(x2 | x1)."""
    one, two, p1, p12 = first_two_counts(verify, shape, sampling, trials)
    return chi_square_pvalue(one, p1), chi_square_pvalue(two, p12)


# ------------------------------------------------------------------------------ lossless by enumeration


@pytest.mark.slow
@pytest.mark.parametrize("sampling", list(SAMPLINGS))
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_the_emitted_law_is_the_targets(shape, sampling):
    p_first, p_two = law_pvalues(verify_tree_torch, shape, sampling)
    assert p_first >= ALPHA and p_two >= ALPHA, f"{shape} {sampling}: p-values {p_first:.3g}, {p_two:.3g}"


def test_the_emitted_law_is_the_targets_fast():
    """The fast lane's one case: a wide, deep tree at T = 1."""
    p_first, p_two = law_pvalues(verify_tree_torch, (3, 2, 1), "T=1", trials=400)
    assert p_first >= ALPHA and p_two >= ALPHA, f"p-values {p_first:.3g}, {p_two:.3g}"


# ------------------------------------------------------------------------------ the toy's multi-draft law


def depth_one_outcomes(verify, kids, p, q, trials: int, seed: int = 0) -> np.ndarray:
    """Counts over k + V outcomes of one fixed depth-1 tree: child i accepted (i < k), or all rejected and token y."""
    k = len(kids)
    PT, _ = tables()
    P = torch.cat([torch.as_tensor(p)[None], PT[torch.tensor(kids)]])
    Q = torch.cat([torch.as_tensor(q)[None], torch.zeros(k, V, dtype=torch.float64)])  # leaves' rows: unused
    tokens, gen = torch.tensor(kids, dtype=torch.int64), torch.Generator().manual_seed(seed)
    counts = np.zeros(k + V, dtype=np.int64)
    for _ in range(trials):
        v = verify(P, Q, tokens, [-1] * k, gen)
        path = v.path.tolist()
        counts[path[0] if path[0] >= 0 else k + int(v.token)] += 1
    return counts


def toy_outcome_law(kids, p, q) -> np.ndarray:
    """The toy's exact law of the same outcomes: `specviz.samplers.tree.child_acceptance`."""
    acc, none, R = child_acceptance(p, q, kids)
    return np.concatenate([acc, none * R])


@pytest.mark.slow  # a second or more on 2 cores (measured 2026-12-07)
@pytest.mark.parametrize("kids", [[3], [4, 2], [2, 2, 4], [4, 4, 2]], ids=str)
def test_a_fixed_depth_one_tree_follows_the_toys_child_acceptance(kids):
    PT, QT = tables()
    p, q = PT[ROOT].numpy(), QT[ROOT].numpy()
    counts = depth_one_outcomes(verify_tree_torch, kids, p, q, 1000)
    pval = chi_square_pvalue(counts, toy_outcome_law(kids, p, q))
    assert pval >= ALPHA, f"p-value {pval:.3g}: {counts} vs {toy_outcome_law(kids, p, q) * counts.sum()}"


@pytest.mark.slow  # a second or more on 2 cores (measured 2026-12-07)
@pytest.mark.parametrize("k", [1, 2, 4])
def test_a_random_depth_one_tree_has_the_multidraft_law(k):
    """Drafts i.i.d. from q: the first token follows multi_draft_output_dist, acceptance multi_draft_acceptance_rate."""
    PT, QT = tables()
    p, q = PT[ROOT].numpy(), QT[ROOT].numpy()
    rng, gen = np.random.default_rng(1), torch.Generator().manual_seed(1)
    first, kept = np.zeros(V, dtype=np.int64), 0
    for _ in range(TOY_TRIALS):
        tokens, parents = draft_tree((k,), ROOT, QT, rng)
        rows = torch.tensor([ROOT] + tokens)
        v = verify_tree_torch(PT[rows], QT[rows], torch.tensor(tokens), parents, gen)
        path = v.path.tolist()
        first[tokens[path[0]] if path[0] >= 0 else int(v.token)] += 1
        kept += path[0] >= 0
    rate = multi_draft_acceptance_rate(p, q, k)
    assert chi_square_pvalue(first, multi_draft_output_dist(p, q, k)) >= ALPHA
    assert chi_square_pvalue([kept, TOY_TRIALS - kept], [rate, 1 - rate]) >= ALPHA, f"{kept} kept vs rate {rate:.3f}"


# ------------------------------------------------------------------------------ planted bugs


def planted(*edits: tuple[str, str]):
    """verify_tree_torch with its source edited (each `old` must occur once): a test-local copy, never the product."""
    src = inspect.getsource(verify_tree_torch)
    for old, new in edits:
        assert src.count(old) == 1, f"the product no longer reads {old!r}: update the planted bug"
        src = src.replace(old, new)
    namespace = dict(vars(tree_verify))
    exec(compile(src, "<planted verify_tree_torch>", "exec"), namespace)
    return namespace["verify_tree_torch"]


RESIDUAL = "R = torch.where(tested & ~acc, residual_rows(R[None], q[None])[0], R)"
PLANTED = {  # bug -> the edits that plant it
    # siblings tested against P[cur] every time, and the final token drawn from P[cur]
    "no residual update": ((RESIDUAL, "pass"),),
    # each child tested against P[cur], though R is still updated for the final draw
    "children against P": (("_row(uq, c) < _row(R, x)", "_row(uq, c) < _row(_row(P, cur), x)"),),
    # after a rejected leaf, the final token is drawn from that leaf's P row (a bonus from a rejected node)
    "bonus after a rejected leaf": (
        (
            "    path, tested_rows, accepts = [], [], []\n",
            "    path, tested_rows, accepts = [], [], []\n    stray = torch.full((), -1, dtype=torch.int64, device=dev)\n",
        ),
        (
            "            nxt = torch.where(acc, c, nxt)\n",
            "            nxt = torch.where(acc, c, nxt)\n"
            "            leaf = tested & ~acc & ~_row(lay.has_children, c)\n"
            "            stray = torch.where(acc, -1, torch.where(leaf, c, stray))\n",
        ),
        (
            "    token = R.argmax()",
            "    R = torch.where(stray >= 0, _row(P, stray.clamp(min=0)), R)\n    token = R.argmax()",
        ),
    ),
}


@pytest.mark.slow  # a second or more on 2 cores (measured 2026-12-07)
@pytest.mark.parametrize("bug", list(PLANTED))
def test_a_planted_bug_breaks_the_toys_law(bug):
    PT, QT = tables()
    p, q, kids = PT[ROOT].numpy(), QT[ROOT].numpy(), [2, 2, 4]
    counts = depth_one_outcomes(planted(*PLANTED[bug]), kids, p, q, 600)
    pval = chi_square_pvalue(counts, toy_outcome_law(kids, p, q))
    assert pval < ALPHA, f"{bug}: not caught, p-value {pval:.3g}"


@pytest.mark.slow
@pytest.mark.parametrize("bug", list(PLANTED))
def test_a_planted_bug_breaks_the_emitted_law(bug):
    """On (2, 2) trees: siblings at the root and leaves below an accepted node (p-values 1e-28 or less here)."""
    p_first, p_two = law_pvalues(planted(*PLANTED[bug]), (2, 2), "T=1")
    assert min(p_first, p_two) < ALPHA, f"{bug}: not caught, p-values {p_first:.3g}, {p_two:.3g}"


@pytest.mark.slow  # a second or more on 2 cores (measured 2026-12-07)
def test_the_planted_copy_of_the_product_is_faithful():
    """With no edit, the copy draws exactly what the product draws (so a caught bug is the edit's doing)."""
    same = planted()
    for seed in range(5):
        a = first_two_counts(verify_tree_torch, (2, 2), "T=1", trials=30, seed=seed)[1]
        b = first_two_counts(same, (2, 2), "T=1", trials=30, seed=seed)[1]
        assert (a == b).all()


# ------------------------------------------------------------------------------ greedy


def greedy_reference(P: np.ndarray, tokens, parents):
    """(path, final token, fates) of the greedy walk, by hand on the host."""
    cur, path, fates = -1, [], [-1] * len(tokens)
    while True:
        top = int(P[cur + 1].argmax())
        nxt = None
        for i in (i for i, par in enumerate(parents) if par == cur):
            fates[i] = int(tokens[i] == top)
            if tokens[i] == top:
                nxt = i
                break
        if nxt is None:
            return path, top, fates
        path.append(nxt)
        cur = nxt


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_greedy_follows_the_longest_chain_of_argmax_matches(shape):
    PT, QT = tables()
    mixed = 0.5 * QT + 0.5 * torch.eye(V, dtype=torch.float64)[PT.argmax(-1)]  # drafts match the argmax half the time
    rng = np.random.default_rng(2)
    for _ in range(40):
        tokens, parents = draft_tree(shape, ROOT, mixed, rng)
        rows = torch.tensor([ROOT] + tokens)
        v = verify_tree_torch(PT[rows], QT[rows], torch.tensor(tokens), parents, greedy=True)
        path, top, fates = greedy_reference(PT[rows].numpy(), tokens, parents)
        assert v.path.tolist() == path + [-1] * (len(shape) - len(path))
        assert (int(v.accepted), int(v.token), v.fates.tolist()) == (len(path), top, fates)
        assert torch.equal(v.residual, PT[rows][path[-1] + 1 if path else 0])


def test_the_sampling_walk_on_one_hot_rows_is_the_greedy_walk():
    """At T = 0 the target's rows are one-hot: the multi-draft rule then accepts exactly the argmax, surely."""
    PT, QT = tables()
    P0 = process_probs(torch.log(PT), Sampling(0.0))
    rng, gen = np.random.default_rng(3), torch.Generator().manual_seed(3)
    for shape in SHAPES:
        for _ in range(10):
            tokens, parents = draft_tree(shape, ROOT, QT, rng)
            rows = torch.tensor([ROOT] + tokens)
            args = (P0[rows], QT[rows], torch.tensor(tokens), parents)
            a, b = verify_tree_torch(*args, gen), verify_tree_torch(*args, greedy=True)
            for name in ("path", "accepted", "token", "fates", "residual", "bonus"):
                assert torch.equal(getattr(a, name), getattr(b, name)), name


# ------------------------------------------------------------------------------ shape, seeds, host reads


def test_the_layout_and_the_verdict_shapes():
    lay = tree_layout([-1, -1, 0, 0, 1, 2])
    assert lay.widths == (2, 2, 1) and lay.depths == (1, 1, 2, 2, 2, 3)
    assert lay.children.tolist()[:4] == [[1, 2], [3, 4], [5, -1], [6, -1]]
    assert lay.has_children.tolist() == [True, True, True, True, False, False, False]
    PT, QT = tables()
    rows = torch.tensor([ROOT, 0, 1, 2, 3, 4, 0])
    v = verify_tree_torch(PT[rows], QT[rows], rows[1:], lay, torch.Generator().manual_seed(0))
    assert v.path.shape == (3,) and v.fates.dtype == torch.int8 and v.residual.shape == (V,)
    assert v.accepted.shape == v.token.shape == v.bonus.shape == ()
    empty = verify_tree_torch(PT[[ROOT]], QT[[ROOT]], torch.empty(0, dtype=torch.int64), [], greedy=True)
    assert empty.path.tolist() == [] and bool(empty.bonus) and int(empty.token) == int(PT[ROOT].argmax())


@pytest.mark.parametrize(
    ("parents", "error"),
    [([0], "parents\\[0\\]"), ([-1, 1], "parents\\[1\\]"), ([-1, -2], "parents\\[1\\]"), ("ab", "list of node")],
)
def test_a_bad_tree_is_named(parents, error):
    with pytest.raises((ValueError, TypeError), match=error):
        tree_layout(parents)


def test_a_mismatched_table_is_named():
    PT, QT = tables()
    with pytest.raises(ValueError, match="tokens has shape"):
        verify_tree_torch(PT[:3], QT[:3], torch.tensor([0]), [-1, 0])
    with pytest.raises(ValueError, match=r"\(N \+ 1, V\)"):
        verify_tree_torch(PT[:2], QT[:3], torch.tensor([0, 1]), [-1, 0])


def test_a_seed_fixes_the_verdict():
    PT, QT = tables()
    tokens, parents = draft_tree((3, 2, 1), ROOT, QT, np.random.default_rng(4))
    rows = torch.tensor([ROOT] + tokens)
    a, b = (
        verify_tree_torch(PT[rows], QT[rows], torch.tensor(tokens), parents, torch.Generator().manual_seed(9))
        for _ in range(2)
    )
    assert all(torch.equal(getattr(a, n), getattr(b, n)) for n in ("path", "token", "fates", "residual"))


def test_no_host_read_inside(monkeypatch):
    """Nothing leaves the device inside verify_tree_torch(check=False), the layout of a new shape included (counted by
    patching); the checked default reads the device once a call, for its check."""
    PT, QT = tables()
    tokens, parents = draft_tree((2, 3, 1, 1), ROOT, QT, np.random.default_rng(5))
    rows = torch.tensor([ROOT] + tokens)
    args = (PT[rows], QT[rows], torch.tensor(tokens))
    reads = spy_host_reads(monkeypatch)
    v = verify_tree_torch(*args, parents, torch.Generator().manual_seed(0), check=False)
    verify_tree_torch(*args, parents, greedy=True, check=False)
    inside = list(reads)
    v.token.item()  # the caller's one read: the spy sees it
    verify_tree_torch(*args, parents, torch.Generator().manual_seed(0))
    verify_tree_torch(*args, parents, greedy=True)
    monkeypatch.undo()
    assert inside == [], f"host reads inside verify_tree_torch: {inside}"
    assert reads == ["item", "__bool__", "__bool__"]


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_no_synchronisation_on_cuda():
    """On a GPU, CUDA's own sync detector finds no synchronisation (check=False); greedy agrees with the CPU."""
    dev = torch.device("cuda")
    PT, QT = tables()
    tokens, parents = draft_tree((3, 2, 2, 1), ROOT, QT, np.random.default_rng(6))
    rows = torch.tensor([ROOT] + tokens)
    cpu = verify_tree_torch(PT[rows], QT[rows], torch.tensor(tokens), parents, greedy=True)
    P, Q, t = PT[rows].to(dev), QT[rows].to(dev), torch.tensor(tokens).to(dev)
    gen = torch.Generator(device=dev).manual_seed(0)
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        v = verify_tree_torch(P, Q, t, parents, gen, check=False)
        g = verify_tree_torch(P, Q, t, parents, greedy=True, check=False)
        verify_tree_torch(P, None, t, parents, gen, one_hot=True, check=False)  # the one-hot walk (children may repeat)
    finally:
        torch.cuda.set_sync_debug_mode(0)
    assert 0 <= int(v.token) < V and int(v.accepted) == int((v.fates == 1).sum())
    assert g.path.tolist() == cpu.path.tolist() and int(g.token) == int(cpu.token)


# ------------------------------------------------------------------------------ one q per child (prompt lookup's trie)

TRIES = {  # name -> (tokens, parents): siblings are distinct tokens, as a trie of candidate runs has them
    "three at the root": ([3, 1, 4], [-1, -1, -1]),
    "ragged": ([0, 2, 4, 1, 4, 0, 4], [-1, -1, -1, 0, 0, 1, 3]),  # leaves at depths 1, 2 and 3, likely tokens
    "chain": ([2, 0, 3], [-1, 0, 1]),
}


def one_hot_outcome_law(P: np.ndarray, tokens, parents) -> np.ndarray:
    """((N + 1) * V,) exact law of (the node the walk stops at, the final token), by plain enumeration.

    With a point-mass q per child, the walk follows the target's own draws down the trie: a node is
    reached with the product of p along its path, and from node n the token y ends the step (as the
    final token) with reach(n) p_n(y) when y is none of n's children, for every y after a leaf.
    """
    out, reach = np.zeros((len(tokens) + 1, V)), {-1: 1.0}
    for node in [-1, *range(len(tokens))]:  # parents come first
        kids = [i for i, par in enumerate(parents) if par == node]
        for i in kids:
            reach[i] = reach[node] * P[node + 1][tokens[i]]
        for y in set(range(V)) - {tokens[i] for i in kids}:
            out[node + 1, y] = reach[node] * P[node + 1][y]
    return out.ravel()


def one_hot_outcomes(verify, P, tokens, parents, trials: int, seed: int = 0) -> np.ndarray:
    """Counts of (stop node, final token) over `trials` one-hot walks of one fixed trie."""
    counts, gen = np.zeros((len(tokens) + 1) * V, dtype=np.int64), torch.Generator().manual_seed(seed)
    for _ in range(trials):
        v = verify(P, None, torch.tensor(tokens), parents, gen, one_hot=True)
        path = [i for i in v.path.tolist() if i >= 0]
        counts[((path[-1] + 1) if path else 0) * V + int(v.token)] += 1
    return counts


@pytest.mark.slow  # a second or more on 2 cores (measured 2026-12-07)
@pytest.mark.parametrize("sampling", ["T=1", "top-k"])
@pytest.mark.parametrize("trie", list(TRIES))
def test_one_hot_children_follow_the_enumerated_law(trie, sampling):
    """Each child its own point-mass q: the (stop, final token) law is the plain enumeration's (R(x) accepted)."""
    tokens, parents = TRIES[trie]
    PT, _ = tables(sampling)
    P = PT[torch.tensor([ROOT] + tokens)]
    counts = one_hot_outcomes(verify_tree_torch, P, tokens, parents, 800)
    law = one_hot_outcome_law(P.numpy(), tokens, parents)
    assert abs(law.sum() - 1) < 1e-12
    pval = chi_square_pvalue(counts, law)
    assert pval >= ALPHA, f"{trie} {sampling}: p-value {pval:.3g}"


@pytest.mark.slow  # a second or more on 2 cores (measured 2026-12-07)
@pytest.mark.parametrize("bug", list(PLANTED))
def test_a_planted_bug_breaks_the_one_hot_law(bug):
    """The planted walks (no residual update between siblings, ...) run one-hot too, and the law catches them."""
    tokens, parents = TRIES["ragged"]
    PT, _ = tables()
    P = PT[torch.tensor([ROOT] + tokens)]
    counts = one_hot_outcomes(planted(*PLANTED[bug]), P, tokens, parents, 600)  # p-values 1e-30 or less here
    pval = chi_square_pvalue(counts, one_hot_outcome_law(P.numpy(), tokens, parents))
    assert pval < ALPHA, f"{bug}: not caught, p-value {pval:.3g}"


def test_one_hot_rows_are_the_one_hot_walk():
    """A tree whose children all carry one token per parent: Q's one-hot rows and one_hot=True draw the same."""
    PT, _ = tables()
    tokens, parents = [3, 0, 2], [-1, 0, 1]  # a chain: one child per node, so Q's row can be its point mass
    rows = torch.tensor([ROOT] + tokens)
    Q = torch.zeros(4, V, dtype=torch.float64)
    Q[torch.arange(3), torch.tensor(tokens)] = 1.0  # row r: the point mass on row r's child
    for seed in range(20):
        a = verify_tree_torch(PT[rows], Q, torch.tensor(tokens), parents, torch.Generator().manual_seed(seed))
        b = verify_tree_torch(
            PT[rows], None, torch.tensor(tokens), parents, torch.Generator().manual_seed(seed), one_hot=True
        )
        for name in ("path", "token", "fates", "bonus"):
            assert torch.equal(getattr(a, name), getattr(b, name)), (seed, name)
        assert torch.allclose(a.residual, b.residual, atol=1e-12)


def test_one_hot_greedy_and_host_reads(monkeypatch):
    """Greedy ignores q (one_hot or not); the one-hot walk reads nothing on the host; Q=None needs one_hot."""
    PT, QT = tables()
    tokens, parents = TRIES["ragged"]
    rows = torch.tensor([ROOT] + tokens)
    g1 = verify_tree_torch(PT[rows], None, torch.tensor(tokens), parents, greedy=True, one_hot=True)
    g2 = verify_tree_torch(PT[rows], QT[rows], torch.tensor(tokens), parents, greedy=True)
    assert all(torch.equal(getattr(g1, n), getattr(g2, n)) for n in ("path", "token", "fates", "residual", "bonus"))
    reads = spy_host_reads(monkeypatch)
    gen = torch.Generator().manual_seed(0)
    verify_tree_torch(PT[rows], None, torch.tensor(tokens), parents, gen, one_hot=True, check=False)
    inside = list(reads)
    monkeypatch.undo()
    assert inside == [], f"host reads inside the one-hot walk: {inside}"
    with pytest.raises(TypeError, match="Q must be a 2-D floating-point tensor"):
        verify_tree_torch(PT[rows], None, torch.tensor(tokens), parents)
