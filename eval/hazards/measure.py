"""Recall of real hazards (issue 40): the fresh hazard set and the inplace-error bug-report cases.

Usage (stdlib only, plus the detachlint to measure installed in the running interpreter):

    python eval/hazards/measure.py --mirrors /work/.mirror --work /tmp/detachlint-hazards
    python eval/hazards/measure.py --part B --run      # B only; also run each case and twin with torch

A (eval/hazards/fresh-1.toml): each project is extracted at its recorded commit (from the mirror the
`fetch` tool made, <mirrors>/<owner>+<name>/repo) and linted whole, from its root, with every rule
(`detachlint check --select ALL`). A hazard is found when a finding with one of its `codes` lies
within +-2 lines of its `line` (or of any of its `lines`) in its file.
B (eval/inplace/cases.toml): each case and its fixed twin are linted alone. A case is found when
TAL202 lies within +-2 lines of its hazard `line` (or of any of its `lines`); a twin is clean when it
has no finding at all.
--run also runs, with this interpreter (which then needs torch), each reproduction of A (it exits 0
only when it showed its hazard), each case of B (it must raise "modified by an inplace operation")
and each twin (it must exit 0).
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tomllib
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
EVAL = HERE.parent
sys.path.insert(0, str(EVAL))
import run as evalrun  # noqa: E402  (extraction and linting are shared with eval/run.py)

INPLACE_ERROR = "modified by an inplace operation"


def load(path: Path) -> dict:
    with open(path, "rb") as fh:
        return tomllib.load(fh)


def near(findings: list[dict], path: str, lines: list[int], codes: list[str]) -> list[dict]:
    return [f for f in findings if f["path"] == path and f["code"] in codes
            and any(abs(f["line"] - l) <= evalrun.LINE_SLACK for l in lines)]


def ratio(a: int, b: int) -> str:
    return f"{a}/{b}" + (f" ({100 * a / b:.0f}%)" if b else "")


def measure_hazards(mirrors: Path, work: Path, jobs: int, only: list[str] | None, run_them: bool) -> dict:
    data = load(HERE / "fresh-1.toml")
    hazards = [h for h in data["hazard"] if not only or h["repo"] in only]
    findings: dict[str, list[dict]] = {}
    for proj in data["project"]:
        if only and proj["repo"] not in only:
            continue
        dest = work / "projects" / evalrun.slug(proj["repo"])
        evalrun.extract(mirrors, proj["repo"], proj["commit"], dest)
        findings[proj["repo"]] = evalrun.lint(dest, ["."], jobs)
        print(f"  {proj['repo']}: {len(findings[proj['repo']])} findings", file=sys.stderr)
    rows = []
    for h in hazards:
        hits = near(findings[h["repo"]], h["path"], h.get("lines", [h["line"]]), h["codes"])
        rows.append({"id": h["id"], "shape": h["shape"], "status": h["status"], "code": h["code"],
                     "issue40_shape": h.get("issue40_shape", True),
                     "found": bool(hits), "by": sorted({f"{f['code']}:{f['line']}" for f in hits})})
        if run_them:  # each reproduction exits 0 only when it showed its hazard
            rows[-1]["shown"] = run_file(HERE / h["repro"])[0] == 0
    return {"hazards": rows, "findings_per_project": {k: len(v) for k, v in findings.items()}}


def run_file(path: Path) -> tuple[int, str]:
    proc = subprocess.run([sys.executable, path.name], cwd=path.parent, capture_output=True, text=True,
                          timeout=120)
    return proc.returncode, proc.stdout + proc.stderr


def measure_cases(work: Path, jobs: int, run_them: bool) -> dict:
    root = EVAL / "inplace"
    rows = []
    for case in load(root / "cases.toml")["case"]:
        row = {"id": case["id"], "shape": case["shape"], "source": case["source"]}
        for key, name in (("case", case["file"]), ("twin", case["fixed"])):
            dest = work / "inplace" / Path(name).stem
            if dest.exists():
                shutil.rmtree(dest)
            dest.mkdir(parents=True)
            shutil.copy(root / name, dest / name)
            got = evalrun.lint(dest, [name], jobs)
            row[key + "_findings"] = sorted(f"{f['code']}:{f['line']}:{f['severity']}" for f in got)
            if key == "case":
                row["found"] = bool(near(got, name, case.get("lines", [case["line"]]), [case["code"]]))
            if run_them:
                rc, out = run_file(root / name)
                ok = (rc != 0 and INPLACE_ERROR in out) if key == "case" else rc == 0
                row[key + "_runs_as_recorded"] = ok
        row["twin_clean"] = not row["twin_findings"]
        rows.append(row)
    return {"cases": rows}


def report_hazards(res: dict) -> None:
    rows = res["hazards"]
    print("A. fresh hazard set (eval/hazards/fresh-1.toml)")
    for r in rows:
        shown = {True: " shown", False: " NOT-SHOWN"}.get(r.get("shown"), "")
        print(f"  {'FOUND ' if r['found'] else 'missed'} {r['id']:40s} {r['shape']:24s} {r['status']:6s}"
              f" {r['code']} {' '.join(r['by'])}{shown}")
    for key in ("shape", "status"):
        groups = defaultdict(list)
        for r in rows:
            groups[r[key]].append(r["found"])
        print(f"  by {key}: " + "; ".join(f"{k} {ratio(sum(v), len(v))}" for k, v in sorted(groups.items())))
    inside = [r for r in rows if r["issue40_shape"]]
    print(f"  recall: {ratio(sum(r['found'] for r in rows), len(rows))};"
          f" in issue 40's shapes {ratio(sum(r['found'] for r in inside), len(inside))}")


def report_cases(res: dict) -> None:
    rows = res["cases"]
    print("B. inplace-error bug-report cases (eval/inplace/cases.toml)")
    for r in rows:
        runs = ""
        if "case_runs_as_recorded" in r:
            runs = " runs-ok" if r["case_runs_as_recorded"] and r["twin_runs_as_recorded"] else " RUNS-WRONG"
        print(f"  {'FOUND ' if r['found'] else 'missed'} {r['id']:34s} {r['shape']:26s}"
              f" twin {'clean' if r['twin_clean'] else ','.join(r['twin_findings'])}{runs}")
    groups = defaultdict(list)
    for r in rows:
        groups[r["shape"]].append(r["found"])
    print("  by shape: " + "; ".join(f"{k} {ratio(sum(v), len(v))}" for k, v in sorted(groups.items())))
    print(f"  TAL202 at the hazard: {ratio(sum(r['found'] for r in rows), len(rows))};"
          f" twins with no finding: {ratio(sum(r['twin_clean'] for r in rows), len(rows))}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"), help="<owner>+<name>/repo mirrors")
    ap.add_argument("--work", type=Path, default=Path("/tmp/detachlint-hazards"), help="extraction directory")
    ap.add_argument("--part", choices=("A", "B", "both"), default="both")
    ap.add_argument("--project", action="append", help="A: only this repo (owner/name); repeatable")
    ap.add_argument("--run", action="store_true",
                    help="also run each reproduction (A) and each case and twin (B); needs torch")
    ap.add_argument("--jobs", type=int, default=2, help="detachlint worker processes (default 2)")
    ap.add_argument("--json", type=Path, help="write every row here")
    args = ap.parse_args(argv)
    result: dict = {}
    if args.part in ("A", "both"):
        result.update(measure_hazards(args.mirrors, args.work, args.jobs, args.project, args.run))
        report_hazards(result)
    if args.part in ("B", "both"):
        result.update(measure_cases(args.work, args.jobs, args.run))
        report_cases(result)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
