"""What `tree="auto"` (`specviz.lm.tree_auto`) reads and fits: the family of shapes it prices, which child the walk
accepted where it stood, and the shrunk least-squares lines of its cost model.

>>> tree_family(3, max_nodes=64)
((2,), (3,), (2, 2), (3, 2), (3, 3))
>>> line = cost_line([(1, 1.2, 4), (3, 1.4, 4)], prior_slope=0.0, ridge=0.0)   # (x0, y0, slope)
>>> [round(v, 3) for v in line], round(line_at(line, 5, 4.0, None), 3), round(line_at(line, 5, 4.0, (2.0, 4)), 3)
([2.0, 1.3, 0.1], 1.6, 1.8)
"""

from __future__ import annotations

__all__ = ["cost_line", "first_accepted", "line_at", "tree_family"]


def tree_family(max_width: int = 4, max_nodes: int = 64) -> tuple:
    """The heads a tree may start with: (k,) and (k, k') for 2 <= k' <= k <= max_width, at most max_nodes nodes."""
    ones = tuple((k,) for k in range(2, max_width + 1) if k <= max_nodes)
    return ones + tuple((k, j) for k in range(2, max_width + 1) for j in range(2, k + 1) if k + k * j <= max_nodes)


def first_accepted(tree) -> list:
    """[(depth, w, j)] for each node where the walk of a `TreeStep` stood with w >= 1 children: j the child
    index accepted first, None when all were rejected.

    >>> from specviz.lm.results import TreeStep
    >>> t = TreeStep((3, 1), [5, 6, 7, 8, 9, 4], [-1, -1, -1, 0, 1, 2], [0, 1, -1, -1, 0, -1], [1], [0.1] * 6, [0.1] * 6)
    >>> first_accepted(t)       # the second root child accepted, then its one child rejected
    [(0, 3, 1), (1, 1, None)]
    """
    children, out, node = {}, [], -1
    for i, p in enumerate(tree.parents):
        children.setdefault(p, []).append(i)
    for d in range(len(tree.path) + 1):
        if not children.get(node):
            break
        nxt = tree.path[d] if d < len(tree.path) else None
        out.append((d, len(children[node]), None if nxt is None else children[node].index(nxt)))
        node = nxt
    return out


def cost_line(pts: list, prior_slope: float, ridge: float) -> tuple:
    """(x0, y0, slope): the weighted least-squares line through [(x, y, weight)], its slope >= 0 and pulled towards
    `prior_slope` as if by `ridge` more weight·spread² (a few noisy shapes must not tilt it far)."""
    n = sum(w for *_, w in pts)
    x0, y0 = sum(w * x for x, _, w in pts) / n, sum(w * y for _, y, w in pts) / n
    sxy, den = sum(w * (x - x0) * (y - y0) for x, y, w in pts), sum(w * (x - x0) ** 2 for x, _, w in pts) + ridge
    return x0, y0, max((sxy + ridge * prior_slope) / den if den > 0 else prior_slope, 0.0)


def line_at(line: tuple, x: float, shrink: float, own: tuple | None) -> float:
    """The line at x, shrunk towards a shape's own (median, samples) when it has them."""
    fit = line[1] + line[2] * (x - line[0])
    return fit if own is None else (own[1] * own[0] + shrink * fit) / (own[1] + shrink)
