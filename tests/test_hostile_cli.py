"""The command line tried as a hostile user would (issue 18): no traceback, no silent server, no stray file.

Each case ends in one of OK (it did what was asked), GOOD_ERROR (exit status != 0 and one line
`specviz CMD: error: ...` on stderr), OBSCURE (a traceback, or an error without that line), SILENT (exit 0
where it should have refused, or a server started that should not have) or HANG (no answer in time).
No server is ever started: `servers.exec_server` (the exec) is replaced by a recorder. `pytest -s` prints the counts.
"""

from __future__ import annotations

import errno
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path

import pytest

from specviz import cli
from specviz.cli import files, jupyter_args, notebooks, servers

COUNTS: Counter[str] = Counter()
BAD = ("OBSCURE", "SILENT", "HANG")
PY = [sys.executable, "-m", "specviz"]


def classify(code: int, err: str, expect: str, prog: str) -> str:
    """The outcome of one run: OK, GOOD_ERROR, OBSCURE or SILENT (`expect`: 'ok' or 'error')."""
    if "Traceback" in err:
        return "OBSCURE"
    if expect == "ok":
        return "OK" if code == 0 else "OBSCURE"
    if code == 0:
        return "SILENT"
    errors = [line for line in err.splitlines() if "error:" in line]
    one = len(errors) == 1 and errors[0].startswith(f"{prog}: error: ") and len(errors[0]) > len(prog) + 20
    return "GOOD_ERROR" if one else "OBSCURE"


def record(outcomes: list[tuple[str, object, str]]) -> None:
    """Count the outcomes; fail listing every bad one."""
    COUNTS.update(kind for kind, _, _ in outcomes)
    bad = [f"{kind}: {case!r}\n    {detail}" for kind, case, detail in outcomes if kind in BAD]
    assert not bad, "\n".join(bad)


@pytest.fixture
def launches(monkeypatch):
    """The commands `specviz lab` / `dashboard` would exec (none is started)."""
    started: list[list[str]] = []
    monkeypatch.setattr(servers, "exec_server", lambda cmd, cwd: started.append(cmd) or 0)
    monkeypatch.setattr(
        servers, "listen_problem", lambda host, port: None
    )  # 8888 may be taken here: its own test below
    for name in ("JUPYTER_TOKEN", "JUPYTER_TOKEN_FILE"):
        monkeypatch.delenv(name, raising=False)
    return started


def call(argv: list[str], capsys) -> tuple[int, str, str]:
    """`specviz ARGV` in this process: (exit status, stdout, stderr)."""
    try:
        code = cli.main(list(argv))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except (KeyboardInterrupt, OSError) as exc:  # what Python would print as a traceback
        code, out, err = 1, *capsys.readouterr()
        return code, out, f"{err}Traceback (most recent call last): {exc!r}\n"
    out, err = capsys.readouterr()
    return code, out, err


def lab_final(cmd: list[str]) -> dict[str, list[str]]:
    """Every value each setting gets on a `jupyter lab` command line, read as traitlets reads it."""
    settings, _ = jupyter_args.read_traitlets_args(
        cmd[cmd.index("--no-browser") :], jupyter_args.LAB_ALIASES, jupyter_args.LAB_FLAGS
    )
    final: dict[str, list[str]] = {}
    for key, value, _ in settings:
        final.setdefault(key, []).append(value)
    return final


# ------------------------------------------------------------------------------ server guards

LAB_REFUSED = [
    ["--ip", "0.0.0.0", "--token", " "],
    ["--ip", "0.0.0.0", "--token", ""],
    ["--ip", "0.0.0.0", "--token", "''"],
    ["--ip", "0.0.0.0", "--token", "\t\n"],
    ["--ip", "0.0.0.0", "--token", "abc", "--token", ""],
    ["--ip", "0.0.0.0", "--", "--IdentityProvider.token="],
    ["--ip", "0.0.0.0", "--", "--IdentityProvider.token", ""],
    ["--ip", "0.0.0.0", "--", "-IdentityProvider.token="],
    ["--ip", "0.0.0.0", "--", "--ServerApp.token="],
    ["--ip", "0.0.0.0", "--", "--NotebookApp.token", '""'],
    ["--ip", "0.0.0.0", "--", "--PasswordIdentityProvider.token=  "],
    ["--ip", "0.0.0.0", "--", "--IdentityProvider.token=abc", "--IdentityProvider.token="],
    ["--ip", "0.0.0.0", "--token", "", "--", "--ServerApp.password=''"],
    ["--ip", "0.0.0.0", "--token", "", "--", "--PasswordIdentityProvider.hashed_password= "],
    ["--token", "abc", "--", "--ip=0.0.0.0", "--ServerApp.token="],
    ["--", "--ServerApp.ip=0.0.0.0", "--IdentityProvider.token="],
    ["--", "--ip", "::", "--ServerApp.token", ""],
    ["--", "--ServerApp.ip=", "--IdentityProvider.token="],
    ["--", "--NotebookApp.ip=*", "--IdentityProvider.token="],
    ["--", "-ServerApp.ip=10.0.0.1", "--NotebookApp.token="],
    ["--ip", "0.0.0.0", "--", "--config=evil.py"],
    ["--ip", "0.0.0.0", "--", "--JupyterApp.config_file", "evil.py"],
    ["--ip", "0.0.0.0", "--", "--ServerApp.identity_provider_class=x.Open"],
    ["--ip", "0.0.0.0", "--", "--IdentityProvider.need_token=False"],
    ["--ip", "0.0.0.0", "--", "--IdentityProvider.token"],
    ["--ip", "0.0.0.0", "--", "--IdentityProvider.token", "--debug"],
    ["--port", "0"],
    ["--port", "-1"],
    ["--port", "65536"],
    ["--port", "http"],
    ["--port", ""],
    ["--", "--port=abc"],
    ["--", "--ServerApp.port", "99999"],
    ["--notebooks", "/dev/null"],
    ["--notebooks", "bad\0path"],
    ["--notebooks", ""],
]

