"""The bundled offline pair: loads without network, greedy equality, exact two-token distribution.

The goodness-of-fit check is a chi-square test at ALPHA = 1e-4 with a fixed seed (false-alarm
probability 1e-4 over random seeds; deterministic with the fixed seed).
"""

import numpy as np
import pytest
import torch
from stats_helpers import chi_square_pvalue

from specviz.lm import BUNDLED_DIR, autoregressive_generate, load_pair, speculative_generate

ALPHA = 1e-4
PROMPTS = [
    "ROMEO:\n",
    "JULIET:\nO ",
    "HAMLET:\nTo be, or not to be",
    "KING LEAR:\nBlow, winds",
    "MACBETH:\nIs this a",
    "First Citizen:\n",
    "Enter ",
    "Exeunt",
    "O, ",
    "What is",
    "My lord, ",
    "The king",
    "I do ",
    "Good morrow",
    "PORTIA:\nThe quality of mercy",
    "Now is the winter",
    "Friends, Romans",
    "All the world",
    "If music be",
    "Shall I compare thee",
    "Thou art",
    "Speak, ",
]


@pytest.fixture(scope="module")
def pair():
    assert (BUNDLED_DIR / "target" / "config.json").exists(), "the bundled pair must ship with the package"
    return load_pair(device="cpu")


def test_bundled_pair_is_small_and_offline(pair, monkeypatch):
    import socket

    size = sum(f.stat().st_size for f in BUNDLED_DIR.rglob("*") if f.is_file())
    assert size <= 20e6, f"bundled pair is {size / 1e6:.1f} MB"
    monkeypatch.setattr(socket.socket, "connect", lambda *a, **k: (_ for _ in ()).throw(AssertionError("network")))
    load_pair(device="cpu")
    t = sum(p.numel() for p in pair.target.model.parameters())
    d = sum(p.numel() for p in pair.draft.model.parameters())
    assert d * 3 < t, "the draft must be much cheaper than the target"


@pytest.mark.parametrize("gamma", [1, 2, 4, 8])
def test_greedy_speculative_equals_greedy_autoregressive(pair, gamma):
    assert len(PROMPTS) >= 20
    for prompt in PROMPTS:
        spec = speculative_generate(pair, prompt, 16, gamma, temperature=0)
        ar = autoregressive_generate(pair, prompt, 16, temperature=0)
        assert spec.new_ids == ar.new_ids, (prompt, gamma)


def exact_two_tokens(model, ids):
    """(V*V,) P(t1, t2) after `ids` under plain sampling from `model`, by enumeration."""
    V = model.vocab_size
    first = torch.softmax(model.full_logits(ids)[-1].double(), -1).numpy()  # (V,)
    batch = torch.tensor([ids + [t] for t in range(V)])  # (V, len+1)
    with torch.inference_mode():
        logits = model.model(input_ids=batch).logits[:, -1, :V].double()  # (V, V)
    return (first[:, None] * torch.softmax(logits, -1).numpy()).ravel()


def pooled_pvalue(counts, probs):
    assert (probs * counts.sum() >= 5).sum() >= 5, "the test needs a spread-out distribution to have power"
    return chi_square_pvalue(counts, probs)


def test_first_two_tokens_match_exact_enumeration(pair):
    ids = pair.tokenizer.encode("ROMEO:\nI ", add_special_tokens=False)
    V = pair.target.vocab_size
    rng = np.random.default_rng(0)
    counts = np.zeros(V * V, dtype=np.int64)
    for _ in range(1200):
        r = speculative_generate(pair, ids, 2, 3, seed=rng)
        counts[r.new_ids[0] * V + r.new_ids[1]] += 1
    assert pooled_pvalue(counts, exact_two_tokens(pair.target, ids)) >= ALPHA
    # the same sample is clearly not the draft's distribution: the test has power at this n
    assert pooled_pvalue(counts, exact_two_tokens(pair.draft, ids)) < ALPHA


def test_prompt_at_context_limit_is_a_clear_error(pair):
    limit = pair.target.max_positions
    with pytest.raises(ValueError, match=f"context of {limit} positions"):
        speculative_generate(pair, [65] * limit, 4)


def test_empty_prompt_is_a_clear_error(pair):
    with pytest.raises(ValueError, match="empty"):
        speculative_generate(pair, "", 4)


