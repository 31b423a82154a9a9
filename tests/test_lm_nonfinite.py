"""Broken logits never pass silently (issue 18): NaN, +inf or an all -inf row from either model stops decoding.

Each case breaks one model from a chosen history length on (an n-gram model whose logits turn bad
there, so the position is exact) and checks that every decoder raises NonFiniteLogitsError naming
the model and the generated token where it broke, at temperature 0 (where an argmax of NaN used to
emit a token silently) and at temperature 1, on the greedy, general and plain-step paths.
"""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from specviz import cli  # noqa: E402
from specviz.lm import (  # noqa: E402
    NGramModel,
    NonFiniteLogitsError,
    Pair,
    autoregressive_generate,
    compare,
    speculative_generate,  # noqa: E402
)
from specviz.lm.engine.logits import bad_rows  # noqa: E402

PROMPT = [1, 2, 3]
BAD_TOKEN = 5  # the generated token (1-based) whose logits are broken: history length len(PROMPT) + 4


class BrokenNGram(NGramModel):
    """An n-gram model whose logits become broken once the history holds `bad_from` tokens."""

    bad_from: int = 10**9
    how: str = "nan"

    def logits_for(self, tokens):
        out = super().logits_for(tokens)
        if len(tokens) < self.bad_from:
            return out
        out = out.clone()
        if self.how == "nan":
            out[0] = math.nan
        elif self.how == "inf":
            out[1] = math.inf
        else:  # no token possible
            out[:] = -math.inf
        return out


def _model(seed: int, name: str, broken: bool, how: str = "nan") -> NGramModel:
    m = NGramModel.random(6, order=2, seed=seed, concentration=0.7, name=name)
    if broken:
        m.__class__ = BrokenNGram
        m.bad_from, m.how = len(PROMPT) + BAD_TOKEN - 1, how
    return m


def _pair(which: str, how: str = "nan") -> Pair:
    return Pair(_model(10, "target", which == "target", how), _model(11, "draft", which == "draft", how))


def _message_ok(err: Exception, which: str, exact_position: bool = True) -> bool:
    msg = str(err)
    ok = f"the {which} model produced non-finite logits" in msg
    return ok and (not exact_position or f"generated token {BAD_TOKEN}" in msg)


@pytest.mark.parametrize("how", ["nan", "inf", "all -inf"])
@pytest.mark.parametrize("which", ["target", "draft"])
@pytest.mark.parametrize("temperature", [0.0, 1.0])
@pytest.mark.parametrize("gamma", [1, 3])
def test_speculative_generate_names_the_broken_model_and_token(how, which, temperature, gamma):
    pair = _pair(which, how)
    with pytest.raises(NonFiniteLogitsError) as err:
        speculative_generate(pair, PROMPT, 20, gamma, temperature=temperature, seed=0)
    assert _message_ok(err.value, which), str(err.value)


@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_auto_gamma_and_plain_steps_stop_on_a_broken_target(temperature):
    """gamma="auto" starts with plain steps (the γ = 0 path) for a model draft: it must check too."""
    with pytest.raises(NonFiniteLogitsError) as err:
        speculative_generate(_pair("target"), PROMPT, 20, "auto", temperature=temperature, seed=0)
    assert _message_ok(err.value, "target"), str(err.value)
    with pytest.raises(NonFiniteLogitsError) as err:
        speculative_generate(_pair("target"), PROMPT, 20, 0, temperature=temperature, seed=0)
    assert _message_ok(err.value, "target"), str(err.value)


def test_auto_gamma_stops_on_a_broken_draft_once_it_drafts():
    with pytest.raises(NonFiniteLogitsError) as err:
        speculative_generate(_pair("draft"), PROMPT, 40, "auto", temperature=1.0, seed=0)
    assert _message_ok(err.value, "draft", exact_position=False), str(err.value)


@pytest.mark.parametrize("how", ["nan", "inf", "all -inf"])
@pytest.mark.parametrize("temperature", [0.0, 1.0])
@pytest.mark.parametrize("stop_at_eos", [False, True])  # one read at the end / one read per token
def test_plain_decoding_names_the_broken_token(how, temperature, stop_at_eos):
    with pytest.raises(NonFiniteLogitsError) as err:
        autoregressive_generate(_pair("target", how), PROMPT, 20, temperature=temperature, stop_at_eos=stop_at_eos)
    assert _message_ok(err.value, "target"), str(err.value)


def test_a_break_after_the_last_token_is_not_reached():
    """Broken logits the run never uses (the history stops short of them) are not an error."""
    pair = _pair("target")
    out = autoregressive_generate(pair, PROMPT, BAD_TOKEN - 1, temperature=0)
    assert len(out.new_ids) == BAD_TOKEN - 1
    spec = speculative_generate(pair, PROMPT, BAD_TOKEN - 1, 2, temperature=0)
    assert spec.new_ids == out.new_ids


def test_compare_does_not_report_greedy_equality_for_broken_models():
    with pytest.raises(NonFiniteLogitsError):
        compare(_pair("draft"), PROMPT, 20, gamma=2, temperature=0, warmup_tokens=0)


def test_bad_rows_flags_nan_inf_and_empty_rows_only():
    rows = torch.tensor(
        [[0.0, 1.0], [math.nan, 0.0], [math.inf, 0.0], [-math.inf, 0.0], [-math.inf, -math.inf]], dtype=torch.float32
    )
    assert bad_rows(rows).tolist() == [False, True, True, False, True]


def test_engine_arguments_are_checked():
    pair = _pair("none")
    with pytest.raises(ValueError, match="threads"):
        speculative_generate(pair, PROMPT, 4, 2, threads=0)
    with pytest.raises(TypeError, match="on_step"):
        speculative_generate(pair, PROMPT, 4, 2, on_step=5)
    with pytest.raises(TypeError, match="on_token"):
        autoregressive_generate(pair, PROMPT, 4, on_token="x")


def test_specviz_run_exits_1_with_one_line_on_broken_logits(monkeypatch, capsys):
    def broken_compare(*args, **kwargs):
        raise NonFiniteLogitsError("the draft model produced non-finite logits (NaN or inf) for generated token 5")

    monkeypatch.setattr("specviz.lm.stats.run.compare", broken_compare)
    monkeypatch.setattr("specviz.lm.compare", broken_compare)
    monkeypatch.setattr("specviz.lm.load_pair", lambda *a, **k: _pair("none"))
    monkeypatch.setattr("specviz.lm.load.loading.load_pair", lambda *a, **k: _pair("none"))
    status = cli.main(["run", "--target", "bundled", "--draft", "bundled", "--prompt", "hi", "--gamma", "2"])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 1
    assert [line for line in err if "error" in line] == [
        "specviz run: error: the draft model produced non-finite logits (NaN or inf) for generated token 5"
    ]
