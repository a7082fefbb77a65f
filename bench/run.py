#!/usr/bin/env python3
"""Benchmark detachlint against the field, side by side, on the installed torch package's sources.

    python bench/run.py                      # the 300-file subset: every tool, ratios, scaling, LSP
    python bench/run.py --corpus all         # all of torch's .py files
    python bench/run.py --precheck-equality  # findings with and without the pre-check, all of torch
    python bench/run.py --blank-equality     # findings with and without blanking quiet bodies, all of torch
    python bench/run.py --blank-equality --libcst  # the same, LibCST parsing every blanked module
    python bench/run.py --screen-equality    # findings with and without the screen on Python's tree, all of torch

Everything runs in one invocation so that the ratios compare like with like on a shared machine;
absolute times are printed but are noise. See bench/README.md for what each row measures.

Foreign tools run from their own virtual environments under bench/.venvs/ (created on first use
with pip: TorchFix pins an older libcst than detachlint's).
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence

ROOT = Path(__file__).resolve().parents[1]
VENVS = ROOT / "bench" / ".venvs"
RESULTS = ROOT / "bench" / "results"
SUBSET_SIZE = 300
SCALING_SIZES = (100, 300, 900)
FOREIGN = {  # venv name -> packages
    "torchfix": ["torchfix", "flake8"],
    "ruff": ["ruff"],
}


# ----------------------------------------------------------------------------------------- corpus

def torch_dir() -> Path:
    """The installed torch package (found without importing it)."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.origin:
        sys.exit("bench: torch is not installed in this environment (pip install torch==2.13.0)")
    return Path(spec.origin).parent


