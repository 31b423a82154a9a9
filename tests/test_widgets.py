"""Widget apps without a browser: move sliders in Python, check figures, numbers and messages follow."""

from __future__ import annotations

import ipywidgets as W
import numpy as np
import plotly.graph_objects as go
import pytest

import specviz
from specviz import widgets as Wd
from specviz.figures.style import trace_by_meta as tr

P, Q = specviz.TUTORIAL_P, specviz.TUTORIAL_Q


def arr(values):
    return np.asarray(values, dtype=np.float64)


def values(sliders):
    return np.array([s.value for s in sliders])


def assert_diagram_matches_sliders(app):
    """What the sliders show is what the money diagram draws (the invariant a browser test checks too)."""
    p, q = values(app.sliders_p), values(app.sliders_q)
    assert p.sum() == pytest.approx(1.0) and q.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(arr(tr(app.figure, "overlap").y), np.minimum(p, q), atol=1e-12)
    np.testing.assert_allclose(arr(tr(app.figure, "residual").y), np.maximum(p - q, 0), atol=1e-12)
    np.testing.assert_allclose(arr(tr(app.figure, "p").y), p, atol=1e-12)
    np.testing.assert_allclose(arr(tr(app.figure, "q").y), q, atol=1e-12)
    assert list(tr(app.figure, "overlap").x) == [s.description[2:-1] for s in app.sliders_p]


@pytest.fixture(scope="module")
def money():
    return specviz.money_diagram_app()


@pytest.fixture
def app(money):
    """The shared money-diagram app, reset to the tutorial example (FigureWidgets are slow to build)."""
    money.editor.mode.value = "rescale"
    money.editor.apply_preset("tutorial")
    money.set_step(3)
    money.clear_message()
    return money


# ----------------------------------------------------------------------------- helpers


def test_snap_keeps_a_distribution_on_the_grid():
    assert Wd.snap([1, 1, 1]).tolist() == [34, 33, 33]
    assert Wd.snap([0.6, 0.3, 0.1]).tolist() == [60, 30, 10]
    c = Wd.snap(np.random.default_rng(0).random(10))
    assert c.sum() == 100 and c.min() >= 0
    with pytest.raises(ValueError, match="all zero"):
        Wd.snap([0, 0, 0])
    with pytest.raises(ValueError, match="negative"):
        Wd.snap([0.5, -0.1, 0.6])


def test_parse_weights():
    np.testing.assert_allclose(Wd.parse_weights("0.6, 0.3 0.1"), [0.6, 0.3, 0.1])
    with pytest.raises(ValueError, match="not a list of numbers"):
        Wd.parse_weights("0.6, abc")


def test_rescale_others_keeps_the_grid_and_the_proportions():
    assert Wd.rescale_others(np.array([60, 30, 10]), 0, 80).tolist() == [80, 15, 5]
    assert Wd.rescale_others(np.array([100, 0, 0]), 0, 40).tolist() == [40, 30, 30]  # all-zero others: equal
    assert Wd.rescale_others(np.array([60, 30, 10]), 1, 100).tolist() == [0, 100, 0]


def test_presets_are_pure_weights():
    p, q, vocab = Wd.preset_weights("disjoint", [60, 30, 10])
    assert np.minimum(Wd.snap(p), Wd.snap(q)).sum() == 0  # disjoint supports
    p, q, vocab = Wd.preset_weights("one_hot", [20, 70, 10])
    assert Wd.snap(p).tolist() == [1, 98, 1] and q is None and vocab is None
    assert Wd.preset_weights("tutorial", [1, 1, 1, 1]) == (P, Q, specviz.TUTORIAL_VOCAB)
    with pytest.raises(ValueError, match="unknown preset 'nope'"):
        Wd.preset_weights("nope", [1, 1, 1])


# ----------------------------------------------------------------------------- money diagram app


