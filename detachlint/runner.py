"""Lint many files: in parallel worker processes, through the cache, in a stable order.

``run(tasks, jobs, cache_dir)`` returns one ``FileResult`` per task, in the order of ``tasks``,
whatever order the workers finish in. ``jobs=1`` lints in this process. Each file goes through
``pipeline.lint_file`` (reading, size limit, cache, fixes, crash containment); a worker that dies
(a crash in native code) costs only the files it held, which are retried one by one.
"""

from __future__ import annotations

import gc
import marshal
import os
import resource
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from .cache import Cache, FileStamps
from .files import file_digest
from .findings import PARSE_ERROR_CODE, parse_error_finding
from .analysis.project import FactsOf, ModuleFacts, ProjectIndex, facts_here
from .frontend.sites import Sites
from .pipeline import FileResult, FixMode, Task, cache_options, lint_file

Indexes = Dict[str, ProjectIndex]


@dataclass
class RunStats:
    files: int = 0
    cache_hits: int = 0
    jobs: int = 1
    worker_peak_rss: Dict[int, int] = field(default_factory=dict)  # pid -> bytes


_WORKER: Dict[str, object] = {}


def _init_worker(cache_dir: Optional[str], fix: Optional[FixMode], indexes: Optional[Indexes]) -> None:
    # Keys only: the parent looked every file up before it started the workers, and writes the
    # entries they hand back (``FileResult.cache_key``)
    _WORKER["cache"] = Cache(cache_dir, lookups=False) if cache_dir else None
    _WORKER["fix"] = fix
    _WORKER["indexes"] = indexes


def _peak_rss() -> int:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


def _work(batch: Sequence[Tuple[int, Task]]) -> Tuple[int, int, List[Tuple[int, FileResult]]]:
    cache, fix, indexes = _WORKER.get("cache"), _WORKER.get("fix"), _WORKER.get("indexes")
    out = [(i, lint_file(task, cache, fix, indexes)) for i, task in batch]  # type: ignore[arg-type]
    return os.getpid(), _peak_rss(), out


def facts_in_parallel(jobs: Optional[int]) -> FactsOf:
    """The project index's ``facts_of`` (``analysis.project.build_index``) over ``jobs`` worker
    processes (None: all cores); in this process when a pool is not worth its start or cannot
    be made."""
    jobs = default_jobs() if jobs is None or jobs <= 0 else jobs

    def facts_of(items: Sequence[Tuple[str, str, bool]]) -> List[Optional[ModuleFacts]]:
        from .engine import every_site  # here: a run that computes no facts imports no rule (nor LibCST)

        sites = every_site()
        if jobs == 1 or len(items) < 4 * jobs:
            return facts_here(items, sites)
        from concurrent.futures import ProcessPoolExecutor  # here: a run with nothing to do starts faster
        from concurrent.futures.process import BrokenProcessPool

        batches = _batches([len(source) for source, _, _ in items], jobs)
        out: List[Optional[ModuleFacts]] = [None] * len(items)
        try:
            with ProcessPoolExecutor(jobs) as pool:
                futures = [pool.submit(_facts_data, [items[i] for i in batch], sites) for batch in batches]
                for batch, future in zip(batches, futures):
                    for i, data in zip(batch, marshal.loads(future.result())):
                        out[i] = ModuleFacts.from_json(data) if data is not None else None
        except (BrokenProcessPool, OSError):
            return facts_here(items, sites)  # ``ast`` does not crash, but a pool may fail to start
        return out

    return facts_of