def corpus_files(root: Path) -> List[str]:
    """Every .py file under ``root``, as relative POSIX paths, sorted."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in filenames:
            if name.endswith(".py"):
                out.append(Path(dirpath, name).relative_to(root).as_posix())
    return sorted(out)


def every_kth(files: Sequence[str], n: int) -> List[str]:
    """The documented subset rule: sort by relative path, take ``files[i * len // n]`` for
    ``i in range(n)`` (evenly spaced, deterministic, the same on every machine with this torch)."""
    if n >= len(files):
        return list(files)
    return [files[i * len(files) // n] for i in range(n)]


def materialise(root: Path, files: Sequence[str], dest: Path) -> Path:
    """Copy the corpus into a plain directory outside any repository or site-packages, so that no
    tool's default exclusions (site-packages, .gitignore) change what it reads."""
    for rel in files:
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(root / rel, target)
    return dest


def count_lines(root: Path, files: Sequence[str]) -> int:
    return sum((root / f).read_bytes().count(b"\n") for f in files)


# ------------------------------------------------------------------------------------------ venvs

def venv_bin(name: str, tool: str) -> Path:
    return VENVS / name / "bin" / tool


def ensure_venvs() -> Dict[str, str]:
    versions = {}
    for name, packages in FOREIGN.items():
        python = venv_bin(name, "python")
        if not python.exists():
            print(f"bench: creating {VENVS / name} (pip install {' '.join(packages)})", file=sys.stderr)
            subprocess.run([sys.executable, "-m", "venv", str(VENVS / name)], check=True)
            subprocess.run([str(python), "-m", "pip", "install", "-q", *packages], check=True)
        out = subprocess.run([str(python), "-m", "pip", "list", "--format=json"], capture_output=True, text=True)
        try:
            for item in json.loads(out.stdout):
                if item["name"].lower() in ("torchfix", "flake8", "ruff", "libcst"):
                    versions[f"{item['name'].lower()} ({name} venv)"] = item["version"]
        except ValueError:
            pass
    return versions


# -------------------------------------------------------------------------------------- measuring

# Runs one command in a fresh process, so that RUSAGE_CHILDREN covers exactly that command's tree;
# samples the tree's summed RSS from /proc every 50 ms for the peak of all processes together.
_MEASURE = r"""
import json, os, resource, subprocess, sys, threading, time
cmd = json.loads(sys.argv[1]); env = json.loads(sys.argv[2]); cwd = sys.argv[3] or None
peak = [0]
def tree_rss(root):
    children = {}
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/stat") as fh:
                    ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
                children.setdefault(ppid, []).append(int(pid))
            except (OSError, ValueError, IndexError):
                pass
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        try:
            with open(f"/proc/{pid}/statm") as fh:
                total += int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, ValueError):
            pass
        stack.extend(children.get(pid, ()))
    return total
start = time.perf_counter()
proc = subprocess.Popen(cmd, env={**os.environ, **env}, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
done = threading.Event()
def sample():
    while not done.is_set():
        if os.path.isdir("/proc"):
            peak[0] = max(peak[0], tree_rss(proc.pid))
        done.wait(0.05)
thread = threading.Thread(target=sample, daemon=True); thread.start()
err = proc.stderr.read()
rc = proc.wait(); wall = time.perf_counter() - start
done.set(); thread.join()
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"rc": rc, "wall": wall, "cpu": ru.ru_utime + ru.ru_stime, "max_rss": ru.ru_maxrss * 1024,
                  "tree_peak_rss": peak[0], "stderr": err.decode("utf-8", "replace")[-4000:]}))
"""


def measure(cmd: Sequence[str], env: Optional[Dict[str, str]] = None, cwd: Optional[Path] = None) -> dict:
    out = subprocess.run([sys.executable, "-c", _MEASURE, json.dumps(list(map(str, cmd))), json.dumps(env or {}),
                          str(cwd or "")], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"measuring {cmd} failed: {out.stderr[-2000:]}")
    return json.loads(out.stdout)


_PARSE_FLOOR = r"""
import sys, libcst
paths = open(sys.argv[1], encoding="utf-8").read().splitlines()
failed = 0
for path in paths:
    with open(path, "rb") as fh:
        data = fh.read()
    try:
        libcst.parse_module(data)
    except Exception:
        failed += 1
print(f"parsed {len(paths) - failed}, failed {failed}", file=sys.stderr)
"""


def _stats_line(stderr: str) -> Optional[dict]:
    for line in stderr.splitlines():
        if line.startswith("detachlint-stats: "):
            return json.loads(line[len("detachlint-stats: "):])
    return None


def tool_commands(corpus: Path, file_list: Path, cache_dir: Path, jobs: Optional[int], foreign: bool = True) -> List[tuple]:
    """(row name, command, env) in the order they run."""
    py = sys.executable
    jobs_args = ["--jobs", str(jobs)] if jobs else []
    check = [py, "-m", "detachlint", "check", str(corpus), "--exit-zero", "--output-format", "concise"]
    stats_env = {"DETACHLINT_RUNNER_STATS": "1", "PYTHONPATH": str(ROOT)}
    rows = [
        ("libcst parse floor (1 process)", [py, "-c", _PARSE_FLOOR, str(file_list)], {}),
        ("detachlint cold", check + jobs_args + ["--cache-dir", str(cache_dir)], stats_env),
        ("detachlint warm", check + jobs_args + ["--cache-dir", str(cache_dir)], stats_env),
        ("detachlint --jobs 1 --no-cache", check + ["--jobs", "1", "--no-cache"], stats_env),
        ("flake8 --select=TAL", [str(Path(py).parent / "flake8"), "--select=TAL", "--exit-zero", str(corpus)],
         {"PYTHONPATH": str(ROOT)}),
    ]
    if foreign and venv_bin("torchfix", "torchfix").exists():
        rows += [
            ("torchfix CLI", [str(venv_bin("torchfix", "torchfix")), str(corpus)], {}),
            ("flake8 --select=TOR (torchfix)", [str(venv_bin("torchfix", "flake8")), "--select=TOR", "--exit-zero",
                                                str(corpus)], {}),
        ]
    if foreign and venv_bin("ruff", "ruff").exists():
        rows.append(("ruff --select ALL --no-cache", [str(venv_bin("ruff", "ruff")), "check", "--isolated",
                                                       "--select", "ALL", "--no-cache", "--exit-zero", str(corpus)], {}))
    return rows


# The rows the parse-floor ratios divide: run ``rounds`` times, interleaved (each round runs them
# one after another, the cold row from an empty cache), and each keeps its fastest wall and CPU
# time and its largest memory, so that one slow moment of a shared machine moves neither side.
REPEATED = ("libcst parse floor (1 process)", "detachlint cold", "detachlint warm", "detachlint --jobs 1 --no-cache")


def run_tools(root: Path, files: Sequence[str], workdir: Path, jobs: Optional[int], foreign: bool = True,
              rounds: int = 1) -> Dict[str, dict]:
    corpus = materialise(root, files, workdir / "corpus")
    file_list = workdir / "files.txt"
    file_list.write_text("\n".join(str(corpus / f) for f in files), encoding="utf-8")
    cache_dir = workdir / "cache"
    # The other tools run from installs that pip compiled; detachlint runs from this checkout, which
    # an environment with PYTHONDONTWRITEBYTECODE set would compile anew at every start (about 35 ms,
    # an eighth of a warm run): compiled once here, as an install would be.
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "detachlint"),
                    str(ROOT / "runtime" / "detachlint_runtime")], check=True, capture_output=True)
    rows = tool_commands(corpus, file_list, cache_dir, jobs, foreign)
    results: Dict[str, dict] = {}
    for round_ in range(max(1, rounds)):
        for name, cmd, env in rows:
            if round_ and name not in REPEATED:
                continue
            if name == "detachlint cold":
                shutil.rmtree(cache_dir, ignore_errors=True)
            suffix = f" (round {round_ + 1} of {rounds})" if rounds > 1 and name in REPEATED else ""
            print(f"bench: {name}{suffix} ...", file=sys.stderr, flush=True)
            result = measure(cmd, env, cwd=workdir)
            result["stats"] = _stats_line(result["stderr"])
            results[name] = _best(results.get(name), result)
    return results


