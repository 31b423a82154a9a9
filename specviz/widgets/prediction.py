"""Predict, then reveal: the learner types a guess before the page shows a number it computed.

>>> from fractions import Fraction
>>> box = predict("P(out = cat) if the repair draws from p?", Fraction(13, 25), tol=0.01)
>>> box.check("0.5")                        # the guess beside the computed value
False
>>> box.result_text
'Your guess: 0.5 · computed: 13/25 = 0.52 · off by 0.02 (more than ±0.01 away)'
>>> box.check("about a half")               # bad input: a message, never a traceback
>>> box.message_text
"⚠ 'about a half' is not a number: type e.g. 0.5, 1/2 or 50%."
>>> box.check("1,000")                      # a thousands separator, or a decimal comma? asked, not guessed
>>> box.message_text
"⚠ '1,000' is ambiguous: a comma can group thousands or mark decimals. Type 1000 or 1.000."
>>> "<details><summary>" in box.static_html()   # static pages: the value stays folded
True
>>> predict({"en": "Z?", "zh": "Z 是多少？"}, Fraction(1, 5), lang="zh").question
'Z 是多少？'
"""

from __future__ import annotations

import html
import math
import numbers
import re
from fractions import Fraction

import ipywidgets as W

from ..foundation.checks import brief
from ..foundation.i18n import check_language, language, t
from ..foundation.palette import STATUS
from .base import App, safe_callback

MAX_GUESS_CHARS = 100
"""The longest guess read (a number needs far fewer characters; a pasted page gets a message)."""
GUESS_LIMIT = Fraction(10) ** 300
"""Guesses and answers are numbers between -1e300 and 1e300 (beyond, a float cannot hold their difference)."""
_EXACT_EXPONENT = 400  # up to 10^±400 a guess is read exactly; beyond, as a float (0 or too large): never 10^(10^8)


class GuessError(ValueError):
    """A typed guess that is not read as a number; `key` names its message (predict.*), `fields` fill it."""

    def __init__(self, text, key: str = "predict.not_a_number", **fields):
        super().__init__(str(text))
        self.key, self.fields = key, fields


def parse_guess(text: str) -> Fraction | float:
    """A guess as a number: '0.52', '.5', '13/25', '52%', '1e-3', '0,52', '1,000,000'; GuessError otherwise ('1,000'?)."""
    s = str(text).strip().replace("，", ",").replace("％", "%").replace("−", "-").replace(" ", "")
    if len(s) > MAX_GUESS_CHARS:
        raise GuessError(text, "predict.too_long", n=MAX_GUESS_CHARS)
    if re.fullmatch(r"[+-]?[1-9]\d{0,2},\d{3}%?", s):  # '1,000': a thousand, or one?
        raise GuessError(text, "predict.ambiguous_comma", thousands=s.replace(",", ""), decimal=s.replace(",", "."))
    if re.fullmatch(r"[+-]?[1-9]\d{0,2}(,\d{3})+(\.\d+)?%?", s):  # thousands separators: '1,000,000', '1,000.5'
        s = s.replace(",", "")
    elif re.fullmatch(r"[+-]?\d+,\d+%?", s):  # a decimal comma
        s = s.replace(",", ".")
    percent = s.endswith("%")
    s = s[:-1] if percent else s
    m, d = re.fullmatch(r"([+-]?\d+)/(\d+)", s), re.fullmatch(r"[+-]?(\d+\.?\d*|\.\d+)(?:[eE]([+-]?\d+))?", s)
    if m and int(m.group(2)) != 0:
        value = Fraction(int(m.group(1)), int(m.group(2)))
    elif d and d.group(2) is not None and abs(int(d.group(2))) > _EXACT_EXPONENT:
        x = float(s)  # '1e-99999999' is 0.0, '1e99999999' inf: read in microseconds, not by building 10^99999999
        if not math.isfinite(x):
            raise GuessError(text, "predict.too_large")
        value = Fraction(x)
    elif d:
        value = Fraction(s)
    else:
        raise GuessError(text)
    if abs(value := value / 100 if percent else value) > GUESS_LIMIT:
        raise GuessError(text, "predict.too_large")
    return value


