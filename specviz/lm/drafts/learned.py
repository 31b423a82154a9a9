"""The learned draft: an EAGLE-style head (`feature_head`) that reads the target's features and drafts from its own q.

`load_pair("smollm2-135m", draft="smollm2-head")` builds it from the target: the head's weights
are bundled (`specviz/lm/bundled/smollm2-head`, trained here by scripts/train_head.py; the record
is training.json beside them), the embedding, final norm and LM head rows are the target's.

How a step goes (positions from 0; f_j is the target's feature at position j, normed):
- the head's cache holds entries j = 0..c-1, each (f_j, x_{j+1}), all from the target's true
  features. Before drafting after a text of length L it reads the entries c..L-2 the last step
  kept (one forward); the last one's output predicts f_{L-1}, whose q is the law of the first
  draft (at the first step f_{L-1} is known, from the prompt, and used as it is);
- **chain**: each draft is drawn from q, then the entry (predicted feature, draft) predicts the
  next feature; the engine verifies with min(1, p/q) and the residual, as for any model draft;
- **tree**: each node's children are the head's k most likely tokens (distinct), level by level,
  read with a tree mask; q is `ONE_HOT`, so the engine verifies with the rule for deterministic
  children (accept x with R(x), else drop x from R and renormalise), which is exact for any set
  of distinct children, where min(1, R/q) is exact only for children drawn i.i.d. from q;
- the drafted entries (made from the head's own predicted features) stay in its cache until the
  verify; `rollback` then crops them (back to c), and the kept tokens are read again at the next
  step with the target's true features (`accept` gives them), as EAGLE does.

>>> from specviz.lm.drafts import BUILT
>>> "smollm2-head" in BUILT
True
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from types import SimpleNamespace

import torch

from ...samplers.torch_sampling import categorical_torch
from ..engine.logits import probs_on_device
from ..engine.models import LanguageModel
from .base import ONE_HOT, Draft, Proposal, chain_parents
from .feature_head import FeatureHead, rms_norm

__all__ = ["HEADS", "HEAD_DIR", "HeadDraft", "HeadModel", "build_head", "load_head"]

HEAD_DIR = Path(__file__).resolve().parents[1] / "bundled" / "smollm2-head"
"""The bundled head for SmolLM2-135M-Instruct: head.safetensors (fp16) and training.json."""

HEADS = {"smollm2-135m": "smollm2-head"}
"""Catalogue model -> the name of the learned head bundled for it (`load_pair(model, draft=name)`)."""


def load_head(folder: Path = HEAD_DIR) -> FeatureHead:
    """The head saved in `folder` by scripts/train_head.py (float32, eval mode)."""
    from safetensors.torch import load

    folder = Path(folder)
    weights, record = folder / "head.safetensors", folder / "training.json"
    for f in (weights, record):
        if not f.is_file():
            raise FileNotFoundError(
                f"the learned draft head has no {f.name} in {folder}: restore the folder (git checkout, or reinstall "
                "specviz) or train one (make head)"
            )
    meta = json.loads(record.read_text())
    data = weights.read_bytes()  # read once: hashed, then parsed
    digest = hashlib.sha256(data).hexdigest()
    if digest != meta.get("sha256"):
        raise ValueError(
            f"{weights} is damaged: its sha256 is {digest[:12]}…, training.json records {str(meta.get('sha256'))[:12]}…; "
            "restore it (git checkout -- specviz/lm/bundled/smollm2-head, or reinstall specviz) or retrain it (make head)"
        )
    state = load(data)
    cfg = meta["config"]
    head = FeatureHead(vocab_ids=state.pop("vocab_ids").long(), **cfg)
    head.load_state_dict({k: v.float() for k, v in state.items()}, strict=False)
    return head.eval()


class HeadModel(LanguageModel):
    """A head over a loaded Hugging Face target: its sessions are the prompt; `HeadDraft` does the drafting."""

    draft_kind = "head"

    def __init__(self, target, head: FeatureHead, vocab_size: int, name: str = "smollm2-head"):
        hf = target.model
        inner = getattr(hf, "model", hf)
        H = hf.config.hidden_size
        if H != head.hidden:
            raise ValueError(
                f"the {name} draft reads features of width {head.hidden} (SmolLM2-135M's); "
                f"the target {target.name} has hidden size {H}"
            )
        if int(head.vocab_ids.max()) >= vocab_size:
            raise ValueError(
                f"the {name} draft's vocabulary reaches token {int(head.vocab_ids.max())}; the pair has {vocab_size}"
            )
        self.device = target.device
        self.vocab_size = vocab_size
        self.max_positions = target.max_positions
        self.name = name
        self.head = head.to(self.device)
        self.emb = inner.embed_tokens.weight.detach()  # (V, H), the target's
        norm = inner.norm
        self.norm_w = norm.weight.detach().float()
        self.eps = float(getattr(norm, "variance_epsilon", getattr(norm, "eps", head.eps)))
        lm = hf.get_output_embeddings().weight.detach()
        self.lm = lm[head.vocab_ids.to(lm.device)].float().to(self.device)  # (V', H)
        self.ids = head.vocab_ids.to(self.device)  # (V',)
        self.kept_vocabulary = self.ids  # what the live view's close-up names: q = 0 outside these

    def session(self, prompt_ids, read_features: bool = False):
        return SimpleNamespace(model=self, prompt=list(prompt_ids))

    def norm(self, f: torch.Tensor) -> torch.Tensor:
        """The target's final norm of features f (..., H), in float32 on the head's device."""
        return rms_norm(f.to(self.device, torch.float32), self.norm_w, self.eps)

    def logits(self, feat: torch.Tensor) -> torch.Tensor:
        """(n, V) logits of q from normed features (n, H): the LM head's rows, -inf outside the vocabulary."""
        out = torch.full((feat.shape[0], self.vocab_size), float("-inf"), device=self.device)
        return out.index_copy_(1, self.ids, feat @ self.lm.T)

    def embed(self, ids: torch.Tensor) -> torch.Tensor:
        return self.emb[ids.to(self.emb.device)].to(self.device, torch.float32)


