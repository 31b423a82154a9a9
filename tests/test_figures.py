"""Figure builders: every trace holds the exact values of the core functions."""

from __future__ import annotations

import importlib
import os
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import pytest

import specviz
from specviz import figures as F
from specviz.exact.gamma import simulate_accepted_lengths
from specviz.figures import export as EX
from specviz.figures.empirical import tv_reference_constant
from specviz.figures.style import trace_by_meta as tr
from specviz.figures.style import trace_metas, vocab_names
from specviz.foundation.palette import PALETTE

P, Q = specviz.TUTORIAL_P, specviz.TUTORIAL_Q
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def arr(values):
    return np.asarray(values, dtype=np.float64)


# ----------------------------------------------------------------------------- money diagram


@pytest.mark.parametrize(
    "p, q",
    [
        (P, Q),
        ((0.5, 0.5), (0.5, 0.5)),  # perfect draft: no residual
        ((0.0, 0.7, 0.3), (1.0, 0.0, 0.0)),  # disjoint support: residual = p
        ((0.1, 0.2, 0.3, 0.4), (0.25, 0.25, 0.25, 0.25)),
    ],
)
def test_money_diagram_traces_equal_overlap_and_residual(p, q):
    fig = F.money_diagram(p, q)
    assert isinstance(fig, go.Figure)
    assert trace_metas(fig) == ["overlap", "residual", "p", "q", "rejected"]
    ov, res = tr(fig, "overlap"), tr(fig, "residual")
    assert np.array_equal(arr(ov.y), specviz.overlap(p, q))
    assert np.array_equal(arr(res.y), specviz.residual(p, q))
    assert np.array_equal(arr(res.base), specviz.overlap(p, q))  # stacked on the overlap
    assert np.array_equal(arr(tr(fig, "p").y), arr(p))
    assert np.array_equal(arr(tr(fig, "q").y), arr(q))
    np.testing.assert_allclose(arr(tr(fig, "rejected").y), np.maximum(arr(q) - arr(p), 0))
    # the stack fills the outline exactly
    np.testing.assert_allclose(arr(ov.y) + arr(res.y), arr(p), atol=1e-15)
    # overlap and residual are drawn in the same group as the p outline, q beside it
    assert ov.offsetgroup == res.offsetgroup == tr(fig, "p").offsetgroup != tr(fig, "q").offsetgroup


def test_money_diagram_vocab_colours_and_annotation():
    fig = F.money_diagram(P, Q)
    assert list(tr(fig, "overlap").x) == ["cat", "dog", "fish"]
    assert tr(fig, "overlap").marker.color == PALETTE["overlap"]
    assert tr(fig, "residual").marker.color == PALETTE["residual"]
    assert tr(fig, "p").marker.line.color == PALETTE["p"]
    note = fig.layout.annotations[0].text
    assert "P(accept) = Σ min(p, q) = 0.800" in note and "Z = 0.200" in note and "cat 1.000" in note
    assert not F.money_diagram(P, Q, annotate=False).layout.annotations
    fig4 = F.money_diagram((0.4, 0.3, 0.2, 0.1), (0.1, 0.2, 0.3, 0.4))
    assert list(tr(fig4, "p").x) == ["t0", "t1", "t2", "t3"]
    named = F.money_diagram(P, Q, vocab=["a", "b", "c"])
    assert list(tr(named, "q").x) == ["a", "b", "c"]


def test_money_diagram_steps_reveal_rejected_then_residual():
    shown = {}
    for step in (1, 2, 3):
        fig = F.money_diagram(P, Q, step=step)
        shown[step] = {m: tr(fig, m).opacity != 0 for m in ("overlap", "residual", "rejected", "p", "q")}
        # hidden traces keep their exact data (a browser test can still read them)
        assert np.array_equal(arr(tr(fig, "residual").y), specviz.residual(P, Q))
        assert f"Step {step}" in fig.layout.title.subtitle.text
    assert shown[1] == {"overlap": True, "residual": False, "rejected": False, "p": True, "q": True}
    assert shown[2]["rejected"] and not shown[2]["residual"]
    assert shown[3]["rejected"] and shown[3]["residual"]
    assert "Z" not in F.money_diagram(P, Q, step=1).layout.annotations[0].text
    with pytest.raises(ValueError, match="step"):
        F.money_diagram(P, Q, step=4)


