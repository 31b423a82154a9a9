"""How one generation runs: `GenerationSettings`, built and checked once, passed from the CLI, the live view
and notebooks to the engine.

It holds what a run is asked to do (how many tokens, γ, the sampling, the seed, threads, where to
stop, a draft tree's shape); the models, the prompt and the step callback are the call's own arguments.
Every field is checked when the object is built, with the field named in the error, so a bad value never
reaches the engine, and nothing downstream reads it again: γ is read here, once per run, by
`specviz.foundation.checks.gamma_setting` (the one γ parser) and a tree's shape by `specviz.foundation.checks.tree_setting`.
`replace` checks only the fields it changes. The defaults live here too (`DEFAULT_GAMMA`, `DEFAULT_TREE`,
`DEFAULT_MAX_NEW_TOKENS`, `MAX_NEW_TOKENS`): the CLI and the live view read them, not copies.

>>> s = GenerationSettings(max_new_tokens=20, gamma="Auto", temperature=0.7)
>>> s.gamma, s.sampling.temperature, s.replace(gamma=3).gamma
('auto', 0.7, 3)
>>> s.replace(tree=[3, 2]).tree, s.replace(tree=2).tree, s.replace(tree=" Auto").tree
((3, 2), 2, 'auto')

Without a γ (gamma=None) a chain and tree="auto" choose each step's (`DEFAULT_GAMMA`, "auto"); a fixed
shape runs at its own depth (k at every depth: `DEFAULT_TREE_DEPTH` depths), so the tree is the one asked
for. The CLI and the live view's text box give γ and the shape as text, read by `from_text`:

>>> GenerationSettings().gamma, GenerationSettings(tree=(3, 2, 1)).gamma, GenerationSettings(tree=3).gamma
('auto', 3, 4)
>>> t = GenerationSettings.from_text(gamma=" 2", tree="3")
>>> t.gamma, t.tree
(2, 3)
>>> GenerationSettings(top_p=1.5)
Traceback (most recent call last):
...
ValueError: top_p must be <= 1, got 1.5
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import reprlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...exact.standardize import Sampling
from ...foundation.checks import AUTO, chat_setting, flag, gamma_setting, integer, tree_setting
from ..gamma.chooser import GammaChooser

if TYPE_CHECKING:
    from collections.abc import Callable, Collection

__all__ = [
    "CHAT_CHOICES",
    "DEFAULT_GAMMA",
    "DEFAULT_MAX_NEW_TOKENS",
    "DEFAULT_TREE",
    "DEFAULT_TREE_DEPTH",
    "MAX_NEW_TOKENS",
    "MAX_SEED",
    "MAX_THREADS",
    "GenerationSettings",
    "keyword_settings",
    "settings_or",
]

DEFAULT_GAMMA = AUTO
"""γ when none is given (for a chain or tree="auto"): each step chooses its own (`specviz.lm.gamma.adaptive.AutoGamma`).
The one default γ: `specviz run --gamma`, the live view's γ control and the library all start from it."""
DEFAULT_TREE = None
"""The draft tree when none is given: none, a chain of drafts."""
DEFAULT_TREE_DEPTH = 4
"""γ when none is given for a tree of k drafts per node at every depth (an int k): 4 depths, k + ... + k^4
nodes at most, a fixed shape as asked for (γ "auto" lets each step choose its depth, and so its k^γ nodes)."""
DEFAULT_MAX_NEW_TOKENS = 64
"""Tokens to generate when not told: the library's, `specviz run --max-new-tokens`' and the live view's default."""
MAX_NEW_TOKENS = 4096
"""The most new tokens one call may ask for, wherever it comes from (the library, `specviz run`, the live view's
box). 4,096 is more than any run here needs (the bundled pair's context is smaller still, and a longer ask is
refused by the pair's own context check) and small enough that a typo such as 1000000 on a model with no context
limit (an n-gram model, prompt lookup) is refused at once instead of running for hours."""
MAX_SEED = 2**63 - 1
"""The largest int seed (a torch.Generator takes 64-bit seeds)."""
MAX_THREADS = 4096
"""The most CPU threads a run may ask torch for."""
CHAT_CHOICES = ("auto", True, False)
"""`chat`: "auto" (the tokenizer's chat template when it has one), True (insist) or False (plain text)."""


