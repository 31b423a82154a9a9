"""What a generation is given besides its settings, checked: the pair or model, the prompt, the callback, the end ids.

The settings (`GenerationSettings`) check themselves; these are the call's other arguments, each
named in its error. A text prompt becomes token ids through `specviz.lm.engine.pair.format_prompt`
(the chat template when the tokenizer has one); token ids must fit every model's vocabulary, and
the prompt plus the tokens asked for must fit every model's context.

>>> prompt_ids(None, (3, 1, 4))
[3, 1, 4]
>>> prompt_ids(None, [3, 1.5])
Traceback (most recent call last):
...
ValueError: prompt token 1 is 1.5: token ids must be integers
"""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING

from .pair import format_prompt

if TYPE_CHECKING:
    from collections.abc import Iterable

    from .models import LanguageModel
    from .pair import Pair

__all__ = [
    "check_callback",
    "check_ids_in_vocab",
    "check_model",
    "check_pair",
    "check_room",
    "eos_ids",
    "model_prompt",
    "prompt_ids",
]


def prompt_ids(pair_or_model: object, prompt: object, chat: str | bool = "auto") -> list:
    """The prompt's token ids: text through the tokenizer (see `format_prompt`), or a sequence of ints as given."""
    if isinstance(prompt, str):
        if not prompt:
            raise ValueError("the prompt is empty: type at least one character")
        tok = getattr(pair_or_model, "tokenizer", None)
        if tok is None:
            raise ValueError("a text prompt needs a tokenizer; this model has none, pass token ids")
        ids = format_prompt(tok, prompt, chat=chat)
    elif isinstance(prompt, (bytes, bytearray, memoryview)):  # its bytes would read as token ids
        raise TypeError(
            f"the prompt must be text or a sequence of token ids, got {type(prompt).__name__}: decode it first "
            "(prompt.decode('utf-8'))"
        )
    else:
        if hasattr(prompt, "ndim") and hasattr(prompt, "tolist"):  # a torch tensor or a numpy array
            if prompt.ndim != 1:
                raise ValueError(f"prompt ids must be 1-D, got shape {tuple(prompt.shape)}")
            prompt = prompt.tolist()
        try:
            prompt = list(prompt)
        except TypeError:
            raise TypeError(
                f"the prompt must be text or a sequence of token ids, got {type(prompt).__name__}"
            ) from None
        ids = []
        for i, t in enumerate(prompt):
            if isinstance(t, bool) or not isinstance(t, numbers.Integral):
                raise ValueError(f"prompt token {i} is {t!r}: token ids must be integers")
            ids.append(int(t))
    if not ids:
        raise ValueError("the prompt is empty: give at least one token")
    return ids


def model_prompt(
    pair_or_model: object, prompt: object, models: Iterable[LanguageModel], chat: str | bool, max_new_tokens: int
) -> list:
    """`prompt_ids`, checked to fit every model's vocabulary and, with max_new_tokens more, its context."""
    ids = prompt_ids(pair_or_model, prompt, chat)
    check_ids_in_vocab(ids, models)
    check_room(models, len(ids), max_new_tokens)
    return ids


def check_ids_in_vocab(ids: list, models: Iterable[LanguageModel]) -> None:
    """ValueError naming the token, its id and the model when a prompt id is outside a model's vocabulary."""
    for m in models:
        for i, t in enumerate(ids):
            if not 0 <= t < m.vocab_size:
                raise ValueError(
                    f"prompt token {i} has id {t}, outside {m.name}'s vocabulary of "
                    f"{m.vocab_size} (ids 0..{m.vocab_size - 1})"
                )


def check_room(models: Iterable[LanguageModel], n_prompt: int, max_new_tokens: int) -> None:
    """The longest sequence a model reads is the prompt + max_new_tokens - 1 (the last token is never fed)."""
    for m in models:
        if m.max_positions is None:
            continue
        need = n_prompt + max_new_tokens - 1
        if need > m.max_positions:
            raise ValueError(
                f"prompt of {n_prompt} tokens + max_new_tokens {max_new_tokens} needs {need} positions, more than "
                f"{m.name}'s context of {m.max_positions} positions: shorten the prompt or ask for fewer tokens"
            )


def check_callback(fn: object, name: str) -> None:
    """TypeError naming `name` unless it is None or callable."""
    if fn is not None and not callable(fn):
        raise TypeError(f"{name} must be a function (or None), got {type(fn).__name__}")


def check_pair(pair: object, name: str = "pair") -> None:
    """TypeError naming `name` unless it is a draft/target pair of language models (specviz.lm.Pair)."""
    for role in ("target", "draft"):
        m = getattr(pair, role, None)
        if m is None or not hasattr(m, "session") or not hasattr(m, "vocab_size"):
            raise TypeError(
                f"{name} must be a specviz.lm.Pair of target and draft models (load_pair(...)), "
                f"got {type(pair).__name__}"
            )


def check_model(model_or_pair: object, name: str = "model_or_pair") -> LanguageModel:
    """The model to decode with (a pair's target, or the model itself); TypeError naming `name` otherwise."""
    model = getattr(model_or_pair, "target", model_or_pair)
    if not hasattr(model, "session") or not hasattr(model, "vocab_size"):
        raise TypeError(f"{name} must be a specviz.lm.Pair or LanguageModel, got {type(model_or_pair).__name__}")
    return model


def eos_ids(pair_or_model: Pair | LanguageModel) -> set:
    """Ids that end a generation: the tokenizer's end token and the target's generation_config ones."""
    out = set()
    tok_eos = getattr(getattr(pair_or_model, "tokenizer", None), "eos_token_id", None)
    model = getattr(getattr(pair_or_model, "target", pair_or_model), "model", None)
    cfg_eos = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    for e in (tok_eos, cfg_eos):
        if e is not None:
            out.update(int(x) for x in (e if isinstance(e, (list, tuple)) else [e]))
    return out
