"""Lint many files: in parallel worker processes, through an on-disk cache, in a stable order.

``run(tasks, jobs, cache)`` returns one ``FileResult`` per task, in the order of ``tasks``,
whatever order the workers finish in. ``jobs=1`` lints in this process. A file that cannot be
read, is too large, or trips an internal error yields its result and the run goes on; a worker
that dies (a crash in native code) costs only the files it held, which are retried one by one.

The cache (``.detachlint_cache/`` by default, like ruff's ``.ruff_cache/``) maps a key made of
the detachlint version and code, the effective configuration for the file (its enabled codes and
rule-affecting settings), its displayed name and its bytes to the findings. Entries are written
atomically (a temporary file, then ``os.replace``), so concurrent runs never read half an entry;
an entry that does not load is a miss and is rewritten.
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import sys
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, FrozenSet, List, Optional, Sequence, Tuple

from . import __version__
from .files import atomic_write
from .findings import PARSE_ERROR_CODE, Finding, Location, Severity, finding_from_dict, finding_to_dict

CACHE_DIR_NAME = ".detachlint_cache"
CACHE_FORMAT = "1"
# Files above this size are skipped with a message (configurable: ``max-file-size``).
DEFAULT_MAX_FILE_SIZE = 10 * 1024 * 1024


@dataclass(frozen=True)
class Task:
    """One file to lint. ``codes``: the enabled codes (None: the default set); ``options``: any
    other setting that changes findings, as a stable string (part of the cache key)."""

    path: str
    display: str
    codes: Optional[FrozenSet[str]] = None
    options: str = ""
    error: Optional[str] = None  # discovery already failed (e.g. a symlink loop): report it
    max_file_size: int = DEFAULT_MAX_FILE_SIZE  # bytes; 0: no limit


@dataclass
class FileResult:
    findings: List[Finding] = field(default_factory=list)
    skipped: Optional[str] = None  # why the file was not linted (too large): a notice, not a finding
    internal_error: Optional[str] = None  # a bug in detachlint while linting this file
    cached: bool = False


@dataclass
class RunStats:
    files: int = 0
    cache_hits: int = 0
    jobs: int = 1
    worker_peak_rss: Dict[int, int] = field(default_factory=dict)  # pid -> bytes


def _error_finding(display: str, message: str) -> Finding:
    loc = Location(1, 0)
    return Finding(PARSE_ERROR_CODE, message, Severity.ERROR, display, loc, loc)


def _wanted(codes: Optional[FrozenSet[str]], code: str) -> bool:
    return codes is None or code in codes


# --------------------------------------------------------------------------------------- cache

_FINGERPRINT: Optional[str] = None


def code_fingerprint() -> str:
    """The version plus the size and mtime of every module of this package, so that a changed
    checkout (not only a new release) invalidates the cache."""
    global _FINGERPRINT
    if _FINGERPRINT is None:
        digest = hashlib.sha256(f"{__version__}\0{CACHE_FORMAT}".encode())
        root = Path(__file__).parent
        for path in sorted(root.rglob("*.py")):
            try:
                st = path.stat()
            except OSError:
                continue
            digest.update(f"{path.relative_to(root)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
        _FINGERPRINT = digest.hexdigest()[:16]
    return _FINGERPRINT


class Cache:
    def __init__(self, directory: os.PathLike) -> None:
        self.directory = Path(directory)
        self._fingerprint = code_fingerprint()
        self._prepared = False

    def key(self, task: Task, data: bytes) -> str:
        digest = hashlib.sha256()
        codes = "*" if task.codes is None else ",".join(sorted(task.codes))
        for part in (self._fingerprint, codes, task.options, task.display):
            digest.update(part.encode("utf-8", "surrogateescape"))
            digest.update(b"\0")
        digest.update(data)
        return digest.hexdigest()

    def _entry(self, key: str) -> Path:
        return self.directory / self._fingerprint / key[:2] / f"{key}.json"

    def get(self, key: str) -> Optional[List[Finding]]:
        try:
            with open(self._entry(key), "rb") as fh:
                payload = json.loads(fh.read())
            return [finding_from_dict(d) for d in payload["findings"]]
        except (OSError, ValueError, KeyError, TypeError, IndexError):
            return None  # absent, or corrupt: a miss; the entry is rewritten

    def put(self, key: str, findings: Sequence[Finding]) -> None:
        entry = self._entry(key)
        try:
            self._prepare()
            entry.parent.mkdir(parents=True, exist_ok=True)
            text = json.dumps({"findings": [finding_to_dict(f) for f in findings]}, separators=(",", ":"))
            atomic_write(entry, text.encode("utf-8", "surrogateescape"))
        except (OSError, TypeError, ValueError):
            pass  # a read-only or full disk makes the cache useless, never the run

    def _prepare(self) -> None:
        if self._prepared:
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        for name, text in ((".gitignore", "# Created by detachlint automatically.\n*\n"),
                           ("CACHEDIR.TAG", "Signature: 8a477f597d28d172789f06886806bc55\n"
                                            "# This is a cache directory created by detachlint.\n")):
            path = self.directory / name
            if not path.exists():
                atomic_write(path, text.encode())
        self._prepared = True


# --------------------------------------------------------------------------------------- work

def lint_task(task: Task, cache: Optional[Cache]) -> FileResult:
    """Lint one file (in a worker or in this process). Never raises."""
    if task.error is not None:
        wanted = _wanted(task.codes, PARSE_ERROR_CODE)
        return FileResult([_error_finding(task.display, task.error)] if wanted else [])
    try:
        path = Path(task.path)
        max_file_size = task.max_file_size
        if max_file_size:
            try:
                size = path.stat().st_size
            except OSError:
                size = 0  # reading will say what is wrong
            if size > max_file_size:
                return FileResult(skipped=f"{task.display}: skipped, {size / 1e6:.1f} MB is over the "
                                          f"max-file-size limit of {max_file_size / 1e6:.1f} MB")
        try:
            data = path.read_bytes()
        except OSError as exc:
            if not _wanted(task.codes, PARSE_ERROR_CODE):
                return FileResult()
            return FileResult([_error_finding(task.display, f"cannot read file: {exc.strerror or exc}")])
        key = cache.key(task, data) if cache is not None else None
        if key is not None:
            cached = cache.get(key)
            if cached is not None:
                return FileResult(cached, cached=True)
        findings = _lint_data(data, path, task)
        if key is not None:
            cache.put(key, findings)
        return FileResult(findings)
    except Exception as exc:  # a bug in a rule must not hide the other files' findings
        return FileResult(internal_error=f"{type(exc).__name__}: {exc}")


def _lint_data(data: bytes, path: Path, task: Task) -> List[Finding]:
    from .engine import lint_bytes

    if path.suffix == ".ipynb":
        from .notebook import lint_notebook_bytes

        return lint_notebook_bytes(data, task.display, task.codes)
    return lint_bytes(data, task.display, task.codes)


_WORKER: Dict[str, object] = {}


def _init_worker(cache_dir: Optional[str]) -> None:
    _WORKER["cache"] = Cache(cache_dir) if cache_dir else None


def _peak_rss() -> int:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


def _work(batch: Sequence[Tuple[int, Task]]) -> Tuple[int, int, List[Tuple[int, FileResult]]]:
    cache = _WORKER.get("cache")
    out = [(i, lint_task(task, cache)) for i, task in batch]  # type: ignore[arg-type]
    return os.getpid(), _peak_rss(), out


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def run(tasks: Sequence[Task], jobs: Optional[int] = None, cache_dir: Optional[os.PathLike] = None,
        stats: Optional[RunStats] = None) -> List[FileResult]:
    """Lint ``tasks``; results in the same order. ``jobs``: worker processes (None: all cores;
    1: this process). ``cache_dir``: None disables the cache."""
    jobs = default_jobs() if jobs is None or jobs <= 0 else jobs
    jobs = min(jobs, max(1, len(tasks)))
    stats = stats if stats is not None else RunStats()
    stats.files, stats.jobs = len(tasks), jobs
    results: List[Optional[FileResult]] = [None] * len(tasks)
    cache_str = str(cache_dir) if cache_dir is not None else None
    cache = Cache(cache_str) if cache_str else None
    if cache is not None and jobs > 1:
        # Hits first, here: an unchanged tree re-lints without starting a single worker.
        for i, task in enumerate(tasks):
            results[i] = _cached(task, cache)
    todo = [i for i, r in enumerate(results) if r is None]
    jobs = min(jobs, max(1, len(todo)))
    stats.jobs = jobs
    if jobs == 1:
        for i in todo:
            results[i] = lint_task(tasks[i], cache)
        stats.worker_peak_rss[os.getpid()] = _peak_rss()
    else:
        _run_parallel([tasks[i] for i in todo], jobs, cache_str, todo, results, stats)
    done = [r if r is not None else FileResult(internal_error="not linted") for r in results]
    stats.cache_hits = sum(1 for r in done if r.cached)
    return done


def _cached(task: Task, cache: Cache) -> Optional[FileResult]:
    if task.error is not None:
        return None
    try:
        path = Path(task.path)
        if task.max_file_size and path.stat().st_size > task.max_file_size:
            return None
        findings = cache.get(cache.key(task, path.read_bytes()))
    except (OSError, ValueError):
        return None
    return FileResult(findings, cached=True) if findings is not None else None


def _batches(tasks: Sequence[Task], jobs: int) -> List[List[Tuple[int, Task]]]:
    """Largest files first (so the last batches are short), a few files per batch to keep
    inter-process traffic low while the load stays balanced."""
    def size(task: Task) -> int:
        try:
            return os.stat(task.path).st_size
        except (OSError, ValueError):
            return 0

    order = sorted(range(len(tasks)), key=lambda i: -size(tasks[i]))
    per_batch = max(1, min(8, len(tasks) // (jobs * 8)))
    return [[(i, tasks[i]) for i in order[k:k + per_batch]] for k in range(0, len(order), per_batch)]


def _run_parallel(tasks: Sequence[Task], jobs: int, cache_dir: Optional[str], slots: Sequence[int], results: List[Optional[FileResult]], stats: RunStats) -> None:
    batches = _batches(tasks, jobs)
    try:
        with ProcessPoolExecutor(jobs, initializer=_init_worker, initargs=(cache_dir,)) as pool:
            futures: List[Future] = [pool.submit(_work, batch) for batch in batches]
            for future in futures:
                try:
                    pid, peak, out = future.result()
                except BrokenProcessPool:
                    break
                stats.worker_peak_rss[pid] = max(stats.worker_peak_rss.get(pid, 0), peak)
                for i, result in out:
                    results[slots[i]] = result
    except (BrokenProcessPool, OSError):
        pass
    # A worker died (or no pool could be made): the files not done are retried one per process,
    # so one crashing file cannot take others with it.
    for i, slot in enumerate(slots):
        if results[slot] is None:
            results[slot] = _isolated(tasks[i], cache_dir)


def _isolated(task: Task, cache_dir: Optional[str]) -> FileResult:
    try:
        with ProcessPoolExecutor(1, initializer=_init_worker, initargs=(cache_dir,)) as pool:
            _, _, out = pool.submit(_work, [(0, task)]).result()
            return out[0][1]
    except (BrokenProcessPool, OSError) as exc:
        message = f"detachlint crashed while checking this file ({type(exc).__name__})"
        return FileResult([_error_finding(task.display, message)] if _wanted(task.codes, PARSE_ERROR_CODE) else [],
                          internal_error=None)


def parse_size(value: object) -> int:
    """``max-file-size``: bytes as an integer, or a string such as ``"512KB"``, ``"10MB"``, ``"1GB"``
    (powers of 1024); 0 means no limit."""
    if isinstance(value, bool):
        raise ValueError(f"expected a size such as 10MB, got {value!r}")
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"expected a size of 0 or more, got {value!r}")
        return value
    if isinstance(value, str):
        text = value.strip().upper().replace(" ", "")
        for suffix, scale in (("KB", 1 << 10), ("MB", 1 << 20), ("GB", 1 << 30), ("K", 1 << 10), ("M", 1 << 20),
                              ("G", 1 << 30), ("B", 1), ("", 1)):
            if text.endswith(suffix):
                number = text[: len(text) - len(suffix)] if suffix else text
                try:
                    amount = float(number)
                except ValueError:
                    break
                if amount < 0:
                    break
                return int(amount * scale)
    raise ValueError(f"expected a size such as 10MB, got {value!r}")


def find_cache_dir(start: os.PathLike, config_file: Optional[os.PathLike] = None) -> Path:
    """``.detachlint_cache`` next to the configuration file, else in ``start``; the
    ``DETACHLINT_CACHE_DIR`` environment variable wins."""
    env = os.environ.get("DETACHLINT_CACHE_DIR")
    if env:
        return Path(env)
    base = Path(config_file).parent if config_file else Path(start)
    return base / CACHE_DIR_NAME

