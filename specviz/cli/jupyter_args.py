"""The command lines of `jupyter lab` and `voila`: how they read them (traitlets), and the ones specviz builds.

Jupyter reads ``--Class.trait=value`` or ``--Class.trait value`` (one dash or two), ``--alias=value`` /
``--alias value``, bare flags, and after a lone ``--`` only file names; it refuses a setting given
twice. So specviz merges its own options with what the user passes after ``--`` (the last value
wins, whatever its spelling), passes each setting it manages once, and the lab guard judges that
final command line.

>>> settings, rest = read_traitlets_args(["--port", "9000", "--ServerApp.ip=::1", "--debug"], LAB_ALIASES, LAB_FLAGS)
>>> [(key, value) for key, value, _ in settings], rest
([('ServerApp.port', '9000'), ('ServerApp.ip', '::1')], ['--debug'])
>>> trait_text("'0.0.0.0'")
'0.0.0.0'
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from .common import CliError, port_number

DEFAULT_LAB_PORT = 8888
DEFAULT_DASHBOARD_PORT = 8866
LOOPBACK = "127.0.0.1"

TRAIT_OPTION = re.compile(r"^--?[A-Za-z]\w*(\.\w+)*$")
NEGATIVE_NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")

LAB_ALIASES = {
    "log-level": "Application.log_level",
    "config": "JupyterApp.config_file",
    "ip": "ServerApp.ip",
    "port": "ServerApp.port",
    "port-retries": "ServerApp.port_retries",
    "sock": "ServerApp.sock",
    "sock-mode": "ServerApp.sock_mode",
    "transport": "KernelManager.transport",
    "keyfile": "ServerApp.keyfile",
    "certfile": "ServerApp.certfile",
    "client-ca": "ServerApp.client_ca",
    "notebook-dir": "ServerApp.root_dir",
    "preferred-dir": "ServerApp.preferred_dir",
    "browser": "ServerApp.browser",
    "pylab": "ServerApp.pylab",
    "gateway-url": "GatewayClient.url",
    "app-dir": "LabApp.app_dir",
    "watch": "LabApp.watch",
}
LAB_FLAGS = frozenset(
    "debug show-config show-config-json generate-config y allow-root no-browser autoreload script no-script "
    "core-mode dev-mode skip-dev-build watch splice-source expose-app-in-browser extensions-in-dev-mode "
    "collaborative custom-css".split()
)
LAB_IP, LAB_PORT, LAB_RETRIES, LAB_TOKEN, LAB_PASSWORD = (
    "ServerApp.ip",
    "ServerApp.port",
    "ServerApp.port_retries",  # 0: Jupyter fails on a taken port instead of serving on another than the one shown
    "IdentityProvider.token",
    "PasswordIdentityProvider.hashed_password",
)
LAB_SPELLINGS = {  # every spelling of a setting specviz manages -> the one it passes
    "NotebookApp.ip": LAB_IP,
    "NotebookApp.port": LAB_PORT,
    "NotebookApp.port_retries": LAB_RETRIES,
    "ServerApp.notebook_dir": "ServerApp.root_dir",
    "NotebookApp.notebook_dir": "ServerApp.root_dir",
    "PasswordIdentityProvider.token": LAB_TOKEN,
    "ServerApp.token": LAB_TOKEN,
    "NotebookApp.token": LAB_TOKEN,
    "ServerApp.password": LAB_PASSWORD,
    "NotebookApp.password": LAB_PASSWORD,
    "IdentityProvider.hashed_password": LAB_PASSWORD,
}
LAB_MANAGED = frozenset(
    {LAB_IP, LAB_PORT, LAB_RETRIES, LAB_TOKEN, LAB_PASSWORD, "ServerApp.root_dir"} | set(LAB_SPELLINGS)
)
LAB_GUARD = "from specviz.cli.lab_guard import guarded_lab; guarded_lab()"
"""What `specviz lab` runs on a non-loopback address: `jupyter lab`, judged on the settings it ends with."""

VOILA_ALIASES = {
    "autoreload": "Voila.autoreload",
    "base_url": "Voila.base_url",
    "port": "Voila.port",
    "static": "Voila.static_root",
    "server_url": "Voila.server_url",
    "pool_size": "VoilaConfiguration.default_pool_size",
    "show_tracebacks": "VoilaConfiguration.show_tracebacks",
    "preheat_kernel": "VoilaConfiguration.preheat_kernel",
    "progressive_rendering": "VoilaConfiguration.progressive_rendering",
    "strip_sources": "VoilaConfiguration.strip_sources",
    "template": "VoilaConfiguration.template",
    "theme": "VoilaConfiguration.theme",
    "classic_tree": "VoilaConfiguration.classic_tree",
    "kernel_spec_manager_class": "VoilaConfiguration.kernel_spec_manager_class",
    "token": "Voila.token",
}
VOILA_FLAGS = frozenset({"debug", "no-browser", "show-margins", "classic-tree", "token"})
VOILA_IP, VOILA_PORT = "Voila.ip", "Voila.port"
VOILA_MANAGED = frozenset(
    {
        VOILA_IP,
        VOILA_PORT,
        "Voila.port_retries",
        "VoilaConfiguration.preheat_kernel",
        "VoilaConfiguration.default_pool_size",
    }
)
VOILA_SHORT = {value: key for key, value in VOILA_ALIASES.items()}
"""Voila settings specviz passes by their alias (`--port=8866`), as Voila's own help spells them."""
VOILA_EXTENSION_DENYLIST = ("@jupyter-notebook/lab-extension", "jupyterlab-jupytext")
"""JupyterLab extensions the dashboard page does not load (see build_dashboard_command)."""


