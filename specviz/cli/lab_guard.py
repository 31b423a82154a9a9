"""The login guard of `specviz lab`: no JupyterLab that anyone who reaches it may use, off loopback.

On a non-loopback address `specviz lab` first judges the command line (`lab_login_problem`: the
token, $JUPYTER_TOKEN, $JUPYTER_TOKEN_FILE, a password), then starts Jupyter through `guarded_lab`,
which judges the settings Jupyter itself ends with (its config files too) before it listens.

>>> lab_login_problem({"IdentityProvider.token": "''"}, [], {})
'the token is empty and no password is set'
>>> lab_login_problem({"IdentityProvider.token": "s3cret"}, [], {}) is None
True
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from .common import EXIT_USAGE, CliError, file_kind, shown
from .jupyter_args import LAB_ALIASES, LAB_FLAGS, LAB_PASSWORD, LAB_TOKEN, read_traitlets_args, trait_text

LAB_UNJUDGED = ("config_file", "identity_provider_class", "login_handler_class", "authorizer_class", "need_token")
"""Traits that change who may log in in ways specviz cannot judge from the command line."""
TOKEN_FILE_MAX = 4096
"""The most bytes a $JUPYTER_TOKEN_FILE may hold: a token is one line (Jupyter itself reads any file whole)."""


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


def lab_refusal(ip: str, problem: str) -> str:
    """The one line that refuses an open JupyterLab on a non-loopback address."""
    return (
        f"refusing to start JupyterLab on non-loopback address {ip!r}: {problem}, and anyone who can reach this "
        "machine could then run code in it. Give a token (--token), or add --allow-remote to start it anyway"
    )


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