def shown(text, limit: int = 40) -> str:
    """A learner's input as a message quotes it: its repr, cut to about `limit` characters."""
    s = str(text).strip()
    return repr(s) if len(s) <= limit else repr(s[: limit - 1] + "…")


def format_value(value, unit: str = "") -> str:
    """`value` for a learner: a fraction with small terms also as a decimal ('13/25 = 0.52'), else 4 digits."""
    if isinstance(value, Fraction) and value.denominator != 1 and value.denominator <= 1000:
        text = f"{value.numerator}/{value.denominator} = {float(value):.4g}"
    elif isinstance(value, Fraction):
        text = f"{value.numerator}" if value.denominator == 1 else f"{float(value):.4g}"
    else:
        text = f"{float(value):.4g}"
    return f"{text} {unit}" if unit else text


def question_text(question, lang: str) -> str:
    """The question in `lang`: a str as is, or the `lang` entry of a {"en": ..., "zh": ...} dict (else "en")."""
    if isinstance(question, dict):
        question = question.get(lang) or question.get("en")
    if not isinstance(question, str) or not question.strip():
        raise ValueError('question must be a non-empty string or a {"en": ..., "zh": ...} dict of them')
    return question


def _as_real(value, name: str):
    """`value` as a Fraction (kept exact) or a float; TypeError/ValueError when it is not one finite real number."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        try:
            import numpy as np

            if isinstance(value, np.ndarray) and value.shape == () and np.isrealobj(value):
                value = value.item()
        except ImportError:  # pragma: no cover - numpy is a dependency
            pass
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be one real number, got {type(value).__name__} {value!r}")
    value = Fraction(value) if isinstance(value, numbers.Rational) else float(value)
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value!r}")
    if abs(value) > GUESS_LIMIT:
        got = brief(int(value)) if isinstance(value, Fraction) else repr(value)  # not 400 digits
        raise ValueError(f"{name} must be a number between -1e300 and 1e300, got {got}")
    return value


_KEYS: dict = {}  # key -> the question of the box that has it (this session)


def claim_key(key, question):
    """`key` (a non-empty str, or None) for a box asking `question`; ValueError if a box with another question has it."""
    if key is None:
        return None
    if not isinstance(key, str) or not key.strip():
        raise TypeError(f"key must be a non-empty string (or None), got {key!r}")
    ident = repr(sorted(question.items())) if isinstance(question, dict) else repr(question)
    held = _KEYS.setdefault(key, ident)
    if held != ident:
        raise ValueError(
            f"key {key!r} is already used by another predict box in this session: give each box its own key"
        )
    return key


class PredictApp(App):
    """A guess box: type a prediction, submit, see it beside the value the page computed.

    Handles: `guess` (Text), `submit` (Button), `result` (HTML, empty until a guess is in),
    `message`, `answer`, `tol`, `last_guess`, `close_enough`; `check(text)` types and submits.
    """

    def __init__(self, question: str, answer, *, tol=None, unit: str | None = None, lang=None, key=None):
        self.lang = language() if lang is None else check_language(lang)
        asked = question
        question = question_text(question, self.lang)
        self.answer = _as_real(answer, "answer")
        if tol is None:
            tol = max(abs(float(self.answer)) * 0.05, 0.01)
        tol = float(_as_real(tol, "tol"))
        if tol < 0:
            raise ValueError(f"tol must be >= 0, got {tol}")
        self.tol = tol
        self.unit = "" if unit is None else str(unit)
        self.key = claim_key(key, asked)
        self.question = question
        self.last_guess = None
        self._typing = False
        self.close_enough: bool | None = None
        self.guess = W.Text(placeholder=t("predict.placeholder", self.lang), continuous_update=False)
        self.guess.add_class("specviz-predict-guess")
        self.submit = W.Button(description=t("predict.submit", self.lang), button_style="primary")
        self.submit.on_click(lambda _: self.check(self.guess.value))
        self.guess.observe(lambda change: self.check(change["new"]) if not self._typing else None, names="value")
        self.result = W.HTML(value="")
        self.result.add_class("specviz-predict-result")
        head = W.HTML(f"<b>{t('predict.heading', self.lang)}</b> {html.escape(question)}")
        super().__init__([head, W.HBox([self.guess, self.submit]), self.result])
        self.children = (*self.children[:-1], self.message, self.children[-1])  # message before the a11y helper
        self.add_class("specviz-predict")

    @safe_callback
    def check(self, text) -> bool:
        """Type `text` as the guess and submit it: True when it is within `tol` of the answer (None on bad input)."""
        if str(text) != self.guess.value:
            self._typing = True  # typing into the box is what Enter submits; do not submit twice
            try:
                self.guess.value = str(text)
            finally:
                self._typing = False
        if not str(text).strip():
            self.result.value = ""
            self.show_error(t("predict.empty", self.lang))
            return None
        try:
            guess = parse_guess(text)
        except GuessError as e:
            self.result.value = ""
            self.show_error(t(e.key, self.lang, text=shown(text), **e.fields))
            return None
        self.clear_message()
        self.last_guess = guess
        off = abs(float(guess) - float(self.answer))
        self.close_enough = bool(off <= self.tol + 1e-12)
        verdict = t("predict.close" if self.close_enough else "predict.far", self.lang, tol=f"{self.tol:.4g}")
        colour = STATUS["pass" if self.close_enough else "near"]
        self.result.value = (
            f"<span style='color:{colour}'>"
            + html.escape(
                t(
                    "predict.result",
                    self.lang,
                    guess=f"{float(guess):.4g} {self.unit}".strip(),
                    answer=format_value(self.answer, self.unit),
                    off=f"{off:.4g}",
                    verdict=verdict,
                )
            )
            + "</span>"
        )
        return self.close_enough

    @property
    def result_text(self) -> str:
        """The revealed line without HTML ('' before a guess)."""
        return html.unescape(re.sub(r"<[^>]+>", "", self.result.value)).strip()

    def static_html(self) -> str:
        """The page without a kernel: the question, and the computed value folded in a closed <details>."""
        key = f" data-key='{html.escape(self.key, quote=True)}'" if self.key else ""
        return (
            f"<div class='specviz-predict-static'{key}><p><b>{t('predict.heading', self.lang)}</b> "
            f"{html.escape(self.question)}</p><details><summary>{t('predict.reveal', self.lang)}</summary>"
            f"<p>{html.escape(t('predict.static_answer', self.lang, answer=format_value(self.answer, self.unit)))}"
            "</p></details></div>"
        )

    def _repr_html_(self) -> str:
        """Static viewers show the folded snapshot."""
        return self.static_html()

    def _repr_mimebundle_(self, **kwargs):
        """The live widget, and always the folded static HTML (never the revealed number)."""
        bundle = W.VBox._repr_mimebundle_(self, **kwargs)
        bundle["text/html"] = self.static_html()
        return bundle


def predict(question: str, answer, *, tol=None, unit: str | None = None, lang=None, key=None) -> PredictApp:
    """Predict, then reveal: a box for the learner's guess at `answer` (computed by the page), shown on submit.

    `question` is a str or a {"en": ..., "zh": ...} dict (so one code cell serves both twins of a
    notebook); `tol` is how close counts as close (default: 5 % of the answer, at least 0.01); `unit` is
    appended to the numbers; `lang` ("en"/"zh") defaults to the current language; `key` is an id
    written into the static HTML (data-key) so a page or a test can find the box.
    """
    return PredictApp(question, answer, tol=tol, unit=unit, lang=lang, key=key)
