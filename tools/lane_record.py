"""The fast lane's wall time, recorded by the run that measured it, so `make bench-check` need not run it again.

`make test-fast` (and `make test`, which runs the fast lane first, on a quiet machine, before the
slow lane and test-floor start) writes build/test-fast.json: the wall time, pytest's summary line,
the exit status and the tree it ran on. `benchmarks/bench_check.py` reads it back when it was made
on the very tree that bench-check measures (same commit, same uncommitted changes) within the last
`MAX_AGE_S` seconds; otherwise it runs `make test-fast` itself. A run with PYTEST_ARGS (a subset, or
other options) is not the lane and records nothing.

    python tools/lane_record.py write START_EPOCH_S EXIT_STATUS LOG [PYTEST_ARGS...]

>>> key = tree_key()
>>> len(key) == 40 + 1 + 40 and key == tree_key()
True
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RECORD = REPO / "build" / "test-fast.json"
MAX_AGE_S = 3 * 3600  # a record older than this is measured again (CI's whole run takes well under it)
SUMMARY = re.compile(r"^=*\s*(\d+ (passed|failed).*?) in [\d.]+s")


def tree_key(repo: Path = REPO) -> str:
    """HEAD's commit and a digest of every uncommitted change (tracked and untracked), as "COMMIT:DIGEST"."""

    def git(*args) -> bytes:
        return subprocess.run(["git", *args], cwd=repo, capture_output=True, check=True).stdout

    head = git("rev-parse", "HEAD").decode().strip()
    h = hashlib.sha1(git("diff", "HEAD", "--binary"))
    for name in git("ls-files", "--others", "--exclude-standard", "-z").split(b"\0"):
        if name:
            h.update(name + b"\0" + (repo / name.decode()).read_bytes())
    return f"{head}:{h.hexdigest()}"


def write(start: float, status: int, log: Path, pytest_args: list[str]) -> dict | None:
    """Record one fast-lane run (None, and nothing written, for a run with PYTEST_ARGS)."""
    if pytest_args:
        return None
    text = log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""
    summary = next((m.group(1) for line in reversed(text.splitlines()) if (m := SUMMARY.match(line))), "")
    record = {
        "wall_s": round(time.time() - start, 2),
        "status": status,
        "summary": summary or "no pytest summary line",
        "tree": tree_key(),
        "at": time.time(),
    }
    RECORD.parent.mkdir(exist_ok=True)
    RECORD.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return record


def read(path: Path = RECORD, now: float | None = None) -> dict | None:
    """The record, if it was made on this tree within MAX_AGE_S and the lane passed; else None."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        fresh = (now if now is not None else time.time()) - float(record["at"]) <= MAX_AGE_S
        ok = fresh and record["status"] == 0 and record["tree"] == tree_key() and float(record["wall_s"]) > 0
    except (OSError, ValueError, KeyError, TypeError, subprocess.CalledProcessError):
        return None
    return record if ok else None


if __name__ == "__main__":
    if len(sys.argv) < 5 or sys.argv[1] != "write":
        sys.exit(__doc__.split("\n\n")[2])
    write(float(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4]), sys.argv[5:])