def test_money_diagram_patch_matches_the_built_figure():
    p, q = (0.45, 0.39, 0.16), (0.2, 0.5, 0.3)
    fig = F.money_diagram(P, Q)
    F.apply_patch(fig, F.money_diagram_patch(p, q, step=2))
    ref = F.money_diagram(p, q, step=2)
    for meta in trace_metas(ref):
        assert np.array_equal(arr(tr(fig, meta).y), arr(tr(ref, meta).y)), meta
        assert tr(fig, meta).opacity == tr(ref, meta).opacity, meta
    assert fig.layout.annotations[0].text == ref.layout.annotations[0].text
    assert fig.layout.title.subtitle.text == ref.layout.title.subtitle.text


@pytest.mark.parametrize(
    "bad, match",
    [
        (((0.6, 0.3, 0.2), Q), "sums to"),
        (((0.6, 0.5, -0.1), Q), "negative"),
        (((0.5, 0.5), Q), "different lengths"),
    ],
)
def test_builders_reject_invalid_distributions(bad, match):
    with pytest.raises(ValueError, match=match):
        F.money_diagram(*bad)
    with pytest.raises(ValueError, match=match):
        F.acceptance_figure(*bad)


def test_vocab_length_is_checked():
    with pytest.raises(ValueError, match="2 names for 3 tokens"):
        F.money_diagram(P, Q, vocab=["a", "b"])
    with pytest.raises(ValueError, match="distinct"):
        F.money_diagram(P, Q, vocab=["a", "a", "b"])
    assert vocab_names(None, 3) == ["cat", "dog", "fish"] and vocab_names(None, 2) == ["t0", "t1"]


# ----------------------------------------------------------------------------- acceptance, joint table


def test_acceptance_figure_clips_at_one():
    fig = F.acceptance_figure(P, Q)
    assert np.array_equal(arr(tr(fig, "acceptance").y), specviz.acceptance_prob(P, Q))
    np.testing.assert_allclose(arr(tr(fig, "acceptance").y), [1.0, 0.6, 1.0])
    np.testing.assert_allclose(arr(tr(fig, "ratio").y), [1.5, 0.6, 1.0])
    assert any(s.y0 == 1.0 and s.y1 == 1.0 for s in fig.layout.shapes)  # the clip line
    fig0 = F.acceptance_figure((0.5, 0.5, 0.0), (0.0, 0.5, 0.5))  # q = 0: never drafted
    assert tr(fig0, "ratio").y[0] is None
    assert tr(fig0, "acceptance").y[0] == 1.0


def test_joint_table_reproduces_the_tutorial_table():
    fig = F.joint_table(P, Q)
    cells = fig.data[0].cells.values
    assert list(cells[0]) == ["cat", "dog", "fish", "total"]
    np.testing.assert_allclose(cells[1][:3], [0.4, 0.3, 0.1], atol=1e-15)  # P(x ∧ accept)
    np.testing.assert_allclose(cells[2][:3], [0.2, 0.0, 0.0], atol=1e-15)  # P(x ∧ reject)
    np.testing.assert_allclose(cells[3][:3], P, atol=1e-15)  # P(out = x)
    np.testing.assert_allclose(cells[4][:3], P)  # p(x)
    assert list(cells[5]) == ["✓"] * 4
    np.testing.assert_allclose(cells[1][3], 0.8)


def test_joint_table_flags_a_pitfall():
    fig = F.joint_table(P, Q, rule="resample_target")
    cells = fig.data[0].cells.values
    j = specviz.rule_joint(P, Q, "resample_target")
    np.testing.assert_allclose(cells[3][:3], j.output)
    assert cells[3][0] == pytest.approx(0.52)
    assert list(cells[5]) == ["✗", "✗", "✗", "✗"]
    assert "NOT lossless" in fig.layout.title.text


# ----------------------------------------------------------------------------- importance, rejection, empirical