LAB_ALLOWED = [  # (argv, the token the final command must carry: None = any non-blank one, "" = none needed)
    (["--ip", "0.0.0.0"], None),
    (["--ip", "0.0.0.0", "--token", "abc"], "abc"),
    (["--ip", "0.0.0.0", "--", "--IdentityProvider.token=", "--IdentityProvider.token=zz"], "zz"),
    (["--ip", "0.0.0.0", "--token", "", "--", "--NotebookApp.token=t2"], "t2"),
    (["--ip", "0.0.0.0", "--token", "", "--", "--ServerApp.password=sha1:ab:cd"], ""),
    (["--ip", "0.0.0.0", "--token", "", "--allow-remote"], ""),
    (["--token", ""], ""),
    (["--", "--ip=127.0.0.1", "--IdentityProvider.token="], ""),
    (["--ip", "0.0.0.0", "--", "--", "--IdentityProvider.token="], None),
    (["--", "--ip=localhost", "--port=9000", "--debug", "x.ipynb"], ""),
]


def test_lab_guard_judges_the_final_command_line(tmp_path, launches, capsys):
    outcomes = []
    for argv in LAB_REFUSED:
        code, _, err = call(["lab", "--notebooks", str(tmp_path), *argv], capsys)
        kind = "SILENT" if launches else classify(code, err, "error", "specviz lab")
        outcomes.append((kind, argv, err.strip()))
        launches.clear()
    for argv, token in LAB_ALLOWED:
        code, out, err = call(["lab", "--notebooks", str(tmp_path), *argv], capsys)
        kind = classify(code, err, "ok", "specviz lab") if launches else "OBSCURE"
        if launches:
            final = lab_final(launches[-1])
            once = all(len(final.get(k, [])) <= 1 for k in jupyter_args.LAB_MANAGED)
            tokens = final.get(jupyter_args.LAB_TOKEN, [""])
            good = tokens[0].strip() if token is None else tokens[0] == token or not token
            kind = kind if once and good and not any(k in final for k in jupyter_args.LAB_SPELLINGS) else "SILENT"
            if token is None and jupyter_args.LAB_PASSWORD not in final:
                kind = kind if f"?token={tokens[0]}" in out else "SILENT"  # the pinned token is shown
        outcomes.append((kind, argv, err.strip() or (launches[-1] if launches else "")))
        launches.clear()
    record(outcomes)


def test_lab_guard_reads_jupyters_token_variables(tmp_path, launches, monkeypatch, capsys):
    empty = tmp_path / "empty-token"
    empty.write_text("  \n")
    cases = [
        ({"JUPYTER_TOKEN": " "}, "error"),
        ({"JUPYTER_TOKEN_FILE": str(empty)}, "error"),
        ({"JUPYTER_TOKEN_FILE": str(tmp_path / "missing")}, "error"),
        ({"JUPYTER_TOKEN_FILE": str(tmp_path)}, "error"),
        ({"JUPYTER_TOKEN": "secret"}, "ok"),
    ]
    outcomes = []
    for env, expect in cases:
        with monkeypatch.context() as m:
            for name, value in env.items():
                m.setenv(name, value)
            code, _, err = call(["lab", "--notebooks", str(tmp_path), "--ip", "0.0.0.0"], capsys)
        kind = classify(code, err, expect, "specviz lab")
        if expect == "error" and launches:
            kind = "SILENT"
        if expect == "ok" and launches and jupyter_args.LAB_TOKEN in lab_final(launches[-1]):
            kind = "SILENT"  # Jupyter's own $JUPYTER_TOKEN is kept, not replaced
        outcomes.append((kind, env, err.strip()))
        launches.clear()
    record(outcomes)


class Hung(BaseException):
    """Raised by the alarm of `within` (a BaseException, so no `except OSError` on the way takes it)."""