def read_traitlets_args(
    args: Sequence[str], aliases: dict[str, str], flags: frozenset[str]
) -> tuple[list[tuple[str, str, list[str]]], list[str]]:
    """Read Jupyter arguments as traitlets does: [(Class.trait, value, the arguments)] in order, and the rest."""
    settings: list[tuple[str, str, list[str]]] = []
    rest: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        name, eq, value = arg.partition("=")
        if arg == "--":
            rest.extend(args[i - 1 :])
            break
        bare = name.lstrip("-")
        named = name == f"--{bare}" or name == f"-{bare}" and len(bare) == 1  # how aliases and flags are spelled
        if named and bare in flags and not eq:
            rest.append(arg)
            continue
        option = arg.startswith("-") and arg != "-" and not NEGATIVE_NUMBER.match(arg) and TRAIT_OPTION.match(name)
        if not option and not (named and bare in aliases):
            rest.append(arg)  # a file name, or an argument Jupyter itself refuses
            continue
        used = [arg]
        if not eq:
            if i == len(args) or (args[i].startswith("-") and args[i] != "-" and not NEGATIVE_NUMBER.match(args[i])):
                raise CliError(f"{name} (after --) needs a value")
            value = args[i]
            used.append(value)
            i += 1
        settings.append((aliases.get(bare, bare) if named else bare, value, used))
    return settings, rest


def trait_text(value: str) -> str:
    """A string setting as traitlets reads it: one pair of matching quotes around it dropped."""
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def merge_settings(
    ours: dict[str, str],
    extra: Sequence[str],
    *,
    aliases: dict[str, str],
    flags: frozenset[str],
    managed: frozenset[str],
    spellings: dict[str, str] | None = None,
) -> tuple[dict[str, str], list[str]]:
    """specviz's settings overridden by the pass-through (last wins, any spelling), and the other arguments."""
    final = dict(ours)
    settings, rest = read_traitlets_args(extra, aliases, flags)
    others: list[str] = []
    for key, value, used in settings:
        if key in managed:
            key = (spellings or {}).get(key, key)
            final.pop(key, None)  # keep the order: the last one given is the one shown last
            final[key] = value
        else:
            others.extend(used)
    return final, others + rest