def test_importance_figure_converges_to_the_target_expectation():
    fig = F.importance_figure(P, Q, n=20_000, seed=1)
    np.testing.assert_allclose(arr(tr(fig, "weights").y), [1.5, 0.6, 1.0])
    est = arr(tr(fig, "estimate").y)
    f = np.array([1.0, 0.0, 0.0])
    assert np.array_equal(est, specviz.importance_estimate(f, P, Q, 20_000, seed=1))
    assert tr(fig, "truth").y[0] == pytest.approx(0.6)
    assert tr(fig, "draft_mean").y[0] == pytest.approx(0.4)
    assert abs(est[-1] - 0.6) < 0.02
    fig_f = F.importance_figure(P, Q, f=[1.0, 2.0, 3.0], n=100)
    assert tr(fig_f, "truth").y[0] == pytest.approx(1.5)


def test_rejection_figure_envelope_and_acceptance():
    fig = F.rejection_figure(P, Q)
    np.testing.assert_allclose(arr(tr(fig, "envelope").y), 1.5 * arr(Q))
    np.testing.assert_allclose(arr(tr(fig, "accepted").y), P)  # a valid envelope keeps exactly p
    assert "0.667" in fig.layout.title.subtitle.text  # 1/M = 1/1.5
    small = F.rejection_figure(P, Q, M=1.0)
    np.testing.assert_allclose(arr(tr(small, "accepted").y), np.minimum(P, Q))
    assert "clipped" in small.layout.title.subtitle.text
    none = F.rejection_figure((0.5, 0.5, 0.0), (1.0, 0.0, 0.0))
    assert "no finite M" in none.layout.title.subtitle.text


def test_empirical_figure_counts_tokens_and_bands():
    s = specviz.spec_sample(P, Q, 5000, seed=0)
    fig = F.empirical_figure(P, s)
    np.testing.assert_allclose(arr(tr(fig, "empirical").y), s.empirical())
    ex = tr(fig, "exact")
    np.testing.assert_allclose(arr(ex.y), P)
    lo, hi = arr(ex.y) - arr(ex.error_y.arrayminus), arr(ex.y) + arr(ex.error_y.array)
    assert np.all(lo < arr(P)) and np.all(hi > arr(P)) and np.all(hi - lo < 0.05)
    # token ids and counts give the same figure
    same = F.empirical_figure(P, s.tokens)
    assert np.array_equal(arr(tr(same, "empirical").y), arr(tr(fig, "empirical").y))
    counts = F.empirical_figure(P, [50, 30, 20])
    np.testing.assert_allclose(arr(tr(counts, "empirical").y), [0.5, 0.3, 0.2])
    # a biased histogram lands outside the band
    bad = F.empirical_figure(P, [5200, 3600, 1200])
    assert "3 of 3 tokens outside" in bad.layout.title.subtitle.text
    with pytest.raises(ValueError, match="outside the vocabulary"):
        F.empirical_figure(P, [0, 1, 2, 3, 7])


def test_convergence_figure_shrinks_like_one_over_sqrt_n():
    fig = F.convergence_figure(P, Q, ns=(100, 10_000, 1_000_000), rule=["lossless", "resample_target"])
    tv = arr(tr(fig, "tv:lossless").y)
    s = specviz.spec_sample(P, Q, 1_000_000, seed=0)
    assert tv[1] == pytest.approx(np.abs(np.bincount(s.tokens[:10_000], minlength=3) / 10_000 - P).sum() / 2)
    assert tv[-1] < 0.005 < tv[0]
    c = tv_reference_constant(P)
    np.testing.assert_allclose(arr(tr(fig, "reference").y), c / np.sqrt([100, 10_000, 1_000_000]))
    lossy = arr(tr(fig, "tv:resample_target").y)
    assert lossy[-1] == pytest.approx(0.08, abs=0.005)  # flattens at its exact TV
    assert tr(fig, "floor:resample_target").y[0] == pytest.approx(0.08)
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"


def test_monte_carlo_figure_splits_accepted_and_resampled():
    s = specviz.spec_sample(P, Q, 20_000, seed=2)
    fig = F.monte_carlo_figure(P, Q, s)
    acc, res = arr(tr(fig, "accepted").y), arr(tr(fig, "resampled").y)
    np.testing.assert_allclose(acc, s.accepted_counts() / 20_000)
    np.testing.assert_allclose(res, s.rejected_counts() / 20_000)
    np.testing.assert_allclose(acc, specviz.overlap(P, Q), atol=0.02)
    np.testing.assert_allclose(res, specviz.residual(P, Q), atol=0.02)
    assert np.array_equal(arr(tr(fig, "overlap_exact").y), specviz.overlap(P, Q))
    empty = F.monte_carlo_figure(P, Q)
    assert not arr(tr(empty, "accepted").y).any()


