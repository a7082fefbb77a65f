#!/usr/bin/env python3
"""What one file costs in a large folder (issue 42, point 6): ``detachlint check script.py`` run
from a folder that holds ``--files`` (default 2,600) small, unrelated Python modules below it,
against the same script checked alone in an empty folder; with no project marker, and with a
``pyproject.toml`` in the folder (a marked project: the file's first check indexes what it reaches).

    python bench/one_file.py                     # this checkout
    python bench/one_file.py --checkout /tmp/base  # another checkout (a worktree of an earlier commit)
    python bench/one_file.py --files 500 --rounds 1

Each row runs ``--rounds`` times (default 3, interleaved) in a fresh process with an empty cache
(``--cache-dir`` in a new temporary folder; ``-j 1``, so that the tree's RSS is one process's); the
best wall time and the largest peak RSS (``os.wait4``) are kept. Ratios divide rows of the same run.
The findings of the script must be the same in every row (the script imports a helper beside it,
so that the index is needed: the helper writes its argument in place).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Tuple

ROOT = Path(__file__).resolve().parent.parent

SCRIPT = """\
import torch
from helpers import scale_


def train(model: torch.nn.Module, x: torch.Tensor):
    for p in model.parameters():
        p.data.mul_(0.5)
    view = x[0]
    scale_(x)
    return view.sum(), torch.tensor(x)
"""

HELPER = """\
import torch


def scale_(t: torch.Tensor):
    t.mul_(2)
"""


def unrelated(i: int) -> str:
    """A small module that defines functions and a class (so that an index would take it)."""
    return (f"import torch\n\n\nclass Block{i}(torch.nn.Module):\n    def __init__(self):\n"
            f"        super().__init__()\n        self.w = torch.nn.Parameter(torch.ones({i % 7 + 1}))\n\n"
            f"    def forward(self, x):\n        y = x * self.w\n        y.add_(1)\n        return y\n\n\n"
            f"def helper_{i}(a, b):\n    out = a.clone()\n    out.mul_(b)\n    return out\n\n\n"
            f"def step_{i}(model, opt, batch):\n    loss = model(batch).sum()\n    loss.backward()\n"
            f"    opt.step()\n    return loss.item()\n")


def make_tree(base: Path, files: int) -> None:
    (base / "helpers.py").write_text(HELPER)
    (base / "script.py").write_text(SCRIPT)
    for i in range(files):
        sub = base / f"area{i % 13}" / f"part{i % 17}"
        sub.mkdir(parents=True, exist_ok=True)
        (sub / f"mod_{i}.py").write_text(unrelated(i))


def measure(checkout: Path, cwd: Path) -> Tuple[float, int, str]:
    with tempfile.TemporaryDirectory() as cache:
        cmd = [sys.executable, "-m", "detachlint", "check", "script.py", "-j", "1", "--cache-dir", cache,
               "--exit-zero", "--output-format", "json"]
        env = {**os.environ, "PYTHONPATH": str(checkout)}
        with tempfile.TemporaryFile() as out:
            start = time.perf_counter()
            child = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.DEVNULL)
            _, status, usage = os.wait4(child.pid, 0)
            seconds = time.perf_counter() - start
            out.seek(0)
            findings = json.loads(out.read() or b"[]")
    if status != 0:
        raise SystemExit(f"detachlint failed in {cwd} (status {status})")
    summary = " ".join(sorted(f"{f['code']}@{f['location']['row']}" for f in findings))
    return seconds, usage.ru_maxrss * 1024, summary


def main(argv: List[str] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkout", type=Path, default=ROOT)
    parser.add_argument("--files", type=int, default=2600)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        alone, unmarked, marked = Path(tmp, "alone"), Path(tmp, "unmarked"), Path(tmp, "marked")
        for base, files in ((alone, 0), (unmarked, args.files), (marked, args.files)):
            base.mkdir()
            make_tree(base, files)
        (marked / "pyproject.toml").write_text("[project]\nname = 'scratch'\n")
        rows: Dict[str, Tuple[float, int, str]] = {}
        for _ in range(args.rounds):
            for name, cwd in (("alone", alone), ("unmarked", unmarked), ("marked", marked)):
                seconds, rss, found = measure(args.checkout, cwd)
                best = rows.get(name)
                rows[name] = (min(seconds, best[0]) if best else seconds, max(rss, best[1]) if best else rss, found)
    base_s, base_rss, base_found = rows["alone"]
    print(f"checkout: {args.checkout}   files below the script: {args.files}   rounds: {args.rounds}")
    print(f"{'row':<10} {'wall s':>8} {'ratio':>7} {'peak MB':>8} {'ratio':>7}  findings")
    for name, (seconds, rss, found) in rows.items():
        print(f"{name:<10} {seconds:8.2f} {seconds / base_s:7.2f} {rss / 2**20:8.0f} {rss / base_rss:7.2f}  "
              f"{'same' if found == base_found else 'DIFFERENT: ' + found}")
    print(f"findings alone: {base_found}")
    return 0 if all(r[2] == base_found for r in rows.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
