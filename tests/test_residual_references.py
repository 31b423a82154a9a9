"""Every copy of the repair distribution (p - q)+ / Z agrees with the reference, `theory.resample_dist`.

The copies are the ones listed in `resample_dist`'s docstring, and a scan of the source finds
no other: a new copy fails `test_no_unlisted_copy_in_the_source` until it is listed (and
checked here). Each copy is reached through its public entry point and run on exact cases
(the tutorial's p = (0.6, 0.3, 0.1), q = (0.4, 0.5, 0.1): (p - q)+ = (0.2, 0, 0), Z = 0.2),
q = p (Z = 0), disjoint supports (Z = 1: the repair is p), random pairs with p = 0 and q = 0
entries. Closed forms are compared entry by entry, exactly where the copy does the same
float64 arithmetic, to fp tolerance otherwise; where Z = 0 each copy's own choice (p, as the
reference, or 0) is checked as stated. Samplers are compared by the frequencies of the tokens
they emit after a rejection, with fixed seeds: exact where the repair gives 0 or 1, otherwise
within 5 standard deviations per token (a false-alarm rate of 6e-7 per cell). Planted wrong
repairs show that both kinds of check, and the scan, can fail.
"""

from __future__ import annotations

import ast
import importlib
import io
import re
import tokenize
from fractions import Fraction as F
from pathlib import Path

import numpy as np
import pytest
import source_index

from specviz.exact.theory import acceptance_prob, rejection_mass, repair, resample_dist, residual

SIGMAS = 5.0
ROOT = Path(__file__).resolve().parent.parent / "specviz"


def make_cases(seed: int = 0) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Named (p, q) float64 pairs: the tutorial's, q = p, disjoint supports, random pairs with zeros."""
    rng = np.random.default_rng(seed)
    cases = {
        "tutorial": (np.array([0.6, 0.3, 0.1]), np.array([0.4, 0.5, 0.1])),
        "disjoint": (np.array([0.5, 0.5, 0.0, 0.0]), np.array([0.0, 0.0, 0.3, 0.7])),
        "q = 0 entries": (np.array([0.2, 0.3, 0.1, 0.4, 0.0]), np.array([0.0, 0.5, 0.0, 0.3, 0.2])),
    }
    same = rng.dirichlet(np.ones(5))
    same[1] = 0.0
    cases["q = p"] = (same / same.sum(), same / same.sum())
    for i in range(3):
        p, q = rng.dirichlet(np.ones(6)), rng.dirichlet(np.ones(6))
        a, b, c = rng.permutation(6)[:3]
        p[a] = q[b] = p[c] = q[c] = 0.0
        cases[f"random {i}"] = (p / p.sum(), q / q.sum())
    return cases


CASES = make_cases()
IDS = list(CASES)


def assert_repair(r, p, q, *, at_z0: str, rtol: float = 0.0, atol: float = 0.0, what: str = "") -> None:
    """A closed-form copy `r` (V,) equals resample_dist(p, q) where Z > 0, and its own choice `at_z0` where Z = 0.

    at_z0: "p" (the reference's choice), "0" (all zeros) or "unused" (its weight is 0 there: not visible).
    """
    r, ref = np.asarray(r, dtype=np.float64), resample_dist(p, q)
    if rejection_mass(p, q) > 0 or at_z0 == "p":
        np.testing.assert_allclose(r, ref, rtol=rtol, atol=atol, err_msg=f"{what}: p={p}, q={q}")
    elif at_z0 == "0":
        assert (r == 0).all(), f"{what}: at Z = 0 it gives {r}, says 0"


def assert_draws(tokens, p, q, what: str = "") -> None:
    """tokens: draws after a rejection; each token's count fits resample_dist(p, q) (exact where it is 0 or 1)."""
    tokens = np.asarray(tokens)
    ref, n = resample_dist(p, q), tokens.size
    assert n > 0, f"{what}: no rejection to check"
    counts = np.bincount(tokens, minlength=p.size)
    for x, pr in enumerate(ref):
        if pr in (0.0, 1.0):
            assert counts[x] == pr * n, f"{what}: token {x} drawn {counts[x]} of {n} times, repair says {pr:g}"
            continue
        sd = np.sqrt(pr * (1 - pr) / n)
        assert abs(counts[x] / n - pr) <= SIGMAS * sd, (
            f"{what}: token {x}: frequency {counts[x] / n:.4f} in {n} draws, reference {pr:.4f} (sd {sd:.4f})"
        )


