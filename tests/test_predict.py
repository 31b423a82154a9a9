"""sv.predict, the predict-then-reveal box: driven from Python, without a browser."""

from __future__ import annotations

import ast
import re
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import specviz as sv
from specviz.foundation.i18n import t
from specviz.widgets.prediction import parse_guess


def closed_details(html_text: str) -> list[str]:
    """The bodies of the <details> elements in html_text that have no `open` attribute."""
    return re.findall(r"<details(?![^>]*\bopen\b)[^>]*>(.*?)</details>", html_text, flags=re.S)


def test_reveals_the_computed_value_beside_the_guess():
    answer = sv.output_dist(sv.TUTORIAL_P, sv.TUTORIAL_Q, rule="resample_target")[0]
    box = sv.predict("P(out = cat)?", answer, tol=0.01, lang="en")
    assert box.result.value == "", "nothing is revealed before a guess"
    assert box.check("0.6") is False
    text = box.result_text
    assert "0.6" in text and "0.52" in text and "off by 0.08" in text
    assert box.last_guess == Fraction(3, 5) and box.close_enough is False
    assert box.check("0.52") is True and "within ±0.01" in box.result_text


def test_exact_answers_show_their_fraction():
    box = sv.predict("Z?", Fraction(1, 5), lang="en")
    box.check("1/5")
    assert "1/5 = 0.2" in box.result_text and "off by 0 " in box.result_text
    assert box.close_enough


@pytest.mark.parametrize(
    ("guess", "tol", "close"),
    [("0.49", 0.05, True), ("0.44", 0.05, False), ("0.8", 0.3, True), ("0.5", 0.0, True), ("0.5000001", 0.0, False)],
)
def test_the_guess_is_compared_with_the_tolerance(guess, tol, close):
    box = sv.predict("a number", 0.5, tol=tol, lang="en")
    assert box.check(guess) is close


def test_default_tolerance_is_five_percent_or_a_hundredth():
    assert sv.predict("x", 2.0).tol == pytest.approx(0.1)
    assert sv.predict("x", 0.0).tol == pytest.approx(0.01)


@pytest.mark.parametrize(
    ("text", "value"),
    [("0.52", Fraction(13, 25)), (".5", Fraction(1, 2)), ("13/25", Fraction(13, 25)), ("52%", Fraction(13, 25)),
     ("0,52", Fraction(13, 25)), (" 1e-1 ", Fraction(1, 10)), ("−0.2", Fraction(-1, 5)), ("52％", Fraction(13, 25))],
)  # fmt: skip
def test_parse_guess_reads_what_a_learner_types(text, value):
    assert parse_guess(text) == value


@pytest.mark.parametrize("text", ["abc", "1/0", "nan", "inf", "0.5.5", "1/2/3", "half", "0x10", "1,2,3"])
def test_non_numbers_give_a_message_not_a_traceback(text):
    box = sv.predict("P?", 0.5, lang="en")
    box.check("0.5")
    assert box.check(text) is None
    assert "is not a number" in box.message_text and text.strip() in box.message_text
    assert box.result.value == "", "a bad guess hides the previous reveal"
    assert box.check("0.4") is False and box.message_text == "", "the box stays usable"


def test_empty_input_asks_for_a_number_and_typing_submits():
    box = sv.predict("P?", 0.5, lang="en")
    box.submit.click()
    assert "Type a number first" in box.message_text
    box.guess.value = "0.5"  # what Enter does in the browser (continuous_update=False)
    assert box.close_enough is True and "0.5" in box.result_text


def test_static_html_keeps_the_answer_folded():
    answer = Fraction(4, 5)
    box = sv.predict("acceptance rate?", answer, lang="en", key="06.rate")
    bundle = box._repr_mimebundle_()
    for page in (bundle["text/html"], box._repr_html_()):
        folded = closed_details(page)
        assert len(folded) == 1 and "4/5 = 0.8" in folded[0]
        outside = re.sub(r"<details.*?</details>", "", page, flags=re.S)
        assert "0.8" not in outside and "4/5" not in outside
        assert "data-key='06.rate'" in page
    assert "application/vnd.jupyter.widget-view+json" in bundle
    box.check("0.7")  # a reveal in the live widget does not unfold the static copy
    assert closed_details(box._repr_mimebundle_()["text/html"])
    assert "0.8" not in bundle["text/plain"]


def test_the_closed_details_check_can_fail():
    assert not closed_details("<details open><summary>x</summary>0.8</details>")
    assert closed_details("<details><summary>x</summary>0.8</details>")


def test_chinese_labels():
    box = sv.predict("接受率是多少？", 0.8, lang="zh")
    assert box.submit.description == "揭晓" == t("predict.submit", "zh")
    assert "先预测" in box.static_html() and "计算值" in box.static_html()
    box.check("0.75")
    assert box.result_text.startswith("你的猜测：0.75") and "计算值：0.8" in box.result_text
    box.check("一半")
    assert "不是一个数" in box.message_text


def test_a_question_in_both_languages_follows_lang():
    both = {"en": "What is Z?", "zh": "Z 是多少？"}
    assert sv.predict(both, 0.2, lang="zh").question == "Z 是多少？"
    assert sv.predict(both, 0.2, lang="en").question == "What is Z?"
    assert "Z 是多少？" in sv.predict(both, 0.2, lang="zh").static_html()
    assert sv.predict({"en": "only English"}, 0.2, lang="zh").question == "only English"


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"question": "", "answer": 1}, ValueError),
        ({"question": {"zh": "只有中文"}, "answer": 1, "lang": "en"}, ValueError),
        ({"question": 3, "answer": 1}, ValueError),
        ({"question": "q", "answer": "0.5"}, TypeError),
        ({"question": "q", "answer": float("nan")}, ValueError),
        ({"question": "q", "answer": True}, TypeError),
        ({"question": "q", "answer": 0.5, "tol": -1}, ValueError),
        ({"question": "q", "answer": 0.5, "lang": "fr"}, ValueError),
    ],
)
def test_bad_arguments_raise(kwargs, error):
    with pytest.raises(error):
        sv.predict(**kwargs)