class HeadDraft(Draft):
    """The learned head's side of a step (see the module doc): its cache of true entries, a chain or a tree."""

    features = True

    def __init__(self, session):
        super().__init__(session)
        self.m = session.model  # the HeadModel (its session is the model and the prompt)
        self.feats = None  # (m, H) the target's normed features so far, positions 0..m-1
        self.cache, self.c = None, 0  # the head's entries 0..c-1, read from true features
        self._last = None  # (1, H) the last true entry's prediction: the first draft's feature when f_{L-1} is unknown

    def start(self, features) -> None:
        self.feats = self.m.norm(features)

    def accept(self, proposal, path, features) -> None:
        if features is not None and len(features):
            self.feats = torch.cat([self.feats, self.m.norm(features)])

    def rollback(self, proposal, path, engine) -> None:
        if self.cache is not None:
            self.cache = tuple(t[:, :, : self.c] for t in self.cache)

    def _root(self, seq: list) -> torch.Tensor:
        """(1, H): the normed feature whose q is the first draft's law, after reading the entries kept since."""
        L, m = len(seq), self.m
        if self.c < L - 1:
            ids = torch.tensor(seq[self.c + 1 : L], device=m.device)
            out, self.cache = m.head(
                m.embed(ids)[None], self.feats[self.c : L - 1][None], torch.arange(self.c, L - 1), self.cache
            )
            self.c = L - 1
            self._last = m.norm(out[0, -1:])
        if len(self.feats) >= L:  # the target's own feature at the last token (the first step: from the prompt)
            return self.feats[L - 1 : L]
        return self._last

    def propose(self, seq, s, g: int, widths, gen) -> Proposal:
        m, L = self.m, len(seq)
        if g == 0:
            return Proposal(torch.zeros(0, dtype=torch.long, device=m.device), [], ONE_HOT, [], start=L)
        root = self._root(seq)
        if widths is not None and max(widths, default=1) > 1:
            return self._tree(root, L, widths)
        feat, cache, drafts, q_rows, rows = root, self.cache, [], [], []
        for j in range(g):
            logits = m.logits(feat)  # (1, V)
            q = probs_on_device(logits, s)
            x = categorical_torch(q, gen)  # (1,)
            drafts.append(x)
            q_rows.append(q)
            rows.append(logits[0])
            if j < g - 1:
                out, cache = m.head(m.embed(x)[None], feat[None], torch.tensor([L - 1 + j]), cache)
                feat = m.norm(out[0])
        self.cache = cache  # the drafted entries too, until `rollback` crops them
        n = len(drafts)
        return Proposal(
            torch.cat(drafts), chain_parents(n), q_rows, rows, False, (1,) * n, tuple((j, 1) for j in range(n)), L
        )

    def _tree(self, root: torch.Tensor, L: int, widths) -> Proposal:
        """Each node's k most likely tokens as its children, level by level (a tree mask over the drafted entries)."""
        m, cache = self.m, self.cache
        c = self.c
        feats, tokens, parents, levels, shape = root, [], [], [], []
        above = [-1]  # nodes of the level above
        anc = {-1: []}  # node -> the drafted entries it may attend to (its ancestors' and its own)
        n_entries = 0
        for d, k in enumerate(widths):
            k = min(k, len(m.ids))
            ids = m.logits(feats).topk(k, dim=-1).indices  # (len(above), k) distinct per node
            level_parents = [p for p in above for _ in range(k)]
            first = len(parents)
            levels.append((first, len(level_parents)))
            parents += level_parents
            tokens.append(ids.reshape(-1))
            shape.append(k)
            nodes = list(range(first, len(parents)))
            if d < len(widths) - 1:  # read the level: each node's entry (its parent's feature, its token)
                n = len(nodes)
                mask = torch.zeros(n, c + n_entries + n, dtype=torch.bool, device=m.device)
                mask[:, :c] = True
                for i, node in enumerate(nodes):
                    par = parents[node]
                    anc[node] = anc[par] + [n_entries + i]
                    mask[i, [c + e for e in anc[node]]] = True
                parent_feats = feats.repeat_interleave(k, dim=0)  # (n, H)
                pos = torch.full((n,), L - 1 + d)
                out, cache = m.head(m.embed(ids.reshape(-1))[None], parent_feats[None], pos, cache, mask)
                feats = m.norm(out[0])
                n_entries += n
            above = nodes
        self.cache = cache  # the drafted entries too, until `rollback` crops them
        return Proposal(torch.cat(tokens), parents, ONE_HOT, [], True, tuple(shape), tuple(levels), L)


def build_head(target, vocab_size: int) -> HeadModel:
    """The bundled SmolLM2 head over a loaded target (`Built.build`)."""
    if not hasattr(target, "model") or not hasattr(target.model, "config"):
        raise ValueError(
            f"the smollm2-head draft reads a Hugging Face target's features; {getattr(target, 'name', target)!r} is not one"
        )
    return HeadModel(target, load_head(), vocab_size)