def _best(kept: Optional[dict], new: dict) -> dict:
    """One row over rounds: the fastest wall and CPU time, the largest memory, the worst exit."""
    if kept is None:
        return dict(new, rounds=1)
    out = dict(kept, rounds=kept["rounds"] + 1, wall=min(kept["wall"], new["wall"]), cpu=min(kept["cpu"], new["cpu"]),
               max_rss=max(kept["max_rss"], new["max_rss"]), tree_peak_rss=max(kept["tree_peak_rss"], new["tree_peak_rss"]),
               rc=kept["rc"] if kept["rc"] not in (0, 1) else new["rc"])
    stats, fresh = kept.get("stats"), new.get("stats")
    if stats and fresh and fresh.get("worker_peak_rss"):
        peaks = sorted(stats.get("worker_peak_rss") or [], reverse=True)
        more = sorted(fresh["worker_peak_rss"], reverse=True)
        width = max(len(peaks), len(more))
        peaks += [0] * (width - len(peaks))
        more += [0] * (width - len(more))
        out["stats"] = dict(stats, worker_peak_rss=[max(a, b) for a, b in zip(peaks, more)])
    return out


# --------------------------------------------------------------------------------- scaling, LSP

def scaling(root: Path, all_files: Sequence[str], workdir: Path) -> List[dict]:
    """detachlint --jobs 1 --no-cache at three corpus sizes: ms per 1,000 lines should stay flat."""
    rows = []
    for n in SCALING_SIZES:
        files = every_kth(all_files, n)
        corpus = materialise(root, files, workdir / f"scale-{n}")
        lines = count_lines(root, files)
        cmd = [sys.executable, "-m", "detachlint", "check", str(corpus), "--exit-zero", "--jobs", "1", "--no-cache"]
        print(f"bench: scaling {n} files ...", file=sys.stderr, flush=True)
        m = measure(cmd, {"PYTHONPATH": str(ROOT)}, cwd=workdir)
        rows.append({"files": len(files), "lines": lines, "wall": m["wall"], "cpu": m["cpu"],
                     "ms_per_kloc": 1000 * m["wall"] / (lines / 1000)})
    return rows


