"""`specviz lab` and `specviz dashboard`: JupyterLab on the notebooks, Voila on the dashboard.

Both servers are started with ``sys.executable -m ...`` so the tools of the running environment
(the project's .venv) are used, and both replace this process (`exec_server`), so a signal sent to
``specviz`` reaches the server itself. Neither is started on a non-loopback address that would let
anyone in: the lab's login is judged by `specviz.cli.lab_guard`, and the dashboard, which has no
password, needs ``--allow-remote``.

>>> is_loopback("::1"), is_loopback("0.0.0.0"), url_host("::1")
(True, False, '[::1]')
"""

from __future__ import annotations

import argparse
import errno
import ipaddress
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from ..foundation.i18n import LANGUAGES, env_language
from .common import DASHBOARD_NOTEBOOK, CliError, existing_folder, find_notebooks_dir, port_number, require, shown
from .jupyter_args import (
    DEFAULT_DASHBOARD_PORT,
    DEFAULT_LAB_PORT,
    LAB_IP,
    LAB_PORT,
    LAB_RETRIES,
    LAB_TOKEN,
    LOOPBACK,
    VOILA_IP,
    VOILA_PORT,
    build_dashboard_command,
    build_lab_command,
    dashboard_settings,
    lab_settings,
    setting_port,
    trait_text,
)
from .lab_guard import lab_login_problem, lab_refusal, read_token_file