def _seed(x: object) -> object:
    """An int seed in 0..MAX_SEED, a numpy or torch Generator (kept as given), or None (fresh)."""
    if x is None or type(x).__name__ == "Generator":  # numpy.random.Generator or torch.Generator
        return x
    try:
        return integer(x, "seed", lo=0, hi=MAX_SEED)
    except (TypeError, ValueError) as e:
        raise type(e)(f"{e} (seed: a non-negative integer, a numpy/torch Generator or None)") from None


@dataclass(frozen=True)
class GenerationSettings:
    """One generation's settings, checked when built (errors name the field)."""

    max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS  # tokens to generate, 1..MAX_NEW_TOKENS
    # drafts per verify step: 0..MAX_GAMMA, "auto", a GammaChooser, or None: the default (DEFAULT_GAMMA, "auto",
    # for a chain or tree="auto"; a fixed tree's own depth, DEFAULT_TREE_DEPTH for an int k)
    gamma: int | str | GammaChooser | None = None
    temperature: float = 1.0  # 0 = greedy
    top_k: int | None = None  # None/0 = off
    top_p: float | None = None  # None/1 = off
    seed: Any = None  # int, numpy/torch Generator, or None (fresh)
    threads: int | None = 1  # torch's CPU threads for the call (None: leave torch's setting)
    stop_at_eos: bool = False  # end the run at the tokenizer's or generation config's end ids
    chat: str | bool = "auto"  # a text prompt through the chat template: "auto", True or False
    # a draft tree: drafts per node at each depth (3, 2, 1), k at every depth (an int), "auto" (each step's
    # shape from the run's measurements), or None (a chain); γ caps the depth: each step's depth is the
    # chooser's γ, at most len(tree)
    tree: tuple | int | str | None = DEFAULT_TREE

    def __post_init__(self):
        self._check([f.name for f in dataclasses.fields(self)])

    @classmethod
    def from_text(cls, *, text: Collection[str] = ("gamma", "tree"), **fields) -> GenerationSettings:
        """Settings whose `text` fields may also be given as a command line or a text box gives them: γ "3" (a
        whole number), a tree "3,2,1" (drafts per depth) or "3" (k at every depth); each read once, as above."""
        unknown = set(text) - {"gamma", "tree"}
        if unknown:
            raise ValueError(f"from_text reads gamma and tree as text, not {', '.join(sorted(unknown))}")
        names = [f.name for f in dataclasses.fields(cls)]
        bad = set(fields) - set(names)
        if bad:
            raise TypeError(f"GenerationSettings has no setting {', '.join(sorted(bad))}")
        settings = object.__new__(cls)
        for f in dataclasses.fields(cls):
            object.__setattr__(settings, f.name, fields.get(f.name, f.default))
        settings._check(names, text=set(text))
        return settings

    def _check(self, names: Collection[str], text: Collection[str] = ()) -> None:
        """Check and store the fields `names` (γ after the tree, whose default depth it may be)."""

        def put(name, value):
            object.__setattr__(self, name, value)

        if "max_new_tokens" in names:
            put("max_new_tokens", integer(self.max_new_tokens, "max_new_tokens", lo=1, hi=MAX_NEW_TOKENS))
        if "tree" in names and self.tree is not None:  # "auto": each step's shape chosen by `tree_auto.TreeAuto`
            put("tree", tree_setting(self.tree, text="tree" in text))
        if "gamma" in names:
            put("gamma", self._gamma(self.gamma, "gamma" in text))
        if {"temperature", "top_k", "top_p"} & set(names):
            sampling = Sampling(self.temperature, self.top_k, self.top_p)
            put("temperature", sampling.temperature)
            put("top_k", sampling.top_k)
            put("top_p", sampling.top_p)
        if "seed" in names:
            put("seed", _seed(self.seed))
        if "threads" in names and self.threads is not None:
            put("threads", integer(self.threads, "threads", lo=1, hi=MAX_THREADS))
        if "stop_at_eos" in names:
            put("stop_at_eos", flag(self.stop_at_eos, "stop_at_eos"))
        if "chat" in names:  # "auto", True or False exactly: 1 == True in Python, but a count is no answer
            put("chat", chat_setting(self.chat))

    def _gamma(self, gamma, text: bool):
        """γ read once: None is the default for the tree (checked already); a chooser is checked where it is used."""
        if gamma is None:
            tree = self.tree
            return (
                DEFAULT_GAMMA if tree in (None, AUTO) else len(tree) if isinstance(tree, tuple) else DEFAULT_TREE_DEPTH
            )
        if isinstance(gamma, GammaChooser):  # (`check_chooser`, in the engine)
            return gamma
        if hasattr(gamma, "choose") and hasattr(gamma, "observe"):  # numpy scalars have choose only
            raise TypeError(
                f"gamma: a chooser must subclass specviz.lm.gamma.adaptive.GammaChooser, got {type(gamma).__name__}"
            )
        return gamma_setting(gamma, auto=True, text=text)

    @property
    def sampling(self) -> Sampling:
        """The temperature / top-k / top-p part, as the samplers take it."""
        return Sampling(self.temperature, self.top_k, self.top_p)

    def replace(self, **changes) -> GenerationSettings:
        """A copy with some fields changed; only those are checked again (the rest were checked when built)."""
        names = {f.name for f in dataclasses.fields(self)}
        bad = set(changes) - names
        if bad:
            raise TypeError(f"GenerationSettings has no setting {', '.join(sorted(bad))}")
        new = copy.copy(self)
        for name, value in changes.items():
            object.__setattr__(new, name, value)
        new._check(list(changes))
        return new