def test_numpy_scalars_are_answers():
    box = sv.predict("q", np.float64(0.25), tol=0.001)
    assert box.check("1/4") is True


# ------------------------------------------------------------------ the notebooks' predict boxes

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
CODE_CELL = re.compile(r"```\{code-cell\}[^\n]*\n(.*?)```", re.S)


def predict_calls(text: str) -> list[ast.Call]:
    """Every `sv.predict(...)` call in the code cells of a MyST notebook text."""
    calls = []
    for source in CODE_CELL.findall(text):
        source = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!")))
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        calls += [
            node
            for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "predict"
        ]
    return calls


def typed_in(node: ast.AST) -> bool:
    """Whether an answer expression is a number typed into the page: literals, at most wrapped in Fraction/float."""
    if any(isinstance(n, ast.Attribute | ast.Subscript) for n in ast.walk(node)):
        return False
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} <= {"Fraction", "float", "int", "Decimal"}


def predict_problems(text: str) -> list[str]:
    """What is wrong with the predict boxes of one notebook: typed answers, a missing language, repeated keys."""
    problems, keys = [], []
    for call in predict_calls(text):
        where = f"line {call.lineno} of its cell"
        if len(call.args) < 2:
            problems.append(f"{where}: predict(question, answer) needs both")
            continue
        question, answer = call.args[:2]
        if not (isinstance(question, ast.Dict) and {"en", "zh"} <= {getattr(k, "value", None) for k in question.keys}):
            problems.append(f"{where}: the question is not a {{'en': ..., 'zh': ...}} dict")
        if typed_in(answer):
            problems.append(f"{where}: the answer {ast.unparse(answer)} is typed, not computed")
        keys += [kw.value.value for kw in call.keywords if kw.arg == "key" and isinstance(kw.value, ast.Constant)]
    problems += [f"key {k!r} used twice" for k in sorted({k for k in keys if keys.count(k) > 1})]
    return problems


TUTORIAL_TEXTS = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.md")) + sorted((NOTEBOOKS / "zh").glob("[0-9][0-9]_*.md"))


@pytest.mark.parametrize("path", TUTORIAL_TEXTS, ids=[f"{p.parent.name}/{p.stem}" for p in TUTORIAL_TEXTS])
def test_notebook_predict_boxes_ask_in_both_languages_and_compute_the_answer(path):
    problems = predict_problems(path.read_text(encoding="utf-8"))
    assert not problems, f"{path.name}: " + "; ".join(problems)


def test_the_predict_box_check_can_fail():
    typed = (
        '```{code-cell} ipython3\nsv.predict({"en": "a", "zh": "b"}, 0.8, key="k")\nsv.predict("c", 1, key="k")\n```\n'
    )
    problems = predict_problems(typed)
    assert (
        any("typed" in p for p in problems)
        and any("dict" in p for p in problems)
        and any("twice" in p for p in problems)
    )
    assert any(
        "typed" in p
        for p in predict_problems('```{code-cell} ipython3\nsv.predict({"en": "a", "zh": "b"}, Fraction(4, 5))\n```')
    )
    good = '```{code-cell} ipython3\nsv.predict({"en": "a", "zh": "b"}, sv.acceptance_rate(p, q), key="x")\n```'
    assert predict_problems(good) == []
    assert not typed_in(ast.parse("Fraction(sv.acceptance_rate(P, Q))").body[0].value)
    assert not typed_in(ast.parse("q[0]").body[0].value) and typed_in(ast.parse("-0.5 + 1").body[0].value)


@pytest.mark.parametrize(
    "name", ["02_importance_sampling", "03_rejection_sampling", "06_worked_examples", "07_pitfalls"]
)
def test_tutorials_02_03_06_07_ask_before_they_reveal(name):
    """Each of these tutorials has at least two predict boxes, in both languages (the twin test keeps them equal)."""
    for folder in (NOTEBOOKS, NOTEBOOKS / "zh"):
        text = (folder / f"{name}.md").read_text(encoding="utf-8")
        assert len(predict_calls(text)) >= 2, f"{folder.name}/{name}: fewer than two predict boxes"


@pytest.mark.parametrize("name", ["08_gamma_steps_and_trees", "11_real_models", "12_scaling", "13_draft_trees"])
def test_tutorials_08_11_12_13_ask_before_they_reveal(name):
    """Tokens per step (8), one real token's acceptance (11), the speed-up (12), a real tree's accepted path (13):
    a predict box in both languages."""
    for folder in (NOTEBOOKS, NOTEBOOKS / "zh"):
        text = (folder / f"{name}.md").read_text(encoding="utf-8")
        assert len(predict_calls(text)) >= 1, f"{folder.name}/{name}: no predict box"


def test_the_learned_draft_section_asks_before_it_reveals():
    """Notebook 11 §6 (a draft that reads the target's features) has its own predict box, in both languages."""
    for folder in (NOTEBOOKS, NOTEBOOKS / "zh"):
        text = (folder / "11_real_models.md").read_text(encoding="utf-8")
        section = text[text.index("## 6 · ") : text.index("\n## ", text.index("## 6 · ") + 1)]
        assert predict_calls(section), f"{folder.name}/11_real_models §6: no predict box"