def test_money_app_starts_with_the_tutorial(app):
    assert isinstance(app, W.VBox)
    assert isinstance(app.figure, go.FigureWidget)
    assert [s.description for s in app.sliders_p] == ["p(cat)", "p(dog)", "p(fish)"]
    assert [s.description for s in app.sliders_q] == ["q(cat)", "q(dog)", "q(fish)"]
    np.testing.assert_allclose(values(app.sliders_p), P)
    np.testing.assert_allclose(values(app.sliders_q), Q)
    assert [t.meta for t in app.figure.data] == ["overlap", "residual", "p", "q", "rejected"]
    assert_diagram_matches_sliders(app)
    text = app.numbers.value
    assert "0.800" in text and "0.200" in text and "cat 1.000" in text
    assert app.message.value == ""


def test_moving_p_cat_rescales_the_others_and_redraws(app):
    app.sliders_p[0].value = 0.5
    p = values(app.sliders_p)
    np.testing.assert_allclose(p, [0.5, 0.38, 0.12])  # dog:fish kept 3:1 on the 0.01 grid
    assert p.sum() == pytest.approx(1.0)
    assert_diagram_matches_sliders(app)
    assert np.array_equal(arr(tr(app.figure, "overlap").y), specviz.overlap(app.p, app.q))
    assert np.array_equal(arr(tr(app.figure, "residual").y), specviz.residual(app.p, app.q))
    z = specviz.rejection_mass(app.p, app.q)
    assert f"{z:.3f}" in app.numbers.value and f"{1 - z:.3f}" in app.numbers.value
    assert f"P(reject) = Z = {z:.3f}" in app.figure.layout.annotations[0].text
    app.sliders_q[1].value = 0.2  # q: dog down, cat and fish scale up
    assert values(app.sliders_q).sum() == pytest.approx(1.0)
    assert values(app.sliders_q)[1] == pytest.approx(0.2)
    assert_diagram_matches_sliders(app)


def test_slider_extremes_stay_valid(app):
    app.sliders_p[0].value = 1.0
    np.testing.assert_allclose(values(app.sliders_p), [1.0, 0.0, 0.0])
    app.sliders_p[0].value = 0.4  # others were all zero: they share the rest equally
    np.testing.assert_allclose(values(app.sliders_p), [0.4, 0.3, 0.3])
    app.sliders_q[2].value = 5.0  # out of range: the slider clamps to 1
    np.testing.assert_allclose(values(app.sliders_q), [0.0, 0.0, 1.0])
    assert_diagram_matches_sliders(app)
    assert app.message.value == ""


@pytest.mark.parametrize(
    "key, p, q",
    [
        ("tutorial", P, Q),
        ("perfect", P, P),
        ("disjoint", (0.0, 0.67, 0.33), (1.0, 0.0, 0.0)),
        ("uniform", P, (0.34, 0.33, 0.33)),
        ("one_hot", (0.98, 0.01, 0.01), Q),
    ],
)
def test_presets(app, key, p, q):
    app.editor.preset_buttons[key].click()
    np.testing.assert_allclose(values(app.sliders_p), p)
    np.testing.assert_allclose(values(app.sliders_q), q)
    assert_diagram_matches_sliders(app)
    pa = specviz.acceptance_rate(app.p, app.q)
    assert f"{pa:.3f}" in app.numbers.value


def test_perfect_and_disjoint_presets_give_the_extreme_cases(app):
    app.editor.apply_preset("perfect")
    assert not arr(tr(app.figure, "residual").y).any()  # Z = 0: nothing to resample
    assert "never used" in app.numbers.value
    app.editor.apply_preset("disjoint")
    assert not arr(tr(app.figure, "overlap").y).any()  # P(accept) = 0, yet still lossless
    np.testing.assert_allclose(arr(tr(app.figure, "residual").y), app.p)


def test_vocabulary_size_rebuilds_sliders_and_figure(app):
    app.editor.vocab_size.value = 5
    assert [s.description for s in app.sliders_p] == [f"p(t{i})" for i in range(5)]
    assert len(app.sliders_q) == 5
    np.testing.assert_allclose(values(app.sliders_p), [0.6, 0.3, 0.1, 0, 0])
    assert list(tr(app.figure, "p").x) == [f"t{i}" for i in range(5)]
    app.sliders_p[4].value = 0.2  # the new sliders are live
    assert_diagram_matches_sliders(app)
    app.editor.vocab_size.value = 3
    assert [s.description for s in app.sliders_p] == ["p(cat)", "p(dog)", "p(fish)"]
    assert_diagram_matches_sliders(app)


