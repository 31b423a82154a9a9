"""Packaging stays consistent: pyproject.toml, environment.yml and binder/ list the
same packages; the Makefile's torch pin satisfies pyproject; the browser stack works."""

from __future__ import annotations

import re
import stat
from pathlib import Path

import pytest
import tomllib
import yaml
from packaging.requirements import Requirement
from packaging.version import Version

import specviz

REPO = Path(__file__).resolve().parent.parent

# conda-forge name -> PyPI name, where they differ.
CONDA_TO_PYPI = {
    "pytorch": "torch",
    "pytorch-cpu": "torch",
    "pytorch-gpu": "torch",
    "python-kaleido": "kaleido",
    "pyyaml": "pyyaml",
}
# Entries of a conda environment that are tools, not project dependencies.
CONDA_IGNORED = {"python", "pip"}


def normalize(name: str) -> str:
    """PEP 503 normalisation: lower case, runs of -_. become -."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _name_of_spec(spec: str) -> str:
    """Package name of a conda/pip spec: 'pytorch-cpu>=2.1', 'numpy =1.26', 'a::b'."""
    spec = spec.split("::")[-1].strip()
    return re.split(r"[\s<>=!~\[;@]", spec, maxsplit=1)[0]


EXTRAS = ("lm", "apps", "export")  # everything [all] installs, as conda and Binder do


def pyproject_requirements(pyproject: dict, extras=EXTRAS) -> list[Requirement]:
    """The core dependencies plus those of `extras` (not `all`, which only names the others, nor `dev`)."""
    project = pyproject["project"]
    specs = list(project["dependencies"])
    for extra in extras:
        specs += project.get("optional-dependencies", {}).get(extra, [])
    return [Requirement(d) for d in specs]


def pyproject_runtime_names(pyproject: dict, extras=EXTRAS) -> set[str]:
    return {normalize(r.name) for r in pyproject_requirements(pyproject, extras)}


def requirement(pyproject: dict, name: str) -> Requirement:
    """The requirement on `name` in the core or any extra."""
    return next(r for r in pyproject_requirements(pyproject) if normalize(r.name) == name)


def conda_env_names(env: dict) -> set[str]:
    """Dependency names of a conda environment.yml, conda and `pip:` entries, as PyPI names."""
    names: set[str] = set()
    for entry in env.get("dependencies") or []:
        if isinstance(entry, dict):
            for spec in entry.get("pip") or []:
                spec = spec.strip()
                if spec.startswith("-"):  # -e ., -r file, options
                    continue
                names.add(normalize(Requirement(spec).name))
            continue
        name = normalize(_name_of_spec(str(entry)))
        if name in CONDA_IGNORED:
            continue
        names.add(normalize(CONDA_TO_PYPI.get(name, name)))
    return names


def compare_dependency_lists(reference: set[str], other: set[str]) -> list[str]:
    """Human-readable differences between two dependency-name sets ([] if in step)."""
    problems = []
    for name in sorted(reference - other):
        problems.append(f"missing: {name}")
    for name in sorted(other - reference):
        problems.append(f"extra: {name}")
    return problems


def load_toml(path: Path) -> dict:
    with open(path, "rb") as fh:
        return tomllib.load(fh)


def load_yaml(path: Path) -> dict:
    with open(path) as fh:
        return yaml.safe_load(fh)


@pytest.fixture(scope="module")
def pyproject() -> dict:
    return load_toml(REPO / "pyproject.toml")


# ---------------------------------------------------------------- the comparison itself


def test_conda_env_names_maps_and_normalises():
    env = {
        "channels": ["conda-forge"],
        "dependencies": [
            "python=3.11",
            "pip",
            "conda-forge::pytorch-cpu>=2.1",
            "python-kaleido >=1.0",
            "Safetensors",
            "typing_extensions",
            {"pip": ["-e .", "Some.Pkg[extra]>=1"]},
        ],
    }
    assert conda_env_names(env) == {"torch", "kaleido", "safetensors", "typing-extensions", "some-pkg"}


def test_comparison_reports_mismatches():
    pyproject = {"project": {"dependencies": ["numpy>=1.24", "torch>=2.1", "plotly"]}}
    env = {"dependencies": ["python=3.11", "numpy", "pytorch", "scipy"]}
    problems = compare_dependency_lists(pyproject_runtime_names(pyproject), conda_env_names(env))
    assert problems == ["missing: plotly", "extra: scipy"]
    env_ok = {"dependencies": ["numpy", "pytorch-cpu", {"pip": ["plotly>=6"]}]}
    assert compare_dependency_lists(pyproject_runtime_names(pyproject), conda_env_names(env_ok)) == []


# ---------------------------------------------------------------- the project's files


EXPECTED_CORE = {"numpy", "scipy", "plotly", "ipywidgets", "anywidget", "prometheus-client"}  # vllm-stats, no torch
EXPECTED_RUNTIME = EXPECTED_CORE | {
    "jupyterlab",
    "notebook",
    "voila",
    "jupytext",
    "jupyterlab-rise",  # slides
    "jupyterlab-language-pack-zh-cn",
    "jupyter-server-mathjax",  # offline math in the static site
    "torch",
    "transformers",
    "safetensors",
    "tokenizers",
    "gguf",
    "accelerate",
    "kaleido",
}


def test_pyproject_metadata(pyproject):
    project = pyproject["project"]
    assert project["name"] == "specviz"
    assert project["requires-python"] == ">=3.10"
    assert pyproject_runtime_names(pyproject) == EXPECTED_RUNTIME
    assert pyproject_runtime_names(pyproject, extras=()) == EXPECTED_CORE  # a plain install pulls no torch
    assert {normalize(r.name) for r in pyproject_requirements(pyproject, extras=("lm",))} >= {"torch", "transformers"}
    assert project["optional-dependencies"]["all"] == ["specviz[lm,apps,export]"]
    dev = {normalize(Requirement(d).name) for d in project["optional-dependencies"]["dev"]}
    assert {"pytest", "hypothesis", "nbclient", "nbformat", "ipykernel", "playwright", "pytest-timeout"} <= dev
    assert project["scripts"]["specviz"] == "specviz.cli:main"
    assert "version" in project["dynamic"]
    assert pyproject["tool"]["setuptools"]["dynamic"]["version"]["attr"] == "specviz.__version__"


def test_installed_metadata_matches_package_version():
    from importlib.metadata import PackageNotFoundError, version

    try:
        installed = version("specviz")
    except PackageNotFoundError:
        pytest.skip("specviz is not pip-installed in this environment")
    assert installed == specviz.__version__


@pytest.mark.parametrize("env_file", ["environment.yml", "binder/environment.yml"])
def test_conda_environment_in_step_with_pyproject(pyproject, env_file):
    env = load_yaml(REPO / env_file)
    assert "conda-forge" in env["channels"]
    assert any(str(d).replace(" ", "").startswith("python=3.11") for d in env["dependencies"])
    problems = compare_dependency_lists(pyproject_runtime_names(pyproject), conda_env_names(env))
    assert problems == [], f"{env_file} out of step with pyproject.toml: {problems}"


def test_binder_post_build_installs_package_without_deps():
    post_build = REPO / "binder" / "postBuild"
    text = post_build.read_text()
    assert "pip install --no-deps -e ." in text
    assert post_build.stat().st_mode & stat.S_IXUSR, "binder/postBuild must be executable"


def test_makefile_torch_pin_satisfies_pyproject(pyproject):
    makefile = (REPO / "Makefile").read_text()
    match = re.search(r"^TORCH_SPEC\s*\?=\s*(\S+)\s*$", makefile, re.M)
    assert match, "Makefile must define TORCH_SPEC ?= torch==X.Y.Z"
    pinned = Requirement(match.group(1))
    assert normalize(pinned.name) == "torch"
    (pin,) = [s for s in pinned.specifier if s.operator == "=="]
    torch_req = requirement(pyproject, "torch")
    assert torch_req.specifier.contains(Version(pin.version)), (
        f"Makefile pins {pinned}, outside pyproject's {torch_req}: pip would fetch another torch"
    )


def lower_bound(spec: str) -> str:
    """The X of a 'name>=X' requirement (pip or conda spelling)."""
    (bound,) = [s.version for s in Requirement(spec.replace(" ", "")).specifier if s.operator == ">="]
    return bound


def test_transformers_floor_is_declared_everywhere_and_tested(pyproject):
    """pyproject, both conda files, the Makefile's test-floor and specviz name one transformers floor."""
    from specviz.lm.engine.models import TRANSFORMERS_FLOOR

    makefile = (REPO / "Makefile").read_text()
    match = re.search(r"^TF_FLOOR\s*:?=\s*(\S+)\s*$", makefile, re.M)
    assert match, "Makefile must define TF_FLOOR := X.Y.Z (the version test-floor installs)"
    floors = {"Makefile": match.group(1), "specviz.lm.engine.models": TRANSFORMERS_FLOOR}
    floors["pyproject.toml"] = lower_bound(str(requirement(pyproject, "transformers")))
    for env_file in ("environment.yml", "binder/environment.yml"):
        env = load_yaml(REPO / env_file)
        floors[env_file] = lower_bound(
            next(str(d) for d in env["dependencies"] if str(d).replace(" ", "").startswith("transformers>="))
        )
    assert len(set(floors.values())) == 1, f"transformers floors differ: {floors}"
    recipe = makefile.split("\ntest:", 1)[1].split("\n\n", 1)[0]
    assert "test-floor" in recipe, "`make test` must run test-floor"
    tests = re.search(r"^FLOOR_TESTS\s*:?=((?:.*\\\n)*.*)$", makefile, re.M).group(1).split()
    tests = [t for t in tests if t != "\\"]
    assert "tests/test_lm_compat.py" in tests and all((REPO / t.split("::")[0]).is_file() for t in tests), tests
    for t in tests:  # a test named by node id must still exist (a rename would silently drop it from the floor)
        if "::" in t:
            path, name = t.split("::", 1)
            assert f"def {name}(" in (REPO / path).read_text(encoding="utf-8"), f"FLOOR_TESTS names {t}: not found"
    deselected = re.search(r"^FLOOR_DESELECT\s*:?=((?:.*\\\n)*.*)$", makefile, re.M).group(1).split()
    for t in (t for t in deselected if t != "\\"):  # a renamed test would silently come back into the floor lane
        path, name = t.split("::", 1)
        assert f"def {name}(" in (REPO / path).read_text(encoding="utf-8"), f"FLOOR_DESELECT names {t}: not found"


