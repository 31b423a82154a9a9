"""load_pair: local folders, clear errors, shared-vocabulary checks, and no network for local paths."""

import socket

import pytest

from lm_fixtures import tiny_checkpoint
from specviz.lm import load_pair, speculative_generate


@pytest.fixture(scope="module")
def ckpts(tmp_path_factory):
    root = tmp_path_factory.mktemp("ckpt")
    return {
        "target": tiny_checkpoint(root / "target", layers=2, seed=0),
        "draft": tiny_checkpoint(root / "draft", seed=1),
        "other_tok": tiny_checkpoint(root / "other_tok", seed=2, tokenizer_shift=1),
        "padded": tiny_checkpoint(root / "padded", seed=3, vocab_size=320),
        "root": root,
    }


@pytest.fixture
def no_network(monkeypatch):
    def refuse(*a, **k):
        raise AssertionError("network access attempted")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def test_local_pair_loads_without_network(ckpts, no_network):
    pair = load_pair(str(ckpts["target"]), str(ckpts["draft"]), device="cpu")
    assert pair.device == "cpu" and pair.target.vocab_size == 257
    assert "vocabulary 257" in pair.describe()
    r = speculative_generate(pair, "To be", 8, 2, seed=0)
    assert len(r.new_ids) == 8


def test_padded_embedding_tables_compare_only_the_shared_vocabulary(ckpts):
    pair = load_pair(str(ckpts["target"]), str(ckpts["padded"]), device="cpu")
    assert pair.target.vocab_size == pair.draft.vocab_size == 257
    r = speculative_generate(pair, "abc", 6, 3, seed=1)
    assert max(r.new_ids) < 257


def test_different_tokenizers_are_refused_with_both_names(ckpts):
    with pytest.raises(ValueError, match=r"different tokenizers") as e:
        load_pair(str(ckpts["target"]), str(ckpts["other_tok"]), device="cpu")
    assert "target" in str(e.value) and "other_tok" in str(e.value)


def test_unknown_paths_and_non_checkpoints(ckpts, no_network):
    with pytest.raises(ValueError, match="no such file or folder"):
        load_pair("./does/not/exist", str(ckpts["draft"]))
    with pytest.raises(ValueError, match="no config.json"):
        load_pair(str(ckpts["root"]), str(ckpts["draft"]))
    with pytest.raises(ValueError, match="GGUF file"):
        load_pair(str(ckpts["root"] / "missing.gguf"), str(ckpts["draft"]))


def test_device_selection():
    from specviz.lm import pick_device
    import torch

    assert pick_device("auto") == ("cuda" if torch.cuda.is_available() else "cpu")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="no CUDA"):
            pick_device("cuda")