def test_step_reveal(app):
    def opacity(meta):
        return tr(app.figure, meta).opacity

    app.set_step(1)
    assert "Step 1 of 3" in app.step_label.value
    assert opacity("residual") == 0 and opacity("rejected") == 0 and opacity("overlap") != 0
    assert app.back_button.disabled and not app.next_button.disabled
    app.next_button.click()
    assert app.step == 2 and "Step 2 of 3" in app.step_label.value
    assert opacity("rejected") == 1 and opacity("residual") == 0
    app.next_button.click()
    assert app.step == 3 and opacity("residual") == 1 and app.next_button.disabled
    app.next_button.click()  # stays at 3
    assert app.step == 3
    app.back_button.click()
    assert app.step == 2 and opacity("residual") == 0
    assert_diagram_matches_sliders(app)  # data does not depend on the step


def test_play_morphs_q_from_p_to_a_disjoint_draft(app):
    app.editor.apply_preset("disjoint")  # p = (0, .67, .33): one-hot on cat is disjoint
    app.set_frame(0)
    np.testing.assert_allclose(app.q, app.p)
    assert specviz.acceptance_rate(app.p, app.q) == pytest.approx(1.0)
    accs = []
    for _ in range(app.frames - 1):
        app.advance_frame()
        assert_diagram_matches_sliders(app)
        accs.append(specviz.acceptance_rate(app.p, app.q))
    assert app.frame_slider.value == app.frames - 1
    np.testing.assert_allclose(app.q, [1.0, 0.0, 0.0])
    assert accs[-1] == pytest.approx(0.0) and all(a >= b - 1e-12 for a, b in zip(accs, accs[1:]))
    assert "disjoint" in app.morph_label.value
    app.play.value = 5  # what the frontend timer does
    assert app.frame_slider.value == 5
    assert app.q[0] == pytest.approx(0.25)
    app.toggle_play()
    assert app.play.playing and app.play_button.description == "Pause"
    app.toggle_play()
    assert not app.play.playing


def test_free_mode_shows_the_core_error_and_recovers(app):
    app.editor.mode.value = "free"
    before = arr(tr(app.figure, "overlap").y).copy()
    app.sliders_p[0].value = 0.9  # p now sums to 1.3
    assert "sums to 1.3" in app.message_text and "Normalise" in app.message_text
    assert app.last_error is not None
    assert np.array_equal(arr(tr(app.figure, "overlap").y), before)  # last valid state kept
    app.editor.normalise_button.click()
    assert app.message.value == ""
    np.testing.assert_allclose(values(app.sliders_p), [0.69, 0.23, 0.08])
    assert_diagram_matches_sliders(app)


def test_all_zero_weights_show_a_message_and_recover(app):
    app.editor.mode.value = "free"
    for s in app.sliders_q:
        s.value = 0.0
    assert "sums to 0" in app.message_text
    app.editor.normalise()
    assert "all zero" in app.message_text
    app.editor.mode.value = "rescale"  # cannot normalise all-zero q: stays free, says why
    assert app.editor.mode.value == "free" and "all zero" in app.message_text
    app.sliders_q[1].value = 0.5
    app.editor.normalise()
    assert app.message.value == ""
    np.testing.assert_allclose(values(app.sliders_q), [0, 1, 0])
    assert_diagram_matches_sliders(app)