def test_ci_script_is_executable_bash():
    ci = REPO / ".ci" / "run"
    assert ci.read_text().startswith("#!/usr/bin/env bash")
    assert "set -euo pipefail" in ci.read_text()
    assert ci.stat().st_mode & stat.S_IXUSR


# ---------------------------------------------------------------- the browser stack


@pytest.mark.browser
def test_playwright_drives_debian_chromium(browser_context):
    """Playwright works with Debian's Chromium (no Playwright browser download)."""
    page = browser_context.new_page()
    page.set_content("<h1 id='t'>specviz</h1><script>document.title = 'ok:' + (6 * 7)</script>")
    assert page.text_content("#t") == "specviz"
    assert page.title() == "ok:42"


def _binder_badges():
    import importlib.util

    spec = importlib.util.spec_from_file_location("binder_badges", REPO / "scripts" / "binder_badges.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_readme_binder_badges_open_lab_and_the_dashboard():
    """Both badges build the same repository and open paths that exist in it."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"https://mybinder\.org/v2/gh/([\w.-]+/[\w.-]+)/([\w./-]+)\?urlpath=([\w./%-]+)", text)
    assert len(links) == 2, links
    assert len({(repo, ref) for repo, ref, _ in links}) == 1, "both badges must build the same repository"
    paths = {p for _, _, p in links}
    assert paths == {"lab/tree/notebooks", "voila/render/notebooks/dashboard.ipynb"}, paths
    assert (REPO / "notebooks").is_dir() and (REPO / "notebooks" / "dashboard.ipynb").is_file()


def test_binder_badges_script_rewrites_only_the_repository():
    mod = _binder_badges()
    text = (REPO / "README.md").read_text(encoding="utf-8")
    new = mod.set_repo(text, "ada/specviz", ref="main")
    assert mod.badge_repos(new) == ["ada/specviz", "ada/specviz"]
    assert new.count("/v2/gh/ada/specviz/main?urlpath=") == 2
    # nothing else changes
    assert mod.BADGE.sub("", new) == mod.BADGE.sub("", mod.set_repo(text, "x/y"))
    assert mod.repo_from_remote("git@github.com:ada/specviz.git\n") == "ada/specviz"
    with pytest.raises(ValueError, match="not a GitHub remote"):
        mod.repo_from_remote("/srv/git/specviz")
    with pytest.raises(ValueError, match="owner/name"):
        mod.set_repo(text, "specviz")


LIGHT_SCRIPT = r"""
import sys
for name in ("torch", "transformers", "jupyterlab", "voila"):
    sys.modules[name] = None  # as if `pip install specviz` (no extras): importing them fails
import specviz as sv
import specviz.figures, specviz.widgets
p, q = sv.TUTORIAL_P, sv.TUTORIAL_Q
assert abs(sv.acceptance_rate(p, q) - 0.8) < 1e-12
assert sv.spec_sample(p, q, n=1000, seed=0).tokens.shape == (1000,)
sv.money_diagram(p, q)
sv.money_diagram_app()
from specviz.widgets import vllm_live_app
for name, call in (("specviz.lm.load_pair", lambda: __import__("specviz.lm", fromlist=["load_pair"])),
                   ("specviz.widgets.live_app", lambda: __import__("specviz.widgets", fromlist=["live_app"])),
                   ("spec_sample_torch", lambda: sv.spec_sample_torch(None, None))):
    try:
        call()
    except ImportError as e:
        assert "pip install 'specviz[lm]'" in str(e), (name, e)
    else:
        raise AssertionError(name + " imported without torch")
from specviz.cli import main
for cmd in ("lab", "dashboard"):
    try:
        main([cmd])
    except SystemExit as e:
        assert e.code == 2
    else:
        raise AssertionError(cmd + " ran without its app")
print("light install ok")
"""


@pytest.mark.slow
def test_the_light_install_works_without_torch_or_the_apps(tmp_path):
    """Core, figures and widgets import and run with torch and the apps missing; the rest names its extra."""
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-c", LIGHT_SCRIPT], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "light install ok" in r.stdout, r.stderr[-2000:]
    assert "pip install 'specviz[apps]'" in r.stderr  # specviz lab / dashboard said which extra
