"""`specviz run`: speculative and plain decoding on one draft/target pair, and the statistics they give.

The arguments become one `specviz.lm.engine.settings.GenerationSettings` (checked once, each error naming
its field: γ and the tree's shape are read there, from the text given, once per run); `specviz.lm.stats.run.compare`
runs both decoders and `format_report` prints them (or ``--json`` one object). Bad input exits 2 with one
line, a run that fails (NaN logits) exits 1. The defaults are the library's (`specviz.lm.engine.settings`).

>>> args = argparse.Namespace(max_new_tokens=8, gamma=None, tree=None, temperature=0.0, top_k=None,
...     top_p=None, seed=0, ignore_eos=True, no_chat=False)
>>> settings_from_args(args).stop_at_eos, settings_from_args(args).gamma
(False, 'auto')
>>> s = settings_from_args(argparse.Namespace(**{**vars(args), "tree": "3,2,1"}))
>>> s.tree, s.gamma
((3, 2, 1), 3)
>>> s = settings_from_args(argparse.Namespace(**{**vars(args), "tree": " Auto"}))
>>> s.tree, s.gamma
('auto', 'auto')
"""

from __future__ import annotations

import argparse
import sys

from ..lm.engine.settings import DEFAULT_GAMMA, DEFAULT_MAX_NEW_TOKENS, DEFAULT_TREE, DEFAULT_TREE_DEPTH, MAX_NEW_TOKENS
from .common import EXIT_USAGE, CliError, missing_extra, positive_int, whole_number

