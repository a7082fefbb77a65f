#!/usr/bin/env python3
"""Score `detachlint run` on the runtime evaluation corpus (eval/runtime/programs).

Each program declares its truth in a header and prints `truth: hazard` or `truth: harmless` as
its last stdout line, computed from its own values. The harness runs every program twice, in a
temporary copy of it: `PY prog.py` and `PY -m detachlint run --select ALL --output-format json
--output r.json prog.py`, then compares the outputs and scores the verdicts (README.md). Stdlib only.

    python eval/runtime/run.py --python .venv/bin/python --json out.json [NAME_FILTER ...]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROGRAMS = HERE / "programs"
TIMEOUT = 300
SCORES = ["right", "right-observed", "cleared", "not-run", "unobservable", "missed", "observed", "false-confirm",
          "broken", "no-report"]


def parse_header(path: Path) -> dict:
    header = {"truth": None, "rule": None, "category": None, "static": None, "watch": "flagged"}
    for line in path.read_text().splitlines():
        match = re.match(r"#\s*(truth|rule|category|static|watch):\s*(\S+)", line)
        if not match:
            break
        key, value = match.groups()
        header[key] = int(value) if key == "static" else value
    if header["truth"] not in ("hazard", "harmless"):
        raise SystemExit(f"{path.name}: header has no `# truth: hazard|harmless`")
    if header["rule"] == "none":
        header["rule"] = None
    return header


def run(args: list[str], cwd: Path) -> dict:
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    start = time.perf_counter()
    try:
        proc = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT)
        out = {"rc": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr}
    except subprocess.TimeoutExpired as exc:
        def text(b):
            return b.decode(errors="replace") if isinstance(b, bytes) else (b or "")
        out = {"rc": "timeout", "stdout": text(exc.stdout), "stderr": text(exc.stderr)}
    out["seconds"] = round(time.perf_counter() - start, 2)
    return out


def own_stderr(stderr: str) -> str:
    return "\n".join(line for line in stderr.splitlines() if not line.startswith("detachlint:"))


def printed_truth(stdout: str):
    lines = stdout.strip().splitlines()
    if lines and lines[-1] in ("truth: hazard", "truth: harmless"):
        return lines[-1].split(": ")[1]
    return None


def summarize(finding: dict) -> dict:
    conf = finding.get("confirmation") or {}
    return {
        "code": finding.get("code"),
        "row": (finding.get("location") or {}).get("row"),
        "verdict": conf.get("verdict"),
        "origin": conf.get("origin"),
        "severity": finding.get("severity"),
        "why": conf.get("why"),
        "evidence": conf.get("evidence"),
    }


def score(header: dict, findings) -> str:
    if findings is None:
        return "no-report"
    if header["truth"] == "harmless":
        if any(f["verdict"] == "confirmed" for f in findings):
            return "false-confirm"
        return "observed" if any(f["verdict"] == "observed" for f in findings) else "right"
    verdicts = {f["verdict"] for f in findings if f["code"] == header["rule"]}
    for verdict, name in (("confirmed", "right"), ("observed", "right-observed"), ("harmless-in-run", "cleared"),
                          ("not-run", "not-run"), ("unobservable", "unobservable")):
        if verdict in verdicts:
            return name
    if verdicts:
        return "other:" + ",".join(sorted(str(v) for v in verdicts))
    return "missed"


def evaluate(python: str, path: Path) -> dict:
    header = parse_header(path)
    with tempfile.TemporaryDirectory(prefix="dlrt-") as tmp:
        cwd = Path(tmp)
        shutil.copy(path, cwd / path.name)
        plain = run([python, path.name], cwd)
        observed = run([python, "-m", "detachlint", "run", "--select", "ALL", "--watch", header["watch"],
                        "--output-format", "json", "--output", "r.json", path.name], cwd)
        report = cwd / "r.json"
        try:
            findings = [summarize(f) for f in json.loads(report.read_text())] if report.exists() else None
        except (json.JSONDecodeError, OSError):
            findings = None
    printed = printed_truth(plain["stdout"])
    differences = []
    if plain["stdout"] != observed["stdout"]:
        differences.append("stdout")
    if plain["rc"] != observed["rc"]:
        differences.append("exit")
    if own_stderr(plain["stderr"]) != own_stderr(observed["stderr"]):
        differences.append("stderr")
    result = {
        "program": path.name,
        **header,
        "printed_truth": printed,
        "broken": printed != header["truth"],
        "output_changed": differences,
        "plain": {"rc": plain["rc"], "seconds": plain["seconds"], "stdout": plain["stdout"][-2000:],
                  "stderr": plain["stderr"][-2000:]},
        "observed": {"rc": observed["rc"], "seconds": observed["seconds"], "stdout": observed["stdout"][-2000:],
                     "stderr": observed["stderr"][-4000:]},
        "findings": findings,
    }
    result["score"] = "broken" if result["broken"] else score(header, findings)
    if findings is not None:
        result["static_row_hit"] = (header["static"] is not None
                                    and any(f["code"] == header["rule"] and f["row"] == header["static"]
                                            and f["origin"] != "runtime" for f in findings))
        result["other_confirmed"] = sorted({f["code"] for f in findings if f["verdict"] == "confirmed"}
                                           - {header["rule"]})
    return result


def verdict_cell(findings) -> str:
    if findings is None:
        return "(no report)"
    cells = []
    for f in sorted(findings, key=lambda f: (f["row"] or 0, f["code"] or "")):
        origin = "[rt]" if f["origin"] == "runtime" else ""
        cells.append(f"{f['code']}@{f['row']}{origin}:{f['verdict']}")
    return " ".join(cells) or "-"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=sys.executable,
                        help="interpreter with torch, detachlint and detachlint_runtime (default: this one)")
    parser.add_argument("--json", help="write the per-program results here")
    parser.add_argument("filters", nargs="*", help="only programs whose file name contains one of these")
    args = parser.parse_args(argv)

    paths = sorted(PROGRAMS.glob("*.py"))
    if args.filters:
        paths = [p for p in paths if any(f in p.name for f in args.filters)]
    results = []
    for path in paths:
        results.append(evaluate(args.python, path))
        r = results[-1]
        print(f"... {r['program']}: {r['score']}" + (" output-changed" if r["output_changed"] else ""),
              file=sys.stderr, flush=True)

    rows = [("program", "truth", "rule", "category", "verdicts (CODE@row:verdict, [rt] = origin runtime)", "score")]
    for r in results:
        flags = r["score"] + (" output-changed(" + ",".join(r["output_changed"]) + ")" if r["output_changed"] else "")
        if r.get("other_confirmed") and r["truth"] == "hazard" and r["score"] != "right":
            flags += " (also confirmed: " + ",".join(r["other_confirmed"]) + ")"
        rows.append((r["program"][:-3], r["truth"], r["rule"] or "-", r["category"], verdict_cell(r["findings"]),
                     flags))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    for row in rows:
        print("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:4])) + "  " + row[4] + "  ->  " + row[5])

    totals = {}
    for truth in ("hazard", "harmless"):
        counts = Counter(r["score"] for r in results if r["truth"] == truth)
        totals[truth] = dict(sorted(counts.items(), key=lambda kv: SCORES.index(kv[0]) if kv[0] in SCORES else 99))
    changed = [r["program"] for r in results if r["output_changed"]]
    broken = [r["program"] for r in results if r["broken"]]
    print()
    print(f"programs: {len(results)} ({sum(r['truth'] == 'hazard' for r in results)} hazard, "
          f"{sum(r['truth'] == 'harmless' for r in results)} harmless)")
    for truth, counts in totals.items():
        print(f"{truth}: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    print(f"output-changed: {len(changed)}" + (f" ({', '.join(changed)})" if changed else ""))
    if broken:
        print(f"BROKEN (printed truth != declared truth): {', '.join(broken)}")
    if args.json:
        Path(args.json).write_text(json.dumps({"totals": totals, "output_changed": changed, "broken": broken,
                                               "programs": results}, indent=1) + "\n")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