_LSP = r"""
import ast, json, statistics, sys, time
import libcst
from detachlint.engine import lint_source
from detachlint.incremental import UnitCache, units
from detachlint.rules import ALL_RULES
source = open(sys.argv[1], encoding="utf-8").read()
codes = [r.code for r in ALL_RULES if r.default_enabled] + ["TAL999"]
# An edit the way one types: a comment appended to a one-line statement in the middle unit's body
# (same line count, new text every round). Without a unit, at the end of the file.
lines = source.splitlines(keepends=True)
found = units(source)[1]
row = None
if found:
    unit = found[len(found) // 2]
    tree = ast.parse(source)
    rows = sorted(n.lineno for n in ast.walk(tree) if isinstance(n, ast.stmt) and not hasattr(n, "body")
                  and n.lineno == n.end_lineno and unit.first <= n.lineno <= unit.last)
    row = rows[len(rows) // 2] if rows else None
def edit(i):
    if row is None:
        return source + f"\nedit_{i} = {i}\n"
    out = list(lines)
    out[row - 1] = out[row - 1].rstrip("\r\n") + f"  # edit {i}\n"
    return "".join(out)
cache = UnitCache()
lint_source(source, "f.py", codes); libcst.parse_module(source); cache.lint(source, "f.py", codes)  # warm
parse, lint, by_unit = [], [], []
for i in range(int(sys.argv[2])):
    edited = edit(i)
    t = time.perf_counter(); libcst.parse_module(edited); parse.append(time.perf_counter() - t)
    t = time.perf_counter(); whole = lint_source(edited, "f.py", codes); lint.append(time.perf_counter() - t)
    t = time.perf_counter(); split = cache.lint(edited, "f.py", codes); by_unit.append(time.perf_counter() - t)
    assert split == whole, (i, split, whole)
print(json.dumps({"parse": statistics.median(parse), "lint": statistics.median(lint),
                  "units": statistics.median(by_unit), "partial_lints": cache.partial_lints,
                  "edited_in_a_unit": row is not None, "lines": source.count("\n")}))
"""


def _lsp_files(root: Path, all_files: Sequence[str]) -> List[str]:
    """The torch file closest to 1,000 lines that imports torch (ties: first by path), and the
    largest file."""
    best, largest = None, None
    for rel in all_files:
        data = (root / rel).read_bytes()
        if largest is None or len(data) > largest[0]:
            largest = (len(data), rel)
        if b"import torch" not in data:
            continue
        distance = abs(data.count(b"\n") - 1000)
        if best is None or distance < best[0]:
            best = (distance, rel)
    assert best is not None and largest is not None
    return [best[1], largest[1]]


