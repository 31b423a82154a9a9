"""load_pair(device_map=...): models split by accelerate give the same tokens as models on one device.

A CPU has one device, so these tests cannot put layers on two GPUs; they run every code path a
split model takes (accelerate's dispatch hooks, offloaded weights on "meta", the device a split
model reads its ids on and returns its logits to) and check the output token for token against
the same checkpoint loaded without a map, under the same seeds.
"""

from types import SimpleNamespace

import numpy as np
import pytest
import torch
from lm_fixtures import spy_host_reads, tiny_checkpoint, tiny_llama_checkpoint

from specviz.lm import HFModel, autoregressive_generate, load_pair, speculative_generate
from specviz.lm.engine.models import main_device
from specviz.lm.load.devices import check_device_map, describe_device_map

GPT2_MAP = {
    "transformer.wte": "cpu",
    "transformer.wpe": "cpu",
    "transformer.drop": "cpu",
    "transformer.h.0": "cpu",
    "transformer.h.1": "cpu",
    "transformer.ln_f": "cpu",
    "lm_head": "cpu",
}
LLAMA_MAP = {
    "model.embed_tokens": "cpu",
    "model.layers.0": "cpu",
    "model.layers.1": "cpu",
    "model.norm": "cpu",
    "model.rotary_emb": "cpu",
    "lm_head": "cpu",
}


@pytest.fixture(scope="module")
def ckpts(tmp_path_factory):
    root = tmp_path_factory.mktemp("dm")
    return {
        "gpt2": tiny_checkpoint(root / "gpt2", layers=2, seed=0, init_std=0.3),
        "gpt2_draft": tiny_checkpoint(root / "gpt2_draft", layers=2, seed=0, init_std=0.3, perturb=0.3),
        "llama": tiny_llama_checkpoint(root / "llama", seed=5, init_std=0.3),
        "llama_draft": tiny_llama_checkpoint(root / "llama_draft", seed=5, init_std=0.3, perturb=0.3),
        "root": root,
    }


def runs(pair, prompt="To be, or", n=24):
    """Token ids and step outcomes of a speculative and an autoregressive run with fixed seeds."""
    spec = speculative_generate(pair, prompt, n, gamma=3, seed=11)
    ar = autoregressive_generate(pair, prompt, n, seed=12)
    return spec.new_ids, [(s.drafted, s.accepted, s.token) for s in spec.steps], ar.new_ids


def same_runs(a, b):
    for x, y, what in zip(a, b, ("speculative tokens", "verify steps", "autoregressive tokens")):
        assert x == y, f"{what} differ with a device map: {x} vs {y}"


@pytest.mark.slow  # a second or more on 2 cores (measured 2026-12-07)
@pytest.mark.parametrize(
    ("target", "draft", "t_map", "d_map"),
    [
        ("gpt2", "gpt2_draft", GPT2_MAP, None),
        ("llama", "llama_draft", LLAMA_MAP, None),
        ("llama", "gpt2", LLAMA_MAP, GPT2_MAP),
    ],
)
def test_a_per_layer_map_gives_the_same_tokens(ckpts, target, draft, t_map, d_map):
    plain = load_pair(str(ckpts[target]), str(ckpts[draft]), device="cpu", progress=False)
    mapped = load_pair(str(ckpts[target]), str(ckpts[draft]), device_map=t_map, draft_device_map=d_map, progress=False)
    assert mapped.device == "cpu" and mapped.target.device == torch.device("cpu")
    same_runs(runs(plain), runs(mapped))
    # the weights really are the same checkpoint: the first forward agrees exactly
    ids = plain.encode("abc", chat=False)
    assert torch.equal(plain.target.full_logits(ids), mapped.target.full_logits(ids))


@pytest.mark.slow  # a second or more on 2 cores (measured 2026-12-07)
def test_auto_map_and_strategies_load_and_match(ckpts):
    plain = load_pair(str(ckpts["gpt2"]), str(ckpts["gpt2_draft"]), device="cpu", progress=False)
    for strategy in ("auto", "sequential"):
        lines = []
        mapped = load_pair(str(ckpts["gpt2"]), str(ckpts["gpt2_draft"]), device_map=strategy, progress=lines.append)
        same_runs(runs(plain), runs(mapped))
        assert any("loaded in" in line for line in lines)


def dispatched(folder, device_map):
    """A checkpoint dispatched by accelerate with hooks on every block (as on a machine with several GPUs)."""
    from accelerate import dispatch_model
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(str(folder))
    return dispatch_model(model, device_map=device_map, force_hooks=True)


def from_pretrained(folder, **kw):
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(str(folder), **kw)


@pytest.mark.slow  # a second or more on 2 cores (measured 2026-12-07)
def test_a_model_with_dispatch_hooks_decodes_like_the_plain_one(ckpts, monkeypatch):
    hooked = dispatched(ckpts["llama"], LLAMA_MAP)
    assert hasattr(hooked, "_hf_hook") and hooked._hf_hook.io_same_device
    plain = load_pair(str(ckpts["llama"]), str(ckpts["llama_draft"]), device="cpu", progress=False)
    mapped = load_pair(hooked, dispatched(ckpts["llama_draft"], LLAMA_MAP), tokenizer=plain.tokenizer, progress=False)
    assert mapped.target.device == torch.device("cpu")
    same_runs(runs(plain), runs(mapped))
    # the hooks add no host read: still exactly one per verify step
    reads = spy_host_reads(monkeypatch)
    marks = []
    r = speculative_generate(mapped, [1, 2, 3], 30, 4, seed=0, on_step=lambda rec: marks.append(len(reads)))
    monkeypatch.undo()
    assert len(r.new_ids) == 30
    per_step = np.diff([0] + marks)
    assert (per_step == 1).all(), f"host reads per verify step with hooks: {per_step.tolist()}"