@pytest.mark.parametrize(
    "text_p, text_q, match",
    [
        ("0.6, 0.5, -0.1", "", "negative"),
        ("0, 0, 0", "", "all zero"),
        ("abc", "", "not a list of numbers"),
        ("0.5, 0.5", "", "has 2 values"),
        ("1, 1, 1, 1", "1, 1, 1", "different lengths"),
        ("", "", "type p"),
        ("1 " * 11, "1 " * 11, "outside 3..10"),
    ],
)
def test_typed_values_errors(app, text_p, text_q, match):
    app.editor.text_p.value, app.editor.text_q.value = text_p, text_q
    app.editor.apply_button.click()
    assert match in app.message_text
    np.testing.assert_allclose(values(app.sliders_p), P)  # nothing changed
    # and the widget still works
    app.editor.text_p.value, app.editor.text_q.value = "3, 1, 1", "1, 1, 2"
    app.editor.apply_button.click()
    assert app.message.value == ""
    np.testing.assert_allclose(values(app.sliders_p), [0.6, 0.2, 0.2])
    np.testing.assert_allclose(values(app.sliders_q), [0.25, 0.25, 0.5])
    assert_diagram_matches_sliders(app)


def test_typed_values_can_change_the_vocabulary(app):
    app.editor.text_p.value, app.editor.text_q.value = "0.4 0.3 0.2 0.1", "0.1 0.2 0.3 0.4"
    app.editor.apply_text()
    assert app.editor.vocab_size.value == 4 and len(app.sliders_p) == 4
    assert_diagram_matches_sliders(app)


def test_money_app_arguments():
    a = specviz.money_diagram_app([0.5, 0.25, 0.25], [0.25, 0.25, 0.5], vocab=["x", "y", "z"], step=1)
    assert [s.description for s in a.sliders_p] == ["p(x)", "p(y)", "p(z)"]
    assert a.step == 1 and tr(a.figure, "residual").opacity == 0
    assert_diagram_matches_sliders(a)
    with pytest.raises(ValueError, match="sums to"):
        specviz.money_diagram_app([0.5, 0.6, 0.1], Q)


# ----------------------------------------------------------------------------- Monte-Carlo


@pytest.mark.slow  # a second or more on 2 cores (measured 2026-12-07)
def test_monte_carlo_run_fills_the_histogram_and_audits():
    mc = specviz.monte_carlo_app(n=10_000, seed=3)
    assert mc.progress.value == 0 and not arr(tr(mc.figure, "accepted").y).any()
    report = mc.run_button.click() or mc.last_report
    assert report.passed and "PASS" in mc.verdict.value
    assert mc.progress.value == mc.progress.max > 1
    s = mc.last_sample
    assert len(s.tokens) == 10_000
    acc, res = arr(tr(mc.figure, "accepted").y), arr(tr(mc.figure, "resampled").y)
    np.testing.assert_allclose(acc, s.accepted_counts() / 10_000)
    np.testing.assert_allclose(res, s.rejected_counts() / 10_000)
    np.testing.assert_allclose(acc, specviz.overlap(P, Q), atol=0.03)
    np.testing.assert_allclose(res, specviz.residual(P, Q), atol=0.03)
    np.testing.assert_allclose(acc + res, P, atol=0.03)
    assert report.n == 10_000 and np.allclose(report.empirical, s.empirical())  # the audit saw these samples
    # a pitfall rule fails the audit
    mc.rule.value = "resample_target"
    assert mc.last_report is None and "press Run" in mc.verdict.value
    assert not arr(tr(mc.figure, "accepted").y).any()
    mc.n.value = 100_000
    report = mc.run()
    assert not report.passed and "FAIL" in mc.verdict.value
    assert arr(tr(mc.figure, "accepted").y).sum() + arr(tr(mc.figure, "resampled").y).sum() == pytest.approx(1.0)


@pytest.mark.slow  # a second or more on 2 cores (measured 2026-12-07)
def test_monte_carlo_invalid_state_message():
    mc = specviz.monte_carlo_app(n=1_000)
    mc.editor.mode.value = "free"
    mc.sliders_p[0].value = 0.0
    assert "sums to 0.4" in mc.message_text
    assert mc.run() is None and "sums to 0.4" in mc.message_text
    mc.editor.normalise()
    assert mc.message.value == ""
    assert mc.run().n == 1_000


