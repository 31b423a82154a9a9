"""The live view's model choice: which pairs to offer, what still needs fetching, and an instruct model's settings.

`pair_choices()` are the pairs a lecturer picks from: the bundled offline pair, each catalogue
model (`specviz.lm.load.catalog`) with a prompt-lookup draft, marked while it still needs
`specviz models fetch NAME`, and "other" (type any target and draft: a catalogue name, a
folder, a .gguf file or a hub id). `check_fetched` turns an unfetched catalogue name into a
clear message before anything loads. An instruct model (a tokenizer with a chat template)
reads its prompt through that template (`formatted_prompt_html` shows what it reads) and
suggests greedy decoding unless its generation config samples (`sampling_defaults`).

>>> pair_choices()[0][1], pair_choices()[-1][1]
(('bundled', 'bundled'), 'custom')
>>> choice_for("bundled", "bundled"), choice_for("gpt2", "distilgpt2")
(('bundled', 'bundled'), 'custom')
"""

from __future__ import annotations

import html

import ipywidgets as W

from ...foundation.i18n import t
from ...foundation.palette import INK
from ...lm.drafts import BUILT
from ...lm.drafts.learned import HEADS
from ...lm.load import catalog
from ...lm.load.loading import PROMPT_LOOKUP
from ...lm.stats.fates import DIM_STYLE
from ...lm.stats.prompts import LOOKUP_TASK, SHAKESPEARE_PROMPT, TASK_PROMPTS

BUNDLED_PAIR = ("bundled", "bundled")
"""The (target, draft) of the bundled offline pair."""

CUSTOM = "custom"
"""The value of the "other: type a target and a draft" choice."""

DEFAULT_PROMPT = SHAKESPEARE_PROMPT
"""The live view's prompt for the bundled (Shakespeare) pair."""

DEFAULT_CHAT_PROMPT = TASK_PROMPTS[LOOKUP_TASK]
"""The prompt an instruct model starts with: a rewrite, which repeats most of its input, so prompt lookup's
drafts are often right (`specviz.lm.stats.prompts`; bench_prompt_lookup times the same text)."""

HEAD_CHAT_PROMPT = TASK_PROMPTS["free text"]
"""The prompt an instruct model drafted by its learned head starts with: free text, where prompt lookup finds
nothing to copy and the head's q is what drafts (bench_head times the same text)."""

CHAT_PROMPTS = (DEFAULT_CHAT_PROMPT, HEAD_CHAT_PROMPT)
"""The prompts the view sets itself for an instruct model (replaced, not kept, when another pair loads)."""


def chat_prompt_for(pair) -> str:
    """The prompt an instruct pair starts with: free text for a learned head's, the rewrite for the others."""
    return HEAD_CHAT_PROMPT if getattr(pair.draft, "draft_kind", None) == "head" else DEFAULT_CHAT_PROMPT


def fetch_command(name: str) -> str:
    """The shell command that fetches catalogue model `name` once."""
    return f"specviz models fetch {name}"


def is_fetched(name: str) -> bool:
    """True when catalogue model `name` is in the local cache and verified (hashed once, then a stamp)."""
    return catalog.local_path(name) is not None


def pair_choices() -> list:
    """(label, value) of each pair offered: the bundled pair, per catalogue model NAME + its learned head where one
    is bundled (first: the real pair with a real q) and NAME + prompt lookup, "other"."""
    out = [(t("live.choice_bundled"), BUNDLED_PAIR)]
    for name in sorted(catalog.MODELS):
        label = t("live.choice_lookup", name=name)
        try:
            fetched = is_fetched(name)
            broken = not fetched and catalog.state(name).status != catalog.NOT_FETCHED  # corrupted or unreadable
        except catalog.CacheError:  # $SPECVIZ_CACHE names no folder: the bundled pair still works; loading says why
            fetched, broken = False, False
        if not fetched:
            label = t("live.choice_corrupted" if broken else "live.choice_not_fetched", label=label)
        if name in HEADS:  # a learned draft head is bundled for this target: offered first, `named_pair`'s pick
            head = t("live.choice_head", name=name)
            if not fetched:
                head = t("live.choice_corrupted" if broken else "live.choice_not_fetched", label=head)
            out.append((head, (name, HEADS[name])))
        out.append((label, (name, PROMPT_LOOKUP)))
    return out + [(t("live.choice_custom"), CUSTOM)]


