"""`specviz run`: speculative and plain decoding on one draft/target pair, and the statistics they give.

The arguments become one `specviz.lm.settings.GenerationSettings` (checked once, each error naming
its field); `specviz.lm.run.compare` runs both decoders and `format_report` prints them (or
``--json`` one object). Bad input exits 2 with one line, a run that fails (NaN logits) exits 1.

>>> args = argparse.Namespace(max_new_tokens=8, gamma=None, tree=None, temperature=0.0, top_k=None,
...     top_p=None, seed=0, ignore_eos=True, no_chat=False)
>>> settings_from_args(args).stop_at_eos, settings_from_args(args).gamma
(False, 'auto')
>>> s = settings_from_args(argparse.Namespace(**{**vars(args), "tree": tree_argument("3,2,1")}))
>>> s.tree, s.gamma
((3, 2, 1), 3)
>>> s = settings_from_args(argparse.Namespace(**{**vars(args), "tree": tree_argument(" Auto")}))
>>> s.tree, s.gamma
('auto', 'auto')
"""

from __future__ import annotations

import argparse
import sys

from ..checks import AUTO, gamma_setting, tree_setting
from .common import EXIT_USAGE, missing_extra, positive_int, whole_number

DEFAULT_TREE_DEPTH = 4
"""The depth of `--tree k` without --gamma (the library's default γ)."""


def gamma_argument(text: str) -> int | str:
    """`--gamma`: a whole number >= 0 or 'auto', read by the one γ parser (`specviz.checks.gamma_setting`)."""
    try:
        return gamma_setting(text, auto=True, text=True)
    except (TypeError, ValueError) as e:
        hint = "" if "auto" in str(e) else " (give a whole number >= 0 or 'auto')"
        raise argparse.ArgumentTypeError(f"{e}{hint}") from None


def tree_argument(text: str) -> tuple | int | str:
    """`--tree`: drafts per node at each depth ("3,2,1"), one number k (k at every depth), or 'auto' (each
    step's shape from the run's measurements), read by `specviz.checks.tree_setting`, the one reader of a tree shape."""
    try:
        widths = tree_setting(text, text=True)
        if widths == AUTO:
            return AUTO
        return tree_setting(widths[0]) if len(widths) == 1 and "," not in text else widths
    except (TypeError, ValueError) as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def add_parser(sub) -> None:
    """The `specviz run` sub-command on an argparse sub-parsers object."""
    run = sub.add_parser(
        "run",
        help="run speculative and plain decoding on a draft/target pair and print the statistics",
        description="Run speculative decoding and plain decoding on the same prompt and print tokens/s, the "
        "speed-up and vLLM's acceptance statistics. Targets and drafts: 'bundled' (the offline "
        "Shakespeare pair), 'smollm2-135m' (after `specviz models fetch smollm2-135m`), "
        "'prompt-lookup' (draft only), a checkpoint folder, a .gguf file or a hub id.",
    )
    run.add_argument("--target", default="bundled", help="target model (default %(default)s)")
    run.add_argument("--draft", default="bundled", help="draft model (default %(default)s)")
    run.add_argument("--prompt", default="ROMEO:\n", help="prompt text (default %(default)r)")
    run.add_argument("--max-new-tokens", type=positive_int, default=64, help="tokens to generate (default %(default)s)")
    run.add_argument(
        "--gamma",
        type=gamma_argument,
        default=None,
        help="draft tokens per verify step: a whole number >= 0, or 'auto' (each step chooses from the measured "
        "costs and acceptance; the default, without --tree). With --tree it caps the tree's depth",
    )
    run.add_argument(
        "--tree",
        type=tree_argument,
        default=None,
        help="draft a tree, verified in one target call: drafts per node at each depth (3,2,1), one number k "
        f"(k at every depth), or 'auto' (each step's shape, a chain included, from the run's measurements). Without "
        f"--gamma the depth is the tree's (k: {DEFAULT_TREE_DEPTH} depths), not 'auto', so the shape is the one "
        "asked for; with --tree auto the depth is 'auto' too (default off: a chain)",
    )
    run.add_argument(
        "--ignore-eos",
        action="store_true",
        help="keep generating past the end token, to --max-new-tokens (fixed-length timing, as vLLM's flag)",
    )
    run.add_argument("--temperature", type=float, default=1.0, help="0 = greedy (default %(default)s)")
    run.add_argument("--top-k", type=whole_number, default=None, help="top-k filtering (default off)")
    run.add_argument("--top-p", type=float, default=None, help="nucleus filtering (default off)")
    run.add_argument("--seed", type=whole_number, default=0, help="random seed (default %(default)s)")
    run.add_argument("--device", default="auto", help="cpu, cuda, cuda:N or auto (default %(default)s)")
    run.add_argument("--static-cache", action="store_true", help="preallocated KV caches (StaticCache)")
    run.add_argument(
        "--compile",
        action="store_true",
        help="static caches + torch.compile (CUDA graphs on a GPU; a long warm-up on a CPU)",
    )
    run.add_argument("--no-chat", action="store_true", help="do not apply the tokenizer's chat template")
    run.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    run.set_defaults(func=cmd_run)

    def one_line_error(message):  # a bad value is one line naming the option, exit 2 (no usage block)
        run.exit(EXIT_USAGE, f"specviz run: error: {message}\n")

    run.error = one_line_error