def within(seconds: int, fn):
    """fn() or, when it does not return within `seconds` (a read blocked on a pipe), 'HANG'."""

    def hang(signum, frame):
        raise Hung

    old = signal.signal(signal.SIGALRM, hang)
    signal.alarm(seconds)
    try:
        return fn()
    except Hung:
        return "HANG"
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def test_lab_refuses_a_token_file_jupyter_could_not_use(tmp_path, launches, monkeypatch, capsys):
    """Jupyter reads $JUPYTER_TOKEN_FILE whole (a device never ends, a named pipe with no writer never answers):
    specviz refuses anything but a small regular file of printable text, on every address, without blocking."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    (tmp_path / "big").write_text("a" * 5000)
    (tmp_path / "nul").write_bytes(b"ab\0cd")
    (tmp_path / "latin").write_bytes(b"caf\xe9")
    (tmp_path / "good").write_text("s3cret\n")
    refused = ["/dev/zero", "/dev/urandom", str(fifo), *(str(tmp_path / n) for n in ("big", "nul", "latin"))]
    outcomes = []
    for path, expect in [*((p, "error") for p in refused), (str(tmp_path / "good"), "ok")]:
        for ip in ("0.0.0.0", "127.0.0.1"):
            monkeypatch.setenv("JUPYTER_TOKEN_FILE", path)
            argv = ["lab", "--notebooks", str(tmp_path), "--ip", ip]
            result = within(10, lambda: call(argv, capsys))  # noqa: B023 (called at once)
            if result == "HANG":
                outcomes.append(("HANG", (path, ip), ""))
                continue
            code, _, err = result
            kind = "SILENT" if expect == "error" and launches else classify(code, err, expect, "specviz lab")
            if expect == "ok" and launches and jupyter_args.LAB_TOKEN in lab_final(launches[-1]):
                kind = "SILENT"  # Jupyter reads the file itself: nothing replaces it
            outcomes.append((kind, (path, ip), err.strip()))
            launches.clear()
    record(outcomes)


LISTEN = servers.listen_problem


def test_lab_never_moves_to_another_port_than_it_prints(tmp_path, launches, monkeypatch, capsys):
    """A taken --port is refused in one line before Jupyter starts (Jupyter, told port_retries=0, would fail too,
    not serve on P+1 under the URL printed with P); a pass-through --port-retries is kept and the line says so."""
    monkeypatch.setattr(servers, "listen_problem", LISTEN)
    outcomes = []
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        cases = [
            (["--port", port], "error", "0"),
            (["--port", port, "--ip", "0.0.0.0"], "error", "0"),
            (["--", f"--ServerApp.port={port}"], "error", "0"),
            (["--port", port, "--", "--NotebookApp.port_retries=0"], "error", "0"),
            (["--port", port, "--", "--port-retries=3"], "ok", "3"),
        ]
        for argv, expect, retries in cases:
            code, out, err = call(["lab", "--notebooks", str(tmp_path), *argv], capsys)
            kind = "SILENT" if expect == "error" and launches else classify(code, err, expect, "specviz lab")
            if expect == "error" and "Address already in use" not in err:
                kind = "OBSCURE" if kind == "GOOD_ERROR" else kind
            if expect == "ok" and (
                lab_final(launches[-1])[jupyter_args.LAB_RETRIES] != [retries] or "another port" not in out
            ):
                kind = "SILENT"
            outcomes.append((kind, argv, err.strip() or out.strip()))
            launches.clear()
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = str(free.getsockname()[1])
    code, out, err = call(["lab", "--notebooks", str(tmp_path), "--port", port], capsys)  # free again: started
    kind = classify(code, err, "ok", "specviz lab") if launches else "OBSCURE"
    if launches and lab_final(launches[-1])[jupyter_args.LAB_RETRIES] != ["0"]:
        kind = "SILENT"
    record([*outcomes, (kind, "a free port", err.strip())])


def test_dashboard_never_prints_a_url_on_a_taken_port(tmp_path, launches, monkeypatch, capsys):
    """A taken --port is refused in one line before Voila starts (Voila, told port_retries=0, said "trying another
    port" and then failed, below the printed URL); a pass-through Voila.port_retries is kept."""
    monkeypatch.setattr(servers, "listen_problem", LISTEN)
    (tmp_path / "dashboard.ipynb").write_text("{}")
    outcomes = []
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        cases = [
            (["--port", port], "error"),
            (["--", f"--port={port}"], "error"),
            (["--port", port, "--", "--Voila.port_retries=3"], "ok"),
        ]
        for argv, expect in cases:
            code, out, err = call(["dashboard", "--notebooks", str(tmp_path), *argv], capsys)
            kind = "SILENT" if expect == "error" and launches else classify(code, err, expect, "specviz dashboard")
            if expect == "error" and ("Address already in use" not in err or "Dashboard URL" in out):
                kind = "OBSCURE" if kind == "GOOD_ERROR" else kind
            outcomes.append((kind, argv, err.strip() or out.strip()))
            launches.clear()
    record(outcomes)


def test_lab_off_loopback_runs_jupyter_judged_on_its_final_settings(tmp_path, launches, capsys):
    """Off loopback Jupyter starts through lab_guard.guarded_lab, which judges the settings Jupyter ends with (config
    files included: test_lab_guard_judges_what_jupyter_will_use runs it); on loopback as plain `jupyter lab`."""
    outcomes = []
    for argv, guarded in [
        (["--ip", "0.0.0.0"], True),
        (["--ip", "0.0.0.0", "--token", "t"], True),
        (["--", "--ip=10.0.0.1", "--IdentityProvider.token=t"], True),
        ([], False),
        (["--ip", "0.0.0.0", "--token", "", "--allow-remote"], False),
    ]:
        code, _, err = call(["lab", "--notebooks", str(tmp_path), *argv], capsys)
        kind = classify(code, err, "ok", "specviz lab") if launches else "OBSCURE"
        if launches and launches[-1][1:3] != (["-c", jupyter_args.LAB_GUARD] if guarded else ["-m", "jupyter"]):
            kind = "SILENT"
        outcomes.append((kind, argv, err.strip() or (launches[-1][:3] if launches else "")))
        launches.clear()
    record(outcomes)


DASHBOARD_REFUSED = [
    ["--host", "0.0.0.0"],
    ["--", "--Voila.ip=0.0.0.0"],
    ["--", "--Voila.ip", "::"],
    ["--", "-Voila.ip=10.0.0.1"],
    ["--", "--Voila.ip="],
    ["--host", "127.0.0.1", "--", "--Voila.ip=127.0.0.1", "--Voila.ip=192.0.2.1"],
    ["--", "--Voila.ip"],
    ["--port", "0"],
    ["--port", "１e3"],
    ["--", "--port=x"],
    ["--", "--Voila.port", "-5"],
    ["--notebooks", "bad\0path"],
]

DASHBOARD_ALLOWED = [  # (argv, the final Voila.ip, the final --port)
    (["--", "--Voila.ip=127.0.0.1", "--port=9000"], "127.0.0.1", "9000"),
    (["--host", "0.0.0.0", "--allow-remote"], "0.0.0.0", "8866"),
    (["--host", "0.0.0.0", "--", "--Voila.ip=127.0.0.1"], "127.0.0.1", "8866"),
    (["--port", "9001", "--", "--Voila.port=9002", "--debug"], "127.0.0.1", "9002"),
]


def test_dashboard_guard_judges_the_final_command_line(tmp_path, launches, capsys):
    (tmp_path / "dashboard.ipynb").write_text("{}")
    outcomes = []
    for argv in DASHBOARD_REFUSED:
        code, _, err = call(["dashboard", "--notebooks", str(tmp_path), *argv], capsys)
        kind = "SILENT" if launches else classify(code, err, "error", "specviz dashboard")
        outcomes.append((kind, argv, err.strip()))
        launches.clear()
    for argv, ip, port in DASHBOARD_ALLOWED:
        code, out, err = call(["dashboard", "--notebooks", str(tmp_path), *argv], capsys)
        kind = classify(code, err, "ok", "specviz dashboard") if launches else "OBSCURE"
        if launches:
            settings, _ = jupyter_args.read_traitlets_args(
                launches[-1][4:-1], jupyter_args.VOILA_ALIASES, jupyter_args.VOILA_FLAGS
            )
            ips = [v for k, v, _ in settings if k == jupyter_args.VOILA_IP]
            ports = [v for k, v, _ in settings if k == jupyter_args.VOILA_PORT]
            kind = kind if ips == [ip] and ports == [port] and f":{port}/" in out else "SILENT"
        outcomes.append((kind, argv, err.strip() or (launches[-1] if launches else "")))
        launches.clear()
    record(outcomes)


# ------------------------------------------------------------------------------ specviz notebooks


def notebooks_cases(tmp_path):
    """(name, DIR or a function making it, extra flags, 'ok' or 'error', a check after the run)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    afile = tmp_path / "afile.txt"
    afile.write_text("mine")

    def dangling_inside():
        d = tmp_path / "dangling"
        d.mkdir()
        (d / "05_the_proof_in_three_steps.ipynb").symlink_to(outside / "escaped.ipynb")
        return d

    def link_to_my_file():
        d = tmp_path / "linked"
        d.mkdir()
        (d / "dashboard.ipynb").symlink_to(afile)
        return d

    def folder_in_the_way():
        d = tmp_path / "folder"
        (d / "dashboard.ipynb").mkdir(parents=True)
        return d

    def pipe_in_the_way():
        d = tmp_path / "pipe"
        d.mkdir()
        os.mkfifo(d / "dashboard.ipynb")
        return d

    def my_edits():
        d = tmp_path / "edited"
        d.mkdir()
        (d / "dashboard.ipynb").write_text("my edits")
        return d

    def dangling_dir():
        (tmp_path / "dlink").symlink_to(tmp_path / "nowhere")
        return tmp_path / "dlink"

    nothing_outside = lambda: not any(outside.iterdir())  # noqa: E731
    mine_kept = lambda: afile.read_text() == "mine"  # noqa: E731
    return [
        ("onto an existing file", str(afile), [], "error", mine_kept),
        ("under a file", str(afile / "sub"), [], "error", mine_kept),
        ("deep under a file", str(afile / "a" / "b"), [], "error", mine_kept),
        ("onto /dev/null", "/dev/null", [], "error", None),
        ("onto /dev/null with --force", "/dev/null", ["--force"], "error", None),
        ("into /proc", "/proc/specviz-hostile", [], "error", None),
        ("a dangling link as the folder", dangling_dir, [], "error", lambda: not (tmp_path / "nowhere").exists()),
        ("a dangling link named like a notebook", dangling_inside, [], "error", nothing_outside),
        ("the same with --force", lambda: tmp_path / "dangling", ["--force"], "error", nothing_outside),
        ("a link to my file", link_to_my_file, ["--force"], "error", mine_kept),
        ("a folder named like a notebook", folder_in_the_way, ["--force"], "error", None),
        ("a pipe named like a notebook", pipe_in_the_way, [], "error", None),
        ("an empty name", "", [], "error", None),
        ("a NUL in the name", "a\0b", [], "error", None),
        ("a lone surrogate in the name", "a\ud800b", [], "error", None),
        ("extra arguments", str(tmp_path / "x"), ["--", "more"], "error", None),
        ("a new folder", str(tmp_path / "new" / "deep"), [], "ok", None),
        ("again: files kept", str(tmp_path / "new" / "deep"), [], "ok", None),
        ("my edits kept", my_edits, [], "ok", lambda: (tmp_path / "edited/dashboard.ipynb").read_text() == "my edits"),
        ("my edits replaced with --force", lambda: tmp_path / "edited", ["--force"], "ok",
         lambda: (tmp_path / "edited/dashboard.ipynb").read_text() != "my edits"),
        ("a name with a newline and spaces", str(tmp_path / "we\nird  name"), [], "ok", None),
        ("a name that is not UTF-8", os.fsdecode(os.fsencode(str(tmp_path)) + b"/b\xffad"), [], "ok", None),
    ]  # fmt: skip


def test_notebooks_never_write_through_links_or_over_files(tmp_path, capsys):
    outcomes = []
    for name, where, flags, expect, check in notebooks_cases(tmp_path):
        target = str(where()) if callable(where) else where
        code, out, err = call(["notebooks", target, *flags], capsys)
        kind = classify(code, err, expect, "specviz notebooks")
        if kind in ("OK", "GOOD_ERROR") and check is not None and not check():
            kind = "SILENT"
        outcomes.append((kind, name, err.strip() or out.strip()))
    record(outcomes)


@pytest.mark.parametrize("errno_name", ["EACCES", "ENOSPC", "EROFS"])
def test_notebooks_write_failures_are_one_line_and_leave_no_part_file(tmp_path, monkeypatch, capsys, errno_name):
    """No write permission (root ignores chmod, so os.open refuses here), a full disk, a read-only disk."""
    import errno

    number = getattr(errno, errno_name)
    real_fdopen = os.fdopen

    class Full:
        def __init__(self, fd):
            self.file = real_fdopen(fd, "wb")

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.file.close()

        def write(self, data):
            self.file.write(data[:10])
            raise OSError(number, os.strerror(number))

    def refuse(*args, **kwargs):
        raise OSError(number, os.strerror(number))

    if errno_name == "ENOSPC":
        monkeypatch.setattr(files.os, "fdopen", lambda fd, mode: Full(fd))
    else:
        monkeypatch.setattr(files.os, "open", refuse)
    code, _, err = call(["notebooks", str(tmp_path / "nb")], capsys)
    monkeypatch.undo()
    kind = classify(code, err, "error", "specviz notebooks")
    if os.strerror(number) not in err or any((tmp_path / "nb").iterdir()):
        kind = "OBSCURE"
    record([(kind, errno_name, err.strip())])


# ------------------------------------------------------------------------------ the other sub-commands


def test_run_refuses_text_that_is_not_text(capsys):
    """A lone surrogate (Python) and bytes that are not UTF-8 (a shell) in --prompt: one line, before loading."""
    outcomes = []
    for prompt in ["\ud800", "ok \udfff", os.fsdecode(b"\xed\xa0\x80")]:
        code, _, err = call(["run", "--prompt", prompt, "--max-new-tokens", "2", "--device", "cpu"], capsys)
        kind = classify(code, err, "error", "specviz run")
        outcomes.append((kind if "--prompt" in err else "OBSCURE", prompt, err.strip()))
    for argv in (["--max-new-tokens", "-1"], ["--target", "/no/such/model"], ["--gamma", "x"], ["--top-k", "1.5"]):
        code, _, err = call(["run", *argv], capsys)
        outcomes.append((classify(code, err, "error", "specviz run"), argv, err.strip()))
    record(outcomes)


def run_cases(tmp_path) -> list:
    """(argv after `specviz run`, the words the one error line must hold, whether the models may load), issue 43."""
    (tmp_path / "l1").symlink_to(tmp_path / "l2")
    (tmp_path / "l2").symlink_to(tmp_path / "l1")
    (tmp_path / "readme.txt").write_text("not a model")
    return [
        (["--tree", "1 2"], "separated by commas, such as '3,2,1'", False),
        (["--tree", "3 2"], "separated by commas, such as '3,2,1'", False),
        (["--tree", "16", "--gamma", "2"], "--tree 16 (16 drafts per node) to depth 2 (--gamma 2) is 272 nodes", False),
        (["--tree", "16"], "to depth 4 (the default depth 4) is 69904 nodes, more than 256", False),
        (["--tree", "3", "--gamma", "9"], "--tree 3 (3 drafts per node) to depth 9", False),
        (["--tree", "3,2,1", "--gamma", "9"], "--gamma 9 caps the tree's depth, and the tree 3,2,1 has depth 3", False),
        (["--tree", "3,2,1", "--gamma", "100"], "caps nothing; give --gamma 0..3", False),
        (["--draft", "prompt-lookup", "--tree", "3,2", "--gamma", "5"], "the tree 3,2 has depth 2", False),
        (["--seed", "١٢"], "argument --seed: not a whole number in the digits 0-9", False),
        (["--seed", "1_000"], "argument --seed: not a whole number in the digits 0-9", False),
        (["--max-new-tokens", "１２"], "argument --max-new-tokens: not a whole number in the digits 0-9", False),
        (["--top-k", "١٢"], "argument --top-k: not a whole number in the digits 0-9", False),
        (["--top-k", str(2**70)], "top_k must be an integer <= 16777216", False),
        (["--target", str(tmp_path / "l1")], "is a loop of links", True),
        (["--target", str(tmp_path / "readme.txt")], "readme.txt' is a file, not a checkpoint folder", True),
        (["--target", "/dev/null"], "'/dev/null' is a device, not a checkpoint folder", True),
        (["--target", ""], "target model: the name is empty", True),
    ]  # fmt: skip


def test_run_refuses_a_bad_shape_number_or_target_in_one_line_naming_it(tmp_path, monkeypatch, capsys):
    """Hardening v4 (issue 43): every row one line naming the problem; the parser rows before any model loads."""
    import specviz.lm.load.loading as loading

    real_load = loading.load_pair
    outcomes = []
    for argv, words, may_load in run_cases(tmp_path):
        loads = []
        monkeypatch.setattr(loading, "load_pair", lambda *a, _seen=loads, **k: _seen.append(a) or real_load(*a, **k))
        code, _, err = call(["run", *argv, "--max-new-tokens", "2", "--device", "cpu"], capsys)
        kind = classify(code, err, "error", "specviz run")
        if kind == "GOOD_ERROR" and (words not in err or (loads and not may_load)):
            kind = "OBSCURE"
        outcomes.append((kind, argv, err.strip()))
    monkeypatch.undo()
    record(outcomes)


def test_usage_errors_are_one_line(capsys):
    cases = [
        (["nosuch"], "specviz"),
        (["--bogus"], "specviz"),
        (["lab", "--port"], "specviz lab"),
        (["lab", "--bogus"], "specviz lab"),
        (["dashboard", "--lang", "fr"], "specviz dashboard"),
        (["notebooks", "a", "b"], "specviz notebooks"),
        (["models", "fetch"], "specviz models fetch"),
        (["models", "fetch", "nonexistent"], "specviz models fetch"),
        (["models", "list", "--", "x"], "specviz models list"),
        (["vllm-stats"], "specviz vllm-stats"),
        (["vllm-stats", "http://x", "--timeout", "0"], "specviz vllm-stats"),
    ]
    outcomes = []
    for argv, prog in cases:
        code, _, err = call(argv, capsys)
        outcomes.append((classify(code, err, "error", prog), argv, err.strip()))
    record(outcomes)


SUBPROCESS_CASES = [  # (argv, prog): run as real processes, all at once
    (["nosuch"], "specviz"),
    (["notebooks", "/dev/null"], "specviz notebooks"),
    (["lab", "--ip", "0.0.0.0", "--", "--IdentityProvider.token="], "specviz lab"),
    (["lab", "--ip", "0.0.0.0", "--token", " "], "specviz lab"),
    (["dashboard", "--", "--Voila.ip=0.0.0.0"], "specviz dashboard"),
    (["run", "--prompt", b"\xed\xa0\x80", "--max-new-tokens", "2"], "specviz run"),
    (["run", "--target", "/no/such/model", "--max-new-tokens", "2"], "specviz run"),
    (["models", "fetch", "nonexistent"], "specviz models fetch"),
    (["vllm-stats", "http://127.0.0.1:1/metrics", "--timeout", "2"], "specviz vllm-stats"),
]


@pytest.mark.slow
def test_subcommands_as_processes(tmp_path):
    """Each sub-command with a bad argument, as `python -m specviz`: one line, exit != 0, within 60 s."""
    env = {**os.environ, "JUPYTER_TOKEN": "", "JUPYTER_TOKEN_FILE": "", "SPECVIZ_CACHE": str(tmp_path / "cache")}
    procs = []
    for argv, prog in SUBPROCESS_CASES:
        args = [*PY, *argv]
        p = subprocess.Popen(args, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        procs.append((p, argv, prog))
    deadline = time.monotonic() + 60
    outcomes = []
    for p, argv, prog in procs:
        try:
            _, err_bytes = p.communicate(timeout=max(1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
            outcomes.append(("HANG", argv, ""))
            continue
        err = err_bytes.decode("utf-8", "backslashreplace")
        outcomes.append((classify(p.returncode, err, "error", prog), argv, err.strip()[-600:]))
    record(outcomes)


# ------------------------------------------------------------------------------ how a command ends (issue 35)


class BrokenOutput:
    """A standard output whose every write fails with `number` (EPIPE: the reader left; ENOSPC: the disk is full)."""

    def __init__(self, number: int):
        self.number = number

    def write(self, text):
        raise OSError(self.number, os.strerror(self.number))

    def flush(self):
        pass


@pytest.mark.parametrize("errno_name", ["EPIPE", "ENOSPC"])
def test_output_that_cannot_be_written_ends_in_one_line(tmp_path, monkeypatch, capsys, errno_name):
    """A closed pipe: exit 141 (as SIGPIPE) without a word; a full disk: one line saying so, exit 1; every command."""
    from types import SimpleNamespace

    from specviz.lm.serve import vllm

    number = getattr(errno, errno_name)
    monkeypatch.setenv("SPECVIZ_CACHE", str(tmp_path / "cache"))
    reading = SimpleNamespace(seconds=0, engines=[], model="m", url="http://x/metrics", summary=lambda: "α 0.5")
    monkeypatch.setattr(vllm, "read_vllm_metrics", lambda *args, **kwargs: reading)
    cases = [
        (["--version"], "specviz"),
        (["vllm-stats", "http://x"], "specviz vllm-stats"),  # its own `except OSError` leaves stdout's to main
        (["--help"], "specviz"),
        (["models", "list"], "specviz models list"),
        (["notebooks", str(tmp_path / "nb")], "specviz notebooks"),
        (["lab", "--notebooks", str(tmp_path), "--ip", "0.0.0.0", "--token", ""], "specviz lab"),  # stderr only
    ]
    outcomes = []
    for argv, prog in cases:
        with monkeypatch.context() as m:
            m.setattr(sys, "stdout", BrokenOutput(number))
            code, _, err = call(argv, capsys)
        if argv[0] == "lab":  # refused on stderr, before any output: the refusal stands
            kind = classify(code, err, "error", prog)
        elif errno_name == "EPIPE":
            kind = "OK" if code == 141 and not err else "SILENT" if code == 0 else "OBSCURE"
        else:
            kind = classify(code, err, "error", prog)
            kind = "OBSCURE" if kind == "GOOD_ERROR" and "No space left on device" not in err else kind
        outcomes.append((kind, argv, f"exit {code}: {err.strip()}"))
    record(outcomes)


def test_a_closed_standard_output_is_no_success(tmp_path, monkeypatch, capsys):
    """`specviz run >&-`: Python's print() drops the text without a word, so a command whose output is its result
    refuses before it starts (no model loaded); one whose result is files or a server still runs."""
    import specviz.lm.load.loading as loading

    monkeypatch.setattr(loading, "load_pair", lambda *a, **k: pytest.fail("a model was loaded with nowhere to print"))
    monkeypatch.setenv("SPECVIZ_CACHE", str(tmp_path / "cache"))
    cases = [
        (["run", "--max-new-tokens", "2"], "error", "specviz run"),
        (["models", "list"], "error", "specviz models list"),
        (["vllm-stats", "http://127.0.0.1:1/metrics"], "error", "specviz vllm-stats"),
        (["notebooks", str(tmp_path / "nb")], "ok", "specviz notebooks"),
    ]
    outcomes = []
    for argv, expect, prog in cases:
        with monkeypatch.context() as m:
            m.setattr(sys, "stdout", None)
            code, _, err = call(argv, capsys)
        kind = classify(code, err, expect, prog)
        if expect == "ok" and not (tmp_path / "nb" / "dashboard.ipynb").is_file():
            kind = "SILENT"
        outcomes.append((kind, argv, err.strip()))
    record(outcomes)


def test_ctrl_c_ends_in_one_line_with_status_130(tmp_path, monkeypatch, capsys):
    """Ctrl+C while a command works (a load, a listing, a fetch): exit 130 and `specviz CMD: interrupted (Ctrl+C)`."""
    import specviz.lm.load.loading as loading
    from specviz.lm.load import catalog

    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setenv("SPECVIZ_CACHE", str(tmp_path / "cache"))
    cases = [
        (["run", "--max-new-tokens", "2"], "specviz run", (loading, "load_pair")),
        (["models", "list"], "specviz models list", (catalog, "state")),
        (["models", "fetch", "smollm2-135m"], "specviz models fetch", (catalog, "fetch")),
        (["notebooks", str(tmp_path / "nb")], "specviz notebooks", (notebooks, "packaged_notebooks")),
    ]
    outcomes = []
    for argv, prog, (owner, name) in cases:
        with monkeypatch.context() as m:
            m.setattr(owner, name, interrupt)
            code, _, err = call(argv, capsys)
        kind = "OK" if code == 130 and err == f"{prog}: interrupted (Ctrl+C)\n" else "OBSCURE"
        outcomes.append((kind, argv, f"exit {code}: {err.strip()}"))
    record(outcomes)


def close_stdout():  # run in the child before Python starts: `specviz ... >&-`
    os.close(1)


@pytest.mark.slow
def test_pipes_and_full_disks_as_processes(tmp_path):
    """The issue's cases as real processes: `| head -c1` (the reader gone before the result), `> /dev/full` and
    `>&-`: never a traceback, never a silent success."""
    env = {**os.environ, "SPECVIZ_CACHE": str(tmp_path / "cache")}
    run = ["run", "--max-new-tokens", "4", "--device", "cpu"]
    cases = [  # (argv, stdout: a pipe closed at once / /dev/full / closed, the exit status, prog)
        ([*run, "--json"], "gone", 141, "specviz run"),
        (["models", "list"], "gone", 141, "specviz models list"),
        (["notebooks", str(tmp_path / "nb")], "gone", 141, "specviz notebooks"),
        (["--help"], "gone", 141, "specviz"),
        (run, "full", 1, "specviz run"),
        (["models", "list"], "full", 1, "specviz models list"),
        (["--version"], "full", 1, "specviz"),
        (run, "closed", 1, "specviz run"),
    ]
    procs = []
    for argv, out, want, prog in cases:
        with open("/dev/full" if out == "full" else os.devnull, "wb") as sink:
            p = subprocess.Popen(
                [*PY, *argv],
                cwd=tmp_path,
                env=env,
                stdout=subprocess.PIPE if out == "gone" else sink,
                stderr=subprocess.PIPE,
                preexec_fn=close_stdout if out == "closed" else None,
            )
        if out == "gone":
            p.stdout.close()
        procs.append((p, argv, out, want, prog))
    outcomes = []
    for p, argv, out, want, prog in procs:
        try:
            _, err_bytes = p.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
            outcomes.append(("HANG", (argv, out), ""))
            continue
        err = "\n".join(line for line in err_bytes.decode("utf-8", "replace").splitlines() if "Loading" not in line)
        if "Traceback" in err or "Exception ignored" in err:
            kind = "OBSCURE"
        elif p.returncode != want:
            kind = "SILENT" if p.returncode == 0 else "OBSCURE"
        elif want == 141:
            kind = "OK" if not err.strip() else "OBSCURE"
        else:
            kind = classify(p.returncode, err, "error", prog)
        outcomes.append((kind, (argv, out), f"exit {p.returncode}: {err.strip()[-600:]}"))
    record(outcomes)


def ctrl_c_heard() -> None:
    """In the child before exec: SIGINT as a terminal's Ctrl+C finds it (a shell's `cmd &` or nohup starts a suite with
    SIGINT ignored, which every child would inherit, and an ignored Ctrl+C tests nothing)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.slow
