#!/usr/bin/env python3
"""detachlint on real code nobody here wrote: precision, `.data` recall, fix pairs.

Usage (stdlib only, plus detachlint installed in the running interpreter or on PATH):

    python eval/run.py --mirrors /work/.mirror [--work /tmp/detachlint-eval]
                       [--json OUT.json] [--unlabelled] [--unlabelled-writes]
                       [--project NAME ...] [--no-pairs] [--jobs N] [--set tuned|untuned|fresh-N]

Inputs, all in this directory (eval/):

    projects.toml    [[project]] repo = "owner/name", commit = "<40 hex>", kind = "..."
    fixpairs.toml    [[pair]] repo, fix, parent, path, buggy_lines, fixed_lines, codes, ...
    labels.toml      [[label]] repo, path, line, code, severity, label (true|style|false), reason
    datawrites.toml  [[write]] repo, path, line, kind, expr, tensor (true|false), reason

--set untuned reads projects-untuned.toml, labels-untuned.toml and datawrites-untuned.toml
instead (and has no fix pairs): the set measured before the issue-31 changes, never tuned on.
--set fresh-N reads projects-fresh-N.toml and labels-fresh-N.toml (issue 41: a set drawn and
measured before a round's changes; no fix pairs).

The mirrors are bare git repositories at <mirrors>/<owner>+<name>/repo, as the `fetch` tool
leaves them (`fetch github:owner/name`). Each project's Python files (plus pyproject.toml,
setup.cfg) are extracted at the recorded commit into <work>/projects/<owner>+<name>/ with
`git ls-tree` + `git cat-file` (so missing large blobs do not matter), and linted with

    detachlint check --select ALL --output-format json --no-cache --exit-zero .

from that directory. For each fix pair the whole repository is extracted at the parent (buggy)
and at the fix commit, and detachlint is run on the one recorded file from the repository root
(so a project index, where the linter builds one, sees the rest of the project).

What is printed:

  * per rule and severity: findings, true / style / false / unlabelled, and
    error precision = true / judged (style counts as wrong for an error),
    warning false rate = false / judged;
  * the share of labelled writes through `.data` on tensors (datawrites.toml, tensor = true)
    that detachlint reports (a TAL001 or TAL003 finding on that line: the hazard or the idiom);
  * fix pairs: buggy version flagged at the bug (a finding with one of the pair's codes within
    +-2 lines of a recorded buggy line) and fixed version clean there (no finding with those
    codes within +-2 lines of a recorded fixed line).

--unlabelled prints each finding without a label with a code snippet and a TOML stub to paste
into labels.toml (labels are keyed by repo, path, line and code, so a later run after the linter
changes only asks for the new findings). --unlabelled-writes does the same for `.data` writes
found by the AST scan that datawrites.toml does not cover. --json writes every number.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import subprocess
import sys
import tomllib
from collections import Counter, defaultdict
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
# --set NAME: which input files; the untuned set (issue 31) has no fix pairs.
SETS = {
    "tuned": {"projects": "projects.toml", "labels": "labels.toml",
              "datawrites": "datawrites.toml", "pairs": "fixpairs.toml"},
    "untuned": {"projects": "projects-untuned.toml", "labels": "labels-untuned.toml",
                "datawrites": "datawrites-untuned.toml", "pairs": None},
}
# Fresh sets (issue 41), each measured before a round's changes: every projects-fresh-N.toml is the
# set fresh-N, with labels-fresh-N.toml, no fix pairs and (unless someone adds one) no .data labels.
for _p in sorted(HERE.glob("projects-fresh-*.toml")):
    _name = _p.stem.removeprefix("projects-")
    SETS[_name] = {"projects": _p.name, "labels": f"labels-{_name}.toml",
                   "datawrites": f"datawrites-{_name}.toml", "pairs": None}
EXTRA_FILES = ("pyproject.toml", "setup.cfg")
LINE_SLACK = 2


# --------------------------------------------------------------------------- inputs

def load_toml(name: str) -> dict:
    path = HERE / name
    if not path.exists():
        return {}
    with open(path, "rb") as fh:
        return tomllib.load(fh)


def slug(repo: str) -> str:
    return repo.replace("/", "+")


# --------------------------------------------------------------------------- extraction

def git(mirror: Path, *args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(["git", f"--git-dir={mirror}", *args], check=True, **kw)


def extract(mirrors: Path, repo: str, commit: str, dest: Path, only: list[str] | None = None) -> None:
    """Write the .py files (and a few config files) of repo@commit under dest; idempotent."""
    marker = dest / ".eval-commit"
    want = commit + (" " + ",".join(only) if only else "") + " git-marker"
    if marker.exists() and marker.read_text() == want:
        return
    mirror = mirrors / slug(repo) / "repo"
    if (mirror / ".git").is_dir():  # the fetch tool sometimes leaves a clone, not a bare repository
        mirror = mirror / ".git"
    if not mirror.exists():
        raise SystemExit(f"no mirror for {repo} at {mirror}: run the fetch tool with github:{repo}")
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    out = git(mirror, "ls-tree", "-r", "-z", commit, capture_output=True).stdout.decode()
    entries = []
    for rec in out.split("\0"):
        if not rec:
            continue
        meta, path = rec.split("\t", 1)
        mode, kind, sha = meta.split()
        if kind != "blob" or mode == "120000":
            continue
        if only is not None:
            if path not in only:
                continue
        elif not (path.endswith(".py") or path in EXTRA_FILES):
            continue
        entries.append((sha, path))
    if entries:
        req = "".join(f"{sha}\n" for sha, _ in entries).encode()
        raw = git(mirror, "cat-file", "--batch", input=req, capture_output=True).stdout
        pos = 0
        for sha, path in entries:
            nl = raw.index(b"\n", pos)
            header = raw[pos:nl].decode().split()
            pos = nl + 1
            if len(header) < 3 or header[1] == "missing":
                continue
            size = int(header[2])
            data = raw[pos:pos + size]
            pos += size + 1
            target = dest / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
    # A clone has a .git directory, the project marker detachlint's index finds the project root
    # by; the extraction keeps it so (empty), whatever other markers the repository has.
    (dest / ".git").mkdir(exist_ok=True)
    marker.write_text(want)


# --------------------------------------------------------------------------- linting

def detachlint_cmd() -> list[str]:
    return [sys.executable, "-m", "detachlint"]


def lint(root: Path, targets: list[str], jobs: int) -> list[dict]:
    cmd = detachlint_cmd() + ["check", "--select", "ALL", "--output-format", "json", "--no-cache",
                              "--exit-zero", "-q", "-j", str(jobs), *targets]
    proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True)
    if proc.returncode != 0:  # --exit-zero: anything else is a failure (no detachlint in this interpreter, ...)
        raise SystemExit(f"detachlint failed in {root} ({proc.returncode}):\n{proc.stderr[-2000:]}")
    findings = json.loads(proc.stdout or "[]")
    for f in findings:
        name = f["filename"]
        try:
            f["path"] = os.path.relpath(name, root) if os.path.isabs(name) else os.path.normpath(name)
        except ValueError:
            f["path"] = name
        f["line"] = f["location"]["row"]
    return findings


def message_problems(findings: list[dict]) -> list[str]:
    """``message_names.problems`` of every finding, read against its project's extracted files."""
    from message_names import Parsed, definitions, problems

    defined: dict[Path, set[str]] = {}
    parsed: dict[Path, Parsed] = {}

    def known(root: Path) -> Callable[[str], bool]:
        def check(name: str) -> bool:  # read the project's definitions only when a message asks
            if root not in defined:
                defined[root] = definitions(p.read_text(encoding="utf-8", errors="replace")
                                            for p in python_files(root))
            return name in defined[root]
        return check

    out = []
    for f in findings:
        root = Path(f["root"])
        path = root / f["path"]
        if not path.is_file() or f["code"] == "TAL999":
            continue
        if path not in parsed:
            parsed[path] = Parsed(path.read_text(encoding="utf-8", errors="replace"))
        related = [r["row"] for r in f.get("related") or [] if "row" in r]
        for problem in problems(parsed[path], f["line"], f["message"], related, known(root)):
            out.append(f"{f['repo']}:{f['path']}:{f['line']} {f['code']}: {problem}")
    return out