def most_rejected(p, q) -> int:
    """A token the draft proposes (q > 0) with the smallest acceptance: the draft that is rejected most."""
    a = np.where(q > 0, acceptance_prob(p, q), np.inf)
    return int(np.argmin(a))


# ------------------------------------------------------------------------------ the reference and the checks


def test_the_reference_on_exact_cases():
    p, q = [F(3, 5), F(3, 10), F(1, 10)], [F(2, 5), F(1, 2), F(1, 10)]
    assert residual(p, q).tolist() == [F(1, 5), 0, 0]
    assert rejection_mass(p, q) == F(1, 5)
    assert resample_dist(p, q).tolist() == [1, 0, 0]
    dist, z = repair(np.array(p, dtype=object), np.array(q, dtype=object))
    assert dist.tolist() == [1, 0, 0] and z == F(1, 5)
    p, q = CASES["tutorial"]
    np.testing.assert_allclose(residual(p, q), [0.2, 0, 0], atol=1e-15)
    assert rejection_mass(p, q) == pytest.approx(0.2, abs=1e-15)
    np.testing.assert_array_equal(resample_dist(p, q), [1.0, 0.0, 0.0])
    p, q = CASES["q = p"]
    assert rejection_mass(p, q) == 0
    np.testing.assert_array_equal(resample_dist(p, q), p)  # Z = 0: p, never 0/0
    p, q = CASES["disjoint"]
    assert rejection_mass(p, q) == 1
    np.testing.assert_array_equal(resample_dist(p, q), p)


@pytest.mark.parametrize("name", IDS)
def test_the_reference_keeps_its_conventions(name):
    p, q = CASES[name]
    r, z = resample_dist(p, q), rejection_mass(p, q)
    assert (r >= 0).all() and r.sum() == pytest.approx(1.0, abs=1e-12)
    assert z == pytest.approx(1 - float(np.minimum(p, q).sum()), abs=1e-12)  # Z = P(reject)
    if z > 0:
        assert (r[p <= q] == 0).all()
        np.testing.assert_allclose(r, np.maximum(p - q, 0) / z, rtol=1e-15)
    dist, mass = repair(p, q)
    np.testing.assert_array_equal(dist, r)
    assert mass == z


PLANTED = {
    "|p - q| / Σ|p - q|": lambda p, q: np.abs(p - q) / np.abs(p - q).sum(),
    "(q - p)+ / Z": lambda p, q: np.maximum(q - p, 0) / max(np.maximum(q - p, 0).sum(), 1e-300),
    "(p - q)+ unnormalised": lambda p, q: np.maximum(p - q, 0),
    "p itself": lambda p, q: p,
    "0 at Z = 0": lambda p, q: np.maximum(p - q, 0) / max(np.maximum(p - q, 0).sum(), 1e-300),
}


@pytest.mark.parametrize("planted", PLANTED.values(), ids=list(PLANTED))
def test_a_planted_wrong_repair_fails_the_closed_form_check(planted):
    with pytest.raises(AssertionError):
        for p, q in CASES.values():
            with np.errstate(invalid="ignore", divide="ignore"):
                assert_repair(planted(p, q), p, q, at_z0="p", what="planted")


@pytest.mark.parametrize("bug", ["resample_from_p", "abs_residual"])
def test_a_planted_wrong_repair_fails_the_frequency_check(bug):
    """The frequency check has the power to see a verifier that repairs from p, or from |p - q|."""
    from specviz.samplers.verifiers import BUGGY_VERIFIERS

    with pytest.raises(AssertionError, match="frequency|drawn"):
        for p, q in CASES.values():
            _check_verifier(BUGGY_VERIFIERS[bug], p, q)


# ------------------------------------------------------------------------------ numpy closed forms


