"""Tiny random Hugging Face checkpoints written to a temp folder (no network, no training)."""

from pathlib import Path


def byte_tokenizer(shift: int = 0):
    """A byte-level PreTrainedTokenizerFast with 256 byte tokens (+ <|endoftext|>).

    `shift` rotates the id assignment, giving a tokenizer of the same size but a different vocabulary.
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    alphabet = pre_tokenizers.ByteLevel.alphabet()
    alphabet = sorted(alphabet)
    vocab = {ch: (i + shift) % 256 for i, ch in enumerate(alphabet)}
    vocab["<|endoftext|>"] = 256
    tk = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    tk.decoder = decoders.ByteLevel()
    return PreTrainedTokenizerFast(tokenizer_object=tk, eos_token="<|endoftext|>", bos_token="<|endoftext|>")


def seeded_weights(model, seed, std, perturb=0.0):
    """Overwrite every parameter from a seeded generator (the same weights on every transformers version).

    Matrices and biases get N(0, std), norm scales N(1, std); `perturb` > 0 then adds N(0, perturb * std)
    drawn with another seed, making a near copy (a draft that often agrees with its target).
    """
    import torch

    gen = torch.Generator().manual_seed(seed)
    noise = torch.Generator().manual_seed(seed + 10_000)
    with torch.no_grad():
        for name, param in sorted(model.named_parameters()):
            is_scale = param.ndim == 1 and name.endswith("weight")
            param.copy_(torch.randn(param.shape, generator=gen) * std + is_scale)
            if perturb:
                param.add_(torch.randn(param.shape, generator=noise) * perturb * std)
    return model


def tiny_checkpoint(
    folder: Path,
    layers=1,
    width=32,
    vocab_size=257,
    seed=0,
    tokenizer_shift=0,
    positions=128,
    init_std=None,
    perturb=0.0,
):
    """Save a random GPT-2 and a byte tokenizer into `folder`; return the folder.

    With `init_std` the weights come from `seeded_weights` (version-independent), else from transformers' init.
    """
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(seed)
    cfg = GPT2Config(
        n_layer=layers,
        n_embd=width,
        n_head=2,
        vocab_size=vocab_size,
        n_positions=positions,
        bos_token_id=256,
        eos_token_id=256,
    )
    model = GPT2LMHeadModel(cfg)
    if init_std is not None:
        seeded_weights(model, seed, init_std, perturb)
    folder = Path(folder)
    model.save_pretrained(folder)
    byte_tokenizer(tokenizer_shift).save_pretrained(folder)
    return folder


def tiny_llama_checkpoint(
    folder: Path,
    layers=2,
    width=32,
    heads=4,
    kv_heads=2,
    vocab_size=257,
    seed=0,
    positions=128,
    init_std=0.02,
    perturb=0.0,
):
    """Save a random Llama (grouped-query attention, RoPE) and a byte tokenizer into `folder`; return the folder."""
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(
        num_hidden_layers=layers,
        hidden_size=width,
        intermediate_size=2 * width,
        num_attention_heads=heads,
        num_key_value_heads=kv_heads,
        vocab_size=vocab_size,
        max_position_embeddings=positions,
        bos_token_id=256,
        eos_token_id=256,
        tie_word_embeddings=False,
    )
    model = seeded_weights(LlamaForCausalLM(cfg), seed, init_std, perturb)
    folder = Path(folder)
    model.save_pretrained(folder)
    byte_tokenizer().save_pretrained(folder)
    return folder


HOST_READS = ("item", "tolist", "numpy", "__int__", "__bool__", "__float__", "__index__", "cpu")


def spy_host_reads(monkeypatch) -> list:
    """Record the name of every Tensor method call that copies to the host (a GPU sync); returns the log."""
    import torch

    reads = []
    for name in HOST_READS:
        orig = getattr(torch.Tensor, name)

        def spy(self, *a, _orig=orig, _name=name, **k):
            reads.append(_name)
            return _orig(self, *a, **k)

        monkeypatch.setattr(torch.Tensor, name, spy)
    return reads