def test_card_facts_agree_with_the_loaded_weights_and_the_card(pair):
    """The facts notebook 11 shows come from metrics.json; the weights and MODEL_CARD.md must say the same."""
    from specviz.lm.load.card import card_facts

    facts = card_facts()
    for role in ("target", "draft"):
        model = getattr(pair, role)
        assert getattr(facts, role)["params"] == sum(t.numel() for t in model.model.parameters()), role
        assert getattr(facts, role)["n_layer"] == model.model.config.n_layer, role
        assert model.vocab_size == facts.vocab_size == facts.byte_tokens + len(facts.special_tokens)
    card = (BUNDLED_DIR / "MODEL_CARD.md").read_text(encoding="utf-8")
    for number in (facts.target["params"], facts.draft["params"], facts.train_chars):
        assert f"{number:,}" in card, number
    assert facts.source in card and facts.shared_tokenizer and facts.byte_level


def test_card_markdown_is_in_the_page_language_and_refuses_two_tokenizers(tmp_path):
    import re
    import shutil

    from specviz.lm.load.card import card_markdown

    en, zh = card_markdown("en"), card_markdown("zh")
    assert en.count("\n- ") == zh.count("\n- ") == 2 and "2,768,064" in en and "2,768,064" in zh
    assert not re.search(r"\b(works|tokens in all|parameters)\b", zh), zh  # no English sentence in the Chinese list
    assert len(en) < 1000 and len(zh) < 1000  # three facts, not the 7.7 KB card
    planted = tmp_path / "pair"
    shutil.copytree(BUNDLED_DIR, planted, ignore=shutil.ignore_patterns("*.safetensors"))
    (planted / "draft" / "tokenizer.json").write_text("{}", encoding="utf-8")
    with pytest.raises(ValueError, match="one byte-level tokenizer"):
        card_markdown("en", folder=planted)


def exact_two_token_steps(pair, ids):
    """(p1, p2, q1, q2): first-token laws (V,) and second-token laws given the first (V, V), target and draft."""
    V = pair.target.vocab_size
    out = []
    for model in (pair.target, pair.draft):
        first = torch.softmax(model.full_logits(ids)[-1].double(), -1).numpy()
        batch = torch.tensor([ids + [t] for t in range(V)])
        with torch.inference_mode():
            second = torch.softmax(model.model(input_ids=batch).logits[:, -1, :V].double(), -1).numpy()
        out.append((first, second))
    return out[0][0], out[0][1], out[1][0], out[1][1]


def test_power_of_the_two_token_check_is_stated(pair):
    """What the 1,200-run check above can and cannot see, computed (notebook 11 §2 and its CLAIMS row quote it).

    A lenient verifier (l = 0.9, lossy on purpose, notebook 9) verifies both tokens: the first follows the
    lenient output law of (p1, q1), the second that of (p2, q2) given the first (its draft is drawn from q given
    the first token whether the first was kept or repaired). The power of the pooled chi-square at ALPHA = 1e-4
    against that law, by the non-central chi-square, is about 1 %: the check rejects gross errors only.
    """
    from scipy import stats

    import specviz as sv

    ids = pair.tokenizer.encode("ROMEO:\nI ", add_special_tokens=False)
    p1, p2, q1, q2 = exact_two_token_steps(pair, ids)
    V = p1.size
    exact = (p1[:, None] * p2).ravel()
    lenient = (
        sv.output_dist(p1, q1, "lenient", l=0.9)[:, None]
        * np.stack([sv.output_dist(p2[t], q2[t], "lenient", l=0.9) for t in range(V)])
    ).ravel()
    tv = 0.5 * np.abs(lenient - exact).sum()
    n, keep = 1200, exact > 0
    small = exact[keep] * n < 5  # pooled as chi_square_pvalue pools them

    def pool(v):
        return np.append(v[keep][~small], v[keep][small].sum())

    e0, e1 = pool(exact), pool(lenient)
    df = e0.size - 1
    power = stats.ncx2.sf(stats.chi2.isf(ALPHA, df), df, n * ((e1 - e0) ** 2 / e0).sum())
    assert 0.04 < tv < 0.05 and power < 0.02, (tv, power)