def test_ctrl_c_during_a_load_and_a_run_as_a_process():
    """SIGINT while `specviz run` imports torch and loads the pair (2 s in), and once the pair is loaded (its
    progress bars done) while it generates: exit 130 and one line, no KeyboardInterrupt traceback."""
    argv = [*PY, "run", "--max-new-tokens", "240", "--ignore-eos", "--device", "cpu"]  # some seconds of work
    outcomes = []
    # the loaded pair is told by its progress bars: keep them on even when this process turned them off (the book's
    # notebook runs set TQDM_DISABLE in the test process, and a child inherits it)
    env = {k: v for k, v in os.environ.items() if k not in ("TQDM_DISABLE", "HF_HUB_DISABLE_PROGRESS_BARS")}
    for when in ("loading", "running"):
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, preexec_fn=ctrl_c_heard)
        err = b""
        if when == "loading":
            time.sleep(2.0)
        else:  # the second "Loading weights" bar (the draft) has ended: the pair is loaded
            while p.poll() is None and err.count(b"Loading weights") < 2 or not err.endswith(b"\n"):
                chunk = p.stderr.read1(4096)
                err += chunk
                if not chunk:
                    break
            time.sleep(0.5)
        p.send_signal(signal.SIGINT)
        try:
            out, rest = p.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
            outcomes.append(("HANG", when, ""))
            continue
        text = (err + rest).decode("utf-8", "replace")
        last = [line for line in text.splitlines() if line.strip()][-1:]
        # -SIGINT: Python ends so when the Ctrl+C landed in code run by a C import (torch's); a shell shows 130 too
        if "Traceback" in text or p.returncode not in (130, -signal.SIGINT):
            kind = "SILENT" if p.returncode == 0 else "OBSCURE"
        else:
            kind = "OK" if last == ["specviz run: interrupted (Ctrl+C)"] and not out else "OBSCURE"
        outcomes.append((kind, when, f"exit {p.returncode}: {text.strip()[-600:]}"))
    record(outcomes)