READ_AS_TEXT = ("gamma", "tree")
"""The options `GenerationSettings.from_text` reads from the command line's text (their one parse)."""
TRIE_DRAFTS = ("prompt-lookup",)
"""Drafts whose tree is a trie of earlier continuations (at most 8 runs, `specviz.lm.drafts.lookup_trie`), so
--tree k to γ depths is no k + ... + k^γ nodes: the node cap is checked when the trie is built."""


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
    run.add_argument(
        "--max-new-tokens",
        type=positive_int,
        default=DEFAULT_MAX_NEW_TOKENS,
        help=f"tokens to generate, 1..{MAX_NEW_TOKENS} (default %(default)s)",
    )
    run.add_argument(
        "--gamma",
        default=None,
        help="draft tokens per verify step: a whole number >= 0, or 'auto' (each step chooses from the measured "
        f"costs and acceptance; the default, {DEFAULT_GAMMA!r}, without --tree). With --tree it caps the tree's depth",
    )
    run.add_argument(
        "--tree",
        default=DEFAULT_TREE,
        help="draft a tree, verified in one target call: drafts per node at each depth (3,2,1), one number k "
        "(k drafts per node at every depth, up to γ), or 'auto' (each step's shape, a chain included, from the run's "
        f"measurements). Without --gamma the depth is the tree's (k: {DEFAULT_TREE_DEPTH} depths), not 'auto', so "
        "the shape is the one asked for; with --tree auto the depth is 'auto' too (default off: a chain)",
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
    """The run's `GenerationSettings` from `specviz run`'s arguments, γ and --tree read from their text (once).

    Without --gamma the settings' default applies: 'auto' for a chain or --tree auto, a tree's own depth
    otherwise. A ValueError or TypeError names the bad setting.
    """
    from ..foundation.checks import tree_with_gamma
    from ..lm.engine.settings import GenerationSettings  # torch-free

    settings = GenerationSettings.from_text(
        text=READ_AS_TEXT,
        max_new_tokens=args.max_new_tokens,
        gamma=args.gamma,
        temperature=args.temperature,
        top_k=args.top_k,
        top_p=args.top_p,
        seed=args.seed,
        stop_at_eos=not args.ignore_eos,
        chat=False if args.no_chat else "auto",
        tree=args.tree,
    )
    # the whole shape before anything loads: γ caps a fixed shape's depth; k to γ depths within the node cap
    # (a trie's nodes are earlier runs of the text, not k^depth draws: no cap to check before it is built)
    tree_with_gamma(
        settings.tree,
        settings.gamma,
        gamma_given=args.gamma is not None,
        names=("--tree", "--gamma"),
        nodes=getattr(args, "draft", None) not in TRIE_DRAFTS,
    )
    return settings


def option_error(err: Exception) -> CliError | None:
    """A bad --gamma or --tree as argparse says a bad option (`argument --gamma: ...`, exit 2); None for others."""
    message = str(err)
    for name in READ_AS_TEXT:
        if message.startswith(name) and message[len(name) : len(name) + 1] in (" ", "[", ":", ""):
            hint = " (give a whole number >= 0 or 'auto')" if name == "gamma" and "auto" not in message else ""
            return CliError(f"argument --{name}: {message}{hint}", status=EXIT_USAGE)
    return None


def cmd_run(args, extra=()) -> int:
    """`specviz run`: load the pair, compare, print (text or --json). Bad input exits 2 with one line."""
    import json

    try:
        from ..lm.load.loading import load_pair
        from ..lm.stats.run import compare
    except ImportError as e:  # the light install: no torch
        raise missing_extra(e) from None

    try:
        if extra:
            raise ValueError(f"unexpected arguments after --: {' '.join(extra)}")
        try:
            settings = settings_from_args(args)
        except (ValueError, TypeError) as e:  # a bad --gamma or --tree is a usage error, as argparse's are
            raise option_error(e) or e from None
        check_text(args.prompt, "--prompt")
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


def format_report(out: dict) -> str:
    """The dict from `compare` as a few readable lines."""

    def f(v, spec=".3f"):
        return "—" if v is None else format(v, spec)

    per_pos = ", ".join(f(v, ".2f") for v in out["per_position_acceptance"])
    tree = out.get("tree")
    shape = "" if tree is None else f", tree {tree if isinstance(tree, (int, str)) else ','.join(map(str, tree))}"
    lines = [
        f"target {out['target']}, draft {out['draft']}, on {out['device']}, γ={out['gamma']}{shape}, "
        f"temperature {out['temperature']}",
        f"finished: {out['finish_reason']} ({len(out['ids'])} tokens; plain decoding: {out['ar_finish_reason']}, "
        f"{len(out['ar_ids'])} tokens)",
        "",
        out["text"],
        "",
        f"speculative     {f(out['tokens_per_second'], '.1f')} tokens/s",
        f"plain decoding  {f(out['ar_tokens_per_second'], '.1f')} tokens/s",
        f"speed-up        {f(out['speedup'], '.2f')}x",
        f"acceptance rate {f(out['acceptance_rate'])} (accepted / drafted tokens)",
        f"mean acceptance length {f(out['mean_acceptance_length'], '.2f')} = 1 + accepted / drafts "
        f"({out['num_drafts']} drafts in {out['verify_steps']} verify steps)",
        f"per-position acceptance [{per_pos}]" + ("" if tree is None else " (per depth, along the accepted path)"),
        f"alpha           {f(out['alpha'])} (mean sum_x min(p, q) over verified positions)",
    ]
    if tree is not None:
        widths = out.get("tree_widths")
        used = ",".join(map(str, widths or ())) or ("no step drafted" if out["nodes_per_step"] is None else "varied")
        if tree == "auto":  # what each step ran, most used first
            used = ", ".join(f"{k} ×{n}" for k, n in list(out["tree_shapes"].items())[:6])
        lines += [
            f"draft tree      {used} (drafts per node at each depth; γ caps the depth)",
            f"nodes verified  {f(out['nodes_per_step'], '.1f')} per drafting step, in one target call",
            f"tokens per target call {f(out['tokens_per_call'], '.2f')} (generated / verify steps)",
        ]
    gs = out.get("gamma_per_step") or []
    if gs and len(set(gs)) > 1:
        lines.append(f"γ per step      mean {sum(gs) / len(gs):.2f}, from {min(gs)} to {max(gs)}")
    if "greedy_equal" in out:
        lines.append(f"greedy output identical to plain decoding: {'yes' if out['greedy_equal'] else 'NO'}")
    return "\n".join(lines)