# ----------------------------------------------------------------------------- pitfalls


def test_rule_figure_parts_equal_rule_joint():
    for rule in ("lossless", "abs_residual", "token_match"):
        fig = F.rule_figure(P, Q, rule)
        j = specviz.rule_joint(P, Q, rule)
        np.testing.assert_allclose(arr(tr(fig, "accept").y), j.accept)
        np.testing.assert_allclose(arr(tr(fig, "reject").y), j.reject)
    assert "lossless ✓" in F.rule_figure(P, Q, "lossless").layout.title.subtitle.text
    assert "NOT lossless" in F.rule_figure(P, Q, "lenient", l=0.5).layout.title.subtitle.text


def test_rules_figure_matches_compare_rules():
    fig = F.rules_figure(P, Q)
    reports = specviz.compare_rules(P, Q)
    assert trace_metas(fig) == ["p"] + [r.rule for r in reports]
    for r in reports:
        t = tr(fig, r.rule)
        np.testing.assert_allclose(arr(t.y), r.output)
        assert f"TV {r.tv:.3f}" in t.name
    assert tr(fig, "resample_target").y[0] == pytest.approx(0.52)
    assert "✗" in tr(fig, "resample_target").name and "✓" in tr(fig, "lossless").name
    sub = F.rules_figure(P, Q, rules=["lossless", "abs_residual"])
    assert trace_metas(sub) == ["p", "lossless", "abs_residual"]


def test_tradeoff_figure_lenience_buys_acceptance_with_tv():
    fig = F.tradeoff_figure(P, Q, ls=[0.5, 1.0])
    t = tr(fig, "lenient")
    for lenience, tv, acc in zip(t.customdata, t.x, t.y):
        j = specviz.rule_joint(P, Q, "lenient", l=lenience)
        assert acc == pytest.approx(j.p_accept)
        assert tv == pytest.approx(np.abs(j.output - arr(P)).sum() / 2)
    assert t.x[1] == pytest.approx(0.0) and t.y[1] == pytest.approx(0.8)  # l = 1 is lossless
    assert t.y[0] > t.y[1] and t.x[0] > 0
    assert tr(fig, "lossless").x[0] == pytest.approx(0.0)
    with pytest.raises(ValueError, match="lenience"):
        F.tradeoff_figure(P, Q, ls=[0.0, 0.5])


# ----------------------------------------------------------------------------- γ-step


def test_expected_tokens_figure():
    fig = F.expected_tokens_figure(alphas=(0.5, 0.8), gamma_max=6)
    t = tr(fig, "alpha=0.8")
    assert list(t.x) == list(range(7))
    np.testing.assert_allclose(arr(t.y), [specviz.expected_tokens(0.8, g) for g in range(7)])
    assert t.y[4] == pytest.approx(3.3616)
    assert tr(fig, "limit:0.8").y[0] == pytest.approx(5.0)


def test_speedup_heatmap_marks_the_best_gamma():
    alphas, gammas = (0.5, 0.8, 0.9), range(0, 11)
    fig = F.speedup_heatmap(c=0.1, alphas=alphas, gammas=gammas)
    z = np.asarray(tr(fig, "speedup").z)
    assert z.shape == (3, 11)
    assert z[1, 4] == pytest.approx(specviz.speedup(0.8, 4, 0.1))
    best = list(tr(fig, "best_gamma").x)
    assert best == [specviz.best_gamma(a, 0.1, max_gamma=10) for a in alphas]


def test_accepted_length_figure_against_the_exact_law():
    k = simulate_accepted_lengths(0.7, 5, 50_000, seed=0)
    fig = F.accepted_length_figure(k, 0.7, 5)
    np.testing.assert_allclose(arr(tr(fig, "exact").y), specviz.accepted_length_dist(0.7, 5))
    np.testing.assert_allclose(arr(tr(fig, "empirical").y), np.bincount(k, minlength=6) / 50_000)
    np.testing.assert_allclose(arr(tr(fig, "empirical").y), specviz.accepted_length_dist(0.7, 5), atol=0.01)
    chain = specviz.spec_chain_sample(specviz.tutorial_pair(), length=4, gamma=2, n=200, seed=0)
    assert F.accepted_length_figure(chain, 0.8, 2).data  # a ChainSample works too
    with pytest.raises(ValueError, match="0..γ"):
        F.accepted_length_figure([0, 1, 6], 0.7, 5)