CONSOLE_SCRIPT = """#!/usr/bin/env python
# -*- coding: utf-8 -*-
import sys
from specviz.cli import main
if __name__ == "__main__":
    sys.exit(main())
"""
"""What pip writes as the installed `specviz` command (its entry point `specviz.cli:main`)."""


def numpy_loading(pid: int) -> bool:
    """Whether process `pid` has mapped numpy's core extension (it is then in `import specviz`, before main())."""
    try:
        return "_multiarray_umath" in Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return False


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/PID/maps")
def test_ctrl_c_while_the_command_still_imports_is_one_line(tmp_path):
    """Ctrl+C in the first fraction of a second, while `import specviz` loads numpy (before main() can catch it), in
    the installed console script and in `python -m specviz`: exit 130 and one line. It was a KeyboardInterrupt
    traceback, or numpy's ImportError about PyCapsule_Import."""
    script = tmp_path / "specviz"
    script.write_text(CONSOLE_SCRIPT)
    env = {**os.environ, "SPECVIZ_CACHE": str(tmp_path / "cache")}
    outcomes = []
    for how, argv in (("console script", [sys.executable, str(script)]), ("python -m specviz", PY)):
        for _ in range(3):
            p = subprocess.Popen(
                [*argv, "models", "list"],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
                preexec_fn=ctrl_c_heard,
            )
            deadline = time.monotonic() + 60
            while p.poll() is None and not numpy_loading(p.pid) and time.monotonic() < deadline:
                time.sleep(0.0005)
            p.send_signal(signal.SIGINT)
            try:
                out, err = p.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                p.kill()
                p.communicate()
                outcomes.append(("HANG", how, ""))
                continue
            text = err.decode("utf-8", "replace")
            ok = p.returncode == 130 and text == "specviz: interrupted (Ctrl+C)\n" and not out
            outcomes.append(("OK" if ok else "OBSCURE", how, f"exit {p.returncode}: {text.strip()[-600:]}"))
    record(outcomes)


