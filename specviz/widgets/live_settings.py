"""The live view's settings: γ (a whole number or "auto"), the sampling ranges, and the engines' keyword arguments.

Plain checks (no widgets, no torch): each error names the setting and its whole range.

>>> gamma_setting("Auto"), gamma_setting(3)
('auto', 3)
>>> sampling_settings(0.8, 0, 1.0, 50, 1)
{'temperature': 0.8, 'top_k': None, 'top_p': None, 'max_new_tokens': 50, 'seed': 1, 'stop_at_eos': True}
"""

from __future__ import annotations

from ..checks import brief, flag, integer, real
from ..lm.adaptive import MAX_GAMMA
from ..standardize import Sampling

GAMMAS = tuple(range(1, 9))
"""The γ values of the live view's sweep."""

AUTO = "auto"
"""The γ setting that lets the engine choose each verify step's draft length."""

PLACEHOLDER_GAMMA = 4
"""How many draft positions the empty plots show before a γ-auto run has drafted anything."""


TEMPERATURE_MAX = 2.0
"""The highest temperature the live view offers (its slider's end)."""

TOP_P_MIN = 0.01
"""The smallest top-p the live view offers (its slider's start; 1 = off)."""

TOP_K_MAX = 10_000_000
"""The largest top-k the live view takes (0 = off)."""

MAX_NEW_TOKENS = 4096
"""The most new tokens one live run may ask for (a pair's context may allow fewer)."""

SEED_MAX = 2**63 - 1
"""The largest seed the engines take."""


def gamma_setting(value):
    """γ as the engine takes it: "auto" (any case) or a whole number in 0..MAX_GAMMA; errors name gamma and the range."""
    if isinstance(value, str) and value.strip().lower() == AUTO:
        return AUTO
    valid = f'"auto" or a whole number in 0..{MAX_GAMMA}'
    if isinstance(value, (str, bytes)):
        raise ValueError(f"gamma must be {valid}, got {value!r}")
    try:
        return integer(value, "gamma", lo=0, hi=MAX_GAMMA)
    except (TypeError, ValueError) as e:
        raise type(e)(f"{e} (gamma: {valid})") from None


def in_range(check, x, name: str, lo, hi, note: str = ""):
    """check(x, name, lo=lo, hi=hi) (`specviz.checks.real` or `integer`); its error also states the whole range."""
    try:
        return check(x, name, lo=lo, hi=hi)
    except (TypeError, ValueError) as e:
        raise type(e)(f"{e} (valid: {brief(lo)} to {brief(hi)}{note})") from None


def sampling_settings(temperature, top_k, top_p, max_new_tokens, seed, stop_at_eos: bool = True) -> dict:
    """The engines' keyword arguments from the controls (top-k 0 and top-p 1 mean off), checked.

    `stop_at_eos`: end the run at the end token (an instruct model's end of turn).
    """
    temperature, top_k, top_p, max_new_tokens, seed = checked_settings(temperature, top_k, top_p, max_new_tokens, seed)
    s = dict(
        temperature=temperature,
        top_k=top_k or None,
        top_p=top_p if top_p < 1 else None,
        max_new_tokens=max_new_tokens,
        seed=seed,
        stop_at_eos=flag(stop_at_eos, "stop_at_eos"),
    )
    Sampling(s["temperature"], s["top_k"], s["top_p"])  # ValueError with a clear message
    return s


def checked_settings(temperature, top_k, top_p, max_new_tokens, seed) -> tuple:
    """(temperature, top_k, top_p, max_new_tokens, seed) as plain numbers in the live view's ranges (None: off)."""
    return (
        in_range(real, temperature, "temperature", 0.0, TEMPERATURE_MAX, "; 0 = greedy"),
        0 if top_k is None else in_range(integer, top_k, "top_k", 0, TOP_K_MAX, "; 0 = off"),
        1.0 if top_p is None else in_range(real, top_p, "top_p", TOP_P_MIN, 1.0, "; 1 = off"),
        in_range(integer, max_new_tokens, "max_new_tokens", 1, MAX_NEW_TOKENS),
        in_range(integer, seed, "seed", 0, SEED_MAX),
    )


__all__ = [
    "AUTO",
    "GAMMAS",
    "MAX_NEW_TOKENS",
    "PLACEHOLDER_GAMMA",
    "SEED_MAX",
    "TEMPERATURE_MAX",
    "TOP_K_MAX",
    "TOP_P_MIN",
    "checked_settings",
    "gamma_setting",
    "in_range",
    "sampling_settings",
]