def setting_port(settings: dict[str, str], key: str) -> int:
    """The port in the final settings; CliError when the pass-through gave something else."""
    try:
        return port_number(trait_text(settings[key]))
    except argparse.ArgumentTypeError as err:
        raise CliError(f"--{key} (after --): {err}") from None


def lab_settings(
    notebooks: Path, *, port: int, ip: str, token: str | None, extra: Sequence[str]
) -> tuple[dict[str, str], list[str]]:
    """The final JupyterLab settings specviz manages (its options, then the pass-through), and the other arguments."""
    ours = {
        LAB_IP: ip,
        LAB_PORT: str(port),
        LAB_RETRIES: "0",
        "ServerApp.root_dir": str(notebooks),
        "LabApp.check_for_updates_class": "jupyterlab.NeverCheckForUpdate",
    }
    if token is not None:
        ours[LAB_TOKEN] = token
    return merge_settings(
        ours, extra, aliases=LAB_ALIASES, flags=LAB_FLAGS, managed=LAB_MANAGED, spellings=LAB_SPELLINGS
    )


def running_as_root() -> bool:
    """Whether this process runs as root (Jupyter then needs --allow-root)."""
    geteuid = getattr(os, "geteuid", None)
    return geteuid is not None and geteuid() == 0


def build_lab_command(
    notebooks: Path,
    *,
    port: int = DEFAULT_LAB_PORT,
    ip: str = LOOPBACK,
    token: str | None = None,
    as_root: bool | None = None,
    extra: Sequence[str] = (),
    guarded: bool = False,
) -> list[str]:
    """The `jupyter lab` command line: each managed setting once, with its final value (`guarded`: see guarded_lab)."""
    settings, rest = lab_settings(notebooks, port=port, ip=ip, token=token, extra=extra)
    lab = ["-c", LAB_GUARD] if guarded else ["-m", "jupyter", "lab"]
    cmd = [sys.executable, *lab, "--no-browser", *(f"--{k}={v}" for k, v in settings.items())]
    if running_as_root() if as_root is None else as_root:
        cmd.append("--allow-root")
    return cmd + rest


def dashboard_settings(
    *, port: int, host: str, preheat: bool, extra: Sequence[str]
) -> tuple[dict[str, str], list[str]]:
    """The final Voila settings specviz manages (its options, then the pass-through), and the other arguments."""
    # Keep one kernel pre-executed in the background: the first page shows a plot in
    # ~5 s instead of ~8-17 s here (it costs one idle kernel, refilled per visit).
    # Serve on exactly this port (no silent move to the next one), so the URL printed is right.
    ours = {VOILA_PORT: str(port), VOILA_IP: host, "Voila.port_retries": "0"}
    if preheat:
        ours |= {"VoilaConfiguration.preheat_kernel": "True", "VoilaConfiguration.default_pool_size": "1"}
    return merge_settings(ours, extra, aliases=VOILA_ALIASES, flags=VOILA_FLAGS, managed=VOILA_MANAGED)


def build_dashboard_command(
    notebook: Path,
    *,
    port: int = DEFAULT_DASHBOARD_PORT,
    host: str = LOOPBACK,
    preheat: bool = True,
    extra: Sequence[str] = (),
) -> list[str]:
    """The Voila command line that serves `notebook` (`preheat`: keep one kernel pre-executed)."""
    settings, rest = dashboard_settings(port=port, host=host, preheat=preheat, extra=extra)
    return [
        sys.executable,
        "-m",
        "voila",
        "--no-browser",
        *(f"--{VOILA_SHORT.get(k, k)}={v}" for k, v in settings.items()),
        # Notebook 7's JupyterLab extension (interface switcher) fails to load in Voila's
        # page ("shared module is not a function" in the console); the dashboard needs none
        # of it. voila.json at the repository root says the same for `voila` / Binder.
        *(f"--VoilaConfiguration.extension_denylist={name}" for name in VOILA_EXTENSION_DENYLIST),
        *rest,
        str(notebook),
    ]