def lsp_relint(root: Path, all_files: Sequence[str], rounds: int = 7) -> List[dict]:
    """An editor's re-lint after an edit inside one function, medians of ``rounds``, alternated in
    one process: ``libcst.parse_module`` of the edited text, ``engine.lint_source`` of the whole
    of it, and the language server's path (``incremental.UnitCache``: only the edited function)."""
    out = []
    for rel in _lsp_files(root, all_files):
        proc = subprocess.run([sys.executable, "-c", _LSP, str(root / rel), str(rounds)], capture_output=True,
                              text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
        if proc.returncode != 0:
            raise RuntimeError(proc.stderr[-2000:])
        result = json.loads(proc.stdout)
        result["file"] = rel
        out.append(result)
    return out


# ------------------------------------------------------------------------------ precheck equality

def _equality_worker(args):
    path, full = args
    from detachlint.frontend.precheck import may_have_findings
    from detachlint.engine import every_site, lint_source
    from detachlint.findings import PARSE_ERROR_CODE
    from detachlint.rules import ALL_RULES

    codes = [r.code for r in ALL_RULES] + [PARSE_ERROR_CODE]
    try:
        source = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return path, None, False
    skipped = not may_have_findings(source, every_site())
    if not skipped and not full:
        return path, True, False  # the pre-check let it through: lint_source runs the same code either way
    same = lint_source(source, path, codes) == lint_source(source, path, codes, precheck=False)
    return path, same, skipped


def precheck_equality(root: Path, jobs: int = 1, full: bool = False) -> dict:
    """Findings (every rule, plus TAL999) with and without the pre-check on every .py file under
    ``root``. Files the pre-check lets through run the very same code path either way, so only
    the files it skips are linted twice, unless ``full``."""
    from multiprocessing import Pool

    paths = [str(root / f) for f in corpus_files(root)]
    with Pool(max(1, jobs)) as pool:
        rows = pool.map(_equality_worker, [(p, full) for p in paths], chunksize=8)
    return {
        "files": len(rows),
        "skipped_by_precheck": sum(1 for _, _, skipped in rows if skipped),
        "compared": sum(1 for _, same, skipped in rows if same is not None and (skipped or full)),
        "differences": [p for p, same, _ in rows if same is False],
        "unreadable": [p for p, same, _ in rows if same is None],
    }


def _blank_worker(path, libcst=False):
    import ast

    from detachlint.frontend import units
    from detachlint.engine import every_site, lint_source
    from detachlint.findings import PARSE_ERROR_CODE
    from detachlint.rules import ALL_RULES

    units._STATEMENTS_SIZE = 0  # top-level statements are blanked in every file, not only in large ones
    codes = [r.code for r in ALL_RULES] + [PARSE_ERROR_CODE]
    try:
        source = Path(path).read_text(encoding="utf-8")
        tree, lines = ast.parse(source), units.LINE_RE.findall(source)
        sites = every_site()
        assert sites is not None  # every built-in rule declares its sites
        bodies, spans = units.quiet_code(tree, lines, sites)
        quiet = len(bodies) + len(spans)
        statements = len(units.quiet_statements(tree, lines, sites, bodies=bodies))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError, RecursionError, MemoryError):
        return path, None, 0, 0
    if not quiet:
        return path, True, 0, 0  # nothing to blank: lint_source runs the same code either way
    # with ``libcst``, the screen off on the blanked side: LibCST parses every blanked module, its
    # emptied lines collapsed (``units.collapsed``), and the rows are mapped back
    same = lint_source(source, path, codes, screen=not libcst) == lint_source(source, path, codes, blank=False)
    return path, same, quiet, statements


def blank_equality(root: Path, jobs: int = 1, libcst: bool = False) -> dict:
    """Findings (every rule, plus TAL999) with and without blanking the bodies, top-level
    statements and table elements that can hold no finding (``frontend/units.py``), on every .py
    file under ``root`` that has such code; top-level statements in every file, whatever its size.
    ``libcst``: the blanked side with the screen off (LibCST parses every blanked module)."""
    from multiprocessing import Pool

    paths = [str(root / f) for f in corpus_files(root)]
    with Pool(max(1, jobs)) as pool:
        rows = pool.map(functools.partial(_blank_worker, libcst=libcst), paths, chunksize=8)
    return {
        "files": len(rows),
        "compared": sum(1 for _, same, quiet, _ in rows if same is not None and quiet),
        "blanked": sum(quiet for _, _, quiet, _ in rows),  # bodies, top-level statements and table elements
        "statements": sum(statements for _, _, _, statements in rows),
        "differences": [p for p, same, _, _ in rows if same is False],
        "not_parsed": [p for p, same, _, _ in rows if same is None],
    }


def _screen_worker(path):
    from detachlint import engine
    from detachlint.frontend import units
    from detachlint.frontend.fromast import Unsupported
    from detachlint.findings import PARSE_ERROR_CODE
    from detachlint.rules import ALL_RULES

    units._STATEMENTS_SIZE = 0  # top-level statements blanked in every file: the built tree skips them too
    codes = [r.code for r in ALL_RULES] + [PARSE_ERROR_CODE]
    try:
        source = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return path, None, None
    asked: List[str] = []

    def strict(*args, **kwargs):  # the screen's safety net off: anything but unsupported syntax is a bug
        try:
            found = engine.screen_reports(*args, **kwargs)
        except Unsupported as exc:
            asked.append(f"unsupported: {exc}")
            return True
        except RecursionError:
            asked.append("recursion")
            return True
        except Exception as exc:
            asked.append(f"error: {type(exc).__name__}: {exc}")
            return True
        asked.append("reported" if found else "nothing")
        return found

    engine._may_report = strict
    same = engine.lint_source(source, path, codes) == engine.lint_source(source, path, codes, screen=False)
    return path, same, asked


