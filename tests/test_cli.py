"""The ``specviz`` command line: version, help, refusals, and a real JupyterLab start."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from conftest import free_port

import specviz
from specviz import cli
from specviz.cli import common, jupyter_args, servers


def run_cli(*args: str, timeout: float = 60, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "specviz", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        **kwargs,
    )


def test_version_flag_prints_package_version():
    result = run_cli("--version")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"specviz {specviz.__version__}"
    assert specviz.__version__ == "0.1.0"


def test_console_script_is_installed():
    script = Path(sys.executable).parent / "specviz"
    if not script.exists():
        pytest.skip("specviz console script not in this interpreter's bin/ (not installed with pip?)")
    result = subprocess.run([str(script), "--version"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"specviz {specviz.__version__}"


def call(argv, capsys) -> tuple[int, str, str]:
    """Run ``specviz ARGV`` in this process: (exit status, stdout, stderr)."""
    try:
        code = cli.main(list(argv))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


def test_help_lists_subcommands(capsys):
    code, out, _ = call(["--help"], capsys)
    assert code == 0
    assert "lab" in out and "dashboard" in out
    for sub in ("lab", "dashboard"):
        code, out, _ = call([sub, "--help"], capsys)
        assert code == 0
        assert "--port" in out and "--notebooks" in out
    assert "--allow-remote" in call(["dashboard", "--help"], capsys)[1]


def test_no_subcommand_prints_help_and_fails(capsys):
    code, out, _ = call([], capsys)
    assert code == 2
    assert "dashboard" in out


def test_dashboard_refuses_non_loopback_host_without_flag(tmp_path):
    """As a real process: exit 2, a clear message, nothing started."""
    (tmp_path / "dashboard.ipynb").write_text("{}")
    result = run_cli("dashboard", "--host", "0.0.0.0", "--notebooks", str(tmp_path))
    assert result.returncode == 2
    assert "non-loopback address '0.0.0.0'" in result.stderr
    assert "--host 0.0.0.0 --allow-remote" in result.stderr
    assert "Dashboard URL" not in result.stdout


@pytest.mark.parametrize("host", ["192.0.2.10", "::", "example.org"])
def test_dashboard_refuses_other_non_loopback_hosts(tmp_path, host, monkeypatch, capsys):
    monkeypatch.setattr(servers, "exec_server", lambda cmd, cwd: pytest.fail("server started"))
    (tmp_path / "dashboard.ipynb").write_text("{}")
    code, out, err = call(["dashboard", "--host", host, "--notebooks", str(tmp_path)], capsys)
    assert code == 2
    assert "non-loopback" in err and "--allow-remote" in err


def test_dashboard_missing_notebook_exits_2_with_clear_message(tmp_path):
    result = run_cli("dashboard", "--notebooks", str(tmp_path))
    assert result.returncode == 2
    assert "dashboard notebook not found" in result.stderr
    assert str(tmp_path / "dashboard.ipynb") in result.stderr


def test_lab_missing_notebooks_folder_exits_2(tmp_path, capsys):
    code, _, err = call(["lab", "--notebooks", str(tmp_path / "nope")], capsys)
    assert code == 2
    assert "notebooks folder not found" in err


def test_bad_port_is_a_usage_error(capsys):
    code, _, err = call(["dashboard", "--port", "70000"], capsys)
    assert code == 2 and "port out of range" in err


@pytest.mark.parametrize(
    "host, expected",
    [
        ("127.0.0.1", True),
        ("127.1.2.3", True),
        ("localhost", True),
        ("::1", True),
        ("[::1]", True),
        ("0.0.0.0", False),
        ("::", False),
        ("10.0.0.1", False),
        ("myhost", False),
    ],
)
def test_is_loopback(host, expected):
    assert servers.is_loopback(host) is expected


def test_notebooks_dir_defaults_to_repo_notebooks(repo_root):
    assert common.repo_root() == repo_root
    assert common.find_notebooks_dir() == (repo_root / "notebooks").resolve()
    assert common.find_notebooks_dir("/some/where") == Path("/some/where").resolve()


def test_dashboard_command_line(tmp_path):
    nb = tmp_path / "dashboard.ipynb"
    cmd = jupyter_args.build_dashboard_command(nb, port=9123, extra=["--debug"])
    assert cmd[:3] == [sys.executable, "-m", "voila"]
    assert "--no-browser" in cmd and "--port=9123" in cmd and "--Voila.ip=127.0.0.1" in cmd
    assert "--debug" in cmd
    assert cmd[-1] == str(nb)
    # Notebook 7's lab extension stays out of the dashboard page (it fails to load there);
    # voila.json at the repository root (used by `voila` run there, and Binder) says the same
    assert "--VoilaConfiguration.extension_denylist=@jupyter-notebook/lab-extension" in cmd
    voila_json = json.loads((common.repo_root() / "voila.json").read_text(encoding="utf-8"))
    assert tuple(voila_json["VoilaConfiguration"]["extension_denylist"]) == jupyter_args.VOILA_EXTENSION_DENYLIST


def test_lab_command_line_adds_allow_root_only_for_root(tmp_path):
    as_root = jupyter_args.build_lab_command(tmp_path, port=9124, token="t", as_root=True)
    as_user = jupyter_args.build_lab_command(tmp_path, port=9124, token="t", as_root=False)
    assert "--allow-root" in as_root and "--allow-root" not in as_user
    assert as_user[:4] == [sys.executable, "-m", "jupyter", "lab"]
    for flag in (
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        "--ServerApp.port=9124",
        f"--ServerApp.root_dir={tmp_path}",
        "--IdentityProvider.token=t",
    ):
        assert flag in as_user


def test_dashboard_prints_url_before_starting_voila(tmp_path, monkeypatch, capsys):
    (tmp_path / "dashboard.ipynb").write_text("{}")
    started = {}

    def fake_run(cmd, cwd):
        started["cmd"], started["cwd"] = cmd, cwd
        return 0

    monkeypatch.setattr(servers, "exec_server", fake_run)
    assert cli.main(["dashboard", "--notebooks", str(tmp_path), "--port", "9125"]) == 0
    out = capsys.readouterr().out
    assert "Dashboard URL:  http://127.0.0.1:9125/" in out
    assert started["cmd"][-1] == str(tmp_path / "dashboard.ipynb")
    assert cli.main(["dashboard", "--notebooks", str(tmp_path), "--host", "0.0.0.0", "--allow-remote"]) == 0
    assert "--Voila.ip=0.0.0.0" in started["cmd"]
    assert "reachable from other machines" in capsys.readouterr().out
    # one pre-executed kernel by default; --no-preheat drops it (Voila refuses a flag given twice)
    assert "--preheat_kernel=True" in started["cmd"] and "--pool_size=1" in started["cmd"]
    assert cli.main(["dashboard", "--notebooks", str(tmp_path), "--no-preheat"]) == 0
    assert not any(a.startswith(("--preheat_kernel", "--pool_size")) for a in started["cmd"])


def _get(url: str, timeout: float = 5) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


@pytest.mark.slow
def test_lab_starts_and_answers_api(tmp_path):
    """`specviz lab` really starts JupyterLab: GET /api answers within ~60 s."""
    port, token = free_port(), "specviz-test-token"
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    env = dict(os.environ)
    # Keep Jupyter's runtime/config files out of the user's home.
    env["JUPYTER_RUNTIME_DIR"] = str(tmp_path / "runtime")
    env["JUPYTER_CONFIG_DIR"] = str(tmp_path / "config")
    env["JUPYTERLAB_WORKSPACES_DIR"] = str(tmp_path / "workspaces")
    log_path = tmp_path / "lab.log"
    with open(log_path, "w") as log:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "specviz",
                "lab",
                "--port",
                str(port),
                "--token",
                token,
                "--notebooks",
                str(notebooks),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        status = None
        while time.monotonic() < deadline:
            assert proc.poll() is None, f"specviz lab exited early:\n{log_path.read_text()}"
            try:
                status, body = _get(f"{base}/api?token={token}")
                if status == 200:
                    break
            except OSError:
                pass
            time.sleep(0.5)
        assert status == 200, f"no answer from {base}/api in 60 s:\n{log_path.read_text()}"
        assert "version" in json.loads(body)
        # The token is enforced: /api/status needs it.
        assert _get(f"{base}/api/status?token={token}")[0] == 200
        assert _get(f"{base}/api/status")[0] in (401, 403)
        # exec: the pid we started is the Jupyter server itself.
        assert "JupyterLab on" in log_path.read_text()
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


# ------------------------------------------------------------------------------ specviz run


@pytest.mark.slow
def test_run_json_reports_vllm_statistics(capsys):
    import json

    from specviz.cli import main

    rc = main(
        [
            "run",
            "--prompt",
            "ROMEO:\n",
            "--max-new-tokens",
            "24",
            "--gamma",
            "3",
            "--temperature",
            "0",
            "--device",
            "cpu",
            "--json",
        ]
    )
    out = json.loads(capsys.readouterr().out)
    assert rc == 0
    need = {
        "text",
        "ids",
        "ar_ids",
        "tokens_per_second",
        "ar_tokens_per_second",
        "speedup",
        "acceptance_rate",
        "mean_acceptance_length",
        "alpha",
        "per_position_acceptance",
    }
    assert need <= set(out)
    assert out["ids"] == out["ar_ids"] and out["greedy_equal"] is True and len(out["ids"]) == 24
    assert len(out["per_position_acceptance"]) == 3 and 0 <= out["acceptance_rate"] <= 1
    assert out["mean_acceptance_length"] == pytest.approx(1 + sum(out["per_position_acceptance"]), abs=1e-12)
    assert out["finish_reason"] == "length" and out["gamma_per_step"] and max(out["gamma_per_step"]) <= 3
    assert out["speedup"] == pytest.approx(out["tokens_per_second"] / out["ar_tokens_per_second"])


@pytest.mark.slow  # a second or more on 2 cores (measured 2026-12-07)
def test_run_text_report_with_prompt_lookup(capsys):
    from specviz.cli import main

    rc = main(
        [
            "run",
            "--draft",
            "prompt-lookup",
            "--prompt",
            "abcabcabcabcabc",
            "--max-new-tokens",
            "16",
            "--temperature",
            "0",
            "--device",
            "cpu",
        ]
    )
    text = capsys.readouterr().out
    assert rc == 0
    for label in (
        "speed-up",
        "acceptance rate",
        "mean acceptance length",
        "per-position acceptance",
        "alpha",
        "greedy output identical to plain decoding: yes",
    ):
        assert label in text


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--target", "./no/such/model"], "no such file or folder"),
        (["--device", "tpu"], "unknown device 'tpu'"),
        (["--temperature", "-1"], "temperature"),
    ],
)
def test_run_bad_input_exits_2_with_one_line(capsys, argv, message):
    from specviz.cli import main

    rc = main(["run", "--max-new-tokens", "4", *argv])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and message in err[-1] and err[-1].startswith("specviz run: error:")


@pytest.mark.parametrize("value", ["-1", "2.5", "fast", "", "1e3"])
def test_run_bad_gamma_is_one_line_exit_2(capsys, value):
    from specviz.cli import main

    with pytest.raises(SystemExit) as e:
        main(["run", "--max-new-tokens", "4", "--gamma", value])
    err = capsys.readouterr().err.strip().splitlines()
    assert e.value.code == 2 and len(err) == 1, err
    assert err[0].startswith("specviz run: error: argument --gamma") and "auto" in err[0]


@pytest.mark.slow
def test_run_defaults_to_auto_gamma_and_says_why_it_ended(capsys):
    """Default γ is auto (each step's γ listed); the bundled models never draw their end token: 'length'.

    Stopping at the end of the turn is tested on SmolLM2 (tests/test_lm_smollm2.py), whose chat turns end.
    """
    import json

    from specviz.cli import main

    argv = ["run", "--prompt", "ROMEO:\n", "--device", "cpu", "--json", "--max-new-tokens", "40"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["gamma"] == "auto" and len(out["gamma_per_step"]) == out["verify_steps"]
    assert out["finish_reason"] == out["ar_finish_reason"] == "length" and len(out["ids"]) == 40
    assert out["ignore_eos"] is False
    assert main([*argv, "--ignore-eos", "--gamma", "0"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["ignore_eos"] is True and out["gamma"] == 0 and set(out["gamma_per_step"]) == {0}


@pytest.mark.slow
def test_run_tree_json_reports_the_shape_and_per_depth_figures(capsys):
    """`--tree 3,2,1`: γ is the tree's depth, the JSON has the shape, acceptance per depth, nodes and tokens per call."""
    from specviz.cli import main

    argv = ["run", "--tree", "3,2,1", "--max-new-tokens", "12", "--device", "cpu", "--json", "--temperature"]
    assert main([*argv, "1"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["tree"] == out["tree_widths"] == [3, 2, 1] and out["gamma"] == 3  # the depth, not 'auto'
    assert len(out["per_position_acceptance"]) == 3 and max(out["gamma_per_step"]) == 3
    assert out["mean_acceptance_length"] == pytest.approx(1 + sum(out["per_position_acceptance"]), abs=1e-12)
    assert 1 < out["nodes_per_step"] <= 3 + 6 + 6  # the tree's nodes (fewer on a last step of capped depth)
    assert out["tokens_per_call"] == pytest.approx(len(out["ids"]) / out["verify_steps"])
    assert main([*argv, "0"]) == 0  # a greedy tree: the target's argmax chain, as plain decoding gives
    out = json.loads(capsys.readouterr().out)
    assert out["greedy_equal"] is True and out["tree_widths"] == [3, 2, 1]


def test_run_tree_text_report_and_depth_defaults(capsys):
    from specviz.cli import main
    from specviz.cli.command import build_parser
    from specviz.cli.run import settings_from_args

    def settings(*argv):
        return settings_from_args(build_parser().parse_args(["run", *argv]))

    assert (settings().tree, settings().gamma) == (None, "auto")
    assert (settings("--tree", "2").tree, settings("--tree", "2").gamma) == (2, 4)  # k at every depth, 4 depths
    assert settings("--tree", "3,2", "--gamma", "auto").gamma == "auto"  # --gamma still chooses (capped at 2)
    assert settings("--tree", "3,2", "--gamma", "1").gamma == 1
    assert main(["run", "--tree", "2", "--gamma", "2", "--max-new-tokens", "6", "--device", "cpu"]) == 0
    text = capsys.readouterr().out
    for label in ("tree 2,", "per depth", "draft tree      2,2", "nodes verified", "tokens per target call"):
        assert label in text, label


@pytest.mark.parametrize("value", ["3,0", "x", "17", "", "16,16"])
def test_run_bad_tree_is_one_line_exit_2(capsys, value):
    from specviz.cli import main

    with pytest.raises(SystemExit) as e:
        main(["run", "--max-new-tokens", "4", "--tree", value])
    err = capsys.readouterr().err.strip().splitlines()
    assert e.value.code == 2 and len(err) == 1, err
    assert err[0].startswith("specviz run: error: argument --tree: tree")


def test_run_tree_with_prompt_lookup_verifies_tries(capsys):
    """A prompt-lookup draft with --tree drafts a trie of earlier continuations; --json reports the tree steps."""
    from specviz.cli import main

    argv = ["run", "--draft", "prompt-lookup", "--tree", "2", "--max-new-tokens", "12", "--device", "cpu", "--json"]
    rc = main([*argv, "--temperature", "0", "--prompt", "abcabdabcabdabc"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["tree"] == 2 and out["greedy_equal"] is True, out


@pytest.mark.slow
def test_an_installed_wheel_ships_the_notebooks(tmp_path):
    """Built as a wheel and installed elsewhere, specviz finds its own notebooks and copies them out."""
    import subprocess
    import sys
    import zipfile

    repo = Path(__file__).resolve().parent.parent
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            str(repo),
            "-w",
            str(tmp_path / "dist"),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = (tmp_path / "dist").glob("specviz-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "specviz/notebooks/dashboard.ipynb" in names and "specviz/py.typed" in names
    assert sum(n.startswith("specviz/notebooks/") and n.endswith(".ipynb") for n in names) >= 12
    site = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site), str(wheel)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    script = (
        "import specviz, specviz.cli as c, sys; from pathlib import Path\n"
        "from specviz.cli.common import find_notebooks_dir, packaged_notebooks\n"
        "from specviz.cli.jupyter_args import build_dashboard_command\n"
        f"assert specviz.__file__.startswith({str(site)!r}), specviz.__file__\n"
        "nb = find_notebooks_dir(); assert nb == packaged_notebooks() and (nb / 'dashboard.ipynb').is_file()\n"
        "cmd = build_dashboard_command(nb / 'dashboard.ipynb'); assert any('dashboard.ipynb' in str(a) for a in cmd)\n"
        "sys.exit(c.main(['notebooks', 'copy']))\n"
    )
    work = tmp_path / "elsewhere"
    work.mkdir()
    r = subprocess.run(
        [sys.executable, "-c", script],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(site)},
    )
    assert r.returncode == 0, r.stderr[-2000:]
    assert (work / "copy" / "05_the_proof_in_three_steps.ipynb").is_file()


# ----------------------------------------------------------------------------- without torch (the plain install)

NO_TORCH = (
    "import sys\n"
    "for name in ('torch', 'transformers'):\n"
    "    sys.modules[name] = None  # as on `pip install specviz`: importing them fails\n"
    "from specviz.cli import main\n"
    "code = main(sys.argv[1:])\n"
    "print('torch loaded:', 'torch' in sys.modules and sys.modules['torch'] is not None, file=sys.stderr)\n"
    "sys.exit(code)\n"
)


REPO_ROOT = Path(__file__).resolve().parent.parent


def run_without_torch(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", NO_TORCH, *args], capture_output=True, text=True, timeout=timeout, cwd=REPO_ROOT
    )


@pytest.fixture
def metrics_server():
    """A local HTTP server whose /metrics is a vLLM page with the four spec-decoding counters."""
    import http.server
    import threading

    from specviz.lm.serve.vllm import ACCEPTED, ACCEPTED_PER_POS, DRAFT_TOKENS, DRAFTS

    labels = 'engine="0",model_name="m"'
    lines = [f"# TYPE {DRAFTS}_total counter", f"{DRAFTS}_total{{{labels}}} 10"]
    lines += [f"# TYPE {DRAFT_TOKENS}_total counter", f"{DRAFT_TOKENS}_total{{{labels}}} 40"]
    lines += [f"# TYPE {ACCEPTED}_total counter", f"{ACCEPTED}_total{{{labels}}} 15"]
    lines += [f"# TYPE {ACCEPTED_PER_POS}_total counter"]
    lines += [f'{ACCEPTED_PER_POS}_total{{{labels},position="{p}"}} {v}' for p, v in enumerate((8, 5, 2, 0))]
    body = ("\n".join(lines) + "\n").encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - the name http.server calls
            ok = self.path == "/metrics"
            self.send_response(200 if ok else 404)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(body) if ok else 0))
            self.end_headers()
            if ok:
                self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.slow  # a second or more on 2 cores (measured 2026-12-07)
def test_vllm_stats_works_without_torch(metrics_server):
    """`specviz vllm-stats URL` only reads a Prometheus page: it runs where importing torch fails."""
    r = run_without_torch("vllm-stats", metrics_server, "--timeout", "5")
    assert r.returncode == 0, r.stderr
    assert f"vLLM at {metrics_server}/metrics" in r.stdout and "model m" in r.stdout, r.stdout
    assert "Traceback" not in r.stderr and "torch loaded: False" in r.stderr
    r = run_without_torch("vllm-stats", metrics_server, "--json", "--timeout", "5")
    assert r.returncode == 0 and json.loads(r.stdout)["accepted_tokens"] == 15, r.stdout + r.stderr


def test_without_torch_run_names_the_extra_in_one_line():
    """No command prints a traceback for a missing extra: `specviz run` names `specviz[lm]` in one line."""
    r = run_without_torch("run", "--prompt", "hi", "--max-new-tokens", "2")
    assert r.returncode == 2, r.stdout + r.stderr
    err = [line for line in r.stderr.splitlines() if not line.startswith("torch loaded")]
    assert len(err) == 1 and "Traceback" not in r.stderr, r.stderr
    assert err[0].startswith("specviz run: error:") and "pip install 'specviz[lm]'" in err[0], err


def test_without_torch_models_list_still_works(tmp_path):
    r = run_without_torch("models", "list")
    assert r.returncode == 0 and "smollm2-135m" in r.stdout, r.stdout + r.stderr
    assert "Traceback" not in r.stderr