# ----------------------------------------------------------------------------- other apps


@pytest.mark.slow  # a second or more on 2 cores (measured 2026-12-07)
def test_pitfall_app_rules_and_audit():
    pa = specviz.pitfall_app(audit_n=20_000)
    assert pa.rule.value == "resample_target"
    out = arr(tr(pa.figure, "accept").y) + arr(tr(pa.figure, "reject").y)
    np.testing.assert_allclose(out, specviz.output_dist(P, Q, rule="resample_target"))
    assert "0.0800" in pa.numbers.value and "FAIL" in pa.verdict.value
    pa.rule.value = "lossless"
    out = arr(tr(pa.figure, "accept").y) + arr(tr(pa.figure, "reject").y)
    np.testing.assert_allclose(out, P, atol=1e-12)
    assert "PASS" in pa.verdict.value and pa.last_report.passed
    pa.rule.value = "lenient"
    assert pa.lenience in pa._param_box.children
    pa.lenience.value = 1.0  # l = 1 is the lossless rule again
    np.testing.assert_allclose(arr(tr(pa.figure, "accept").y) + arr(tr(pa.figure, "reject").y), P, atol=1e-12)
    pa.lenience.value = 0.5
    assert "FAIL" in pa.verdict.value
    pa.sliders_p[0].value = 0.7
    np.testing.assert_allclose(arr(tr(pa.figure, "p").y), values(pa.sliders_p))


@pytest.mark.slow  # a second or more on 2 cores (measured 2026-12-07)
def test_gamma_app_numbers_follow_sliders():
    g = specviz.gamma_app()
    assert "3.362" in g.numbers.value  # (1 - 0.8^5) / 0.2
    g.gamma.value = 6
    g.alpha.value = 0.9
    assert f"{specviz.expected_tokens(0.9, 6):.3f}" in g.numbers.value
    np.testing.assert_allclose(arr(tr(g.figure, "exact").y), specviz.accepted_length_dist(0.9, 6))
    assert len(tr(g.figure, "empirical").y) == 7
    assert tr(g.figure, "current").y[0] == pytest.approx(specviz.expected_tokens(0.9, 6))
    g.cost.value = 0.5
    z = np.asarray(tr(g.figure, "speedup").z)
    assert z.max() == pytest.approx(
        max(specviz.speedup(a, gg, 0.5) for a in np.round(np.arange(0.05, 1.0, 0.05), 2) for gg in range(11))
    )
    g.alpha.value = 1.0  # edge: every draft accepted
    assert g.message.value == "" and "7.000" in g.numbers.value


@pytest.mark.slow  # a second or more on 2 cores (measured 2026-12-07)
def test_multidraft_app():
    m = specviz.multidraft_app()
    assert tr(m.figure, "acceptance:update").y[1] == pytest.approx(0.65)
    m.k_max.value = 6
    assert len(tr(m.figure, "tv:naive").y) == 6
    np.testing.assert_allclose(arr(tr(m.figure, "tv:update").y), 0, atol=1e-12)
    m.editor.apply_preset("perfect")
    np.testing.assert_allclose(arr(tr(m.figure, "acceptance:update").y), 1.0)
    assert m.message.value == ""


def test_standardization_app_mismatch_and_fix():
    s = specviz.standardization_app()
    m = s.update()
    assert m.tv > 0.01 and "not the distribution" in s.numbers.value
    np.testing.assert_allclose(arr(tr(s.figure, "output").y), m.output)
    s.fix_button.click()
    assert "lossless" in s.numbers.value and "0.0000" in s.numbers.value
    np.testing.assert_allclose(arr(tr(s.figure, "output").y), arr(tr(s.figure, "intended").y), atol=1e-12)
    s.intended.top_k.value = 2  # top-k applied consistently stays lossless
    assert "0.0000" in s.numbers.value
    s.draft_ratio.same.value = False  # q in the ratio without the top-k: broken again
    assert "not the distribution" in s.numbers.value