def screen_equality(root: Path, jobs: int = 1) -> dict:
    """Findings (every rule, plus TAL999) with and without the screen on the tree built from
    Python's (``frontend/fromast.py``), on every .py file under ``root``, top-level statements
    blanked in every file; and what the screen said of each module it was asked about."""
    from collections import Counter
    from multiprocessing import Pool

    paths = [str(root / f) for f in corpus_files(root)]
    with Pool(max(1, jobs)) as pool:
        rows = pool.map(_screen_worker, paths, chunksize=8)
    said = Counter(a.split(":")[0] for _, _, asked in rows for a in asked or ())
    return {
        "files": len(rows),
        "screened": dict(said),
        "errors": sorted({f"{p}: {a}" for p, _, asked in rows for a in asked or () if a.startswith("error")}),
        "unsupported": sorted({a for _, _, asked in rows for a in asked or () if a.startswith("unsupported")}),
        "differences": [p for p, same, _ in rows if same is False],
        "unreadable": [p for p, same, _ in rows if same is None],
    }


def _units_worker(path):
    from detachlint.findings import PARSE_ERROR_CODE
    from detachlint.incremental import differences
    from detachlint.rules import ALL_RULES

    try:
        source = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return path, None
    # every body of a file up to 100 kB; above, 20 of them (each check lints the whole file again)
    most = None if len(source) <= 100_000 else 20
    return path, differences(source, path, [r.code for r in ALL_RULES] + [PARSE_ERROR_CODE], most=most)


def units_equality(root: Path, jobs: int = 1, every: int = 1) -> dict:
    """Findings (every rule, plus TAL999) of each top-level function's body linted with the other
    bodies blank, and of the context with every body blank, against the whole module's
    (``incremental.differences``), on every ``every``-th .py file under ``root``; in files over
    100 kB, 20 bodies evenly spaced."""
    from multiprocessing import Pool

    paths = [str(root / f) for f in corpus_files(root)][::every]
    with Pool(max(1, jobs)) as pool:
        rows = pool.map(_units_worker, paths, chunksize=4)
    return {"files": len(rows), "differences": [d for _, found in rows for d in found or ()],
            "unreadable": [p for p, found in rows if found is None]}


# ---------------------------------------------------------------------------------------- report

TARGETS = [  # (label, numerator, denominator, target)
    ("cold / torchfix CLI", "detachlint cold", "torchfix CLI", 0.10),
    ("cold / libcst parse floor", "detachlint cold", "libcst parse floor (1 process)", 0.75),
    ("warm / cold", "detachlint warm", "detachlint cold", 0.05),
    ("flake8 TAL / flake8 TOR", "flake8 --select=TAL", "flake8 --select=TOR (torchfix)", 0.25),
    ("cold / ruff", "detachlint cold", "ruff --select ALL --no-cache", None),
    ("--jobs 1 / libcst parse floor", "detachlint --jobs 1 --no-cache", "libcst parse floor (1 process)", 0.50),
]
# Issue 14's: the CPU time of the whole cold run (every worker) against the single-process parse.
CPU_TARGETS = [
    ("cold / libcst parse floor", "detachlint cold", "libcst parse floor (1 process)", 0.50),
]