def settings_or(settings: GenerationSettings | None, caller: Callable, **given) -> GenerationSettings:
    """`settings` when given, else `GenerationSettings(**given)`: the keyword form, read at the edge of `caller`.

    `given` are the settings `caller` took as keywords; with `settings=` each must be at `caller`'s
    default for it, or the call is a TypeError naming both (one way to say a setting, not two).

    >>> def run(max_new_tokens=64, temperature=1.0, *, settings=None):
    ...     return settings_or(settings, run, max_new_tokens=max_new_tokens, temperature=temperature)
    >>> run(10).max_new_tokens, run(settings=GenerationSettings(temperature=0)).temperature
    (10, 0)
    >>> run(10, settings=GenerationSettings())
    Traceback (most recent call last):
    ...
    TypeError: run: give either settings= or the setting keywords, not both (settings= and max_new_tokens=10)
    """
    if settings is None:
        return GenerationSettings(**given)
    if not isinstance(settings, GenerationSettings):
        raise TypeError(f"settings must be a specviz.lm.GenerationSettings (or None), got {type(settings).__name__}")
    defaults = inspect.signature(caller).parameters
    changed = [f"{k}={reprlib.repr(v)}" for k, v in given.items() if not _is_default(v, defaults[k].default)]
    if changed:
        raise TypeError(
            f"{caller.__name__}: give either settings= or the setting keywords, not both "
            f"(settings= and {', '.join(changed)})"
        )
    # checked again (a copy), as built: an object.__setattr__ past the frozen fields must not reach the engine;
    # γ and the tree are read once per run (their one parse), so they are not read here
    checked = copy.copy(settings)
    checked._check([f.name for f in dataclasses.fields(settings) if f.name not in ("gamma", "tree")])
    return checked


def keyword_settings(caller: Callable, *args, **kwargs) -> tuple[GenerationSettings, dict]:
    """A call in `caller`'s keyword form, read as `caller` reads it: (its settings, its other arguments by name).

    >>> def run(prompt, max_new_tokens=64, on_step=None, *, settings=None): ...
    >>> settings, rest = keyword_settings(run, [0], 5, on_step=print)
    >>> settings.max_new_tokens, rest
    (5, {'prompt': [0], 'on_step': <built-in function print>})
    """
    call = inspect.signature(caller).bind(*args, **kwargs)
    call.apply_defaults()
    given = {
        f.name: call.arguments.pop(f.name) for f in dataclasses.fields(GenerationSettings) if f.name in call.arguments
    }
    return settings_or(call.arguments.pop("settings", None), caller, **given), call.arguments


def _is_default(value: object, default: object) -> bool:
    """True when `value` is the default itself, or equal to it and of its type (True is no default 1)."""
    if value is default:
        return True
    try:
        return type(value) is type(default) and bool(value == default)
    except (TypeError, ValueError):
        return False
