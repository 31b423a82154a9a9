"""Plant each known bug in a copy of the source and show the suite fails: `make planted` (`python tools/plant.py`).

Every entry of `PLANTS` is one realistic mistake written into one source file (an exact text, found
once), and the tests that must catch it. For each, the tool makes a clean git worktree of HEAD (plus
your uncommitted changes), writes the bug in, runs those tests there (`pytest -x`, the fast lane's
options) and records whether they failed. A plant is caught when pytest exits 1 (tests failed); an
import or collection error (exit 2..4) counts as not caught, since it shows nothing about the check.
The bugs the tests plant themselves (subclasses and monkeypatches) are listed in docs/planted-bugs.md
beside these; tests/test_planted.py checks that every plant here still applies to the source.

    python tools/plant.py                 # all of them, a table at the end (about 5 minutes here)
    python tools/plant.py residual-from-p # one, by name
    python tools/plant.py --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Plant:
    """One bug: in `file`, the text `old` (found exactly once) becomes `new`; `tests` must fail."""

    name: str
    what: str
    file: str
    old: str
    new: str
    tests: tuple
    slow: bool = False  # its tests include the slow lane's (the fast lane has none that can see it)


PLANTS = (
    Plant(
        "acceptance-inverted",
        "the reference acceptance is min(1, q/p) instead of min(1, p/q)",
        "specviz/exact/theory.py",
        "    ratio = safe_ratio(p, q, where_zero=1)\n",
        "    ratio = safe_ratio(q, p, where_zero=1)\n",
        ("tests/test_theory.py",),
    ),
    Plant(
        "repair-unnormalised",
        "the reference repair distribution is (p - q)+ without dividing by Z",
        "specviz/exact/theory.py",
        "    return (p.copy() if z <= 0 else r / z), z\n",
        "    return (p.copy() if z <= 0 else r), z\n",
        ("tests/test_theory.py",),
    ),
    Plant(
        "residual-from-p",
        "the torch residual rows resample from p itself, not (p - q)+",
        "specviz/samplers/torch_sampling.py",
        "    r = (p - q).clamp_min_(0)\n",
        "    r = p.clone()\n",
        ("tests/test_torch_sampling.py", "tests/test_residual_references.py"),
    ),
    Plant(
        "chain-accepts-on-ties-of-q",
        "the device chain verifier accepts with u·p < q (the ratio upside down)",
        "specviz/samplers/torch_sampling.py",
        "    flags = (q_x > 0) & (u * q_x < p_x)  # u < p/q without dividing\n",
        "    flags = (q_x > 0) & (u * p_x < q_x)  # u < p/q without dividing\n",
        ("tests/test_torch_sampling.py",),
    ),
    Plant(
        "tree-no-residual-update",
        "the tree walk tests every sibling against the same R (no residual update after a rejection)",
        "specviz/lm/trees/verify.py",
        "                R = torch.where(tested & ~acc, residual_rows(R[None], q[None])[0], R)\n",
        "                R = torch.where(tested & ~acc, R, R)\n",
        ("tests/test_tree_verify.py",),
    ),
    Plant(
        "tree-bonus-from-residual",
        "after the walk moves to an accepted child, the final token is still drawn from the old residual",
        "specviz/lm/trees/verify.py",
        "        R = torch.where(alive, _row(P, cur), R)\n",
        "        R = R\n",
        ("tests/test_tree_verify.py",),
    ),
    Plant(
        "lookup-child-removes-nothing",
        "a rejected one-hot child (prompt lookup's trie) leaves R as it was: its siblings are tested against p",
        "specviz/lm/trees/verify.py",
        "                    q = torch.zeros_like(R).index_fill_(0, x.reshape(1), 1.0)\n",
        "                    q = torch.zeros_like(R)\n",
        ("tests/test_tree_verify.py", "tests/test_lm_tree_lookup.py"),
    ),
    Plant(
        "draft-q-not-the-drawn-law",
        "the model draft draws its token from a sharpened q but records q (the verifier uses the wrong q)",
        "specviz/lm/drafts/model.py",
        "        x = categorical_torch(q_j, gen)  # (1,) stays on the device\n",
        "        x = categorical_torch(q_j**2 / (q_j**2).sum(-1, keepdim=True), gen)  # (1,) stays on the device\n",
        ("tests/test_lm_engine.py::test_engine_output_matches_exact_autoregressive_distribution",),
        True,
    ),
    Plant(
        "rollback-one-too-far",
        "the chain step keeps one token too many in the target's cache after a rejection",
        "specviz/lm/engine/loop.py",
        "        self.rollback(T, n + k, all_rows[base + k])\n",
        "        self.rollback(T, min(n + k + 1, T.length), all_rows[min(base + k + 1, len(all_rows) - 1)])\n",
        ("tests/test_lm_engine.py",),
        True,
    ),
    Plant(
        "features-after-the-norm-layer",
        "the features hook sits on the second-to-last decoder layer",
        "specviz/lm/engine/features.py",
        "            return obj[-1]\n",
        "            return obj[-2] if len(obj) > 1 else obj[-1]\n",
        ("tests/test_lm_features.py",),
    ),
    Plant(
        "prompt-features-missed",
        "the target is asked for features only after it read the prompt: a draft reading features starts blind",
        "specviz/lm/engine/loop.py",
        "                T = pair.target.session(ids, read_features=True)\n",
        "                T = pair.target.session(ids)\n                T.read_features = True\n",
        ("tests/test_lm_draft_kinds.py",),
    ),
    Plant(
        "head-cache-not-rolled-back",
        "the learned head keeps its drafted entries (made from its own predicted features) after the verify",
        "specviz/lm/drafts/learned.py",
        "            self.cache = tuple(t[:, :, : self.c] for t in self.cache)\n",
        "            pass\n",
        ("tests/test_lm_learned_draft.py",),
        slow=True,
    ),
    Plant(
        "head-features-after-the-final-norm",
        "the features hook sits on the final norm: the head reads normed features (transformers' hidden_states[-1])",
        "specviz/lm/engine/features.py",
        "    handle = last_layer(hf_model).register_forward_hook(hook)\n",
        "    handle = getattr(getattr(hf_model, 'model', hf_model), 'norm', last_layer(hf_model)).register_forward_hook(hook)\n",
        ("tests/test_lm_learned_draft.py",),
        slow=True,
    ),
    Plant(
        "head-features-one-step-late",
        "the chain step gives the draft the features one position late (off by one in the kept rows)",
        "specviz/lm/engine/loop.py",
        "T.features[: len(pend_t) + k] if draft.features else None",
        "T.features[1 : len(pend_t) + k + 1] if draft.features else None",
        ("tests/test_lm_learned_draft.py",),
        slow=True,
    ),
    Plant(
        "default-gamma-four",
        "the library's default γ drifts back to 4 while the CLI and the live view say auto",
        "specviz/lm/engine/settings.py",
        "DEFAULT_GAMMA = AUTO\n",
        "DEFAULT_GAMMA = 4\n",
        ("tests/test_settings_parse.py",),
    ),
    Plant(
        "negative-probability-accepted",
        "the distribution check lets a negative entry through",
        "specviz/foundation/validate.py",
        "    bad = np.flatnonzero(arr < 0)\n",
        "    bad = np.flatnonzero(arr < -1)\n",
        ("tests/test_theory.py",),
    ),
    Plant(
        "tree-verifier-believes-any-numbers",
        "verify_tree_torch's check of P, Q and the drafted ids is dropped: unnormalised rows and NaNs give a path",
        "specviz/lm/trees/verify.py",
        "    if check:\n        _check_values(P, Q, tokens, lay, one_hot)\n",
        "",
        ("tests/test_hostile_knobs.py::test_hardening_v4_each_case_ends_clear_or_sound",),
    ),
    Plant(
        "tree-parents-may-name-later-nodes",
        "the parents check bounds a parent by the number of nodes, not by the node's own index: a cycle passes",
        "specviz/lm/trees/attention.py",
        "        if not -1 <= p < n_before + i:\n",
        "        if not -1 <= p < n_before + len(out):\n",
        ("tests/test_hostile_knobs.py::test_hardening_v4_each_case_ends_clear_or_sound",),
    ),
)


def worktree(tmp: Path) -> Path:
    """A clean worktree of HEAD with this checkout's uncommitted changes applied."""
    tree = tmp / "tree"
    subprocess.run(["git", "-C", str(REPO), "worktree", "add", "-q", "--detach", str(tree), "HEAD"], check=True)
    diff = subprocess.run(["git", "-C", str(REPO), "diff", "HEAD", "--binary"], capture_output=True, check=True)
    if diff.stdout:
        subprocess.run(["git", "-C", str(tree), "apply", "--whitespace=nowarn"], input=diff.stdout, check=True)
    for name in subprocess.run(
        ["git", "-C", str(REPO), "ls-files", "--others", "--exclude-standard"], capture_output=True, text=True
    ).stdout.split():
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, tree / name)
    bundled = REPO / "specviz" / "lm" / "bundled"
    if bundled.is_dir() and not (tree / "specviz" / "lm" / "bundled").exists():
        shutil.copytree(bundled, tree / "specviz" / "lm" / "bundled")
    return tree