@pytest.mark.parametrize("name", IDS)
def test_multidraft_stages(name):
    """Each stage's R is the repair of the last one against q (exactly), and reaching it costs Z."""
    from specviz.exact.multidraft import multi_draft_stages

    p, q = CASES[name]
    stages = multi_draft_stages(p, q, 3)
    assert_repair(stages[1][0], p, q, at_z0="p", what="multidraft.multi_draft_stages")
    assert stages[1][1] == rejection_mass(p, q)
    for (R, _), (nxt, _) in zip(stages[1:-1], stages[2:]):
        assert_repair(nxt, R, q, at_z0="p", what="multidraft.multi_draft_stages (later stage)")


def test_multidraft_stages_are_exact_with_fractions():
    from specviz.exact.multidraft import multi_draft_stages

    p, q = [F(3, 5), F(3, 10), F(1, 10)], [F(2, 5), F(1, 2), F(1, 10)]
    (R0, r0), (R1, r1), (R2, r2) = multi_draft_stages(p, q, 2)
    assert (R0.tolist(), r0, R1.tolist(), r1) == (p, 1, [1, 0, 0], F(1, 5))
    assert (R2.tolist(), r2) == ([1, 0, 0], F(1, 5) * F(3, 5))  # (R1 - q)+ = (3/5, 0, 0): Z = 3/5


@pytest.mark.parametrize("name", IDS)
def test_tree_child_acceptance_and_draft_tree(name):
    """One child: the final R is the repair; a rejected child's resampled token comes from it."""
    from specviz.samplers.tree import child_acceptance, draft_tree

    p, q = CASES[name]
    x = most_rejected(p, q)
    assert_repair(child_acceptance(p, q, [x])[2], p, q, at_z0="p", what="tree.child_acceptance")
    if rejection_mass(p, q) == 0:
        return  # nothing is ever rejected
    tree = next(t for s in range(200) if (t := draft_tree(p, q, 1, 1, seed=s, tokens=[x])).final_kind == "resampled")
    assert_repair(tree.final_dist, p, q, at_z0="p", what="tree.draft_tree")


@pytest.mark.parametrize("name", IDS)
def test_standardize_verify_output_dist(name):
    """out = s a + (1 - Σ s a) r: with a draft that also samples where q = 0, r shows even when Z = 0."""
    from specviz.exact.standardize import verify_output_dist

    p, q = CASES[name]
    s = np.full(p.size, 1 / p.size)  # the sampled draft puts mass where q = 0 too
    a = np.where(q > 0, acceptance_prob(p, q), 0.0)
    out = verify_output_dist(p, q, s)
    weight = 1 - (s * a).sum()
    if weight > 1e-9:
        assert_repair((out - s * a) / weight, p, q, at_z0="p", atol=1e-12, what="standardize.verify_output_dist")


def test_standardize_mismatch_output_dist_goes_through_verify_output_dist():
    from specviz.exact.standardize import Sampling, mismatch_output_dist, standardize, verify_output_dist

    t, d = np.array([2.0, 1.0, 0.0, -1.0]), np.array([0.0, 1.0, 2.0, 0.5])
    m = mismatch_output_dist(t, d, Sampling(0.7), target_used=Sampling(1.0), draft_sampled=Sampling(1.0, top_k=2))
    p, s = standardize(t, 1.0), standardize(d, 1.0, top_k=2)
    np.testing.assert_array_equal(m.output, verify_output_dist(p, s, s))


@pytest.mark.parametrize("name", IDS)
def test_audit_textbook_joint(name):
    """Row x of the joint: min(p, q)(x) on the diagonal, the rest of q(x) spread over the repair (0 where Z = 0)."""
    from specviz.samplers.audit import textbook_joint

    p, q = CASES[name]
    J, kept = textbook_joint(p, q), np.minimum(p, q)
    for x in np.flatnonzero(q - kept > 0):
        row = J[x] - kept[x] * np.eye(p.size)[x]
        assert_repair(row / (q[x] - kept[x]), p, q, at_z0="0", atol=1e-15, what="audit.textbook_joint")
    if rejection_mass(p, q) == 0:
        np.testing.assert_array_equal(J, np.diag(kept))  # its choice at Z = 0: no spread