def test_main_takes_ctrl_c_back_from_the_start_up_guard(monkeypatch, capsys):
    """In the command, `specviz.startup` ends a Ctrl+C at once until main() runs; main() then ends it itself (its
    clean-up runs: a folder lock, a temporary file), and outside the command nothing is set."""
    from specviz import startup

    previous = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        monkeypatch.setattr(sys, "orig_argv", [sys.executable, "-m", "pytest"])
        assert startup.guard() is False and signal.getsignal(signal.SIGINT) is signal.default_int_handler
        monkeypatch.setattr(sys, "orig_argv", [sys.executable, "-m", "specviz", "--version"])
        assert startup.guard() is True and signal.getsignal(signal.SIGINT) is startup.interrupted
        code, out, _ = call(["--version"], capsys)
        assert code == 0 and out.startswith("specviz ")
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, previous)


LAB_CONFIGS = {  # a Jupyter config file that empties the login, beside JUPYTER_TOKEN=s3cret (None: no file)
    "server py": ("jupyter_server_config.py", "c.IdentityProvider.token = ''\n"),
    "lab py, old name": ("jupyter_lab_config.py", "c.ServerApp.token = ''\n"),
    "notebook json": ("jupyter_notebook_config.json", '{"NotebookApp": {"token": ""}}'),
    "spaces": ("jupyter_server_config.json", '{"IdentityProvider": {"token": "   "}}'),
    "another login": (
        "jupyter_config.py",
        "c.ServerApp.identity_provider_class = 'jupyter_server.auth.IdentityProvider'",
    ),
    "no config file": None,
}


