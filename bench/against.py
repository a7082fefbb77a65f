"""This checkout against earlier commits, side by side: CPU time of ``detachlint check --jobs 1
--no-cache`` on the torch subset (with ``--cold``: of the bench's cold run, every worker, from an
empty ``--cache-dir``), rounds interleaved so that a noisy machine slows every version alike,
with the LibCST parse floor in every round.

    python bench/against.py 956fd39 ae96711          # ratios of this checkout to each commit
    python bench/against.py 956fd39 --rounds 5 --files 300
    python bench/against.py 12b0745 --cold

Each commit is checked out once into a temporary ``git worktree`` and run from there with
``PYTHONPATH`` (the installed dependencies are shared). The best (least) CPU time of the rounds is
compared: noise only ever adds time. Findings counts are printed too, so that a speed-up that
loses findings shows.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run as bench  # noqa: E402  (the corpus and the parse floor, as the main benchmark makes them)

ROOT = Path(__file__).resolve().parent.parent


def _cpu(cmd: List[str], env: Dict[str, str], cwd: Path) -> tuple:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(cmd, env={**os.environ, **env}, capture_output=True, text=True, cwd=cwd)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode not in (0, 1):
        raise RuntimeError(f"{cmd} failed: {out.stderr[-2000:]}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return cpu, len(out.stdout.splitlines())


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("commits", nargs="+", help="earlier commits to compare this checkout with")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--files", type=int, default=bench.SUBSET_SIZE, help="every k-th torch file, this many")
    parser.add_argument("--cold", action="store_true",
                        help="the cold run (--jobs: all cores, an empty cache) instead of --jobs 1 --no-cache")
    args = parser.parse_args(argv)

    work = Path(tempfile.mkdtemp(prefix="detachlint-against-"))
    checkouts = {"this checkout": ROOT}
    try:
        for commit in args.commits:
            path = work / f"at-{commit}"
            subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(path), commit],
                           check=True, capture_output=True)
            checkouts[commit] = path
        root = bench.torch_dir()
        files = bench.every_kth(bench.corpus_files(root), args.files)
        corpus = bench.materialise(root, files, work / "corpus")
        listing = work / "files.txt"
        listing.write_text("\n".join(str(corpus / f) for f in files), encoding="utf-8")
        for path in checkouts.values():  # as an install has it (``bench/run.py`` does the same)
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(path / "detachlint")], capture_output=True)
        cache = work / "cache"
        mode = ["--cache-dir", str(cache)] if args.cold else ["--jobs", "1", "--no-cache"]
        cpu: Dict[str, List[float]] = {name: [] for name in ["libcst parse floor", *checkouts]}
        found: Dict[str, int] = {}
        for round_ in range(args.rounds):
            cpu["libcst parse floor"].append(_cpu([sys.executable, "-c", bench._PARSE_FLOOR, str(listing)], {}, work)[0])
            for name, path in checkouts.items():
                shutil.rmtree(cache, ignore_errors=True)
                seconds, found[name] = _cpu([sys.executable, "-m", "detachlint", "check", str(corpus), *mode,
                                             "--exit-zero", "--output-format", "concise"],
                                            {"PYTHONPATH": str(path)}, work)
                cpu[name].append(seconds)
            print(f"round {round_ + 1}: " + ", ".join(f"{k} {v[-1]:.2f} s" for k, v in cpu.items()), file=sys.stderr)
        floor = min(cpu["libcst parse floor"])
        mine = min(cpu["this checkout"])
        print(f"{len(files)} torch files, {'cold runs' if args.cold else '--jobs 1 --no-cache'}, "
              f"best CPU of {args.rounds} interleaved rounds")
        for name, times in cpu.items():
            line = f"  {name:20} {min(times):7.2f} s  {min(times) / floor:6.3f}x the parse floor"
            if name in found:
                line += f"  {found[name]:4} output lines"
            if name not in ("libcst parse floor", "this checkout"):
                line += f"  this checkout / it: {mine / min(times):.3f}"
            print(line)
    finally:
        for commit in args.commits:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(work / f"at-{commit}")],
                           capture_output=True)
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
