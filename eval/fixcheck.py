#!/usr/bin/env python3
"""Fix, then lint again, on real projects: no fix may bring a finding that was not there, and
every fixed file must still parse (issue 13, "Safe means same behaviour").

    python eval/fixcheck.py --mirrors /work/.mirror [--work /tmp/detachlint-eval]
                            [--project owner/name ...] [--unsafe]

Each project of projects.toml is extracted at its recorded commit (as run.py does), copied, and
in the copy: lint (``--select ALL``), ``check --fix`` (``--unsafe-fixes`` with ``--unsafe``), lint
again. Per rule code, the findings after the fix may number at most those before minus those the
fix reported fixed; any excess is a finding a fix produced, printed with its location.
"""

from __future__ import annotations

import argparse
import ast
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import detachlint_cmd, extract, lint, load_toml, slug  # noqa: E402

FIXED_RE = re.compile(r"(\d+) × (TAL\d+)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mirrors", type=Path, required=True)
    ap.add_argument("--work", type=Path, default=Path("/tmp/detachlint-eval"))
    ap.add_argument("--project", action="append", help="only this repo (owner/name); repeatable")
    ap.add_argument("--unsafe", action="store_true", help="apply unsafe fixes too")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args(argv)
    projects = [p for p in load_toml("projects.toml").get("project", [])
                if not args.project or p["repo"] in args.project]
    problems = 0
    totals: Counter = Counter()
    for proj in projects:
        source = args.work / "projects" / slug(proj["repo"])
        extract(args.mirrors, proj["repo"], proj["commit"], source)
        root = args.work / "fixcheck" / slug(proj["repo"])
        shutil.rmtree(root, ignore_errors=True)
        shutil.copytree(source, root)
        before = lint(root, ["."], args.jobs)
        originals = {p: p.read_bytes() for p in root.rglob("*.py")}
        cmd = detachlint_cmd() + ["check", "--select", "ALL", "--fix", "--show-fixes", "--no-cache", "--exit-zero",
                                  "--output-format", "concise", "-j", str(args.jobs), "."]
        if args.unsafe:
            cmd.insert(-1, "--unsafe-fixes")
        proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True)
        # With findings left, the report has no "Fixed ..." summary line (as in ruff), so the
        # per-file listing of --show-fixes is what gives the counts per code.
        fixed = Counter()
        for n, code in FIXED_RE.findall(proc.stdout):
            fixed[code] += int(n)
        changed = [p for p, data in originals.items() if p.read_bytes() != data]
        broken = []
        for path in changed:
            try:
                ast.parse(path.read_bytes())
            except SyntaxError as exc:
                broken.append(f"{path.relative_to(root)}: {exc}")
        after = lint(root, ["."], args.jobs)
        allowed = Counter(f["code"] for f in before)
        allowed.subtract(fixed)
        now = Counter(f["code"] for f in after)
        extra = {code: n - allowed[code] for code, n in now.items() if n > allowed[code]}
        before_keys = Counter((f["path"], f["code"], f["message"]) for f in before)
        new = [f for f in after if before_keys[(f["path"], f["code"], f["message"])] == 0]
        print(f"{proj['repo']:45} findings {len(before):4d} -> {len(after):4d}, fixed {sum(fixed.values()):3d} "
              f"in {len(changed):3d} files; new findings: {sum(extra.values())}; unparsable: {len(broken)}")
        for f in new if extra else []:
            print(f"    new? {f['path']}:{f['line']}: {f['code']} {f['message'][:120]}")
        for line in broken:
            print(f"    does not parse: {line}")
        problems += sum(extra.values()) + len(broken)
        totals.update(before=len(before), after=len(after), fixed=sum(fixed.values()), files=len(changed))
    print(f"\nall: findings {totals['before']} -> {totals['after']}, fixed {totals['fixed']} in {totals['files']} files; "
          f"problems (new findings + unparsable files): {problems}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