def is_loopback(host: str) -> bool:
    """Whether `host` is this machine only: localhost, 127.x.y.z, ::1 (with or without brackets)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def url_host(host: str) -> str:
    """`host` as a URL spells it: an IPv6 address in brackets."""
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def listen_problem(host: str, port: int) -> str | None:
    """Why a server could not listen on `host` `port` (taken, not allowed, no such address); None when it can."""
    from tornado.netutil import bind_sockets  # as Jupyter listens

    try:
        for sock in bind_sockets(port, "" if host == "*" else host):
            sock.close()
    except OSError as err:
        taken = " (another server uses it: give a free --port)" if err.errno == errno.EADDRINUSE else ""
        return f"{err.strerror or err}{taken}"
    return None


def exec_server(cmd: list[str], cwd: Path) -> int:
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


def cmd_lab(args: argparse.Namespace, extra: Sequence[str]) -> int:
    """`specviz lab`: JupyterLab on the notebooks; refuses an open server on a non-loopback address."""
    require("jupyterlab", "JupyterLab")
    notebooks = existing_folder(find_notebooks_dir(args.notebooks), "notebooks folder")
    settings, rest = lab_settings(notebooks, port=args.port, ip=args.ip, token=args.token, extra=extra)
    ip, port = trait_text(settings[LAB_IP]), setting_port(settings, LAB_PORT)
    if LAB_TOKEN not in settings and not os.environ.get("JUPYTER_TOKEN") and os.environ.get("JUPYTER_TOKEN_FILE"):
        read_token_file(os.environ["JUPYTER_TOKEN_FILE"])  # Jupyter reads it whole, so no device or pipe
    pinned = None
    guarded = not is_loopback(ip) and not args.allow_remote
    if guarded:
        problem = lab_login_problem(settings, rest, dict(os.environ))
        if problem:
            raise CliError(lab_refusal(ip, problem))
        if LAB_TOKEN not in settings and not any(os.environ.get(v) for v in ("JUPYTER_TOKEN", "JUPYTER_TOKEN_FILE")):
            # pinned on the command line, so no config file can empty it
            import secrets

            pinned = secrets.token_hex(24)
    moves = trait_text(settings[LAB_RETRIES]).strip() != "0"  # only when the pass-through allows it
    busy = None if moves else listen_problem(ip, port)
    if busy:
        raise CliError(f"cannot listen on {url_host(ip or '0.0.0.0')} port {port}: {busy}", status=1)
    token = args.token if pinned is None else pinned
    cmd = build_lab_command(notebooks, port=args.port, ip=args.ip, token=token, extra=extra, guarded=guarded)
    query = f"?token={pinned}" if pinned else ""
    print(f"specviz lab: JupyterLab on {shown(notebooks)}", flush=True)
    print(
        f"specviz lab: open http://{url_host(ip or '0.0.0.0')}:{port}/lab{query} "
        f"(Jupyter prints the link with its token below{', on another port if this one is taken' if moves else ''}; "
        "Ctrl+C to stop)",
        flush=True,
    )
    return exec_server(cmd, cwd=notebooks)


def cmd_dashboard(args: argparse.Namespace, extra: Sequence[str]) -> int:
    """`specviz dashboard`: Voila on dashboard.ipynb; refuses a non-loopback address without --allow-remote."""
    require("voila", "Voila")
    settings, _ = dashboard_settings(port=args.port, host=args.host, preheat=not args.no_preheat, extra=extra)
    host, port = trait_text(settings[VOILA_IP]), setting_port(settings, VOILA_PORT)
    if not is_loopback(host) and not args.allow_remote:
        raise CliError(
            f"refusing to serve the dashboard on non-loopback address {host!r}: Voila has no password, so anyone "
            f"who can reach this machine could run code in its kernel. To do it anyway: "
            f"specviz dashboard --host {host} --allow-remote"
        )
    notebooks = find_notebooks_dir(args.notebooks)
    notebook = notebooks / DASHBOARD_NOTEBOOK
    if not notebook.is_file():
        raise CliError(
            f"dashboard notebook not found: {shown(notebook)} (pass --notebooks PATH; `specviz lab` opens the "
            "other notebooks)"
        )
    moves = trait_text(settings.get("Voila.port_retries", "0")).strip() != "0"  # only when the pass-through allows it
    busy = None if moves else listen_problem(host, port)
    if busy:  # else Voila says "trying another port" and then fails, below a URL that serves nothing
        raise CliError(f"cannot listen on {url_host(host or '0.0.0.0')} port {port}: {busy}", status=1)
    cmd = build_dashboard_command(notebook, port=args.port, host=args.host, preheat=not args.no_preheat, extra=extra)
    if args.lang is not None:
        # Voila's kernels inherit this environment; specviz.foundation.i18n starts in $SPECVIZ_LANG.
        os.environ["SPECVIZ_LANG"] = args.lang
    listening = host not in ("", "*", "0.0.0.0", "::")
    lang = env_language(os.environ.get("SPECVIZ_LANG"))
    print(f"specviz dashboard: serving {shown(notebook)} (language: {lang})", flush=True)
    print("", flush=True)
    print(f"    Dashboard URL:  http://{url_host(host if listening else LOOPBACK)}:{port}/", flush=True)
    if not is_loopback(host):
        print(f"    (listening on {host or 'every address'}: reachable from other machines)", flush=True)
    print("", flush=True)
    print("specviz dashboard: the first page load takes a few seconds; Ctrl+C to stop.", flush=True)
    return exec_server(cmd, cwd=notebooks)


def add_parsers(sub) -> None:
    """The `specviz lab` and `specviz dashboard` sub-commands on an argparse sub-parsers object."""
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
    lab.add_argument(
        "--port",
        type=port_number,
        default=DEFAULT_LAB_PORT,
        help="port (default %(default)s; if taken: an error, not another)",
    )
    lab.add_argument("--ip", default=LOOPBACK, help="address to bind (default %(default)s)")
    lab.add_argument(
        "--token",
        default=None,
        help="access token (default: Jupyter makes one; on a non-loopback --ip specviz makes one and prints it)",
    )
    lab.add_argument(
        "--allow-remote",
        action="store_true",
        help="allow a non-loopback --ip with an empty or blank token and no password (no authentication at all); "
        "without it the guard judges the settings Jupyter ends with: arguments after --, $JUPYTER_TOKEN and its "
        "config files",
    )
    lab.set_defaults(func=cmd_lab)

    dash = sub.add_parser(
        "dashboard",
        parents=[common],
        help="serve the dashboard (notebooks/dashboard.ipynb) with Voila",
        description="Serve notebooks/dashboard.ipynb with Voila, on 127.0.0.1 by default.",
    )
    dash.add_argument("--port", type=port_number, default=DEFAULT_DASHBOARD_PORT, help="port (default %(default)s)")
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