@pytest.mark.parametrize("name", IDS)
def test_coupling_maximal_coupling(name):
    from specviz.samplers.coupling import maximal_coupling

    p, q = CASES[name]
    J, over = maximal_coupling(p, q), np.maximum(q - p, 0)
    for x in np.flatnonzero(over > 0):
        row = J[x] - min(p[x], q[x]) * np.eye(p.size)[x]
        assert_repair(row / over[x], p, q, at_z0="0", atol=1e-15, what="coupling.maximal_coupling")
    if rejection_mass(p, q) == 0:
        np.testing.assert_array_equal(J, np.diag(np.minimum(p, q)))


def test_coupling_maximal_coupling_is_exact_with_fractions():
    from specviz.samplers.coupling import maximal_coupling

    J = maximal_coupling([F(3, 5), F(3, 10), F(1, 10)], [F(2, 5), F(1, 2), F(1, 10)])
    assert (J[1] - np.array([0, F(3, 10), 0], dtype=object)).tolist() == [F(1, 5), 0, 0]  # over(dog) = 1/5, r = e_cat


@pytest.mark.parametrize("name", IDS)
def test_numerics_lossless_output(name):
    """lossless_output_in = q a + Z r; r recovered in float64 to 1e-12 and float32 to 1e-5 (Z = 0: weight 0)."""
    pytest.importorskip("torch")
    from specviz.exact.numerics import lossless_output_in

    p, q = CASES[name]
    qa, z = q * acceptance_prob(p, q), rejection_mass(p, q)
    if z == 0:
        np.testing.assert_allclose(lossless_output_in(p, q, "float64").numpy(), p, atol=1e-15)
        return
    for dtype, atol in (("float64", 1e-12), ("float32", 1e-5)):
        out = lossless_output_in(p, q, dtype).double().numpy()
        assert_repair((out - qa) / z, p, q, at_z0="unused", atol=atol, what=f"numerics.lossless_output_in ({dtype})")


# ------------------------------------------------------------------------------ numpy samplers


def _check_verifier(verifier, p, q, n=100_000, seed=0):
    x, out = verifier(p, q, n, np.random.default_rng(seed), with_drafts=True)
    rejected = out != x  # a rejected draft has p < q, so the repair never gives it back
    if rejection_mass(p, q) > 0:
        assert_draws(out[rejected], p, q, "verifiers")
    else:
        assert not rejected.any()


@pytest.mark.parametrize("name", IDS)
def test_correct_verifier(name):
    from specviz.samplers.verifiers import correct_verifier

    p, q = CASES[name]
    _check_verifier(correct_verifier, p, q, seed=IDS.index(name))


@pytest.mark.parametrize("name", IDS)
def test_chain_sampler(name):
    """spec_chain_sample, one token, γ = 1: a rejected first draft is replaced from the repair."""
    from specviz.samplers.chain import MarkovPair, spec_chain_sample

    p, q = CASES[name]
    V = p.size
    pair = MarkovPair(np.tile(p, (V + 1, 1)), np.tile(q, (V + 1, 1)), tuple(range(V)))
    s = spec_chain_sample(pair, length=1, gamma=1, n=60_000, seed=IDS.index(name))
    rejected = s.accepted_per_step == 0  # one verify step per sequence
    if rejection_mass(p, q) == 0:
        assert not rejected.any()
    else:
        assert_draws(s.sequences[rejected, 0], p, q, "chain.spec_chain_sample")


@pytest.mark.parametrize("name", IDS)
def test_multi_draft_sample(name):
    """multi_draft_sample with one draft: when it is rejected, the token comes from the repair."""
    from specviz.samplers.sampling import multi_draft_sample

    p, q = CASES[name]
    s = multi_draft_sample(p, q, 60_000, 1, seed=IDS.index(name))
    rejected = s.accepted_index < 0
    if rejection_mass(p, q) == 0:
        assert not rejected.any()
    else:
        assert_draws(s.tokens[rejected], p, q, "sampling.multi_draft_sample")


