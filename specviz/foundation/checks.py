"""Checks of single values (a number in range, a whole number, a flag, γ), named in errors; `validate` checks vectors.

Python numbers, numpy scalars, 0-d arrays and 0-d tensors all count as scalars; NaN, ±inf,
bools, strings, None and arrays of more than one element are refused with a ValueError or
TypeError that names the parameter.

>>> real(np.array(0.25), "alpha", lo=0, hi=1)
0.25
>>> integer(4.0, "gamma", lo=0)
4
>>> real(float("nan"), "c", lo=0)
Traceback (most recent call last):
...
ValueError: c must be a finite number, got nan
"""

from __future__ import annotations

import math
import numbers

import numpy as np

__all__ = [
    "AUTO",
    "MAX_GAMMA",
    "MAX_TREE_NODES",
    "MAX_TREE_WIDTH",
    "brief",
    "chat_setting",
    "exact_int",
    "flag",
    "gamma_setting",
    "integer",
    "real",
    "scalar",
    "tree_setting",
    "tree_with_gamma",
]

MAX_GAMMA = 1_000
"""The most drafts one verify step may take: the one bound on γ, for the toy samplers and the real engine alike."""
AUTO = "auto"
"""The γ setting that lets each step choose (`specviz.lm.gamma.adaptive.AutoGamma`)."""
MAX_TREE_WIDTH = 16
"""The most drafts one node of a draft tree may have."""
MAX_TREE_NODES = 256
"""The most nodes one draft tree may have (the target reads them all in one forward)."""


def scalar(x: object, name: str) -> float:
    """x as a Python float if it is one real number (incl. 0-d arrays and tensors); TypeError otherwise."""
    if isinstance(x, (bool, np.bool_)) or x is None or isinstance(x, (str, bytes)):
        raise TypeError(f"{name} must be a number, got {x!r}")
    if hasattr(x, "ndim") and hasattr(x, "item"):  # numpy arrays and torch tensors: 0-d only
        if x.ndim != 0:
            raise TypeError(f"{name} must be a single number, got an array of shape {tuple(x.shape)}")
        x = x.item()
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {x!r}")
    try:
        return float(x)
    except OverflowError:
        raise ValueError(f"{name} must be a finite number, got {brief(x)}") from None


def real(
    x: object,
    name: str,
    lo: float | None = None,
    hi: float | None = None,
    lo_open: bool = False,
    hi_open: bool = False,
) -> float:
    """A finite real number in [lo, hi] (open ends with lo_open / hi_open); errors name the parameter."""
    v = scalar(x, name)
    if not math.isfinite(v):
        raise ValueError(f"{name} must be a finite number, got {v!r}")
    if lo is not None and (v < lo or (lo_open and v == lo)):
        raise ValueError(f"{name} must be {'>' if lo_open else '>='} {lo:g}, got {v!r}")
    if hi is not None and (v > hi or (hi_open and v == hi)):
        raise ValueError(f"{name} must be {'<' if hi_open else '<='} {hi:g}, got {v!r}")
    return v


def integer(x: object, name: str, lo: int | None = None, hi: int | None = None) -> int:
    """A whole number in [lo, hi] (4.0 counts, 4.5 does not; ints stay exact, however large); errors name the parameter."""
    n = exact_int(x)
    if n is None:
        v = real(x, name)
        if v != int(v):
            raise ValueError(f"{name} must be a whole number, got {v!r}")
        n = int(v)
    if lo is not None and n < lo:
        raise ValueError(f"{name} must be an integer >= {lo}, got {brief(n)}")
    if hi is not None and n > hi:
        raise ValueError(f"{name} must be an integer <= {hi}, got {brief(n)}")
    return n


def exact_int(x: object) -> int | None:
    """x as an exact int when it is an integer type (incl. 0-d integer arrays and tensors), else None."""
    if hasattr(x, "ndim") and hasattr(x, "item") and getattr(x, "ndim", None) == 0:
        x = x.item()
    if isinstance(x, numbers.Integral) and not isinstance(x, (bool, np.bool_)):
        return int(x)
    return None


def brief(x: object) -> str:
    """A number as an error shows it: huge integers by their size, not their 400 digits."""
    if isinstance(x, numbers.Integral) and abs(int(x)).bit_length() > 64:
        digits = int(abs(int(x)).bit_length() * math.log10(2)) + 1
        return f"{'a negative' if x < 0 else 'an'} integer of about {digits} digits"
    return repr(x)


