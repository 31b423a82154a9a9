"""γ-step theory (Leviathan et al. 2023, §3): tokens per verify step and wall-time speedup.

With per-token acceptance α (assumed i.i.d.) and γ drafted tokens, one verify step
emits between 1 and γ + 1 tokens; `simulate_accepted_lengths` draws such steps, and
`accepted_run` counts the drafts a step keeps (the γ-step chains of `specviz.samplers.chain` too).

>>> round(expected_tokens(0.8, 4), 6)      # (1 - 0.8**5) / (1 - 0.8)
3.3616
>>> round(speedup(0.8, 4, c=0.1), 4)       # 3.3616 / (4 * 0.1 + 1)
2.4011
>>> simulate_accepted_lengths(1.0, 3, 2).tolist()   # α = 1: every draft kept
[3, 3]
"""

from __future__ import annotations

import numpy as np

from ..foundation.checks import gamma_setting, integer, real


def _check_gamma(gamma: object) -> int:
    return gamma_setting(gamma, "gamma (number of drafted tokens)")


def _check_alpha(alpha: object) -> float:
    return real(alpha, "alpha (acceptance rate)", lo=0, hi=1)


def _check_cost(c: object) -> float:
    return real(c, "c (draft/target cost ratio)", lo=0)


def expected_tokens(alpha: float, gamma: int) -> float:
    """E[tokens per verify step] = (1 - α^(γ+1)) / (1 - α); γ + 1 at α = 1."""
    alpha, gamma = _check_alpha(alpha), _check_gamma(gamma)
    if alpha == 1:
        return gamma + 1.0
    return (1 - alpha ** (gamma + 1)) / (1 - alpha)


def speedup(alpha: float, gamma: int, c: float) -> float:
    """Expected wall-time speedup expected_tokens / (γ c + 1), c = draft/target step cost."""
    c = _check_cost(c)
    return expected_tokens(alpha, gamma) / (_check_gamma(gamma) * c + 1)


def best_gamma(alpha: float, c: float, max_gamma: int = 64) -> int:
    """The γ in 0..max_gamma that maximises speedup(α, γ, c) (γ = 0 means: don't speculate)."""
    alpha, c = _check_alpha(alpha), _check_cost(c)
    gammas = np.arange(gamma_setting(max_gamma, "max_gamma") + 1)
    values = [speedup(alpha, int(g), c) for g in gammas]
    return int(gammas[int(np.argmax(values))])


def accepted_length_dist(alpha: float, gamma: int) -> np.ndarray:
    """(γ+1,) P(k drafts accepted in one step), k = 0..γ: α^k (1-α) for k < γ, α^γ for k = γ.

    >>> accepted_length_dist(0.5, 2)
    array([0.5 , 0.25, 0.25])
    """
    alpha, gamma = _check_alpha(alpha), _check_gamma(gamma)
    k = np.arange(gamma + 1)
    out = alpha**k * (1 - alpha)
    out[gamma] = alpha**gamma
    return out


def accepted_run(ok: np.ndarray) -> np.ndarray:
    """(n,) drafts kept per verify step: the leading run of True in each row of ok (n, γ), each draft's verdict.

    >>> accepted_run(np.array([[True, False, True], [True, True, True], [False, True, True]])).tolist()
    [1, 3, 0]
    """
    return np.where(ok.all(axis=1), ok.shape[1], np.argmin(ok, axis=1))


def simulate_accepted_lengths(alpha, gamma, n, seed=0) -> np.ndarray:
    """(n,) accepted drafts per verify step when each draft is accepted i.i.d. with prob α (numpy, seeded)."""
    rng = np.random.default_rng(seed)
    alpha = _check_alpha(alpha)
    gamma = gamma_setting(gamma, "gamma (number of drafted tokens)", lo=1)
    n = integer(n, "n (number of verify steps)", lo=1)
    return accepted_run(rng.random((n, gamma)) < alpha)


def cost_model_speedup(
    alpha: float, gamma: int, draft_step_s: float, verify_step_s: float, target_step_s: float
) -> float:
    """Predicted speedup from measured times: tokens/step * target_step / (γ draft + verify)."""
    draft_step_s = real(draft_step_s, "draft_step_s", lo=0)
    verify_step_s = real(verify_step_s, "verify_step_s", lo=0, lo_open=True)
    target_step_s = real(target_step_s, "target_step_s", lo=0, lo_open=True)
    return expected_tokens(alpha, gamma) * target_step_s / (_check_gamma(gamma) * draft_step_s + verify_step_s)
