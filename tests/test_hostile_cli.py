"""The command line tried as a hostile user would (issue 18): no traceback, no silent server, no stray file.

Each case ends in one of OK (it did what was asked), GOOD_ERROR (exit status != 0 and one line
`specviz CMD: error: ...` on stderr), OBSCURE (a traceback, or an error without that line), SILENT (exit 0
where it should have refused, or a server started that should not have) or HANG (no answer in time).
No server is ever started: `cli._run` (the exec) is replaced by a recorder. `pytest -s` prints the counts.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections import Counter

import pytest

from specviz import cli

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
    monkeypatch.setattr(cli, "_run", lambda cmd, cwd: started.append(cmd) or 0)
    for name in ("JUPYTER_TOKEN", "JUPYTER_TOKEN_FILE"):
        monkeypatch.delenv(name, raising=False)
    return started


def call(argv: list[str], capsys) -> tuple[int, str, str]:
    """`specviz ARGV` in this process: (exit status, stdout, stderr)."""
    try:
        code = cli.main(list(argv))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


def lab_final(cmd: list[str]) -> dict[str, list[str]]:
    """Every value each setting gets on a `jupyter lab` command line, read as traitlets reads it."""
    settings, _ = cli.read_traitlets_args(cmd[4:], cli.LAB_ALIASES, cli.LAB_FLAGS)
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
            once = all(len(final.get(k, [])) <= 1 for k in cli.LAB_MANAGED)
            tokens = final.get(cli.LAB_TOKEN, [""])
            good = tokens[0].strip() if token is None else tokens[0] == token or not token
            kind = kind if once and good and not any(k in final for k in cli.LAB_SPELLINGS) else "SILENT"
            if token is None and cli.LAB_PASSWORD not in final:
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
        if expect == "ok" and launches and cli.LAB_TOKEN in lab_final(launches[-1]):
            kind = "SILENT"  # Jupyter's own $JUPYTER_TOKEN is kept, not replaced
        outcomes.append((kind, env, err.strip()))
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
            settings, _ = cli.read_traitlets_args(launches[-1][4:-1], cli.VOILA_ALIASES, cli.VOILA_FLAGS)
            ips = [v for k, v, _ in settings if k == cli.VOILA_IP]
            ports = [v for k, v, _ in settings if k == cli.VOILA_PORT]
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
        monkeypatch.setattr(cli.os, "fdopen", lambda fd, mode: Full(fd))
    else:
        monkeypatch.setattr(cli.os, "open", refuse)
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

    flags = {name: ({"Flag": {name.replace("-", "_"): True}}, "") for name in cli.LAB_FLAGS - {"watch"}}
    config = KVArgParseConfigLoader(argv, aliases=cli.LAB_ALIASES, flags=flags).load_config()
    theirs = {
        f"{section}.{key}" if isinstance(values, dict) else section: value
        for section, values in config.items()
        if section != "Flag"
        for key, value in (values.items() if isinstance(values, dict) else [(None, values)])
    }
    settings, _ = cli.read_traitlets_args(argv, cli.LAB_ALIASES, cli.LAB_FLAGS)
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
    assert {k: v for k, v in lab_aliases.items() if isinstance(k, str)} == cli.LAB_ALIASES
    assert lab_flags == cli.LAB_FLAGS
    assert default(Voila, "aliases") == cli.VOILA_ALIASES
    assert set(default(Voila, "flags")) == cli.VOILA_FLAGS