# ------------------------------------------------------------------------------ torch


def _rows(p, q, dtype, n=1):
    torch = pytest.importorskip("torch")
    return torch.tensor(p, dtype=dtype).expand(n, p.size), torch.tensor(q, dtype=dtype).expand(n, q.size)


@pytest.mark.slow  # a second or more on 2 cores (measured 2026-12-07)
@pytest.mark.parametrize("name", IDS)
def test_torch_residual_rows_and_the_engine_hook(name):
    """residual_rows in float64 (to 1e-15) and float32 (to 1e-6), p where Z = 0; the engine's hook is it."""
    torch = pytest.importorskip("torch")
    from specviz.lm.engine.loop import SpeculativeEngine
    from specviz.samplers.torch_sampling import residual_rows

    p, q = CASES[name]
    for dtype, atol in ((torch.float64, 1e-15), (torch.float32, 1e-6)):
        P, Q = _rows(p, q, dtype, 2)
        r = residual_rows(P, Q)
        assert r.dtype == dtype
        for row in r.double().numpy():
            assert_repair(row, p, q, at_z0="p", atol=atol, what=f"torch_sampling.residual_rows ({dtype})")
        torch.testing.assert_close(SpeculativeEngine().residual(P, Q), r, rtol=0, atol=0)


@pytest.mark.slow
@pytest.mark.parametrize("name", IDS)
def test_torch_verify_chain_draws_from_the_residual(name):
    """verify_chain_torch (γ = 1, no bonus): a rejected draft's token comes from residual_rows by default."""
    torch = pytest.importorskip("torch")
    from specviz.samplers.torch_sampling import verify_chain_torch

    p, q = CASES[name]
    P, Q = _rows(p, q, torch.float64)
    draft = torch.tensor([most_rejected(p, q)])
    gen = torch.Generator().manual_seed(IDS.index(name))
    tokens = np.array([int(verify_chain_torch(P, Q, draft, gen).token) for _ in range(2500)])
    if rejection_mass(p, q) == 0:
        assert (tokens == -1).all()  # always kept: no replacement
    else:
        assert_draws(tokens[tokens >= 0], p, q, "torch_sampling.verify_chain_torch")


@pytest.mark.parametrize("gather", [True, False], ids=["gather_rejected", "all_rows"])
@pytest.mark.parametrize("name", IDS)
def test_torch_spec_sample_draws_from_the_residual(name, gather):
    """spec_sample_torch: the rejected rows' tokens follow the repair of the rows as held (float32 here)."""
    torch = pytest.importorskip("torch")
    from specviz.samplers.torch_sampling import spec_sample_torch

    p, q = CASES[name]
    P, Q = _rows(p, q, torch.float32, 60_000)
    out = spec_sample_torch(P, Q, torch.Generator().manual_seed(IDS.index(name)), gather_rejected=gather)
    p32, q32 = P[0].double().numpy(), Q[0].double().numpy()
    p32, q32 = p32 / p32.sum(), q32 / q32.sum()
    rejected = ~out.accepted.numpy()
    if rejection_mass(p32, q32) == 0:
        assert not rejected.any()
    else:
        assert_draws(out.tokens.numpy()[rejected], p32, q32, "torch_sampling.spec_sample_torch")


@pytest.mark.slow
def test_torch_spec_sample_blocked_path():
    """V = 3001 over 2000 rows takes the blocked inverse CDF: the repair is still the reference's."""
    torch = pytest.importorskip("torch")
    from specviz.samplers.torch_sampling import spec_sample_torch

    V = 3001
    p, q = np.zeros(V), np.zeros(V)
    p[[5, 700, 1500, 2999, 3000]] = [0.1, 0.2, 0.3, 0.15, 0.25]
    q[[5, 700, 1200, 3000]] = [0.3, 0.1, 0.4, 0.2]
    P, Q = _rows(p, q, torch.float64, 2000)
    gen = torch.Generator().manual_seed(0)
    tokens = []
    for _ in range(10):
        out = spec_sample_torch(P, Q, gen)
        tokens.append(out.tokens.numpy()[~out.accepted.numpy()])
    assert_draws(np.concatenate(tokens), p, q, "torch_sampling.spec_sample_torch (blocked)")


