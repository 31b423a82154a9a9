"""A draft/target pair (`Pair`) and how a text prompt becomes its token ids (`format_prompt`).

No torch at import, no loading: `specviz.lm.load.loading` builds pairs, the engine reads prompts here.

>>> format_prompt(None, "hi")
Traceback (most recent call last):
...
TypeError: tokenizer must be a Hugging Face tokenizer, got None
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...foundation.checks import chat_setting

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

    from .models import LanguageModel

__all__ = ["Pair", "format_prompt"]


@dataclass
class Pair:
    """A target model p and a draft model q sharing one vocabulary (and optionally a tokenizer)."""

    target: LanguageModel
    draft: LanguageModel
    tokenizer: object = None
    device: str = "cpu"

    def __post_init__(self):
        if self.target.vocab_size != self.draft.vocab_size:
            raise ValueError(
                f"target ({self.target.name}) has {self.target.vocab_size} tokens but draft "
                f"({self.draft.name}) has {self.draft.vocab_size}: they must share a vocabulary"
            )

    @property
    def chat_template(self) -> str | None:
        """The tokenizer's chat template (None when there is no tokenizer or it has none)."""
        return getattr(self.tokenizer, "chat_template", None) or None

    def encode(self, text: str, chat: str | bool = "auto") -> list:
        """Token ids for a text prompt: the chat template applied where there is one (see `format_prompt`)."""
        return format_prompt(self.tokenizer, text, chat=chat)

    def describe(self) -> str:
        """One line: both models with their sizes, the vocabulary and the device."""

        def size(m):
            mod = getattr(m, "model", None)
            if mod is None:
                return m.name
            n = sum(p.numel() for p in mod.parameters())
            return f"{m.name} ({n / 1e6:.2f} M params)"

        return f"target {size(self.target)}, draft {size(self.draft)}, vocabulary {self.target.vocab_size}, on {self.device}"


def format_prompt(tokenizer: PreTrainedTokenizerBase, text: str, chat: str | bool = "auto") -> list:
    """Prompt ids for `text`: the chat template (one user turn + the assistant header) if the tokenizer has one.

    `chat`: "auto" (the template when there is one), True (require it) or False (plain
    text). Plain text gets a BOS token exactly when the tokenizer's own
    `encode(text)` adds one, and never twice. A chat template is rendered and then
    encoded without special tokens, as transformers' `apply_chat_template` does, so a
    BOS in the template appears once.
    """
    if tokenizer is None or not callable(getattr(tokenizer, "encode", None)) or isinstance(tokenizer, (str, bytes)):
        raise TypeError(f"tokenizer must be a Hugging Face tokenizer, got {tokenizer!r}")
    if not isinstance(text, str):
        raise TypeError(f"text (the prompt) must be a str, got {type(text).__name__}")
    if not text:
        raise ValueError("text (the prompt) is empty: type at least one character")
    chat = chat_setting(chat)  # "auto", True or False exactly (1 and 0 refused)
    has_template = bool(getattr(tokenizer, "chat_template", None))
    if chat is True and not has_template:
        raise ValueError("chat=True but this tokenizer has no chat template; use chat='auto' or chat=False")
    if has_template and chat in ("auto", True):
        rendered = tokenizer.apply_chat_template(
            [{"role": "user", "content": text}], add_generation_prompt=True, tokenize=False
        )
        return [int(i) for i in tokenizer.encode(rendered, add_special_tokens=False)]
    ids = [int(i) for i in tokenizer.encode(text, add_special_tokens=False)]
    bos = getattr(tokenizer, "bos_token_id", None)
    if bos is not None and (not ids or ids[0] != bos):
        with_special = tokenizer.encode(text, add_special_tokens=True)
        if len(with_special) and int(with_special[0]) == bos:
            ids = [int(bos)] + ids
    return ids