def http_status(url: str) -> int | None:
    """The HTTP status `url` answers with; None when nothing answers."""
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            return resp.status
    except urllib.error.HTTPError as err:
        return err.code
    except OSError:
        return None


@pytest.mark.slow
def test_lab_guard_judges_what_jupyter_will_use(tmp_path):
    """The issue's case with a real JupyterLab on 0.0.0.0: $JUPYTER_TOKEN=s3cret and a config file that empties the
    token. Refused in one line before Jupyter listens (it used to answer /api/status without a token); with no such
    file the server starts and /api/status needs $JUPYTER_TOKEN."""
    pytest.importorskip("jupyterlab")
    from conftest import free_port

    procs = []
    for name, config in LAB_CONFIGS.items():
        home = tmp_path / name.replace(" ", "_").replace(",", "")
        (home / "config").mkdir(parents=True)
        (home / "nb").mkdir()
        if config is not None:
            (home / "config" / config[0]).write_text(config[1])
        env = {k: v for k, v in os.environ.items() if k != "JUPYTER_TOKEN_FILE"}
        env |= {"JUPYTER_TOKEN": "s3cret", "JUPYTER_CONFIG_DIR": str(home / "config")}
        env |= {"JUPYTER_RUNTIME_DIR": str(home / "runtime"), "JUPYTERLAB_WORKSPACES_DIR": str(home / "ws")}
        port = free_port()
        argv = ["lab", "--ip", "0.0.0.0", "--port", str(port), "--notebooks", str(home / "nb")]
        log = open(home / "log", "wb")  # noqa: SIM115 (closed below)
        p = subprocess.Popen([*PY, *argv], env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        procs.append((name, config, p, port, log, home / "log"))
    outcomes = []
    deadline = time.monotonic() + 150
    for name, config, p, port, log, log_path in procs:
        status = None
        while p.poll() is None and time.monotonic() < deadline and status is None:
            status = http_status(f"http://127.0.0.1:{port}/api/status") or time.sleep(0.5)
        text = log_path.read_text("utf-8", "replace")
        if status is not None:  # it serves: only right with no config file and the token enforced
            with_token = http_status(f"http://127.0.0.1:{port}/api/status?token=s3cret")
            kind = "OK" if config is None and status in (401, 403) and with_token == 200 else "SILENT"
        elif p.returncode is None:
            kind = "HANG"
        else:
            kind = classify(p.returncode, text, "error", "specviz lab") if config else "OBSCURE"
            kind = "OBSCURE" if kind == "GOOD_ERROR" and "refusing" not in text else kind
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGTERM)
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        log.close()
        outcomes.append((kind, name, f"{status=}, exit {p.returncode}: {text.strip()[-500:]}"))
    record(outcomes)