def report(results: Dict[str, dict], meta: dict, scale: List[dict], lsp: Optional[List[dict]]) -> str:
    lines = [f"corpus: {meta['corpus']} ({meta['files']} files, {meta['lines']} lines) from torch {meta['torch']}",
             f"machine: {meta['cpus']} CPUs; detachlint --jobs {meta['jobs'] or 'default (all cores)'}", ""]
    lines.append(f"{'tool':34} {'wall s':>8} {'CPU s':>8} {'max RSS MB':>11} {'tree peak MB':>13}  rc")
    for name, r in results.items():
        lines.append(f"{name:34} {r['wall']:8.2f} {r['cpu']:8.2f} {r['max_rss'] / 1e6:11.0f} "
                     f"{r['tree_peak_rss'] / 1e6:13.0f}  {r['rc']}")
    cold = results.get("detachlint cold", {}).get("stats") or {}
    if cold.get("worker_peak_rss"):
        per = ", ".join(f"{v / 1e6:.0f}" for v in cold["worker_peak_rss"])
        lines.append(f"\ndetachlint cold: {cold['jobs']} workers, peak RSS per worker MB: {per} (target <= 300)")
    warm = results.get("detachlint warm", {}).get("stats") or {}
    if warm:
        lines.append(f"detachlint warm: {warm.get('cache_hits')} of {warm.get('files')} files from the cache")
    rounds = max((r.get("rounds", 1) for r in results.values()), default=1)
    if rounds > 1:
        lines.append(f"\n{', '.join(REPEATED)}: best of {rounds} interleaved rounds (time: the fastest; memory: the largest)")
    lines.append("\nratios (wall time, same run)")
    for label, num, den, target in TARGETS:
        if num in results and den in results and results[den]["wall"] > 0:
            ratio = results[num]["wall"] / results[den]["wall"]
            verdict = "" if target is None else (f"  target <= {target:.2f}: " + ("met" if ratio <= target else "NOT met"))
            lines.append(f"  {label:32} {ratio:7.3f}{verdict}")
    lines.append("ratios (CPU time, same run)")
    for label, num, den, target in CPU_TARGETS:
        if num in results and den in results and results[den]["cpu"] > 0:
            ratio = results[num]["cpu"] / results[den]["cpu"]
            lines.append(f"  {label:32} {ratio:7.3f}  target <= {target:.2f}: " + ("met" if ratio <= target else "NOT met"))
    for row, target in zip(lsp or [], (0.15, 1.0)):
        lines.append(f"\neditor re-lint after an edit in one function: {row['file']} ({row['lines']} lines)")
        lines.append(f"  parse {row['parse'] * 1000:.0f} ms, whole-module lint {row['lint'] * 1000:.0f} ms "
                     f"({row['lint'] / row['parse']:.2f}x parse), by function {row['units'] * 1000:.0f} ms "
                     f"({row['units'] / row['parse']:.2f}x parse); target <= {target:.2f} s beyond the debounce: "
                     + ("met" if row["units"] <= target else "NOT met"))
    if scale:
        lines.append("\nscaling (detachlint --jobs 1 --no-cache)")
        for row in scale:
            lines.append(f"  {row['files']:5} files {row['lines']:8} lines  {row['wall']:7.2f} s  "
                         f"{row['ms_per_kloc']:6.1f} ms per 1,000 lines")
    return "\n".join(lines)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", choices=("subset", "all"), default="subset",
                        help=f"the {SUBSET_SIZE}-file subset (default) or every .py file of torch")
    parser.add_argument("--jobs", type=int, help="detachlint --jobs for the cold and warm rows (default: all cores)")
    parser.add_argument("--rounds", type=int, default=3,
                        help="rounds of the rows the parse-floor ratios divide, interleaved; each keeps its best (default: 3)")
    parser.add_argument("--no-foreign", action="store_true", help="skip TorchFix and ruff (no venvs needed)")
    parser.add_argument("--no-scaling", action="store_true", help="skip the three-size scaling series")
    parser.add_argument("--no-lsp", action="store_true", help="skip the LSP re-lint measurement")
    parser.add_argument("--precheck-equality", action="store_true",
                        help="only compare findings with and without the pre-check on all of torch")
    parser.add_argument("--full", action="store_true", help="with --precheck-equality: lint every file twice")
    parser.add_argument("--units-equality", type=int, nargs="?", const=1, metavar="K",
                        help="only compare linting by top-level function (the editor's re-lint) with "
                             "whole-module linting, on every K-th torch file (default: all)")
    parser.add_argument("--blank-equality", action="store_true",
                        help="only compare findings with and without blanking quiet bodies on all of torch")
    parser.add_argument("--libcst", action="store_true",
                        help="with --blank-equality: the blanked side without the screen, parsed by LibCST")
    parser.add_argument("--screen-equality", nargs="?", const="", metavar="DIR",
                        help="only compare findings with and without the screen on the tree built from "
                             "Python's, on all of torch (or on every .py file under DIR)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary corpus directory")
    args = parser.parse_args(argv)

    root = torch_dir()
    all_files = corpus_files(root)
    if args.precheck_equality:
        start = time.perf_counter()
        result = precheck_equality(root, jobs=args.jobs or os.cpu_count() or 1, full=args.full)
        result["seconds"] = round(time.perf_counter() - start, 1)
        print(json.dumps(result, indent=2))
        return 0 if not result["differences"] else 1

    if args.blank_equality:
        start = time.perf_counter()
        result = blank_equality(root, jobs=args.jobs or os.cpu_count() or 1, libcst=args.libcst)
        result["seconds"] = round(time.perf_counter() - start, 1)
        print(json.dumps(result, indent=2))
        return 0 if not result["differences"] else 1

    if args.screen_equality is not None:
        start = time.perf_counter()
        result = screen_equality(Path(args.screen_equality) if args.screen_equality else root,
                                 jobs=args.jobs or os.cpu_count() or 1)
        result["seconds"] = round(time.perf_counter() - start, 1)
        print(json.dumps(result, indent=2))
        return 0 if not result["differences"] and not result["errors"] else 1

    if args.units_equality:
        start = time.perf_counter()
        result = units_equality(root, jobs=args.jobs or os.cpu_count() or 1, every=args.units_equality)
        result["seconds"] = round(time.perf_counter() - start, 1)
        print(json.dumps(result, indent=2))
        return 0 if not result["differences"] else 1

    versions = {} if args.no_foreign else ensure_venvs()
    files = all_files if args.corpus == "all" else every_kth(all_files, SUBSET_SIZE)
    meta = {"corpus": f"torch {args.corpus}" + ("" if args.corpus == "all" else f" (every k-th of {len(all_files)})"),
            "files": len(files), "lines": count_lines(root, files), "torch": torch_version(root),
            "cpus": os.cpu_count(), "jobs": args.jobs, "rounds": args.rounds, "python": sys.version.split()[0], "versions": versions}
    workdir = Path(tempfile.mkdtemp(prefix="detachlint-bench-"))
    try:
        results = run_tools(root, files, workdir, args.jobs, foreign=not args.no_foreign, rounds=args.rounds)
        scale = [] if args.no_scaling else scaling(root, all_files, workdir)
        lsp = None if args.no_lsp else lsp_relint(root, all_files)
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    text = report(results, meta, scale, lsp)
    print(text)
    RESULTS.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%S")
    (RESULTS / f"{stamp}.json").write_text(json.dumps(
        {"meta": meta, "results": {k: {x: y for x, y in v.items() if x != "stderr"} for k, v in results.items()},
         "scaling": scale, "lsp": lsp}, indent=2), encoding="utf-8")
    (RESULTS / f"{stamp}.txt").write_text(text + "\n", encoding="utf-8")
    failures = [k for k, v in results.items() if v["rc"] not in (0, 1)]
    if failures:
        print(f"bench: these exited abnormally: {failures}", file=sys.stderr)
        for k in failures:
            print(f"--- {k}\n{results[k]['stderr'][-1500:]}", file=sys.stderr)
    return 0


def torch_version(root: Path) -> str:
    try:
        text = (root / "version.py").read_text(encoding="utf-8")
    except OSError:
        return "?"
    for line in text.splitlines():
        if line.startswith("__version__"):
            return line.split("=", 1)[1].strip().strip("'\"")
    return "?"


if __name__ == "__main__":
    sys.exit(main())