@pytest.mark.slow  # a second or more on 2 cores (measured 2026-12-07)
def test_offloaded_weights_on_meta_do_not_fool_the_device(ckpts, tmp_path):
    """Weights offloaded to disk sit on "meta" until used; ids must still go to the execution device."""
    disk_map = dict(LLAMA_MAP, **{"model.embed_tokens": "disk", "model.layers.1": "disk"})
    offloaded = from_pretrained(ckpts["llama"], device_map=disk_map, offload_folder=str(tmp_path / "offload"))
    assert next(offloaded.parameters()).device.type == "meta"
    assert main_device(offloaded) == torch.device("cpu")
    plain = load_pair(str(ckpts["llama"]), str(ckpts["llama_draft"]), device="cpu", progress=False)
    mapped = load_pair(offloaded, plain.draft, tokenizer=plain.tokenizer, progress=False)
    same_runs(runs(plain), runs(mapped))


def test_main_device_reads_the_hook_then_the_map_then_the_weights():
    lin = torch.nn.Linear(2, 2)
    assert main_device(lin) == torch.device("cpu")
    hooked = SimpleNamespace(_hf_hook=SimpleNamespace(execution_device=1), parameters=lambda: iter(()))
    assert main_device(hooked) == torch.device("cuda", 1)  # accelerate names GPUs by index
    mapped = SimpleNamespace(hf_device_map={"embed": "cpu", "layers.0": 2, "layers.1": 3}, parameters=lambda: iter(()))
    assert main_device(mapped) == torch.device("cuda", 2)  # offloaded "cpu" modules run on the first GPU
    assert main_device(SimpleNamespace(parameters=lambda: iter(()))) == torch.device("cpu")


def test_describe_device_map_counts_modules_per_device(ckpts):
    model = from_pretrained(ckpts["gpt2"], device_map=GPT2_MAP)
    text = describe_device_map(model)
    assert text == "cpu" or text == f"device map: cpu ({len(GPT2_MAP)} modules)"  # 5.x drops a one-device map
    fake = SimpleNamespace(hf_device_map={"a": 0, "b": 0, "c": 1}, parameters=lambda: iter(()))
    assert describe_device_map(fake) == "device map: cuda:0 (2 modules), cuda:1 (1 module)"


def test_bad_device_maps_get_clear_errors(ckpts):
    t, d = str(ckpts["gpt2"]), str(ckpts["gpt2_draft"])
    with pytest.raises(ValueError, match="not both"):
        load_pair(t, d, device="cpu", device_map="auto")
    with pytest.raises(ValueError, match="unknown device_map 'everywhere'"):
        load_pair(t, d, device_map="everywhere")
    with pytest.raises(ValueError, match="offloading to disk is not supported"):
        check_device_map({"lm_head": "disk"})
    with pytest.raises(TypeError, match="dict"):
        check_device_map(["cpu"])
    with pytest.raises(TypeError, match="module names"):
        check_device_map({0: "cpu"})
    with pytest.raises(ValueError, match="static_cache and compile"):
        load_pair(t, d, device_map="auto", static_cache=True)
    with pytest.raises(ValueError, match="draft_device_map"):
        load_pair(t, d, device_map="auto", draft_device_map="nowhere")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="no CUDA GPU"):
            check_device_map({"": 0})


def test_hf_model_keeps_logits_on_its_one_device(ckpts):
    model = HFModel(dispatched(ckpts["gpt2"], GPT2_MAP), "hooked")
    s = model.session([1, 2, 3])
    rows = s.feed([4, 5])
    assert rows.device == model.device == s.next_logits.device


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_auto_map_on_a_gpu_matches_the_plain_gpu_load(ckpts):
    plain = load_pair(str(ckpts["llama"]), str(ckpts["llama_draft"]), device="cuda", progress=False)
    mapped = load_pair(str(ckpts["llama"]), str(ckpts["llama_draft"]), device_map="auto", progress=False)
    assert mapped.target.device.type == "cuda"
    a = speculative_generate(plain, "To be", 24, gamma=3, temperature=0, seed=0).new_ids
    b = speculative_generate(mapped, "To be", 24, gamma=3, temperature=0, seed=0).new_ids
    assert a == b


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two CUDA GPUs")
def test_a_target_split_over_two_gpus_decodes_like_one_gpu(ckpts):
    split = dict(LLAMA_MAP, **{"model.embed_tokens": 0, "model.layers.0": 0, "model.layers.1": 1, "model.norm": 1})
    split.update({"model.rotary_emb": 0, "lm_head": 1})
    plain = load_pair(str(ckpts["llama"]), str(ckpts["llama_draft"]), device="cuda:0", progress=False)
    mapped = load_pair(
        str(ckpts["llama"]), str(ckpts["llama_draft"]), device_map=split, draft_device_map={"": 1}, progress=False
    )
    assert mapped.target.device == torch.device("cuda", 0) and mapped.draft.device == torch.device("cuda", 1)
    s = mapped.target.session([1, 2, 3])
    assert s.next_logits.device == mapped.target.device  # logits brought back from the lm_head's GPU
    a = speculative_generate(plain, "To be", 24, gamma=3, temperature=0, seed=0).new_ids
    b = speculative_generate(mapped, "To be", 24, gamma=3, temperature=0, seed=0).new_ids
    assert a == b