def test_zz_counts():
    """The totals of every case above (`pytest -s` prints them)."""
    print(f"\nhostile CLI: {dict(sorted(COUNTS.items()))}; bad ({'/'.join(BAD)}): {sum(COUNTS[k] for k in BAD)}")
    assert not any(COUNTS[k] for k in BAD)


# ------------------------------------------------------------------------------ the reader against traitlets


TRAITLETS_CASES = [
    ["--ServerApp.ip=0.0.0.0", "--IdentityProvider.token", "", "x.ipynb"],
    ["-ServerApp.ip=::", "--ip", "10.0.0.1"],
    ["--ip=1.2.3.4", "--port", "-5", "--no-browser", "--allow-root"],
    ["--NotebookApp.token=''", "-y", "--debug", "--ServerApp.password", "sha1:x"],
    ["--notebook-dir", "/tmp", "--config=c.py", "--", "--IdentityProvider.token="],
    ["--token=x", "-ip=0.0.0.0", "--i=1", "--ServerApp.root_dir=a=b"],
    ["--watch=1", "--Foo.bar_baz", "-", "file"],
    ["--port-retries=3", "--log-level", "10", "--app-dir", "/x", "--gateway-url=http://g", "--no-browser"],
]


@pytest.mark.parametrize("argv", TRAITLETS_CASES)
def test_reader_agrees_with_traitlets(argv):
    """specviz reads jupyter arguments as traitlets' own loader does (the settings and their values)."""
    from traitlets.config.loader import KVArgParseConfigLoader

    flags = {name: ({"Flag": {name.replace("-", "_"): True}}, "") for name in jupyter_args.LAB_FLAGS - {"watch"}}
    config = KVArgParseConfigLoader(argv, aliases=jupyter_args.LAB_ALIASES, flags=flags).load_config()
    theirs = {
        f"{section}.{key}" if isinstance(values, dict) else section: value
        for section, values in config.items()
        if section != "Flag"
        for key, value in (values.items() if isinstance(values, dict) else [(None, values)])
    }
    settings, _ = jupyter_args.read_traitlets_args(argv, jupyter_args.LAB_ALIASES, jupyter_args.LAB_FLAGS)
    ours = {key: value for key, value, _ in settings}
    # a setting given twice: traitlets keeps both (Jupyter then refuses); specviz passes the last one
    assert {k: v[-1] if isinstance(v, list) else str(v) for k, v in theirs.items()} == ours


@pytest.mark.slow
def test_alias_tables_match_the_installed_servers():
    """The aliases specviz reads are the ones jupyter lab and voila define (a new `--token` alias would show)."""
    pytest.importorskip("jupyterlab")
    pytest.importorskip("voila")
    from jupyter_server.serverapp import ServerApp
    from jupyterlab.labapp import LabApp
    from voila.app import Voila

    def default(cls, name):
        value = getattr(cls, name)
        return value if isinstance(value, dict) else cls.class_traits()[name].default()

    lab_aliases = {**default(ServerApp, "aliases"), **default(LabApp, "aliases")}
    lab_flags = {*default(ServerApp, "flags"), *default(LabApp, "flags")}
    assert {k: v for k, v in lab_aliases.items() if isinstance(k, str)} == jupyter_args.LAB_ALIASES
    assert lab_flags == jupyter_args.LAB_FLAGS
    assert default(Voila, "aliases") == jupyter_args.VOILA_ALIASES
    assert set(default(Voila, "flags")) == jupyter_args.VOILA_FLAGS