def choice_for(target: str, draft: str):
    """The offered choice that loads `target` + `draft`, else CUSTOM."""
    pair = (str(target).strip() or "bundled", str(draft).strip() or "bundled")
    return pair if any(v == pair for _, v in pair_choices()) else CUSTOM


def named_pair(name: str) -> tuple[str, str]:
    """(target, draft) of the offered pair `name`: "bundled", or a catalogue model (drafted by its learned head where
    one is bundled, else by prompt lookup)."""
    key = name.strip() or "bundled"
    offered = [value for _, value in pair_choices() if value != CUSTOM]
    for value in offered:
        if value[0] == key:
            return value
    names = ", ".join(repr(v[0]) for v in offered)
    raise ValueError(
        f"pair={name!r} names no offered pair: give one of {names}, a Pair (specviz.lm.load_pair), "
        "or target= and draft= (a catalogue name, a folder, a .gguf file or a hub id)"
    )


def target_options() -> list:
    """What the target box suggests: the bundled model and every catalogue model."""
    return ["bundled", *sorted(catalog.MODELS)]


def draft_options() -> list:
    """What the draft box suggests: the bundled model, the drafts built from the target (prompt lookup first) and
    every catalogue model."""
    return ["bundled", PROMPT_LOOKUP, *sorted(set(BUILT) - {PROMPT_LOOKUP}), *sorted(catalog.MODELS)]


def data_html(text: str) -> str:
    """A name or a command as typed (monospace, marked as data: never translated)."""
    return f"<code class='specviz-data'>{html.escape(text)}</code>"


def models_hint_html() -> str:
    """The note under the model choice: how to choose, and which catalogue models are fetched or need fetching."""
    lines = [html.escape(t("live.models_hint")), html.escape(t("live.lookup_note"))]
    for name in sorted(catalog.MODELS):
        if is_fetched(name):
            lines.append(html.escape(t("live.model_fetched", name="\0")).replace("\0", data_html(name)))
        else:
            text = html.escape(t("live.model_needs_fetch", name="\0", command="\1"))
            lines.append(text.replace("\0", data_html(name)).replace("\1", data_html(fetch_command(name))))
    return f"<div class='specviz-models-hint' style='font-size:12px;{DIM_STYLE}'>" + "<br>".join(lines) + "</div>"


def check_fetched(target: str, draft: str) -> None:
    """ValueError (in the current language) naming the first catalogue model of the pair not fetched or corrupted."""
    for role, name in (("live.target", target), ("live.draft", draft)):
        if name not in catalog.MODELS or is_fetched(name):
            continue
        found = catalog.state(name)
        if found.status == catalog.NOT_FETCHED:
            raise ValueError(t("live.not_fetched", role=t(role), name=name))
        if not found.ok:  # corrupted or unreadable: the fix is a forced fetch
            raise ValueError(
                t(
                    "live.corrupted",
                    role=t(role),
                    name=name,
                    path=found.path,
                    status=found.status,
                    problem=found.problem,
                )
            )


def has_chat_template(pair) -> bool:
    """True when the pair's tokenizer has a chat template (an instruct model)."""
    return bool(getattr(getattr(pair, "tokenizer", None), "chat_template", None))


def sampling_defaults(pair) -> dict | None:
    """An instruct model's sampling settings: its generation config when that samples, else greedy; None otherwise."""
    if not has_chat_template(pair):
        return None
    gc = getattr(getattr(pair.target, "model", None), "generation_config", None)
    if gc is not None and getattr(gc, "do_sample", False):
        temperature, top_k, top_p = (getattr(gc, k, None) for k in ("temperature", "top_k", "top_p"))
        return dict(
            temperature=1.0 if temperature is None else float(temperature),
            top_k=int(top_k or 0),
            top_p=1.0 if top_p is None else float(top_p),
        )
    return dict(temperature=0.0, top_k=0, top_p=1.0)