def flag(x: object, name: str) -> bool:
    """True or False (numpy bools and 0-d bool arrays count); TypeError for anything else ("no", 1, None)."""
    if hasattr(x, "ndim") and hasattr(x, "item") and getattr(x, "ndim", None) == 0:
        x = x.item()
    if not isinstance(x, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {x!r}")
    return bool(x)


def chat_setting(x: object, name: str = "chat"):
    """A chat setting: "auto", True or False exactly (1 and 0 are refused: True == 1 in Python, but a count is no
    answer to "use the chat template?").

    >>> chat_setting(True), chat_setting("auto")
    (True, 'auto')
    >>> chat_setting(1)
    Traceback (most recent call last):
    ...
    TypeError: chat must be 'auto', True or False, got 1 (int)
    """
    if (type(x) is str and x == AUTO) or type(x) is bool:
        return x
    raise TypeError(f"{name} must be 'auto', True or False, got {x!r:.60} ({type(x).__name__})")


def gamma_setting(x: object, name: str = "gamma", *, lo: int = 0, auto: bool = False, text: bool = False):
    """γ, the number of drafts per verify step: a whole number in lo..MAX_GAMMA, or "auto" (any case) when `auto`.

    The one place a γ is read and checked (the CLI, the live view, the engine and the toy samplers
    all call it). `text=True` also reads a string of digits ("3"), as a command line gives it.

    >>> gamma_setting(4.0), gamma_setting(" Auto ", auto=True), gamma_setting("3", text=True)
    (4, 'auto', 3)
    >>> gamma_setting("fast", auto=True)
    Traceback (most recent call last):
    ...
    ValueError: gamma must be a whole number >= 0 or 'auto' (0..1000), got 'fast'
    """
    if x.__class__ is int and lo <= x <= MAX_GAMMA:  # the fast path: the engine checks every step's γ
        return x
    if isinstance(x, (str, bytes)):
        if auto and isinstance(x, str) and x.strip().lower() == AUTO:
            return AUTO
        if text and isinstance(x, str) and x.strip().isdigit() and x.strip().isascii():
            return integer(int(x.strip()), name, lo=lo, hi=MAX_GAMMA)
        valid = f"a whole number >= {lo} or 'auto'" if auto else f"a whole number >= {lo}"
        raise ValueError(f"{name} must be {valid} ({lo}..{MAX_GAMMA}), got {x!r}")
    return integer(x, name, lo=lo, hi=MAX_GAMMA)


def tree_setting(x: object, name: str = "tree", *, auto: bool = True, text: bool = False):
    """A draft tree's shape: drafts per node at each depth, a tuple of whole numbers 1..MAX_TREE_WIDTH
    (at most MAX_TREE_NODES nodes in all), an int k (k at every depth), "auto" when `auto`, or None (a chain).

    The one place a tree shape is read; `text=True` also reads "3,2,1" as a command line gives it, and
    one number, "3", as the int k it stands for (k drafts per node at every depth, up to γ).

    >>> tree_setting((3, 2, 1)), tree_setting(2), tree_setting("3,2,1", text=True), tree_setting(None)
    ((3, 2, 1), 2, (3, 2, 1), None)
    >>> tree_setting(" 3 ", text=True), tree_setting("3, 2", text=True), tree_setting(" Auto", text=True)
    (3, (3, 2), 'auto')
    >>> tree_setting((3, 0))
    Traceback (most recent call last):
    ...
    ValueError: tree[1] must be an integer >= 1, got 0
    """
    if x is None:
        return None
    if isinstance(x, str):
        if auto and x.strip().lower() == AUTO:
            return AUTO
        typed = x.strip()
        parts = [p.strip() for p in typed.split(",")] if text else None
        if parts and any(p.split() != [p] for p in parts if p):  # "3 2": a space inside a number, not a comma
            raise ValueError(f"{name} must be drafts per depth separated by commas, such as '3,2,1', got {x!r}")
        if not parts or not all(p.isdigit() and p.isascii() for p in parts):
            valid = "drafts per depth such as (3, 2, 1)" + (" or 'auto'" if auto else "")
            raise ValueError(f"{name} must be {valid}, got {x!r}")
        x = int(parts[0]) if "," not in typed else tuple(int(p) for p in parts)  # "3": k at every depth
    if isinstance(x, (tuple, list)):
        if not 1 <= len(x) <= MAX_GAMMA:
            raise ValueError(f"{name} must have 1..{MAX_GAMMA} depths, got {len(x)}")
        widths = tuple(integer(w, f"{name}[{i}]", lo=1, hi=MAX_TREE_WIDTH) for i, w in enumerate(x))
        nodes, level = 0, 1
        for w in widths:
            level *= w
            nodes += level
            if nodes > MAX_TREE_NODES:
                raise ValueError(f"{name} {widths} has more than {MAX_TREE_NODES} nodes: the target reads them at once")
        return widths
    return integer(x, name, lo=1, hi=MAX_TREE_WIDTH)


def tree_with_gamma(
    tree, gamma, gamma_given: bool = True, names: tuple[str, str] = ("tree", "gamma"), nodes: bool = True
) -> None:
    """A checked tree shape and γ, checked together: γ caps the tree's depth, so a fixed shape (3, 2, 1) takes a γ
    of at most its depth (a larger cap caps nothing: refused), and k at every depth (an int) to γ depths must stay
    within MAX_TREE_NODES nodes (`nodes=False`: not checked, for a trie, whose nodes are not k^depth draws).
    `gamma_given`: False when γ is the default depth (said in the error).

    >>> tree_with_gamma((3, 2, 1), 2), tree_with_gamma(3, 4), tree_with_gamma(16, "auto")
    (None, None, None)
    >>> tree_with_gamma(16, 2)
    Traceback (most recent call last):
    ...
    ValueError: tree 16 (16 drafts per node) to depth 2 (gamma 2) is 272 nodes, more than 256: the target reads them at once; give a smaller tree or gamma
    """
    tree_name, gamma_name = names
    if not isinstance(gamma, int) or isinstance(gamma, bool) or tree is None or tree == AUTO:
        return
    depth = f"{gamma_name} {gamma}" if gamma_given else f"the default depth {gamma}"
    if isinstance(tree, tuple) and gamma > len(tree):
        shape = ",".join(map(str, tree))
        raise ValueError(
            f"{gamma_name} {gamma} caps the tree's depth, and the tree {shape} has depth {len(tree)}: a cap above it "
            f"caps nothing; give {gamma_name} 0..{len(tree)} or leave it out"
        )
    if isinstance(tree, int) and nodes:
        count = sum(tree**d for d in range(1, gamma + 1)) if tree > 1 else gamma
        if count > MAX_TREE_NODES:
            raise ValueError(
                f"{tree_name} {tree} ({tree} drafts per node) to depth {gamma} ({depth}) is {count} nodes, more than "
                f"{MAX_TREE_NODES}: the target reads them at once; give a smaller {tree_name} or {gamma_name}"
            )