# ------------------------------------------------------------------------------ every copy is listed and checked

CHECKED = {  # each name listed in resample_dist's docstring -> the test here that checks it
    "specviz.samplers.chain.spec_chain_sample": test_chain_sampler,
    "specviz.exact.multidraft.multi_draft_stages": test_multidraft_stages,
    "specviz.samplers.tree.child_acceptance": test_tree_child_acceptance_and_draft_tree,
    "specviz.samplers.tree.draft_tree": test_tree_child_acceptance_and_draft_tree,
    "specviz.samplers.sampling.multi_draft_sample": test_multi_draft_sample,
    "specviz.exact.standardize.verify_output_dist": test_standardize_verify_output_dist,
    "specviz.samplers.torch_sampling.residual_rows": test_torch_residual_rows_and_the_engine_hook,
    "specviz.samplers.torch_sampling.verify_chain_torch": test_torch_verify_chain_draws_from_the_residual,
    "specviz.lm.engine.loop.SpeculativeEngine.residual": test_torch_residual_rows_and_the_engine_hook,
    "specviz.samplers.torch_sampling.spec_sample_torch": test_torch_spec_sample_draws_from_the_residual,
    "specviz.samplers.verifiers.correct_verifier": test_correct_verifier,
    "specviz.exact.numerics.lossless_output_in": test_numerics_lossless_output,
    "specviz.samplers.audit.textbook_joint": test_audit_textbook_joint,
    "specviz.samplers.coupling.maximal_coupling": test_coupling_maximal_coupling,
}
NOT_A_REPAIR = {  # functions the scan matches that build no repair distribution, and why
    "specviz.exact.theory.residual": "the reference's own (p - q)+",
    "specviz.exact.theory.repair": "the reference's computation",
    "specviz.samplers.torch_rows._seeded_rows": "clamps row seeds at 0 (negative: not seeded)",
    "specviz.figures.money.money_diagram_patch": "(q - p)+: the draft mass that gets rejected, drawn as bars",
}
COPY_PATTERN = re.compile(
    r"maximum\(\s*[\w.\[\]]+\s*-\s*[\w.\[\]]+\s*,\s*0"  # np.maximum(p - q, 0.0)
    r"|clip\(\s*[\w.\[\]]+\s*-\s*[\w.\[\]]+\s*,\s*0"  # np.clip(p - q, 0, None)
    r"|clamp\(\s*[\w.\[\]]+\s*-\s*[\w.\[\]]+\s*,\s*min\s*=\s*0"  # torch.clamp(p - q, min=0.0)
    r"|positive_part\(\s*[\w.\[\]]+\s*-"  # positive_part(p - q)
    r"|clamp_min_?\(\s*0\s*\)"  # (p - q).clamp_min_(0)
    r"|\brelu\("
)
"""How a repair is written: a positive part of a difference. A match is a copy unless listed or in NOT_A_REPAIR."""


def listed_bullets(doc: str) -> list[list[str]]:
    """The backticked names of each bullet of a docstring's list."""
    bullets = re.split(r"\n\s*- ", doc.split("\n\n    >>>")[0])[1:]
    return [re.findall(r"`([\w.]+)`", b) for b in bullets]


def scopes(tree: ast.AST, prefix: str = ""):
    """(first line, last line, qualified name) of every function and class, at any depth."""
    for child in ast.iter_child_nodes(tree):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            name = f"{prefix}{child.name}"
            yield child.lineno, child.end_lineno, name
            yield from scopes(child, name + ".")
        else:
            yield from scopes(child, prefix)


def code_only(text: str) -> str:
    """The source with its strings (docstrings included) and comments blanked out, line numbers kept."""
    lines = [list(line) for line in text.splitlines(keepends=True)]
    blank = {tokenize.STRING, tokenize.COMMENT, getattr(tokenize, "FSTRING_MIDDLE", tokenize.STRING)}
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type in blank:
            (r0, c0), (r1, c1) = tok.start, tok.end
            for r in range(r0, r1 + 1):
                line = lines[r - 1]
                for c in range(c0 if r == r0 else 0, c1 if r == r1 else len(line)):
                    if line[c] != "\n":
                        line[c] = " "
    return "".join("".join(line) for line in lines)