def apply(plant: Plant, root: Path) -> None:
    path = root / plant.file
    text = path.read_text(encoding="utf-8")
    found = text.count(plant.old)
    if found != 1:
        raise ValueError(f"{plant.name}: {plant.file} holds its text {found} times, not once")
    path.write_text(text.replace(plant.old, plant.new), encoding="utf-8")


def run_plant(plant: Plant, tree: Path, python: str) -> dict:
    """Plant, run its tests, put the file back; {name, caught, rc, seconds, last line}."""
    original = (tree / plant.file).read_text(encoding="utf-8")
    apply(plant, tree)
    t0 = time.perf_counter()
    try:
        out = subprocess.run(
            [python, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *([] if plant.slow else ["-m", "not slow"])]
            + list(plant.tests),
            cwd=tree,
            capture_output=True,
            text=True,
            timeout=900,
            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        )
        rc, tail = out.returncode, (out.stdout.strip().splitlines() or [""])[-1]
    except subprocess.TimeoutExpired:
        rc, tail = -1, "timed out"
    finally:
        (tree / plant.file).write_text(original, encoding="utf-8")
    return {
        "name": plant.name,
        "caught": rc == 1,
        "rc": rc,
        "seconds": round(time.perf_counter() - t0, 1),
        "last": tail,
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help="plants to run (default: all)")
    ap.add_argument("--json", type=Path, help="write the results here")
    args = ap.parse_args(argv)
    known = {p.name: p for p in PLANTS}
    unknown = [n for n in args.names if n not in known]
    if unknown:
        ap.error(f"no plant named {', '.join(unknown)} (known: {', '.join(known)})")
    chosen = [known[n] for n in args.names] if args.names else list(PLANTS)
    python = sys.executable
    results = []
    with tempfile.TemporaryDirectory(prefix="specviz-plant-") as tmp:
        tree = worktree(Path(tmp))
        try:
            for plant in chosen:
                r = run_plant(plant, tree, python)
                results.append(r)
                print(f"{'CAUGHT' if r['caught'] else 'MISSED'}  {plant.name:<32} {r['seconds']:>6.1f} s  {r['last']}")
        finally:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(tree)], check=False)
    caught = sum(r["caught"] for r in results)
    print(f"\n{caught} of {len(results)} planted bugs caught")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return 0 if caught == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
