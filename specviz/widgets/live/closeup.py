"""One generated token up close: its real p and q as a money diagram, the bridge back to the toy proof.

`token_closeup` finds the verify step that emitted a token and draws the target's p and
the draft's q at that position over their top tokens (plus "other"), recomputing both
exactly from the models when it can. Models may live on a GPU: their logits are copied to
the host (`.detach().to("cpu", float64)`) before any NumPy sees them.

>>> from specviz.lm import NGramModel, Pair, speculative_generate
>>> pair = Pair(NGramModel.random(6, seed=0), NGramModel.random(6, seed=1))
>>> r = speculative_generate(pair, [0], 20, 3, seed=0)
>>> sel = token_closeup(pair, r, 0)
>>> sel["exact"], sel["names"][-1], round(float(sel["p"].sum()), 12)
(True, 'other', 1.0)
"""

from __future__ import annotations

import html

import numpy as np
import torch

from ...exact.standardize import Sampling
from ...figures import position_money_diagram, position_money_patch, target_only_figure
from ...figures.position_money import distinct_labels, token_label, top_union, with_other
from ...figures.run_data import host_array, other_label
from ...foundation.i18n import t
from ...foundation.palette import text_colour
from ...lm.engine.logits import process_logits
from ...lm.stats.fates import FATE_COLORS, FATE_LABELS


def host_logits(logits) -> torch.Tensor:
    """A model's (V,) logits as a float64 tensor in host memory (they may live on a GPU)."""
    if not isinstance(logits, torch.Tensor):
        return torch.as_tensor(np.asarray(logits, dtype=np.float64))
    return logits.detach().to(device="cpu", dtype=torch.float64)


def exact_distributions(pair, prefix, sampling: Sampling):
    """(p, q): the target's and the draft's next-token distributions after `prefix`, as host float64 arrays.

    One fresh session of each model over the prefix, with the run's temperature / top-k / top-p.
    """
    p = process_logits(host_logits(pair.target.session(prefix).next_logits), sampling)
    q = process_logits(host_logits(pair.draft.session(prefix).next_logits), sampling)
    return host_array(p).reshape(-1), host_array(q).reshape(-1)


def kept_vocabulary(draft) -> np.ndarray | None:
    """The token ids a draft can propose when it keeps only some (the learned head's), else None."""
    kept = getattr(draft, "kept_vocabulary", None)
    return None if kept is None else host_array(kept).reshape(-1).astype(np.int64)


def outside_mass(draft, p_full) -> float | None:
    """p's mass on the tokens `draft` cannot propose (q = 0 there: all of it is in the residual), or None.

    >>> from types import SimpleNamespace
    >>> round(outside_mass(SimpleNamespace(kept_vocabulary=[0, 2]), np.array([0.5, 0.3, 0.2])), 12)
    0.3
    """
    kept = kept_vocabulary(draft)
    if kept is None or p_full is None:
        return None
    p = host_array(p_full).reshape(-1)
    return float(max(0.0, 1.0 - p[kept].sum()))


def step_of(result, i: int):
    """The verify-step record that emitted generated token i (ValueError when there is none)."""
    i = int(i)
    if not 0 <= i < len(result.new_ids):
        raise ValueError(t("live.token_outside", i=i, n=len(result.new_ids)))
    rec = next((s for s in result.steps if s.start <= i < s.start + s.n_emitted), None)
    if rec is None:
        raise ValueError(t("live.no_step_record", i=i))
    return rec


def default_token(steps, n_tokens: int) -> int | None:
    """The token worth showing first: the rejection whose draft was most confident (largest q), else #0."""
    if not n_tokens:
        return None
    rej = [
        (s.q_drafted[s.accepted], s.start + s.accepted)
        for s in steps
        if s.kind == "resampled" and s.start + s.accepted < n_tokens
    ]
    return max(rej)[1] if rej else 0


def _explain(fate, tok, drafted, token, pd, qd):
    """(subtitle, explanation) of a drafted position: why the draft was kept or replaced."""
    d, name = token_label(tok, drafted), token_label(tok, token)
    keep = min(1.0, pd / qd) if qd > 0 else 1.0
    kw = dict(d=d, name=name, qd=qd, pd=pd, keep=keep)
    if fate == "accepted":
        return t("live.accepted_sub", **kw), t("live.accepted_explain", **kw)
    return t("live.rejected_sub", **kw), t("live.rejected_explain", **kw)