def test_gamma_figure_panels():
    k = simulate_accepted_lengths(0.8, 4, 1000, seed=0)
    fig = F.gamma_figure(0.8, 4, 0.1, accepted_counts=k)
    assert tr(fig, "current").y[0] == pytest.approx(specviz.expected_tokens(0.8, 4))
    np.testing.assert_allclose(arr(tr(fig, "exact").y), specviz.accepted_length_dist(0.8, 4))
    assert tr(fig, "current_cell").x[0] == 4 and tr(fig, "current_cell").y[0] == 0.8
    big = F.gamma_figure(0.8, 14, 0.1)
    assert max(tr(big, "selected").x) == 14  # the γ axis grows with γ


# ----------------------------------------------------------------------------- multi-draft, standardisation, numerics


def test_multidraft_figure_update_vs_naive():
    p, q = (0.5, 0.3, 0.15, 0.05), (0.1, 0.2, 0.3, 0.4)
    fig = F.multidraft_figure(p, q, k_max=3)
    np.testing.assert_allclose(
        arr(tr(fig, "acceptance:update").y), [specviz.multi_draft_acceptance_rate(p, q, k) for k in (1, 2, 3)]
    )
    assert tr(fig, "acceptance:update").y[1] == pytest.approx(0.65)
    np.testing.assert_allclose(arr(tr(fig, "tv:update").y), 0.0, atol=1e-12)
    assert tr(fig, "tv:naive").y[1] == pytest.approx(0.15)
    np.testing.assert_allclose(arr(tr(fig, "output:update").y), p, atol=1e-12)
    np.testing.assert_allclose(
        arr(tr(fig, "output:naive").y), specviz.multi_draft_output_dist(p, q, 3, update_residual=False)
    )


def test_standardization_figure_shows_the_temperature_mismatch():
    t, d = [2.0, 1.0, 0.0], [0.0, 1.0, 2.0]
    fig = F.standardization_figure(t, d, specviz.Sampling(0.7), target_used=specviz.Sampling(1.0))
    m = specviz.mismatch_output_dist(t, d, specviz.Sampling(0.7), specviz.Sampling(1.0))
    np.testing.assert_allclose(arr(tr(fig, "output").y), m.output)
    np.testing.assert_allclose(arr(tr(fig, "intended").y), specviz.standardize(t, 0.7))
    assert "0.1057" in fig.layout.title.subtitle.text
    ok = F.standardization_figure(t, d, {"temperature": 0.7})
    np.testing.assert_allclose(arr(tr(ok, "output").y), specviz.standardize(t, 0.7), atol=1e-12)
    assert "lossless ✓" in ok.layout.title.subtitle.text


def test_numerics_figure_reports_each_dtype():
    from specviz.exact import numerics

    t, d = numerics.example_logits(V=32, scale=6.0, seed=0)
    fig = F.numerics_figure(t, d)
    rows = numerics.precision_report(t, d)
    assert list(tr(fig, "out_tv").x) == list(numerics.DTYPES)
    np.testing.assert_allclose(arr(tr(fig, "out_tv").y), [r.out_tv for r in rows])
    np.testing.assert_allclose(arr(tr(fig, "p_tv").y), [r.p_tv for r in rows])
    p64 = numerics.softmax_in(t, "float64").numpy()
    order = np.argsort(-p64, kind="stable")
    np.testing.assert_allclose(arr(tr(fig, "abs_err:bfloat16").y), np.abs(rows[3].output - p64)[order])
    assert tr(fig, "out_tv").y[3] > 1e3 * tr(fig, "out_tv").y[1]  # bf16 drifts far more than fp32


# ----------------------------------------------------------------------------- export