# --------------------------------------------------------------------------- .data writes

def _is_data(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "data"


def _data_recv(node: ast.AST) -> bool:
    """X.data, or X.data[...]"""
    return _is_data(node) or (isinstance(node, ast.Subscript) and _is_data(node.value))


def _is_init_call(func: ast.AST) -> bool:
    # nn.init.xavier_uniform_, torch.nn.init.zeros_, init.normal_ (from torch.nn import init)
    return (isinstance(func, ast.Attribute) and func.attr.endswith("_") and not func.attr.endswith("__")
            and ((isinstance(func.value, ast.Attribute) and func.value.attr == "init")
                 or (isinstance(func.value, ast.Name) and func.value.id == "init")))


def python_files(root: Path) -> list[Path]:
    """The `.py` files under ``root``, sorted: not a folder named like one (fastMRI has one)."""
    return sorted(p for p in root.rglob("*.py") if p.is_file())


def data_writes(root: Path) -> list[dict]:
    """Every write through `.data` in the tree, by the syntax alone (no tensor-ness)."""
    rows = []
    for path in python_files(root):
        rel = path.relative_to(root).as_posix()
        try:
            tree = ast.parse(path.read_bytes())
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            hit = None
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                f = node.func
                if (f.attr.endswith("_") and not f.attr.endswith("__") and _data_recv(f.value)):
                    hit = ("method", f.value)
                elif _is_init_call(f) and node.args and _data_recv(node.args[0]):
                    hit = ("init", node.args[0])
            elif isinstance(node, ast.Assign):
                for t in node.targets:
                    if _is_data(t):
                        hit = ("assign", t)
                    elif isinstance(t, ast.Subscript) and _is_data(t.value):
                        hit = ("subscript", t.value)
            elif isinstance(node, ast.AugAssign) and _data_recv(node.target):
                hit = ("augassign", node.target)
            if hit:
                kind, recv = hit
                base = recv.value if isinstance(recv, ast.Subscript) else recv
                rows.append({"path": rel, "line": node.lineno, "kind": kind,
                             "expr": ast.unparse(base.value) if isinstance(base, ast.Attribute) else ast.unparse(base)})
    return rows


# --------------------------------------------------------------------------- report helpers

def snippet(root: Path, path: str, line: int, ctx: int = 2) -> str:
    try:
        lines = (root / path).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return "    <unreadable>"
    lo, hi = max(1, line - ctx), min(len(lines), line + ctx)
    return "\n".join(f"    {'>' if i == line else ' '}{i:5d} | {lines[i - 1]}" for i in range(lo, hi + 1))


def toml_str(s: str) -> str:
    return json.dumps(s)


def pct(a: int, b: int) -> str:
    return f"{100.0 * a / b:5.1f}%" if b else "   n/a"


# --------------------------------------------------------------------------- main

def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mirrors", type=Path, required=True, help="directory of <owner>+<name>/repo bare mirrors")
    ap.add_argument("--work", type=Path, default=Path("/tmp/detachlint-eval"), help="extraction directory")
    ap.add_argument("--json", type=Path, help="write the numbers (and every finding with its label) here")
    ap.add_argument("--unlabelled", action="store_true", help="print unlabelled findings with a snippet")
    ap.add_argument("--unlabelled-writes", action="store_true", help="print `.data` writes not in datawrites.toml")
    ap.add_argument("--project", action="append", help="only this repo (owner/name); repeatable")
    ap.add_argument("--no-pairs", action="store_true", help="skip the fix pairs")
    ap.add_argument("--jobs", type=int, default=2, help="detachlint worker processes (default 2)")
    ap.add_argument("--set", choices=sorted(SETS), default="tuned",
                    help="which inputs: tuned (projects.toml, ...; default), untuned (*-untuned.toml, no pairs) "
                         "or fresh-N (projects-fresh-N.toml, labels-fresh-N.toml, no pairs)")
    args = ap.parse_args(argv)

    files = SETS[args.set]
    projects = load_toml(files["projects"]).get("project", [])
    pairs = load_toml(files["pairs"]).get("pair", []) if files["pairs"] else []
    labels = {(l["repo"], l["path"], int(l["line"]), l["code"]): l for l in load_toml(files["labels"]).get("label", [])}
    wlabels = {(w["repo"], w["path"], int(w["line"])): w for w in load_toml(files["datawrites"]).get("write", [])}
    if args.project:
        projects = [p for p in projects if p["repo"] in args.project]

    result: dict = {"projects": [], "rules": {}, "datawrites": {}, "pairs": []}
    findings_all: list[dict] = []
    writes_all: list[dict] = []
    total_lines = 0

    # ---- projects
    for proj in projects:
        repo, commit = proj["repo"], proj["commit"]
        root = args.work / "projects" / slug(repo)
        extract(args.mirrors, repo, commit, root)
        nlines = sum(p.read_bytes().count(b"\n") for p in python_files(root))
        total_lines += nlines
        found = lint(root, ["."], args.jobs)
        for f in found:
            f["repo"], f["root"] = repo, root
            lab = labels.get((repo, f["path"], f["line"], f["code"]))
            f["label"] = lab["label"] if lab else None
            f["reason"] = lab.get("reason", "") if lab else ""
        findings_all += found
        for w in data_writes(root):
            w["repo"], w["root"] = repo, root
            writes_all.append(w)
        result["projects"].append({"repo": repo, "commit": commit, "kind": proj.get("kind", ""),
                                   "py_lines": nlines, "findings": len(found)})

    # ---- per rule and severity
    table: dict[tuple[str, str], Counter] = defaultdict(Counter)
    for f in findings_all:
        table[(f["code"], f["severity"])][f["label"] or "unlabelled"] += 1
    print(f"== findings on {len(projects)} projects, {total_lines} lines of Python")
    print(f"{'rule':7} {'severity':8} {'n':>4} {'true':>5} {'style':>5} {'false':>5} {'unlab':>5}  measure")
    tot = {"error": Counter(), "warning": Counter()}
    for (code, sev) in sorted(table):
        c = table[(code, sev)]
        judged = c["true"] + c["style"] + c["false"]
        tot.setdefault(sev, Counter()).update(c)
        if sev == "error":
            measure = f"precision {pct(c['true'], judged)} ({c['true']}/{judged})"
        else:
            measure = f"false rate {pct(c['false'], judged)} ({c['false']}/{judged})"
        print(f"{code:7} {sev:8} {sum(c.values()):4d} {c['true']:5d} {c['style']:5d} {c['false']:5d} "
              f"{c['unlabelled']:5d}  {measure}")
        result["rules"][f"{code}/{sev}"] = dict(c, judged=judged)
    for sev, c in tot.items():
        judged = c["true"] + c["style"] + c["false"]
        if not sum(c.values()):
            continue
        if sev == "error":
            measure = f"precision {pct(c['true'], judged)} ({c['true']}/{judged})"
        else:
            measure = f"false rate {pct(c['false'], judged)} ({c['false']}/{judged})"
        print(f"{'ALL':7} {sev:8} {sum(c.values()):4d} {c['true']:5d} {c['style']:5d} {c['false']:5d} "
              f"{c['unlabelled']:5d}  {measure}")
        result["rules"][f"ALL/{sev}"] = dict(c, judged=judged)

    # ---- .data writes
    # a write through `.data` is reported as the hazard (TAL001) or as the idiom (TAL003)
    tal001 = {(f["repo"], f["path"], f["line"]) for f in findings_all if f["code"] in ("TAL001", "TAL003")}
    labelled = [w for w in writes_all if (w["repo"], w["path"], w["line"]) in wlabels]
    tensor_w = [w for w in labelled if wlabels[(w["repo"], w["path"], w["line"])].get("tensor") is True]
    reported = [w for w in tensor_w if (w["repo"], w["path"], w["line"]) in tal001]
    nontensor = [w for w in labelled if wlabels[(w["repo"], w["path"], w["line"])].get("tensor") is False]
    nontensor_rep = [w for w in nontensor if (w["repo"], w["path"], w["line"]) in tal001]
    stale = [k for k in wlabels if k[0] in {p["repo"] for p in projects}
             and k not in {(w["repo"], w["path"], w["line"]) for w in writes_all}]
    print(f"\n== writes through .data: {len(writes_all)} found by the AST scan, {len(labelled)} labelled, "
          f"{len(tensor_w)} on tensors")
    share = pct(len(reported), len(tensor_w)).strip()
    print(f"reported (TAL001/TAL003 on the line): {len(reported)}/{len(tensor_w)} = {share}"
          f"   (non-tensor writes reported: {len(nontensor_rep)}/{len(nontensor)})")
    per_proj = defaultdict(lambda: [0, 0])
    for w in tensor_w:
        per_proj[w["repo"]][1] += 1
    for w in reported:
        per_proj[w["repo"]][0] += 1
    for repo in sorted(per_proj):
        r, n = per_proj[repo]
        print(f"    {repo:45} {r:3d}/{n:<3d}")
    if stale:
        print(f"    ({len(stale)} labelled writes no longer found by the scan)")
    result["datawrites"] = {"found": len(writes_all), "labelled": len(labelled), "tensor": len(tensor_w),
                            "reported": len(reported), "nontensor": len(nontensor),
                            "nontensor_reported": len(nontensor_rep),
                            "missed": [f"{w['repo']}:{w['path']}:{w['line']}" for w in tensor_w if w not in reported],
                            "per_project": {k: {"reported": v[0], "tensor": v[1]} for k, v in per_proj.items()}}

    # ---- fix pairs
    if pairs and not args.no_pairs and not args.project:
        print("\n== fix pairs (buggy = parent of the fix commit)")
        flagged_n = clean_n = 0
        for pair in pairs:
            codes = pair["codes"]
            row = {"id": pair["id"], "repo": pair["repo"], "path": pair["path"], "codes": codes}
            for side, commit, lines in (("buggy", pair["parent"], pair["buggy_lines"]),
                                        ("fixed", pair["fix"], pair["fixed_lines"])):
                root = args.work / "pairs" / pair["id"] / side
                extract(args.mirrors, pair["repo"], commit, root)
                found = [f for f in lint(root, [pair["path"]], 1) if f["path"] == pair["path"]]
                near = [f for f in found if f["code"] in codes
                        and any(abs(f["line"] - l) <= LINE_SLACK for l in lines)]
                row[side] = [f"{f['code']}/{f['severity']}@{f['line']}" for f in near]
                row[side + "_all"] = [f"{f['code']}/{f['severity']}@{f['line']}" for f in found]
            row["flagged"] = bool(row["buggy"])
            row["clean"] = not row["fixed"]
            flagged_n += row["flagged"]
            clean_n += row["clean"]
            result["pairs"].append(row)
            print(f"  {pair['id']:28} {'/'.join(codes):15} buggy flagged: {'yes' if row['flagged'] else 'NO '}"
                  f"  fixed clean: {'yes' if row['clean'] else 'NO '}   {', '.join(row['buggy']) or '-'}")
        print(f"  buggy flagged at the bug: {flagged_n}/{len(pairs)}; fixed clean there: {clean_n}/{len(pairs)}")
        result["pairs_summary"] = {"n": len(pairs), "flagged": flagged_n, "clean": clean_n}

    # ---- what messages name (issue 41, item 6): in the code they point to, never a module
    named = message_problems(findings_all)
    print(f"\n== messages naming what the code does not hold, or a module: {len(named)}")
    for line in named:
        print(f"  {line}")
    result["message_problems"] = named

    # ---- false positives and unlabelled
    bad = [f for f in findings_all if f["label"] == "false" or (f["severity"] == "error" and f["label"] == "style")]
    if bad:
        print("\n== wrong findings (false; style with severity error)")
        for f in sorted(bad, key=lambda f: (f["code"], f["repo"], f["path"], f["line"])):
            print(f"  {f['code']}/{f['severity']} [{f['label']}] {f['repo']}:{f['path']}:{f['line']}  {f['reason']}")
    unl = [f for f in findings_all if f["label"] is None]
    print(f"\n== unlabelled findings: {len(unl)}" + ("" if args.unlabelled or not unl else " (--unlabelled lists them)"))
    if args.unlabelled:
        for f in unl:
            print(f"\n{f['repo']}:{f['path']}:{f['line']}: {f['code']}/{f['severity']} {f['message']}")
            print(snippet(f["root"], f["path"], f["line"]))
            print(f"[[label]]\nrepo = {toml_str(f['repo'])}\npath = {toml_str(f['path'])}\nline = {f['line']}\n"
                  f"code = {toml_str(f['code'])}\nseverity = {toml_str(f['severity'])}\nlabel = \"\"\nreason = \"\"")
    unw = [w for w in writes_all if (w["repo"], w["path"], w["line"]) not in wlabels]
    print(f"== .data writes without a tensor label: {len(unw)}"
          + ("" if args.unlabelled_writes or not unw else " (--unlabelled-writes lists them)"))
    if args.unlabelled_writes:
        for w in unw:
            print(f"\n{w['repo']}:{w['path']}:{w['line']}: {w['kind']} through `{w['expr']}.data`")
            print(snippet(w["root"], w["path"], w["line"]))

    if args.json:
        result["findings"] = [{k: f[k] for k in ("repo", "path", "line", "code", "severity", "label", "message")}
                              for f in findings_all]
        result["py_lines"] = total_lines
        args.json.write_text(json.dumps(result, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