def test_numerics_app():
    n = specviz.numerics_app(V=64)
    rows = {r.dtype: r for r in n.last_report}
    np.testing.assert_allclose(arr(tr(n.figure, "out_tv").y), [r.out_tv for r in n.last_report])
    assert rows["bfloat16"].out_tv > rows["float32"].out_tv
    assert "bfloat16" in n.table.value
    n.scale.value = 0.0  # flat logits: fp16/bf16 are then exact for a uniform p
    np.testing.assert_allclose(arr(tr(n.figure, "p_tv").y), [r.p_tv for r in n.last_report])
    assert n.message.value == ""


# ----------------------------------------------------------------------------- dashboard


def test_dashboard_tabs_lazy_build_and_extra_tab():
    extra = W.HTML("real models here")
    d = specviz.dashboard_app(extra_tabs=[("Real models", extra, "Load a real draft/target pair.")])
    assert isinstance(d.tabs, W.Tab)
    assert d.titles == ["Money diagram", "Sampling check", "Pitfalls", "γ-steps & trees", "Numerics", "Real models"]
    assert tuple(d.tabs.titles) == tuple(d.titles)
    assert set(d.apps) == {"Money diagram"}  # only the first tab is built at start
    money_app = d.apps["Money diagram"]
    assert isinstance(money_app, Wd.MoneyDiagramApp)
    body = d.tabs.children[0]
    assert "three steps" in body.children[0].value  # one-sentence explanation on top
    d.tabs.selected_index = 5
    assert d.apps["Real models"] is extra and d.tabs.children[5].children[1] is extra
    d.tabs.selected_index = 1
    assert isinstance(d.apps["Sampling check"], Wd.MonteCarloApp)


@pytest.mark.slow  # a second or more on 2 cores (measured 2026-12-07)
def test_dashboard_build_all_and_broken_tab():
    def broken():
        raise ValueError("no model files")

    d = specviz.dashboard_app(extra_tabs=[("Broken", broken)])
    d.build_all()
    assert set(d.apps) == set(d.titles)
    assert "no model files" in d.apps["Broken"].value  # shown, not raised
    kids = d.apps["γ-steps & trees"].children
    assert isinstance(kids[0], Wd.GammaApp) and isinstance(kids[1], Wd.MultiDraftApp)
    kids = d.apps["Numerics"].children
    assert isinstance(kids[0], Wd.NumericsApp) and isinstance(kids[1], Wd.StandardizationApp)


def test_sync_figure_updates_in_place_or_replaces_traces():
    fw = go.FigureWidget(specviz.figures.rules_figure(P, Q, rules=["lossless"]))
    before = [t.uid for t in fw.data]
    Wd.sync_figure(fw, specviz.figures.rules_figure((0.5, 0.25, 0.25), Q, rules=["lossless"]))
    assert [t.uid for t in fw.data] == before  # same traces, new data
    np.testing.assert_allclose(arr(tr(fw, "p").y), [0.5, 0.25, 0.25])
    Wd.sync_figure(fw, specviz.figures.rules_figure(P, Q, rules=["lossless", "abs_residual"]))
    assert [t.meta for t in fw.data] == ["p", "lossless", "abs_residual"]
    np.testing.assert_allclose(arr(tr(fw, "abs_residual").y), specviz.output_dist(P, Q, rule="abs_residual"))


def _record_messages(fw, monkeypatch):
    """Record which plotly.js call each change of FigureWidget `fw` would make in the browser."""
    sent = []
    monkeypatch.setattr(
        fw,
        "_send_animate_msg",
        lambda styles_data, relayout_data, trace_indexes, animation_opts: sent.append(
            ("animate", trace_indexes, animation_opts)
        ),
    )
    monkeypatch.setattr(
        fw,
        "_send_update_msg",
        lambda restyle_data, relayout_data, trace_indexes=None, **kw: sent.append(("update", trace_indexes, None)),
    )
    return sent