def copy_sites(root: Path = ROOT) -> set[str]:
    """`module.function` (innermost, with its class) of every line of code that writes a positive part of a difference.

    Strings and comments are not code. The exercises are left out: their wrong answers and model
    solutions are the learner's, graded against `resample_dist` (specviz/exercises/nb03.py, nb04.py).
    """
    sites = set()
    for path in source_index.python_files(root):
        rel = path.relative_to(root.parent).with_suffix("").parts
        if "exercises" in rel:
            continue
        module = ".".join(rel[:-1] if rel[-1] == "__init__" else rel)
        text = source_index.text(path)
        spans = list(scopes(source_index.tree(text)))
        code = code_only(text)
        for m in COPY_PATTERN.finditer(code):
            line = code.count("\n", 0, m.start()) + 1
            inside = [s for s in spans if s[0] <= line <= s[1]]
            name = max(inside, key=lambda s: s[0])[2] if inside else "<module>"
            sites.add(f"{module}.{name}")
    return sites


def unlisted(sites: set[str], doc: str) -> list[str]:
    """The sites that no bullet of `doc` names (as `module.function`, or a bare `function` beside its module)."""
    bullets = listed_bullets(doc)
    bad = []
    for site in sorted(sites):
        if site in NOT_A_REPAIR:
            continue
        named = any(
            site in names
            or any(
                site == f"{n.rpartition('.')[0]}.{bare}" for n in names if "." in n for bare in names if "." not in bare
            )
            for names in bullets
        )
        if not named:
            bad.append(site)
    return bad


def test_every_listed_copy_is_checked_here_and_exists():
    listed = {n for names in listed_bullets(resample_dist.__doc__) for n in names if n.startswith("specviz.")}
    assert listed == set(CHECKED), (
        f"listed, not checked: {listed - set(CHECKED)}; checked, not listed: {set(CHECKED) - listed}"
    )
    for name in sorted(listed):
        if name.startswith(("specviz.samplers.torch_sampling", "specviz.lm", "specviz.exact.numerics")):
            pytest.importorskip("torch")
        parts = name.split(".")
        for cut in range(len(parts) - 1, 0, -1):  # the longest importable module, then attributes
            try:
                obj = importlib.import_module(".".join(parts[:cut]))
                break
            except ImportError:
                continue
        for part in parts[cut:]:
            obj = getattr(obj, part)
        assert callable(obj), name


def test_no_unlisted_copy_in_the_source():
    sites = copy_sites()
    assert (
        "specviz.samplers.torch_sampling.residual_rows" in sites
        and "specviz.samplers.coupling.maximal_coupling" in sites
    )  # scanned
    bad = unlisted(sites, resample_dist.__doc__)
    assert not bad, (
        f"{bad} write (p - q)+ again: call theory.resample_dist, or list them in its docstring and check them here"
    )
    stale = [s for s in NOT_A_REPAIR if s not in sites]
    assert not stale, f"{stale} no longer match the scan: take them off NOT_A_REPAIR"


def test_a_planted_copy_is_found(tmp_path):
    root = tmp_path / "specviz"
    (root / "exercises").mkdir(parents=True)
    (root / "fast.py").write_text(
        "import numpy as np\n\n\nclass Step:\n    def repair(self, p, q):\n        r = np.maximum(p - q, 0.0)\n"
        "        return r / r.sum()\n\n\ndef listed(p, q):\n    return (p - q).clamp_min_(0)\n"
    )
    (root / "exercises" / "nb99.py").write_text("answer = lambda p, q: np.maximum(p - q, 0.0)\n")
    sites = copy_sites(root)
    assert sites == {"specviz.fast.Step.repair", "specviz.fast.listed"}
    doc = "Reference.\n\n    - `specviz.fast.listed`: in torch.\n\n    >>> 1\n"
    assert unlisted(sites, doc) == ["specviz.fast.Step.repair"]
