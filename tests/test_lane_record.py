"""The fast lane's record (tools/lane_record.py): bench-check reuses a wall time only from a passing run of this tree."""

from __future__ import annotations

import importlib.util
import json
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("lane_record", REPO / "tools" / "lane_record.py")
lane = importlib.util.module_from_spec(spec)
spec.loader.exec_module(lane)


def test_a_record_of_this_tree_is_read_back_and_any_other_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(lane, "RECORD", tmp_path / "test-fast.json")
    log = tmp_path / "log"
    log.write_text("....\n1661 passed, 3 deselected in 41.20s\n", encoding="utf-8")
    assert lane.write(time.time() - 42.5, 0, log, ["-k", "cli"]) is None  # a subset is not the lane
    assert not lane.RECORD.exists()
    record = lane.write(time.time() - 42.5, 0, log, [])
    assert 42 < record["wall_s"] < 60 and record["summary"] == "1661 passed, 3 deselected"
    assert lane.read(lane.RECORD) == record
    for change in ({"tree": "0" * 40 + ":" + "0" * 40}, {"status": 1}, {"at": time.time() - lane.MAX_AGE_S - 1}):
        other = tmp_path / "other.json"
        other.write_text(json.dumps({**record, **change}), encoding="utf-8")
        assert lane.read(other) is None, change
    other.write_text("{not json", encoding="utf-8")
    assert lane.read(other) is None and lane.read(tmp_path / "missing.json") is None


def test_the_tree_key_sees_an_uncommitted_file(tmp_path):
    import subprocess

    def git(*args):
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q")
    (tmp_path / "a.py").write_text("x = 1\n")
    git("add", "a.py")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "a")
    clean = lane.tree_key(tmp_path)
    (tmp_path / "b.py").write_text("y = 2\n")
    untracked = lane.tree_key(tmp_path)
    (tmp_path / "a.py").write_text("x = 3\n")
    assert len({clean, untracked, lane.tree_key(tmp_path)}) == 3
