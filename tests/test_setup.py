"""Set-up does not depend on what the machine already has: one list of system packages, one script.

`make test` and .ci/run both run tools/system_packages.sh, which reads tools/system-packages.txt and
installs each package that is missing. These tests check that the two entry points cannot drift (both
call the script, neither installs anything by itself) and drive the script against stub `dpkg-query`,
`id` and `apt-get` commands, so its choices are checked without touching this machine.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from conftest import IN_CI

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "tools" / "system_packages.sh"
LIST = REPO / "tools" / "system-packages.txt"


def listed_packages() -> list[str]:
    """The package names in tools/system-packages.txt, in order."""
    names = []
    for line in LIST.read_text(encoding="utf-8").splitlines():
        name = line.split("#", 1)[0].strip()
        if name:
            names.append(name)
    return names


def make_recipe(target: str) -> tuple[str, str]:
    """(prerequisites, recipe text) of a Makefile target."""
    text = (REPO / "Makefile").read_text(encoding="utf-8")
    match = re.search(rf"^{re.escape(target)}:([^\n]*)\n((?:\t[^\n]*\n)*)", text, re.M)
    assert match, f"no target {target!r} in the Makefile"
    return match.group(1), match.group(2)


def test_the_list_names_what_the_tests_need():
    names = listed_packages()
    assert len(names) == len(set(names)), "a package is listed twice"
    for name in names:
        assert re.fullmatch(r"[a-z0-9][a-z0-9.+-]+", name), f"not a Debian package name: {name!r}"
    # the browser tests and kaleido; a CJK font for the zh static images (test_i18n); make for the README
    for needed in ("chromium", "fonts-wqy-microhei", "make"):
        assert needed in names


def test_make_test_and_ci_run_the_same_script():
    prerequisites, _ = make_recipe("test")
    assert "system-packages" in prerequisites.split(), "make test must set up the system packages first"
    _, recipe = make_recipe("system-packages")
    assert "tools/system_packages.sh" in recipe
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(r"^bash tools/system_packages\.sh\s*$", ci, re.M), ".ci/run must run the same script"


def test_nothing_else_installs_system_packages():
    """Only the script calls apt-get install: a package installed elsewhere would be CI's alone."""
    places = [REPO / "Makefile", REPO / ".ci" / "run", *(REPO / "tools").glob("*.sh"), *(REPO / "scripts").glob("*")]
    offenders = [
        str(path.relative_to(REPO))
        for path in places
        if path.is_file() and path != SCRIPT and re.search(r"apt-get\s+install|apt\s+install", path.read_text())
    ]
    assert offenders == []


@pytest.fixture
def stub_bin(tmp_path):
    """A folder of stub commands: dpkg-query answers from $STUB_INSTALLED, id -u from $STUB_UID,
    apt-get appends its arguments to $STUB_LOG."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    stubs = {
        "dpkg-query": 'pkg="${@: -1}"; case " $STUB_INSTALLED " in *" $pkg "*) printf "install ok installed";; '
        '*) echo "dpkg-query: no packages found matching $pkg" >&2; exit 1;; esac',
        "id": 'echo "$STUB_UID"',
        "apt-get": 'echo "$*" >> "$STUB_LOG"',
    }
    for name, body in stubs.items():
        path = bin_dir / name
        path.write_text(f"#!/bin/bash\n{body}\n")
        path.chmod(0o755)
    return bin_dir


def run_script(stub_bin, tmp_path, installed, uid=0, ci="", *args):
    env = {
        "PATH": f"{stub_bin}:/usr/bin:/bin",
        "STUB_INSTALLED": " ".join(installed),
        "STUB_UID": str(uid),
        "STUB_LOG": str(tmp_path / "apt.log"),
        "CI": ci,
    }
    result = subprocess.run(["bash", str(SCRIPT), *args], env=env, capture_output=True, text=True, timeout=30)
    log = tmp_path / "apt.log"
    return result, (log.read_text().splitlines() if log.exists() else [])


def test_installs_exactly_what_is_missing(stub_bin, tmp_path):
    names = listed_packages()
    # Chromium present but no fonts: the case that once passed CI while `make test` failed
    installed = ["chromium", "make"]
    result, apt_calls = run_script(stub_bin, tmp_path, installed)
    assert result.returncode == 0, result.stderr
    missing = [n for n in names if n not in installed]
    assert apt_calls[0].split() == ["update", "-q"]
    assert apt_calls[1].split() == ["install", "-y", "-q", *missing]


def test_a_machine_with_everything_installs_nothing(stub_bin, tmp_path):
    result, apt_calls = run_script(stub_bin, tmp_path, listed_packages())
    assert result.returncode == 0 and apt_calls == []
    assert "all" in result.stdout


def test_check_lists_what_is_missing_and_installs_nothing(stub_bin, tmp_path):
    result, apt_calls = run_script(stub_bin, tmp_path, ["chromium"], 0, "", "--check")
    assert result.returncode == 1 and apt_calls == []
    assert "fonts-wqy-microhei" in result.stdout


@pytest.mark.parametrize("ci, rc", [("", 0), ("true", 1)])
def test_not_root_says_what_to_install(stub_bin, tmp_path, ci, rc):
    """A developer without root gets the command to run; CI, where the tests would fail, stops here."""
    result, apt_calls = run_script(stub_bin, tmp_path, ["make"], 1000, ci)
    assert result.returncode == rc and apt_calls == []
    assert "apt-get install chromium" in result.stderr


@pytest.mark.skipif(not IN_CI, reason="reads this machine's packages: CI's set-up must have installed them all")
def test_this_machine_has_every_listed_package():
    """After .ci/run's set-up (the same as `make test`'s), nothing in the list is missing here."""
    result = subprocess.run(["bash", str(SCRIPT), "--check"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