def token_closeup(pair, result, i: int, temperature=1.0, top_k=None, top_p=None, exact: bool = True) -> dict:
    """Generated token i of a speculative run: its real p and q as a money diagram.

    The tokens shown are the union of the recorded top-8 lists of p and q at that position
    (plus the drafted and the emitted token), then "other" = 1 − Σ for each. With `exact`
    the values come from fresh forward passes of both models over the prefix with the run's
    sampling settings (the recorded lists only know their own tokens); if that fails, from
    the recorded lists. A bonus token (no draft at that position) gets a p-only figure.

    Returns a dict: figure, patch (`position_money_patch`, for `live_figure`), position,
    token, fate ("accepted", "resampled", "bonus", "target"), step, offset (draft position
    − 1), gamma, ids, names (with "other" last), p, q (None for a bonus token), top_p, top_q,
    alpha (exact Σ min(p, q) there, recorded), exact (p and q both recomputed), outside_mass (p's mass
    outside a draft's kept vocabulary, the learned head's, else None), title, subtitle, explanation (a
    sentence saying what happened, and for a head with a kept vocabulary the mass it cannot propose).
    """
    i = int(i)
    rec = step_of(result, i)
    j = i - rec.start
    tok = getattr(pair, "tokenizer", None)
    token = int(result.new_ids[i])
    fate = "accepted" if j < rec.accepted else rec.kind
    tp = rec.top_p[j]
    tq = rec.top_q[j] if j < len(rec.top_q) else []
    drafted = int(rec.drafted[j]) if j < rec.gamma else None
    p_full = q_full = None
    if exact:
        prefix = list(result.prompt_ids) + list(result.new_ids[:i])
        sampling = Sampling(temperature, top_k, top_p)
        try:
            p_full, q_full = exact_distributions(pair, prefix, sampling)
        except Exception:  # noqa: BLE001 - fall back to the recorded top lists (q: a draft with no fresh session)
            p_full = q_full = None
            try:
                p_full = host_array(
                    process_logits(host_logits(pair.target.session(prefix).next_logits), sampling)
                ).reshape(-1)
            except Exception:  # noqa: BLE001
                p_full = None
    name = token_label(tok, token)
    title = t("live.closeup_title", i=i, name=name, fate=FATE_LABELS[fate])
    if fate in ("bonus", "target") or not tq:
        ids, p_vec, _ = with_other(top_union(tp, [], [token]), p_full, None, tp, [])
        names = distinct_labels(tok, ids) + [other_label()]
        bonus = fate == "bonus"
        sub = t("live.bonus_sub") if bonus else t("live.target_sub")
        explain = t("live.bonus_explain") if bonus else t("live.target_explain")
        fig = target_only_figure(p_vec, names, title, sub)
        q_vec = None
    else:
        ids, p_vec, q_vec = with_other(top_union(tp, tq, [drafted, token]), p_full, q_full, tp, tq)
        names = distinct_labels(tok, ids) + [other_label()]
        sub, explain = _explain(fate, tok, drafted, token, rec.p_drafted[j], rec.q_drafted[j])
        fig = position_money_diagram(p_vec, q_vec, names, title, sub)
    alpha = rec.alphas[j] if (j < len(rec.alphas) and q_vec is not None) else None
    outside = outside_mass(pair.draft, p_full)
    if outside is not None and q_vec is not None:
        explain += " " + t("live.cut_vocabulary", mass=outside, n=len(kept_vocabulary(pair.draft)), V=len(p_full))
    patch = position_money_patch(p_vec, q_vec, names, title, sub)
    return dict(
        figure=fig,
        patch=patch,
        position=i,
        token=token,
        fate=fate,
        step=rec.index,
        offset=j,
        gamma=rec.gamma,
        ids=ids,
        names=names,
        p=p_vec,
        q=q_vec,
        top_p=tp,
        top_q=tq,
        alpha=alpha,
        exact=p_full is not None and (q_full is not None or q_vec is None),
        outside_mass=outside,
        title=title,
        subtitle=sub,
        explanation=explain,
    )


def closeup_info_html(sel: dict, tokenizer=None) -> str:
    """The sentence under the token slider: which step and position, the fate, the exact acceptance probability."""
    i, fate, alpha = sel["position"], sel["fate"], sel["alpha"]
    alpha_txt = t("live.closeup_alpha", alpha=alpha) if alpha is not None else ""
    note = "" if sel["exact"] else t("live.recorded_note")
    name = token_label(tokenizer, sel["token"])
    where = t(
        "live.closeup_info",
        i=i,
        name=html.escape(name),
        token=sel["token"],
        step=sel["step"],
        position=sel["offset"] + 1,
        gamma=sel["gamma"],
    )
    return (
        f"<div style='font-size:13px'>{where}"
        f" · <b style='color:{text_colour(FATE_COLORS[fate])}'>{html.escape(FATE_LABELS[fate])}</b>"
        f"{alpha_txt}{html.escape(note)}<br>{html.escape(sel['explanation'])}</div>"
    )


__all__ = ["closeup_info_html", "default_token", "exact_distributions", "host_logits", "step_of", "token_closeup"]