def _facts_data(items: Sequence[Tuple[str, str, bool]], sites: Optional[Sites]) -> bytes:
    """``facts_here`` in a worker process, handed back in the facts cache's form through
    ``marshal``: unpickling the objects cost the parent 0.1 s on the 300-file subset, this 0.06 s."""
    return marshal.dumps([facts.to_json() if facts is not None else None for facts in facts_here(items, sites)])


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def run(tasks: Sequence[Task], jobs: Optional[int] = None, cache_dir: Optional[os.PathLike] = None,
        stats: Optional[RunStats] = None, fix: Optional[FixMode] = None,
        indexes: Optional[Indexes] = None, freeze: bool = False,
        stamps: Optional[FileStamps] = None) -> List[FileResult]:
    """Lint ``tasks``; results in the same order. ``jobs``: worker processes (None: all cores;
    1: this process). ``cache_dir``: None disables the cache (so does ``fix``: fixing needs the
    text, not the findings). ``indexes``: the project indexes by root (``pipeline.build_projects``).
    ``freeze``: the process ends with the run (the command line), so what lives when the linting
    starts is moved out of the cyclic GC's reach for good (``gc.freeze``). ``stamps``: what files
    held when last read: an unchanged file's cache entry is found without reading it."""
    if fix is not None:
        cache_dir = None
    jobs = default_jobs() if jobs is None or jobs <= 0 else jobs
    jobs = min(jobs, max(1, len(tasks)))
    stats = stats if stats is not None else RunStats()
    stats.files, stats.jobs = len(tasks), jobs
    results: List[Optional[FileResult]] = [None] * len(tasks)
    cache_str = str(cache_dir) if cache_dir is not None else None
    cache = Cache(cache_str) if cache_str else None
    if cache is not None and (jobs > 1 or stamps is not None):
        # Hits first, here: an unchanged tree re-lints without starting a single worker (and,
        # with stamps, without reading a file). The workers make keys, and look nothing up.
        for i, task in enumerate(tasks):
            results[i] = _cached(task, cache, indexes, stamps)
    todo = [i for i, r in enumerate(results) if r is None]
    jobs = min(jobs, max(1, len(todo)))
    stats.jobs = jobs
    if todo:
        for index in (indexes or {}).values():
            index.load()  # once, here: a forked worker would load and compose its own copy
        if freeze:
            # What lives from here to the end (modules, the index) is never scanned by the cyclic
            # GC again, nor are its pages copied into a forked worker by such a scan.
            gc.freeze()
    if jobs == 1:
        for i in todo:
            results[i] = lint_file(tasks[i], cache, fix, indexes)
        stats.worker_peak_rss[os.getpid()] = _peak_rss()
    else:
        _run_parallel([tasks[i] for i in todo], jobs, (cache_str, fix, indexes), todo, results, stats)
    done = [r if r is not None else FileResult(internal_error="not linted") for r in results]
    stats.cache_hits = sum(1 for r in done if r.cached)
    if cache is not None:
        for r in done:
            if r.cache_key is not None:
                cache.put(r.cache_key, r.findings)
        cache.save()
    return done


def _cached(task: Task, cache: Cache, indexes: Optional[Indexes], stamps: Optional[FileStamps]) -> Optional[FileResult]:
    if task.error is not None:
        return None
    try:
        st = os.stat(task.path)
        if task.max_file_size and st.st_size > task.max_file_size:
            return None
        absolute = os.path.abspath(task.path)
        known = stamps.get(absolute, st) if stamps is not None else None
        if known is not None:
            digest = known[0]
        else:
            digest = file_digest(Path(task.path).read_bytes())
            if stamps is not None:
                stamps.put(absolute, st, digest)
        findings = cache.get(cache.key(task.display, task.codes, cache_options(task, indexes), digest))
    except (OSError, ValueError):
        return None
    return FileResult(findings, cached=True) if findings is not None else None


def _batches(sizes: Sequence[int], jobs: int) -> List[List[int]]:
    """Indexes into ``sizes``, largest first (so the last batches are short), a few per batch to
    keep inter-process traffic low while the load stays balanced."""
    order = sorted(range(len(sizes)), key=lambda i: -sizes[i])
    per_batch = max(1, min(8, len(sizes) // (jobs * 8)))
    return [order[k:k + per_batch] for k in range(0, len(order), per_batch)]


def _file_size(task: Task) -> int:
    try:
        return os.stat(task.path).st_size
    except (OSError, ValueError):
        return 0


def _run_parallel(tasks: Sequence[Task], jobs: int, init: Tuple[Optional[str], Optional[FixMode], Optional[Indexes]], slots: Sequence[int], results: List[Optional[FileResult]], stats: RunStats) -> None:
    import multiprocessing  # here: a run with every file cached starts no worker, nor imports this
    from concurrent.futures import Future, ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    batches = [[(i, tasks[i]) for i in batch] for batch in _batches([_file_size(t) for t in tasks], jobs)]
    if multiprocessing.get_start_method() == "fork":
        from . import engine  # LibCST and the rules: imported once here, not in each worker

        engine.check_libcst()  # and LibCST's private API checked once
    try:
        with ProcessPoolExecutor(jobs, initializer=_init_worker, initargs=init) as pool:
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
            results[slot] = _isolated(tasks[i], init)


def _isolated(task: Task, init: Tuple[Optional[str], Optional[FixMode], Optional[Indexes]]) -> FileResult:
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    try:
        with ProcessPoolExecutor(1, initializer=_init_worker, initargs=init) as pool:
            _, _, out = pool.submit(_work, [(0, task)]).result()
            return out[0][1]
    except (BrokenProcessPool, OSError) as exc:
        message = f"detachlint crashed while checking this file ({type(exc).__name__})"
        wanted = task.codes is None or PARSE_ERROR_CODE in task.codes
        return FileResult([parse_error_finding(task.display, message)] if wanted else [])