def formatted_prompt_html(pair, ids, chat: bool) -> str:
    """What the model reads: the prompt ids decoded with their special tokens (the chat template when `chat`)."""
    tok = getattr(pair, "tokenizer", None)
    if tok is None:
        text = " ".join(str(int(i)) for i in ids)
    else:
        text = tok.decode(list(ids), skip_special_tokens=False, clean_up_tokenization_spaces=False)
    note = t("live.formatted_chat") if chat and has_chat_template(pair) else t("live.formatted_plain")
    head = html.escape(t("live.formatted_head", n=len(ids)))
    return (
        f"<div style='font-size:12px'><b>{head}</b> <span style='{DIM_STYLE}'>{html.escape(note)}</span>"
        "<pre class='specviz-data specviz-formatted-prompt' style='white-space:pre-wrap;margin:2px 0;"
        f"padding:6px;border:1px solid {INK['border']};border-radius:6px;max-height:160px;overflow-y:auto'>"
        f"{html.escape(text)}</pre></div>"
    )


class ModelChoice:
    """The model-choice widgets: a pair to pick, target and draft boxes that also take free text, and a hint.

    `pair_choice` (Dropdown of `pair_choices()`) fills `target_text` and `draft_text`
    (Comboboxes, `ensure_option=False`); typing in them selects the matching choice or
    "other". `models_hint` says which catalogue models need `specviz models fetch` first.
    """

    def __init__(self, target: str = "bundled", draft: str = "bundled", label_style: dict | None = None):
        lab = label_style or {"description_width": "110px"}
        self.syncing = False  # True while the choice and the boxes update each other
        self.pair_choice = W.Dropdown(
            options=pair_choices(),
            value=choice_for(target, draft),
            description=t("live.models"),
            style=lab,
            layout=W.Layout(width="470px"),
        )
        box = dict(placeholder=t("live.model_box"), style=lab, layout=W.Layout(width="360px"), ensure_option=False)
        self.target_text = W.Combobox(value=str(target), options=target_options(), description=t("live.target"), **box)
        self.draft_text = W.Combobox(value=str(draft), options=draft_options(), description=t("live.draft"), **box)
        self.models_hint = W.HTML(models_hint_html(), layout=W.Layout(max_width="440px"))
        self.models_hint.add_class("specviz-models")
        self.pair_choice.observe(self.choice_changed, names="value")
        for b in (self.target_text, self.draft_text):
            b.observe(self.boxes_changed, names="value")

    def choice_changed(self, change) -> None:
        """A pair picked from `pair_choice` fills the target and draft boxes ("other" leaves them to type in)."""
        if self.syncing or change["new"] == CUSTOM:
            return
        self.syncing = True
        try:
            self.target_text.value, self.draft_text.value = change["new"]
        finally:
            self.syncing = False

    def boxes_changed(self, change) -> None:
        """Typing in the target or draft box selects the matching choice, or "other"."""
        if self.syncing:
            return
        self.syncing = True
        try:
            self.pair_choice.value = choice_for(self.target_text.value, self.draft_text.value)
        finally:
            self.syncing = False

    def refresh(self) -> None:
        """Re-read which catalogue models are fetched (a fetch in a terminal shows without a restart)."""
        value = self.pair_choice.value
        self.syncing = True
        try:
            self.pair_choice.options = pair_choices()
            self.pair_choice.value = value
        finally:
            self.syncing = False
        self.models_hint.value = models_hint_html()

    def names(self) -> tuple[str, str]:
        """(target, draft) as typed ("bundled" for an empty box)."""
        return self.target_text.value.strip() or "bundled", self.draft_text.value.strip() or "bundled"


__all__ = [
    "BUNDLED_PAIR",
    "CUSTOM",
    "ModelChoice",
    "CHAT_PROMPTS",
    "DEFAULT_CHAT_PROMPT",
    "HEAD_CHAT_PROMPT",
    "DEFAULT_PROMPT",
    "check_fetched",
    "choice_for",
    "data_html",
    "draft_options",
    "fetch_command",
    "formatted_prompt_html",
    "has_chat_template",
    "is_fetched",
    "models_hint_html",
    "named_pair",
    "pair_choices",
    "chat_prompt_for",
    "sampling_defaults",
    "target_options",
]