def test_export_html_is_standalone(tmp_path):
    path = EX.export_figure(F.money_diagram(P, Q), tmp_path / "money.html")
    text = path.read_text(encoding="utf-8")
    assert text.lstrip().lower().startswith("<html") or "<!doctype html" in text.lower()[:200]
    assert len(text) > 1_000_000  # plotly.js embedded: works offline in a lecture hall
    assert "cdn.plot.ly" not in text.split("</script>")[0][:2000]
    assert '"overlap"' in text
    with pytest.raises(ValueError, match="unsupported export format"):
        EX.export_figure(F.money_diagram(P, Q), tmp_path / "money.txt")


def test_export_png_without_browser_explains(tmp_path, monkeypatch):
    monkeypatch.setattr(EX, "find_browser", lambda: None)
    monkeypatch.delenv("BROWSER_PATH", raising=False)
    import plotly.basedatatypes as bd

    def fail(*a, **k):
        raise RuntimeError("Kaleido requires Google Chrome to be installed.")

    monkeypatch.setattr(bd.BaseFigure, "write_image", fail)
    with pytest.raises(RuntimeError, match="apt-get install chromium"):
        EX.export_figure(F.money_diagram(P, Q), tmp_path / "money.png")


def test_export_retries_only_kaleidos_page_race(tmp_path, monkeypatch):
    """kaleido's "page not loaded yet" failure (a race under load) is tried again, up to RENDER_TRIES in all;
    any other failure is passed on at once."""
    import plotly.basedatatypes as bd

    monkeypatch.setattr(EX, "find_browser", lambda: "/usr/bin/chromium")
    calls = []

    def racy(self, path, **kwargs):
        calls.append(path)
        if len(calls) < 3:
            raise RuntimeError(f"JavascriptError: ReferenceError: {EX.PAGE_NOT_READY}")
        Path(path).write_bytes(b"PNG")

    monkeypatch.setattr(bd.BaseFigure, "write_image", racy)
    assert EX.export_figure(F.money_diagram(P, Q), tmp_path / "money.png").read_bytes() == b"PNG"
    assert len(calls) == 3

    calls.clear()
    monkeypatch.setattr(bd.BaseFigure, "write_image", lambda self, path, **kw: calls.append(path) or 1 / 0)
    with pytest.raises(ZeroDivisionError):
        EX.export_figure(F.money_diagram(P, Q), tmp_path / "money.png")
    assert len(calls) == 1

    calls.clear()

    def always(self, path, **kwargs):
        calls.append(path)
        raise RuntimeError(EX.PAGE_NOT_READY)

    monkeypatch.setattr(bd.BaseFigure, "write_image", always)
    with pytest.raises(RuntimeError, match=EX.PAGE_NOT_READY):
        EX.export_figure(F.money_diagram(P, Q), tmp_path / "money.png")
    assert len(calls) == EX.RENDER_TRIES


