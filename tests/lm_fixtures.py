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


def tiny_checkpoint(folder: Path, layers=1, width=32, vocab_size=257, seed=0, tokenizer_shift=0, positions=128):
    """Save a random GPT-2 and a byte tokenizer into `folder`; return the folder."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(seed)
    cfg = GPT2Config(n_layer=layers, n_embd=width, n_head=2, vocab_size=vocab_size, n_positions=positions,
                     bos_token_id=256, eos_token_id=256)
    model = GPT2LMHeadModel(cfg)
    folder = Path(folder)
    model.save_pretrained(folder)
    byte_tokenizer(tokenizer_shift).save_pretrained(folder)
    return folder
