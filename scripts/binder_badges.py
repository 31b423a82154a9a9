"""Point the README's two Binder badges at this repository's public GitHub address.

The badges need `OWNER/NAME` of the published repository, which a fresh clone may not
know yet (the README ships with the placeholder `OWNER/specviz`). Run

    python scripts/binder_badges.py              # from `git remote get-url origin`
    python scripts/binder_badges.py you/specviz  # or say it
    python scripts/binder_badges.py --check      # exit 1 if a badge still has a placeholder

Only the `mybinder.org/v2/gh/<owner>/<name>/<ref>` part of each badge link changes; the
`urlpath` (JupyterLab on notebooks/, Voila on notebooks/dashboard.ipynb) stays.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"
BADGE = re.compile(r"(https://mybinder\.org/v2/gh/)([\w.-]+/[\w.-]+)/([\w./-]+?)(\?urlpath=)")
PLACEHOLDER = "OWNER/specviz"


def repo_from_remote(url: str) -> str:
    """`owner/name` of a GitHub remote URL.

    >>> repo_from_remote("git@github.com:ada/specviz.git")
    'ada/specviz'
    >>> repo_from_remote("https://github.com/ada/specviz")
    'ada/specviz'
    """
    m = re.search(r"github\.com[:/]([\w.-]+)/([\w.-]+?)(?:\.git)?/?$", url.strip())
    if not m:
        raise ValueError(f"not a GitHub remote: {url!r} (give owner/name explicitly)")
    return f"{m.group(1)}/{m.group(2)}"


def badge_repos(text: str) -> list[str]:
    """The `owner/name` of every Binder badge link in `text`."""
    return [m.group(2) for m in BADGE.finditer(text)]


def set_repo(text: str, repo: str, ref: str = "HEAD") -> str:
    """`text` with every Binder badge link pointing at `repo` (owner/name) and `ref`."""
    if not re.fullmatch(r"[\w.-]+/[\w.-]+", repo):
        raise ValueError(f"expected owner/name, got {repo!r}")
    return BADGE.sub(lambda m: f"{m.group(1)}{repo}/{ref}{m.group(4)}", text)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("repo", nargs="?", help="owner/name (default: from `git remote get-url origin`)")
    ap.add_argument("--ref", default="HEAD", help="branch, tag or commit Binder builds (default HEAD)")
    ap.add_argument("--check", action="store_true", help="only check: exit 1 while a badge has a placeholder")
    args = ap.parse_args(argv)
    text = README.read_text(encoding="utf-8")
    repos = badge_repos(text)
    if args.check:
        bad = [r for r in repos if r == PLACEHOLDER]
        print(f"{len(repos)} Binder badges: {', '.join(repos) or 'none'}")
        return 1 if bad or not repos else 0
    repo = args.repo
    if repo is None:
        try:
            url = subprocess.run(
                ["git", "remote", "get-url", "origin"], cwd=README.parent, check=True, capture_output=True, text=True
            ).stdout
        except (OSError, subprocess.CalledProcessError):
            print("no git remote 'origin': give owner/name, e.g. python scripts/binder_badges.py you/specviz")
            return 2
        repo = repo_from_remote(url)
    README.write_text(set_repo(text, repo, args.ref), encoding="utf-8")
    print(f"README: {len(repos)} Binder badges now point at {repo}@{args.ref}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