@pytest.mark.slow
def test_export_png(tmp_path):
    if EX.find_browser() is None:
        if IN_CI:
            pytest.fail("no Chrome/Chromium for kaleido under CI=true (install: apt-get install chromium)")
        pytest.skip("no Chrome/Chromium found for kaleido (install: apt-get install chromium)")
    fig = F.money_diagram(P, Q)
    png = EX.export_figure(fig, tmp_path / "money.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert png.stat().st_size > 10_000


# ----------------------------------------------------------------------------- the package: API, doctests

FIGURE_MODULES = sorted(p.stem for p in Path(F.__file__).parent.glob("*.py") if p.stem != "__init__")


def test_the_package_exports_its_builders():
    """`specviz.figures.__all__`: every figure builder (and patch) of every module, and nothing else.

    What counts as a builder is checked in tests/test_palette.py (`is_builder`)."""
    from test_palette import is_builder

    assert len(set(F.__all__)) == len(F.__all__)
    missing = [n for n in F.__all__ if not hasattr(F, n)]
    assert not missing, f"__all__ names that do not exist: {missing}"
    for name in F.__all__:
        assert (getattr(F, name).__doc__ or "").strip(), f"{name} has no docstring"
    for mod in FIGURE_MODULES:
        module = importlib.import_module(f"specviz.figures.{mod}")
        builders = {
            n
            for n, v in vars(module).items()
            if not n.startswith("_") and getattr(v, "__module__", None) == module.__name__ and is_builder(n, v)
        }
        assert builders <= set(F.__all__), (
            f"specviz.figures.{mod} builds {sorted(builders - set(F.__all__))}, not exported"
        )


# ------------------------------------------------------------- static pictures drawn later (tools/book.py)


@pytest.mark.slow
def test_deferred_pngs_are_saved_then_drawn_or_left_out(tmp_path, monkeypatch):
    """Under DEFER_ENV figure_png saves the figure and returns a placeholder; draw_deferred_outputs later puts the
    very PNG figure_png would have drawn in its place (a plotly output's image/png, an app snapshot's <img>), and
    leaves out a picture it cannot draw, as figure_png does."""
    import base64

    from specviz.figures import static as S
    from specviz.widgets.snapshot import snapshot_html

    fig = F.money_diagram([0.6, 0.3, 0.1], [0.4, 0.5, 0.1])
    monkeypatch.setenv(S.DEFER_ENV, S.defer_into(tmp_path))
    held = S.figure_png(fig)
    assert held.startswith(S.PLACEHOLDER) and len(list(tmp_path.glob("*.json"))) == 1
    bundle = S.StaticImageRenderer().to_mimebundle(fig.to_plotly_json())
    app = specviz.money_diagram_app([0.6, 0.3, 0.1], [0.4, 0.5, 0.1])
    snap = snapshot_html(app)
    assert base64.b64decode(bundle["image/png"]) == held and "<img src='data:image/png;base64," in snap
    monkeypatch.delenv(S.DEFER_ENV)

    other = base64.b64encode(b"\x89PNG not deferred").decode()
    outputs = [
        {"data": {"image/png": bundle["image/png"], "application/vnd.plotly.v1+json": {}}},
        {"data": {"text/html": snap}},
        {"data": {"image/png": other}},
    ]
    drawn = S.draw_deferred_outputs(outputs, tmp_path)
    direct = S.figure_png(fig)
    if direct is None:  # no browser here: both ways leave the picture out
        assert os.environ.get("CI") != "true", S.static_image_problem()
        assert drawn == 0 and "image/png" not in outputs[0]["data"] and "<img" not in outputs[1]["data"]["text/html"]
    else:
        assert drawn == 2 and base64.b64decode(outputs[0]["data"]["image/png"]) == direct
        uri = outputs[1]["data"]["text/html"].split("data:image/png;base64,")[1].split("'")[0]
        assert base64.b64decode(uri).startswith(b"\x89PNG")
    assert outputs[2]["data"]["image/png"] == other  # a real PNG is left as it is

    gone = [{"data": {"image/png": base64.b64encode(S.PLACEHOLDER + b"0" * 64).decode()}}]  # its figure file is gone
    assert S.draw_deferred_outputs(gone, tmp_path) == 0 and gone[0]["data"] == {}


def test_static_pictures_try_again_after_kaleidos_page_race(monkeypatch):
    """figure_png (the notebooks' static pictures) draws again when kaleido rendered before its page had loaded,
    and records the failure only when every try failed."""
    import plotly.io as pio

    from specviz.figures import static as S

    monkeypatch.delenv(S.DEFER_ENV, raising=False)
    monkeypatch.setattr(S, "find_browser", lambda: "/usr/bin/chromium")
    monkeypatch.setattr(S, "_start_server", lambda: None)
    monkeypatch.setattr(S, "_problem", S.static_image_problem())  # put back afterwards: other tests read it
    calls = []

    def racy(fig, **kwargs):
        calls.append(1)
        if len(calls) < EX.RENDER_TRIES:
            raise RuntimeError(f"ReferenceError: {EX.PAGE_NOT_READY}")
        return b"\x89PNG drawn"

    monkeypatch.setattr(pio, "to_image", racy)
    assert S.figure_png(F.money_diagram(P, Q)) == b"\x89PNG drawn" and S.static_image_problem() is None
    assert len(calls) == EX.RENDER_TRIES

    calls.clear()

    def never_ready(fig, **kwargs):
        calls.append(1)
        raise RuntimeError(f"ReferenceError: {EX.PAGE_NOT_READY}")

    monkeypatch.setattr(pio, "to_image", never_ready)
    assert S.figure_png(F.money_diagram(P, Q)) is None and EX.PAGE_NOT_READY in S.static_image_problem()
    assert len(calls) == EX.RENDER_TRIES
