"""The one chi-square helper of the test suite (goodness of fit of counts against exact probabilities)."""

import numpy as np
from scipy import stats


def chi_square_pvalue(counts, probs, min_expected: float = 5.0) -> float:
    """p-value of integer `counts` against probabilities `probs` (same shape, normalised here).

    Cells expecting fewer than `min_expected` samples are pooled into one. A count in a cell
    of probability 0 is a certain failure: the p-value is then 0.

    >>> chi_square_pvalue([50, 50], [0.5, 0.5])
    1.0
    >>> chi_square_pvalue([1, 99], [0.0, 1.0])
    0.0
    """
    counts = np.asarray(counts, dtype=float).ravel()
    probs = np.asarray(probs, dtype=float).ravel()
    if counts[probs == 0].sum() > 0:
        return 0.0
    keep = probs > 0
    expected = probs[keep] / probs[keep].sum() * counts.sum()
    small = expected < min_expected
    c, e = counts[keep][~small], expected[~small]
    if small.any():
        c, e = np.append(c, counts[keep][small].sum()), np.append(e, expected[small].sum())
    return float(stats.chisquare(c, e).pvalue)