def check_text(text: str, what: str) -> None:
    """ValueError naming the first character of `text` that is not text (a lone surrogate, or bytes not UTF-8)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as err:
        char = err.object[err.start]
        if 0xDC80 <= ord(char) <= 0xDCFF:  # how Python keeps a byte of the command line that is not UTF-8
            raise ValueError(f"{what} is not UTF-8: byte 0x{ord(char) - 0xDC00:02x} at character {err.start}") from None
        raise ValueError(f"{what} holds a lone surrogate U+{ord(char):04X} at character {err.start}") from None


def settings_from_args(args: argparse.Namespace):
    """The run's `GenerationSettings` from `specviz run`'s arguments (ValueError naming a bad one)."""
    from ..lm.settings import GenerationSettings  # torch-free

    gamma = args.gamma
    if gamma is None:  # 'auto' for a chain or an auto tree; a tree's own depth, so that its shape is the one asked for
        tree = args.tree
        gamma = AUTO if tree in (None, AUTO) else len(tree) if isinstance(tree, tuple) else DEFAULT_TREE_DEPTH
    return GenerationSettings(
        max_new_tokens=args.max_new_tokens,
        gamma=gamma,
        temperature=args.temperature,
        top_k=args.top_k,
        top_p=args.top_p,
        seed=args.seed,
        stop_at_eos=not args.ignore_eos,
        chat=False if args.no_chat else "auto",
        tree=args.tree,
    )


def cmd_run(args, extra=()) -> int:
    """`specviz run`: load the pair, compare, print (text or --json). Bad input exits 2 with one line."""
    import json

    try:
        from ..lm.loading import load_pair
        from ..lm.run import compare, format_report
    except ImportError as e:  # the light install: no torch
        raise missing_extra(e) from None

    try:
        if extra:
            raise ValueError(f"unexpected arguments after --: {' '.join(extra)}")
        check_text(args.prompt, "--prompt")
        settings = settings_from_args(args)
        pair = load_pair(
            args.target, args.draft, device=args.device, static_cache=args.static_cache, compile=args.compile
        )
        out = compare(pair, args.prompt, settings=settings)
    except (ValueError, TypeError) as e:  # what the user asked for cannot be run
        print(f"specviz run: error: {e}", file=sys.stderr)
        return 2
    except RuntimeError as e:  # it ran and failed (e.g. a model produced NaN logits)
        print(f"specviz run: error: {e}", file=sys.stderr)
        return 1
    print(json.dumps(out, ensure_ascii=False) if args.json else format_report(out))
    return 0
