#!/usr/bin/env python3
"""The bench's memory row: peak RSS of ``detachlint check -j 1 --no-cache`` on generated modules
of about 10 MB (400,000 ``vN = torch.zeros(k)`` lines), with nothing to report or with one
``.data`` write at the start, in the middle, at the end, or in a function at the top.

    python bench/memory.py                       # this checkout, every variant
    python bench/memory.py --lines 40000         # smaller modules (about 1 MB)
    python bench/memory.py --checkout /tmp/base  # another checkout (a worktree of an earlier commit)
    python bench/memory.py --variants end,function

Each variant runs in a fresh process, one at a time; its peak RSS is the largest resident set of
that process and the children it waited for (``os.wait4``'s rusage, what ``/usr/bin/time -v``
prints as "Maximum resident set size"). The digest is of the JSON findings (codes, positions,
messages, fixes; the file's directory and the rules' documentation links left out), so that two
checkouts can be compared for identical findings.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Dict, List

ROOT = Path(__file__).resolve().parent.parent
HEAD = "import torch\nk = 3\nw = torch.ones(3)\n"
WRITE = "w.data.add_(1)\n"  # one TAL001; it shares no name with the generated rows
FUNCTION = "def scale(p):\n    p.data.mul_(2)\n\n\n"


def _rows(first: int, count: int) -> str:
    return "".join(f"v{i} = torch.zeros(k)\n" for i in range(first, first + count))


VARIANTS: Dict[str, Callable[[int], str]] = {
    "nothing": lambda n: HEAD + _rows(0, n),
    "start": lambda n: HEAD + WRITE + _rows(0, n),
    "middle": lambda n: HEAD + _rows(0, n // 2) + WRITE + _rows(n // 2, n - n // 2),
    "end": lambda n: HEAD + _rows(0, n) + WRITE,
    "function": lambda n: "import torch\n\n\n" + FUNCTION + "k = 3\n" + _rows(0, n),
    "function+end": lambda n: "import torch\n\n\n" + FUNCTION + HEAD[len("import torch\n"):] + _rows(0, n) + WRITE,
}


def measure(checkout: Path, path: Path) -> Dict[str, object]:
    """Peak RSS, wall time and findings of one ``detachlint check`` of ``path``."""
    cmd = [sys.executable, "-m", "detachlint", "check", path.name, "-j", "1", "--no-cache", "--isolated",
           "--exit-zero", "--output-format", "json"]
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    with tempfile.TemporaryFile() as out:
        start = time.perf_counter()
        child = subprocess.Popen(cmd, cwd=path.parent, env=env, stdout=out, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode("utf-8", "replace")
    try:
        findings = json.loads(text) if child.returncode == 0 else None
    except ValueError:
        findings = None
    for finding in findings or ():  # what differs between checkouts and temporary directories
        finding.pop("url", None)
        finding["filename"] = os.path.basename(finding.get("filename", ""))
    return {
        "rss_mb": usage.ru_maxrss / 1024,  # kB on Linux
        "seconds": seconds,
        "findings": len(findings) if findings is not None else f"exit {child.returncode}",
        "codes": ",".join(sorted({f.get("code", "?") for f in findings})) if findings else "",
        "digest": hashlib.sha256(json.dumps(findings, sort_keys=True).encode()).hexdigest()[:10],
    }


def main(argv: List[str] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=400_000, help="generated rows per module")
    parser.add_argument("--checkout", type=Path, default=ROOT, help="the detachlint checkout to run")
    parser.add_argument("--variants", default=",".join(VARIANTS), help="comma-separated, of: " + ", ".join(VARIANTS))
    args = parser.parse_args(argv)
    names = [v for v in args.variants.split(",") if v]
    unknown = [v for v in names if v not in VARIANTS]
    if unknown:
        parser.error(f"unknown variant(s): {', '.join(unknown)}")
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(args.checkout / "detachlint")], capture_output=True)
    print(f"checkout {args.checkout}, {args.lines:,} generated rows, detachlint check -j 1 --no-cache")
    print("| variant | size MB | findings | codes | peak RSS MB | seconds | digest |")
    print("| --- | ---: | ---: | --- | ---: | ---: | --- |")
    with tempfile.TemporaryDirectory(prefix="detachlint-memory-") as work:
        for name in names:
            path = Path(work) / f"{name.replace('+', '_')}.py"
            path.write_text(VARIANTS[name](args.lines), encoding="utf-8")
            row = measure(args.checkout, path)
            print(f"| {name} | {path.stat().st_size / 1e6:.1f} | {row['findings']} | {row['codes']} | "
                  f"{row['rss_mb']:.0f} | {row['seconds']:.1f} | {row['digest']} |", flush=True)
            path.unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main())
