"""The message catalogue: every piece of UI and figure text, in English and Chinese.

`t(key)` returns the text of `key` in the current language; `set_language("zh")` switches.
The first language comes from $SPECVIZ_LANG, read by `env_language` (any usual spelling of Chinese,
e.g. zh_CN.UTF-8, gives "zh"; an unknown value gives English, said once).
Figure builders and widgets read their titles, labels and legends from here, so one
switch changes the dashboard, the apps and the figures together.

>>> set_language("zh"); t("lang.name")
'中文'
>>> set_language("en"); t("lang.name")
'English'
>>> t("no.such.key")
Traceback (most recent call last):
...
KeyError: "no message 'no.such.key' in specviz.foundation.i18n.CATALOGUE"
"""

from __future__ import annotations

import os
import re
import warnings

from .messages import MESSAGES

LANGUAGES = ("en", "zh")
"""The languages every message exists in."""

CATALOGUE: dict[str, dict[str, str]] = MESSAGES
"""key -> {language: text} (the dict of specviz.foundation.messages). Text may hold `str.format` fields, filled by `t`."""

ENV = "SPECVIZ_LANG"
"""The environment variable that sets the first language (`specviz dashboard --lang` sets it for Voila's kernels)."""
_NAMES = {"chinese": "zh", "中文": "zh", "cn": "zh", "english": "en"}
_warned: set = set()


def env_language(value: str | None) -> str:
    """The language a $SPECVIZ_LANG value asks for; "en" when unset, and for an unknown value (with one warning).

    Case, spaces, a region or script (zh-CN, zh_Hans) and an encoding (zh_CN.UTF-8) do not matter:

    >>> [env_language(v) for v in ("zh", "ZH", " zh", "zh-CN", "zh_CN.UTF-8", "en_US", "", None)]
    ['zh', 'zh', 'zh', 'zh', 'zh', 'en', 'en', 'en']
    """
    text = (value or "").strip()
    if not text:
        return "en"
    low = text.lower()
    primary = re.split(r"[-_.@\s]", low, maxsplit=1)[0]
    lang = primary if primary in LANGUAGES else _NAMES.get(low)
    if lang is not None:
        return lang
    if text not in _warned:
        _warned.add(text)
        say = f"{ENV}={value!r} is not a language specviz has: English is used (choose one of {', '.join(LANGUAGES)})"
        warnings.warn_explicit(say, UserWarning, "specviz.foundation.i18n", 0)  # one line: no source line to show
    return "en"


_current = env_language(os.environ.get(ENV))


def check_language(lang) -> str:
    """`lang` if it is a supported language code, else a ValueError naming the choices."""
    if lang not in LANGUAGES:
        raise ValueError(f"unknown language lang={lang!r}: choose one of {', '.join(LANGUAGES)}")
    return lang


def set_language(lang: str) -> None:
    """Make `lang` ("en" or "zh") the language of everything built from now on."""
    global _current
    _current = check_language(lang)


def language() -> str:
    """The current language code ("en" unless set_language or $SPECVIZ_LANG chose another, see `env_language`)."""
    return _current


def t(key: str, lang: str | None = None, **fields) -> str:
    """The message `key` in `lang` (default: the current language), with `fields` filled in."""
    try:
        entry = CATALOGUE[key]
    except KeyError:
        raise KeyError(f"no message {key!r} in specviz.foundation.i18n.CATALOGUE") from None
    text = entry[check_language(lang) if lang is not None else _current]
    return text.format(**fields) if fields else text


def register(messages: dict[str, dict[str, str]]) -> None:
    """Add `messages` (key -> {"en": ..., "zh": ...}) to the catalogue; every language is required."""
    for key, entry in messages.items():
        missing = [lang for lang in LANGUAGES if not entry.get(lang)]
        if missing:
            raise ValueError(f"message {key!r} has no text in {', '.join(missing)}")
        if key in CATALOGUE and CATALOGUE[key] != entry:
            raise ValueError(f"message {key!r} is already in the catalogue with other text")
        CATALOGUE[key] = dict(entry)