def test_slider_moves_animate_and_steps_switch_at_once(app, monkeypatch):
    sent = _record_messages(app.figure, monkeypatch)
    app.sliders_p[0].value = 0.5
    assert [m[0] for m in sent] == ["animate"], sent
    opts = sent[0][2]
    assert opts["mode"] == "immediate" and opts["transition"]["duration"] == app.transition_ms == 250
    assert_diagram_matches_sliders(app)  # the Python side holds the end state at once
    sent.clear()
    app.set_step(1)
    assert [m[0] for m in sent] == ["update"], sent
    sent.clear()
    app.set_step(1)  # nothing changed: nothing sent
    assert sent == []
    # the animated figure has no pattern fill (plotly.js cannot animate it); the static one does
    assert tr(app.figure, "rejected").marker.pattern.shape in (None, "")
    assert specviz.money_diagram(P, Q).data[4].marker.pattern.shape == "/"


def test_transition_ms_zero_redraws_instantly(monkeypatch):
    app = specviz.money_diagram_app(transition_ms=0)
    sent = _record_messages(app.figure, monkeypatch)
    app.sliders_q[0].value = 0.45
    assert [m[0] for m in sent] == ["update"], sent
    assert_diagram_matches_sliders(app)
    assert tr(app.figure, "rejected").marker.pattern.shape == "/"


# ----------------------------------------------------------------------------- package layout and load time


def test_public_api_is_importable_and_listed():
    missing = [n for n in Wd.__all__ if not hasattr(Wd, n)]
    assert missing == []
    for name in [
        "money_diagram_app",
        "monte_carlo_app",
        "pitfall_app",
        "gamma_app",
        "multidraft_app",
        "standardization_app",
        "numerics_app",
        "dashboard_app",
        "DistributionEditor",
        "App",
        "PRESETS",
        "TUTORIAL_P",
        "TUTORIAL_Q",
        "snap",
        "parse_weights",
        "sync_figure",
        "transition",
    ]:
        assert name in Wd.__all__


def _run(code: str) -> list[str]:
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


@pytest.mark.slow
def test_importing_widgets_changes_no_other_module():
    """No import-time side effect: the rfc3987_syntax stand-in appears only when an app is built."""
    import importlib.util

    if importlib.util.find_spec("rfc3987_syntax") is None:
        pytest.skip("rfc3987_syntax is not installed: there is nothing to defer")
    lines = _run(
        "import sys\n"
        "import specviz.widgets as w\n"
        "print('rfc3987_syntax' in sys.modules)\n"
        "app = w.gamma_app()\n"
        "print(getattr(sys.modules.get('rfc3987_syntax'), '__specviz_stand_in__', False), 'lark' in sys.modules)\n"
    )
    assert lines == ["False", "True", "False"]


@pytest.mark.slow
def test_defer_rfc3987_syntax_is_explicit_idempotent_and_too_late_after_jsonschema():
    import importlib.util

    if importlib.util.find_spec("rfc3987_syntax") is None:
        pytest.skip("rfc3987_syntax is not installed: there is nothing to defer")
    lines = _run(
        "import sys\n"
        "from specviz.widgets.fastload import defer_rfc3987_syntax\n"
        "print(defer_rfc3987_syntax(), defer_rfc3987_syntax())\n"
        "import jsonschema\n"
        "fc = jsonschema.FormatChecker()\n"
        "print('lark' in sys.modules)\n"
        "print(fc.conforms('http://example.com/\u00e4', 'iri'), fc.conforms('::not an iri', 'iri'))\n"
    )
    assert lines == ["True", "True", "False", "True", "False"]  # real module loaded on first iri check
    assert _run(
        "import jsonschema\nfrom specviz.widgets import defer_rfc3987_syntax\nprint(defer_rfc3987_syntax())"
    ) == ["False"]


@pytest.mark.slow
def test_numerics_app_without_torch_names_the_extra():
    lines = _run(
        "import sys\n"
        "sys.modules['torch'] = None\n"
        "import specviz.widgets as w\n"
        "try:\n"
        "    w.numerics_app()\n"
        "except ImportError as e:\n"
        "    print('pip install' in str(e) and 'specviz[lm]' in str(e))\n"
    )
    assert lines == ["True"]
