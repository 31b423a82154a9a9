"""load_pair: local folders, clear errors, shared-vocabulary checks, and no network for local paths."""

import shutil
import socket
import time

import pytest
import torch
from lm_fixtures import tiny_checkpoint

from specviz.lm import NGramModel, autoregressive_generate, load_pair, speculative_generate
from specviz.lm.drafts.prompt_lookup import PromptLookupModel
from specviz.lm.engine.pair import format_prompt
from specviz.lm.load.devices import parse_dtype, pick_device
from specviz.lm.load.hub import hf_progress_bars


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
    import torch

    from specviz.lm import pick_device

    assert pick_device("auto") == ("cuda" if torch.cuda.is_available() else "cpu")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="no CUDA"):
            pick_device("cuda")


# ------------------------------------------------------------------------------ issue 8: load_pair's surface


def _copy(src, dst):
    shutil.copytree(src, dst)
    return dst


@pytest.fixture
def no_weights(monkeypatch):
    """Any attempt to read weights fails the test: errors must come first."""
    from transformers import AutoModelForCausalLM

    def refuse(*a, **k):
        raise AssertionError("weights were loaded before the error was raised")

    monkeypatch.setattr(AutoModelForCausalLM, "from_pretrained", refuse)


def test_hub_id_without_network_fails_fast_with_a_clear_message(ckpts, no_network, monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    t0 = time.perf_counter()
    with pytest.raises(ValueError) as e:
        load_pair("specviz-tests/no-such-model", str(ckpts["draft"]), device="cpu")
    took = time.perf_counter() - t0
    assert took < 5, f"took {took:.1f} s"
    msg = str(e.value)
    assert "target model 'specviz-tests/no-such-model'" in msg
    assert "not in the local Hugging Face cache" in msg and "unreachable" in msg


def test_hub_id_with_hf_hub_offline_fails_without_probing(ckpts, no_network, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match="draft model 'specviz-tests/no-such-draft'.*HF_HUB_OFFLINE"):
        load_pair(str(ckpts["target"]), "specviz-tests/no-such-draft", device="cpu")
    assert time.perf_counter() - t0 < 5


def test_corrupt_safetensors_is_named_with_its_role_before_any_weights_load(ckpts, tmp_path, no_weights):
    bad = _copy(ckpts["draft"], tmp_path / "bad")
    (bad / "model.safetensors").write_bytes(b"this is not a safetensors file" * 4)
    with pytest.raises(ValueError) as e:
        load_pair(str(ckpts["target"]), str(bad), device="cpu")
    assert f"draft model: {bad / 'model.safetensors'} is not a valid safetensors file" in str(e.value)


def test_missing_tokenizer_files_are_named_not_called_different_tokenizers(ckpts, tmp_path, no_weights):
    bare = _copy(ckpts["draft"], tmp_path / "bare")
    for f in bare.glob("*token*"):
        f.unlink()
    for target, draft, role in ((str(ckpts["target"]), str(bare), "draft"), (str(bare), str(ckpts["draft"]), "target")):
        with pytest.raises(ValueError) as e:
            load_pair(target, draft, device="cpu")
        assert f"{role} model: no tokenizer files in {bare}" in str(e.value)
        assert "different tokenizers" not in str(e.value)


def test_unknown_device_or_dtype_is_refused_before_any_weights_load(ckpts, no_weights):
    for bad in ("gpu", "cuda:x", "meta"):
        with pytest.raises(ValueError, match="unknown device"):
            load_pair(str(ckpts["target"]), str(ckpts["draft"]), device=bad)
    with pytest.raises(TypeError, match="device must be"):
        load_pair(str(ckpts["target"]), str(ckpts["draft"]), device=3.5)
    for bad in ("float8", "int8", torch.int64):
        with pytest.raises(ValueError, match="dtype"):
            load_pair(str(ckpts["target"]), str(ckpts["draft"]), device="cpu", dtype=bad)
    assert pick_device(torch.device("cpu")) == "cpu"
    assert parse_dtype("bf16") is torch.bfloat16 and parse_dtype(None) is None


def test_unfetched_catalog_model_names_the_fetch_command_and_never_downloads(ckpts, tmp_path, monkeypatch, no_network):
    monkeypatch.setenv("SPECVIZ_CACHE", str(tmp_path / "empty-cache"))
    t0 = time.perf_counter()
    with pytest.raises(ValueError) as e:
        load_pair("smollm2-135m", "prompt-lookup", device="cpu")
    assert time.perf_counter() - t0 < 2
    assert "specviz models fetch smollm2-135m" in str(e.value) and "make models" in str(e.value)
    assert not (tmp_path / "empty-cache").exists()


def test_prompt_lookup_is_a_draft_not_a_target(ckpts):
    with pytest.raises(ValueError, match="prompt-lookup is a draft"):
        load_pair("prompt-lookup", str(ckpts["draft"]))


def test_loaded_models_and_a_tokenizer_make_a_pair(ckpts):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    t = AutoModelForCausalLM.from_pretrained(str(ckpts["target"]))
    d = AutoModelForCausalLM.from_pretrained(str(ckpts["draft"]))
    tok = AutoTokenizer.from_pretrained(str(ckpts["target"]))
    pair = load_pair(target=t, draft=d, tokenizer=tok)
    assert pair.tokenizer is tok and pair.device == "cpu" and pair.target.model is t
    assert pair.target.vocab_size == pair.draft.vocab_size == 257
    by_path = load_pair(str(ckpts["target"]), str(ckpts["draft"]), device="cpu")
    a = speculative_generate(pair, "To be", 10, 3, temperature=0)
    b = speculative_generate(by_path, "To be", 10, 3, temperature=0)
    assert a.new_ids == b.new_ids

    pl = load_pair(target=t, draft="prompt-lookup", tokenizer=tok)
    assert isinstance(pl.draft, PromptLookupModel) and pl.draft.vocab_size == 257
    r = speculative_generate(pl, "abcabcabc", 12, 4, temperature=0)
    assert r.new_ids == autoregressive_generate(pl, "abcabcabc", 12, temperature=0).new_ids

    toy = load_pair(target=NGramModel.random(6, seed=0), draft="prompt-lookup")
    assert toy.tokenizer is None and toy.draft.vocab_size == 6
    with pytest.raises(TypeError, match="not a Hugging Face causal LM"):
        load_pair(target=torch.nn.Linear(2, 2), draft="prompt-lookup")


def test_progress_is_reported_per_stage_and_hf_bars_are_left_as_they_were(ckpts):
    from transformers.utils import logging as hf_logging

    hf_logging.enable_progress_bar()
    messages, bars_during = [], []

    def progress(message):
        messages.append(message)
        bars_during.append(hf_logging.is_progress_bar_enabled())

    load_pair(str(ckpts["target"]), str(ckpts["draft"]), device="cpu", progress=progress)
    assert any(m.startswith("target: loading") for m in messages)
    assert any(m.startswith("draft: loading") for m in messages)
    assert any("loaded in" in m and "M params" in m for m in messages)
    assert all(bars_during) and hf_logging.is_progress_bar_enabled()  # no global switch-off

    bars_during.clear()
    load_pair(str(ckpts["target"]), str(ckpts["draft"]), device="cpu", progress=progress, hf_progress=False)
    assert bars_during and not any(bars_during)  # hidden during the call only
    assert hf_logging.is_progress_bar_enabled()

    hf_logging.disable_progress_bar()
    try:
        with hf_progress_bars(True):
            assert hf_logging.is_progress_bar_enabled()
        assert not hf_logging.is_progress_bar_enabled()
    finally:
        hf_logging.enable_progress_bar()


def _bos_tokenizer():
    """The byte tokenizer, with a post-processor that puts <|endoftext|> (id 256) first, as Llama's adds BOS."""
    from lm_fixtures import byte_tokenizer
    from tokenizers import processors
    from transformers import PreTrainedTokenizerFast

    backend = byte_tokenizer().backend_tokenizer
    backend.post_processor = processors.TemplateProcessing(
        single="<|endoftext|> $A", special_tokens=[("<|endoftext|>", 256)]
    )
    return PreTrainedTokenizerFast(tokenizer_object=backend, bos_token="<|endoftext|>", eos_token="<|endoftext|>")


def test_format_prompt_bos_as_the_tokenizer_says_and_never_twice():
    from lm_fixtures import byte_tokenizer

    plain = byte_tokenizer()
    assert format_prompt(plain, "ab") == [64, 65]  # this tokenizer adds no BOS
    bos = _bos_tokenizer()
    assert bos.encode("ab") == [256, 64, 65]
    assert format_prompt(bos, "ab") == [256, 64, 65]
    assert format_prompt(bos, "<|endoftext|>ab") == [256, 64, 65]  # already there: not doubled
    with pytest.raises(ValueError, match="no chat template"):
        format_prompt(plain, "ab", chat=True)
    with pytest.raises(ValueError, match="empty"):
        format_prompt(plain, "")


def test_format_prompt_applies_the_chat_template():
    from lm_fixtures import byte_tokenizer

    tok = byte_tokenizer()
    tok.chat_template = (
        "{{ bos_token }}{% for m in messages %}[{{ m['role'] }}]{{ m['content'] }}{% endfor %}"
        "{% if add_generation_prompt %}[assistant]{% endif %}"
    )
    ids = format_prompt(tok, "hi")
    assert tok.decode(ids) == "<|endoftext|>[user]hi[assistant]" and ids.count(256) == 1
    assert format_prompt(tok, "hi", chat=False) == tok.encode("hi", add_special_tokens=False)
    pair = load_pair(target=NGramModel.random(257, seed=0), draft="prompt-lookup", tokenizer=tok)
    assert pair.chat_template == tok.chat_template and pair.encode("hi") == ids


def test_a_cached_hub_id_loads_without_network(ckpts, tmp_path, no_network, monkeypatch):
    from huggingface_hub import constants

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = tmp_path / "hub" / "models--specviz-tests--cached"
    shutil.copytree(ckpts["target"], repo / "snapshots" / commit)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    import transformers.utils.hub as tf_hub

    if hasattr(tf_hub, "TRANSFORMERS_CACHE"):  # transformers 4.x reads its default cache folder from here
        monkeypatch.setattr(tf_hub, "TRANSFORMERS_CACHE", str(tmp_path / "hub"))
    t0 = time.perf_counter()
    pair = load_pair("specviz-tests/cached", "prompt-lookup", device="cpu")
    assert time.perf_counter() - t0 < 5
    assert pair.target.name == "specviz-tests/cached" and pair.tokenizer is not None
    assert pair.target.vocab_size == 257


# ------------------------------------------------------------------ a catalogue GGUF converted once (lm/load/converted.py)


def test_a_converted_copy_is_used_only_while_nothing_in_it_changed(ckpts, tmp_path):
    """save() writes a folder load_pair can read; usable() refuses it once the GGUF or any file in it changes."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from specviz.lm.load import converted

    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"GGUF stand-in")
    model = AutoModelForCausalLM.from_pretrained(ckpts["target"])
    tok = AutoTokenizer.from_pretrained(ckpts["target"])
    assert converted.usable(gguf) is None
    said = []
    folder = converted.save(model, tok, gguf, said.append)
    assert folder == converted.folder_for(gguf) and converted.usable(gguf) == folder, said
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")], "a temporary folder was left behind"
    pair = load_pair(str(folder), "prompt-lookup", device="cpu")
    loaded = pair.target.model.state_dict()
    assert all(torch.equal(loaded[k], v) for k, v in model.state_dict().items())
    # a file cut short, then a GGUF replaced: each makes the copy unusable
    weights = folder / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:-8])
    assert converted.usable(gguf) is None
    assert converted.save(model, tok, gguf) == folder and converted.usable(gguf) == folder  # written again
    gguf.write_bytes(b"another GGUF")
    assert converted.usable(gguf) is None
    (folder / converted.MARKER).unlink()
    assert converted.usable(gguf) is None


@pytest.mark.slow  # a second or more on 2 cores (measured 2026-12-07)
def test_a_read_only_cache_still_loads(ckpts, tmp_path, monkeypatch):
    """No converted copy can be written: save() says so and returns None instead of failing the load."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from specviz.lm.load import converted

    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"GGUF stand-in")

    def refuse(*a, **k):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(converted.tempfile, "mkdtemp", refuse)
    said = []
    model = AutoModelForCausalLM.from_pretrained(ckpts["target"])
    tok = AutoTokenizer.from_pretrained(ckpts["target"])
    assert converted.save(model, tok, gguf, said.append) is None
    assert "could not save a converted copy" in said[0] and converted.usable(gguf) is None
