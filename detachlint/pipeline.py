"""The one pipeline every surface goes through: paths → files → bytes → findings.

Fixit's ``fixit_paths → fixit_file → fixit_bytes`` is the model. This module owns, once:

- **discovery and selection**: which files ``check PATH ...`` lints, and with which rule codes
  and size limit (``tasks_for``, from the settings in ``config``);
- **reading and size limits**: a file over ``max-file-size`` is skipped with a notice, in
  ``check`` and ``--fix`` alike;
- **notebooks**: ``.ipynb`` bytes go to ``notebook``, Python source to ``engine``;
- **noqa**: applied by ``engine`` unless the caller owns it (flake8);
- **caching**: results per file content and settings (``cache``);
- **crash containment**: a bug in a rule becomes ``FileResult.internal_error`` for that file
  only; each surface decides how to show it, none decides again whether to go on.

``lint_file`` (a file on disk, optionally fixed), ``check_bytes`` (stdin and other bytes) and
``check_source`` / ``check_cells`` (an editor's buffers) all end in the same ``_lint_bytes`` /
``engine.lint_source``. ``runner`` runs ``lint_file`` for many tasks in parallel.
"""

from __future__ import annotations

import codecs
import functools
import io
import os
import re
import tokenize
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import (TYPE_CHECKING, Callable, Dict, FrozenSet, Iterable, Iterator, List, Mapping, MutableMapping,
                    Optional, Sequence, Tuple)

from .analysis import reach
from .analysis.project import (FactsOf, Layout, ModuleFacts, ModuleView, ProjectIndex, Source, build_index,
                               content_key, facts_here, load_facts, module_layout, module_name, text_digest)
from .cache import Cache, FactsCache, FileStamps
from .config import DEFAULT_MAX_FILE_SIZE, ConfigError, SettingsResolver
from .files import LINTED_SUFFIXES, GitIgnore, SourceError, decode_source, display_path, file_digest
from .findings import PARSE_ERROR_CODE, Finding, drop_fixes, parse_error_finding

# The engine, the fixes and the notebooks import LibCST (a third of a cached run's time): they are
# imported where a file is linted or fixed, never by a run that the cache serves whole.
if TYPE_CHECKING:
    from .fixes import FixOutcome
    from .incremental import UnitCache
    from .notebook import CellMap, CodeCell

Codes = Optional[FrozenSet[str]]


@dataclass(frozen=True)
class Task:
    """One file to lint. ``codes``: the enabled codes (None: the default set); ``options``: any
    other setting that changes findings, as a stable string (part of the cache key)."""

    path: str
    display: str
    codes: Codes = None
    options: str = ""
    error: Optional[str] = None  # discovery already failed (e.g. a symlink loop): report it
    max_file_size: int = DEFAULT_MAX_FILE_SIZE  # bytes; 0: no limit
    project: Optional[str] = None  # the project root whose index this file is linted with
    noqa: bool = True  # False: ``# noqa`` comments are ignored (``--ignore-noqa``)


@dataclass(frozen=True)
class FixMode:
    """``--fix`` (``write``), ``--diff`` (not ``write``: the diff is computed, nothing written)."""

    unsafe: bool = False
    write: bool = True
    unfixable: FrozenSet[str] = frozenset()  # codes whose fixes are not applied (``--unfixable``)


@dataclass
class FileResult:
    findings: List[Finding] = field(default_factory=list)  # what is left after fixing, if fixed
    skipped: Optional[str] = None  # why the file was not linted (too large): a notice, not a finding
    internal_error: Optional[str] = None  # a bug in detachlint while linting this file
    cached: bool = False
    # With a FixMode: the codes of the findings fixed, the unified diff of the change, why the
    # fixed text was not written, and (for ``check_bytes``) the fixed bytes.
    fixed: Dict[str, int] = field(default_factory=dict)
    diff: Optional[str] = None
    fix_error: Optional[str] = None
    fixed_data: Optional[bytes] = None
    # The cache key of findings linted afresh: ``runner.run`` puts them in the cache (a worker
    # process hands its entries to the parent this way).
    cache_key: Optional[str] = None


def _wanted(codes: Codes, code: str) -> bool:
    return codes is None or code in codes


def _error_result(display: str, codes: Codes, message: str) -> FileResult:
    return FileResult([parse_error_finding(display, message)] if _wanted(codes, PARSE_ERROR_CODE) else [])


def contained(work: Callable[[], FileResult]) -> FileResult:
    """The one crash policy: a bug while linting one file is reported for that file, never
    raised into the surface, which goes on with the next file (or the next edit)."""
    try:
        return work()
    except Exception as exc:
        return FileResult(internal_error=f"{type(exc).__name__}: {exc}")


def _too_large(display: str, size: int, limit: int) -> Optional[str]:
    if limit and size > limit:
        return f"{display}: skipped, {size / 1e6:.1f} MB is over the max-file-size limit of {limit / 1e6:.1f} MB"
    return None


# --- bytes and text ----------------------------------------------------------------------------

def _lint_bytes(data: bytes, display: str, codes: Codes, notebook: bool, noqa: bool = True,
                project: Optional[ModuleView] = None) -> List[Finding]:
    """A file's bytes: Python source, or a Jupyter notebook. May raise on a bug in a rule."""
    from .engine import lint_source
    from .notebook import lint_notebook_bytes

    if notebook:
        return lint_notebook_bytes(data, display, codes, noqa)
    try:
        source = decode_source(data)
    except SourceError as exc:
        return [parse_error_finding(display, exc.message, exc.row, exc.column)]
    return lint_source(source, display, codes, noqa=noqa, project=project)


def _outcome_result(outcome: FixOutcome, display: str, fix: FixMode) -> FileResult:
    from .fixes import unified_diff

    result = FileResult(list(outcome.remaining))
    if outcome.changed:
        result.fixed = dict(Counter(f.code for f in outcome.fixed))
        if not fix.write:
            result.diff = unified_diff(outcome.original, outcome.text, display)
    return result


def check_bytes(data: bytes, display: str, codes: Codes = None, *, notebook: bool = False,
                fix: Optional[FixMode] = None, max_file_size: int = 0,
                project: Optional[ModuleView] = None, noqa: bool = True) -> FileResult:
    """Bytes that are not (or not yet) a file on disk: stdin. With ``fix``, ``fixed_data`` holds
    the fixed bytes in the input's own encoding (the input unchanged when it cannot be fixed)."""
    from .engine import lint_source
    from .fixes import fix_text

    def work() -> FileResult:
        skipped = _too_large(display, len(data), max_file_size)
        if skipped:
            return FileResult(skipped=skipped, fixed_data=data if fix else None)
        if fix is None or notebook:
            return FileResult(_lint_bytes(data, display, codes, notebook, noqa, project),
                              fixed_data=data if fix else None)
        try:
            text = decode_source(data)
            encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        except (SourceError, SyntaxError):
            return FileResult(_lint_bytes(data, display, codes, notebook, noqa, project), fixed_data=data)
        outcome = fix_text(text, lambda t: drop_fixes(lint_source(t, display, codes, noqa=noqa, project=project),
                                                      fix.unfixable), fix.unsafe)
        if data.startswith(codecs.BOM_UTF8):
            encoding = "utf-8-sig"
        try:
            fixed = outcome.text.encode(encoding)
        except (UnicodeEncodeError, LookupError):
            return FileResult(outcome.initial, fixed_data=data)
        result = _outcome_result(outcome, display, fix)
        result.fixed_data = fixed
        return result

    return contained(work)


def check_source(source: str, display: str, codes: Codes = None, *, noqa: bool = True,
                 max_file_size: int = 0, project: Optional[ModuleView] = None,
                 units: Optional[UnitCache] = None) -> FileResult:
    """Text already decoded: an editor's buffer, or the lines flake8 read. ``noqa=False`` leaves
    ``# noqa`` to the caller (flake8 applies it, and ``--disable-noqa`` must work). ``units``:
    an editor's cache of findings per top-level function (``incremental.py``; noqa applied)."""
    from .engine import lint_source

    def work() -> FileResult:
        skipped = _too_large(display, len(source.encode("utf-8", "surrogatepass")), max_file_size)
        if skipped:
            return FileResult(skipped=skipped)
        if units is not None and noqa:
            return FileResult(units.lint(source, display, codes, project=project))
        return FileResult(lint_source(source, display, codes, noqa=noqa, project=project))

    return contained(work)


def check_cells(cells: Sequence[CodeCell], display: str, codes: Codes = None, *,
                noqa: bool = True) -> Tuple[FileResult, CellMap]:
    """A notebook's code cells, linted joined: findings in joined coordinates and the map back to
    cells (an editor places each location, related ones included, in its own cell)."""
    from .notebook import CellMap, lint_joined

    out: List[CellMap] = []

    def work() -> FileResult:
        findings, cmap = lint_joined(cells, display, codes, noqa=noqa)
        out.append(cmap)
        return FileResult(findings)

    result = contained(work)
    return result, out[0] if out else CellMap([], [])


# --- files -------------------------------------------------------------------------------------

def lint_file(task: Task, cache: Optional[Cache] = None, fix: Optional[FixMode] = None,
              indexes: Optional[Mapping[str, ProjectIndex]] = None) -> FileResult:
    """Lint one file (in a worker or in this process), through the cache (a hit comes back
    ``cached``; findings linted afresh carry their ``cache_key`` for ``runner.run`` to keep); with
    ``fix``, fix it (written atomically, or only diffed); ``indexes``: the project indexes by root.
    Never raises."""
    if task.error is not None:
        return _error_result(task.display, task.codes, task.error)

    def work() -> FileResult:
        path = Path(task.path)
        index = indexes.get(task.project) if indexes and task.project else None
        project = ModuleView(index, index.module_of(path)) if index is not None else None
        try:
            size = path.stat().st_size
        except OSError:
            size = 0  # reading will say what is wrong
        skipped = _too_large(task.display, size, task.max_file_size)
        if skipped:
            return FileResult(skipped=skipped)
        notebook = path.suffix == ".ipynb"
        if fix is not None:
            fixed = _fix_file(task, path, notebook, fix, project)
            if fixed is not None:
                return fixed
        try:
            data = path.read_bytes()
        except OSError as exc:
            return _error_result(task.display, task.codes, f"cannot read file: {exc.strerror or exc}")
        key = cache.key(task.display, task.codes, cache_options(task, indexes), file_digest(data)) if cache is not None else None
        if key is not None:
            hit = cache.get(key)
            if hit is not None:
                return FileResult(hit, cached=True)
        return FileResult(_lint_bytes(data, task.display, task.codes, notebook, task.noqa, project), cache_key=key)

    return contained(work)


def cache_options(task: Task, indexes: Optional[Mapping[str, ProjectIndex]]) -> str:
    """Everything besides codes, name and bytes that changes a file's findings: its settings and
    what the project index knows (any change to a composed fact invalidates the project's files)."""
    index = indexes.get(task.project) if indexes and task.project else None
    return task.options + ("" if task.noqa else "\0noqa=0") + (f"\0index={index.digest}" if index is not None else "")


def _fix_file(task: Task, path: Path, notebook: bool, fix: FixMode,
              project: Optional[ModuleView]) -> Optional[FileResult]:
    """None when the file cannot be read or decoded: the normal check then says why."""
    from .engine import lint_source
    from .fixes import fix_file, fix_notebook

    display, codes = task.display, task.codes
    transform = (lambda text: fix_notebook(text, display, codes, fix.unsafe, noqa=task.noqa, unfixable=fix.unfixable)
                 ) if notebook else None
    done = fix_file(path, display,
                    lambda text: drop_fixes(lint_source(text, display, codes, noqa=task.noqa, project=project), fix.unfixable),
                    fix.unsafe, write=fix.write, transform=transform)
    if done.outcome is None:
        return None
    if done.error is not None:
        return FileResult(done.outcome.initial, fix_error=done.error)
    return _outcome_result(done.outcome, display, fix)


def _raised(result: FileResult) -> List[Finding]:
    if result.internal_error is not None:
        raise RuntimeError(f"internal error: {result.internal_error}")
    return result.findings


def lint_path(path: os.PathLike, codes: Optional[Iterable[str]] = None, display: Optional[str] = None) -> List[Finding]:
    """One file's findings, no size limit or cache (for scripts, tests and the runtime companion);
    an internal error raises."""
    selected = None if codes is None else frozenset(codes)
    return _raised(lint_file(Task(str(path), display or str(path), selected, max_file_size=0)))


def lint_bytes(data: bytes, filename: str, codes: Optional[Iterable[str]] = None,
               notebook: Optional[bool] = None) -> List[Finding]:
    """Bytes' findings: a notebook by default when ``filename`` ends in ``.ipynb``; an internal
    error raises."""
    selected = None if codes is None else frozenset(codes)
    is_notebook = filename.endswith(".ipynb") if notebook is None else notebook
    return _raised(check_bytes(data, filename, selected, notebook=is_notebook))


# --- discovery ---------------------------------------------------------------------------------
# Which files ``detachlint check PATH ...`` lints. Like ruff: walk directories in sorted order,
# take .py/.pyi/.ipynb, prune what the settings exclude (ruff's default list) and what .gitignore
# files ignore; files named explicitly are linted whatever their suffix and even when excluded,
# unless force-exclude is on (pre-commit passes every staged file explicitly).

@dataclass(frozen=True)
class Target:
    """A file to lint, or a path that could not be walked (``error`` says why)."""

    path: Path
    display: str
    error: Optional[str] = None


# What the walk of each directory found (files, and paths that could not be walked, with why).
Walked = Dict[str, List[Tuple[Path, Optional[str]]]]


def discover(paths: Iterable[str], resolver: "SettingsResolver", tolerant: bool = False,
             walked: Optional[Walked] = None) -> List[Target]:
    """The files to lint under ``paths``, each once, sorted by displayed path. ``tolerant``: skip
    directories whose configuration is broken instead of raising (the project index walks
    beyond what the user named, and must not fail the run for a tree nobody asked about).
    ``walked``: what the walks of one run found under each directory (the project index of a
    directory the user named walks it again), filled by the walks that are not tolerant."""
    cwd = Path(os.getcwd())
    gitignore = GitIgnore()
    found: Dict[str, Target] = {}

    def add(path: Path, error: Optional[str] = None) -> None:
        key = os.path.abspath(path)
        if key not in found:
            found[key] = Target(path, display_path(path, cwd), error)

    for arg in paths:
        path = Path(arg)
        settings = resolver.for_path(path)
        if settings.force_exclude and settings.is_excluded(path, gitignore=gitignore):
            continue
        if path.is_dir():
            key = os.path.abspath(path)
            found_here = walked.get(key) if walked is not None else None
            if found_here is None:
                found_here = list(_walk(path, resolver, gitignore, tolerant))
                if walked is not None and not tolerant:  # a tolerant walk may have left a directory out
                    walked[key] = found_here
            for target_path, error in found_here:
                add(target_path, error)
        else:
            add(path)  # named explicitly: linted whatever its suffix; unreadable → TAL999
    return sorted(found.values(), key=lambda t: t.display)


def _walk(directory: Path, resolver: "SettingsResolver", gitignore: GitIgnore,
          tolerant: bool = False) -> Iterator[Tuple[Path, Optional[str]]]:
    try:
        with os.scandir(directory) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError as exc:
        yield directory, f"cannot read directory: {exc.strerror or exc}"
        return
    try:
        settings = resolver.for_path(directory, is_dir=True)
    except ConfigError:
        if tolerant:
            return
        raise
    base = os.path.abspath(directory)
    ignored = gitignore.ignores_in(Path(base)) if settings.respect_gitignore else None
    for entry in entries:  # strings, not paths, per entry: most entries are only looked at
        name = entry.name
        try:
            is_dir = entry.is_dir(follow_symlinks=False)
        except OSError:
            is_dir = False
        if settings.excludes_entry(name, os.path.join(base, name)):
            continue
        if ignored is not None and ignored(name, is_dir):
            continue
        if is_dir:
            yield from _walk(Path(entry.path), resolver, gitignore, tolerant)
        elif os.path.splitext(name)[1] in LINTED_SUFFIXES and not (entry.is_symlink() and os.path.isdir(entry.path)):
            # Symlinked directories are not followed (no loops, no escaping the tree); a broken
            # or looping file symlink is kept so that it is reported rather than silently skipped.
            yield Path(entry.path), None



def tasks_for(paths: Iterable[str], resolver: SettingsResolver,
              walked: Optional[Walked] = None) -> List[Task]:
    """Discovery and selection: one task per file, with its enabled codes, size limit and the
    root of the project it belongs to (``walked``: as for ``discover``)."""
    tasks = []
    paths = list(paths)
    named = [os.path.abspath(p) if os.path.isdir(p) else os.path.dirname(os.path.abspath(p)) for p in paths]
    fallback = Path(os.path.commonpath(named)) if named else None
    marked: Dict[str, Optional[str]] = {}
    for target in discover(paths, resolver, walked=walked):
        settings = resolver.for_path(target.path, is_dir=False)
        limit = DEFAULT_MAX_FILE_SIZE if settings.max_file_size is None else settings.max_file_size
        codes = settings.codes_for(target.path) if target.error is None else frozenset(settings.enabled)
        root = project_root(target.path, fallback, marked)
        tasks.append(Task(str(target.path), target.display, codes, error=target.error, max_file_size=limit,
                          project=str(root) if root is not None else None, noqa=not settings.ignore_noqa))
    return tasks


# --- the project index -------------------------------------------------------------------------
# Facts that cross files (``analysis.project``) come from every Python file of the project a
# linted file belongs to, whichever of its files are linted, so that the CLI on one file, the
# CLI on the whole tree, flake8 (one file at a time) and the editor all see the same project.

PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")
_DEFINES_RE = re.compile(r"^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]", re.MULTILINE)


def project_root(path: os.PathLike, fallback: Optional[Path] = None,
                 marked: Optional[Dict[str, Optional[str]]] = None) -> Optional[Path]:
    """The nearest directory above ``path`` that holds a project marker; else ``fallback`` (what
    the command line named) or the working directory, when ``path`` is below it; else None (the
    file is linted on its own). ``marked``: the nearest marked directory at or above each
    directory already asked, kept by the caller across the files of one run."""
    absolute = os.path.abspath(path)
    marked = {} if marked is None else marked
    walked: List[str] = []
    found: Optional[str] = None
    directory = os.path.dirname(absolute)
    while True:  # strings, not paths: asked once per linted file
        if directory in marked:
            found = marked[directory]
            break
        walked.append(directory)
        if any(os.path.exists(os.path.join(directory, marker)) for marker in PROJECT_MARKERS):
            found = directory
            break
        parent = os.path.dirname(directory)
        if parent == directory:
            break
        directory = parent
    for directory in walked:
        marked[directory] = found
    if found is not None:
        return Path(found)
    parent = os.path.normcase(os.path.dirname(absolute))
    for candidate in (fallback, Path(os.getcwd())):
        if candidate is not None:
            base = os.path.normcase(str(candidate))
            if parent == base or parent.startswith(base.rstrip(os.sep) + os.sep):
                return candidate
    return None


def facts_with_sites(items: Sequence[Tuple[str, str, bool]]) -> List[Optional[ModuleFacts]]:
    """``facts_here`` with the sites of every registered rule (``engine.every_site``): the quiet
    code the index decides then serves whatever a file's configuration selects."""
    from .engine import every_site
    return facts_here(items, every_site())


def build_project(root: os.PathLike, resolver: SettingsResolver, cache_dir: Optional[os.PathLike] = None,
                  overrides: Optional[Mapping[str, str]] = None, facts_of: FactsOf = facts_with_sites,
                  walked: Optional[Walked] = None, stamps: Optional[FileStamps] = None,
                  seeds: Optional[Iterable[os.PathLike]] = None, named: bool = False) -> ProjectIndex:
    """The index of the Python files under ``root`` (discovered as ``check`` discovers them);
    ``overrides`` maps paths to text that replaces what is on disk (an editor's buffers);
    ``facts_of`` computes the facts not cached (``runner.facts_in_parallel``: in worker processes);
    ``walked``: as for ``discover``; ``stamps``: what files held when last read (unchanged files
    are not read). ``seeds``: the files to be linted with it: then only what their analysis
    reaches is indexed (``analysis.reach``; every file when they are most of them, as when the
    root is linted whole), and in a root without a project marker that the command line did not
    name (``named``: it did, or ``walked`` has it) the tree is not walked at all: the project is
    what the command line named and what that imports."""
    facts = FactsCache(cache_dir) if cache_dir is not None else None
    overrides = {os.path.abspath(p): t for p, t in (overrides or {}).items()}
    wanted = None if seeds is None else sorted({os.path.abspath(s) for s in seeds})
    if wanted is not None and not all(s.endswith((".py", ".pyi")) for s in wanted):
        wanted = None  # a notebook: its imports are not read here, so the whole project
    layout: Optional[Layout] = None
    memo: Optional[MutableMapping[str, dict]] = None  # facts by content key, when a reach search is made
    named = named or (walked is not None and os.path.abspath(root) in walked)
    if wanted is not None and not named and not is_marked(root):
        memo = facts if facts is not None else {}
        files = _reached_on_disk(root, resolver, wanted, overrides, stamps, memo, facts_of)
    else:
        files = _project_files(root, resolver, overrides, walked, stamps)
        # seeds for most of the files: what they reach is about everything, and finding it costs
        if wanted is not None and 2 * len(wanted) < len(files):
            memo = facts if facts is not None else {}
            files, layout = _reached_in_tree(files, wanted, overrides, memo, facts_of)
    used: set = set()
    index = build_index(files, facts if facts is not None else memo, used, facts_of, layout)
    known = facts.digest_of(index.inputs) if facts is not None else None
    if known is not None:
        index.digest = known  # what every file's cache key needs: nothing loaded or composed
    else:
        index.load()  # here, once, before any worker process is made
    if facts is not None:
        facts.remember(index.inputs, index.digest)
        facts.save(used)
    return index


def is_marked(root: os.PathLike) -> bool:
    return any(os.path.exists(os.path.join(root, marker)) for marker in PROJECT_MARKERS)


def _source_of(path: Path, overrides: Mapping[str, str], stamps: Optional[FileStamps]) -> Optional[Source]:
    """A file as the index takes it (None: nothing another file could resolve to)."""
    absolute = os.path.abspath(path)
    text = overrides.get(absolute)
    if text is not None:
        return Source(text_digest(text), text) if _DEFINES_RE.search(text) else None
    return _indexed_source(path, absolute, stamps)


def _project_files(root: os.PathLike, resolver: SettingsResolver, overrides: Mapping[str, str],
                   walked: Optional[Walked], stamps: Optional[FileStamps]) -> List[Tuple[Path, Source]]:
    """Every file under ``root`` the index takes, in discovery order."""
    files: List[Tuple[Path, Source]] = []
    for target in discover([str(root)], resolver, tolerant=True, walked=walked):
        if target.error is None and target.path.suffix in (".py", ".pyi"):
            source = _source_of(target.path, overrides, stamps)
            if source is not None:  # else no function or class: nothing another file could resolve to
                files.append((target.path, source))
    return files


def _seed_texts(seeds: Sequence[str], overrides: Mapping[str, str]) -> Dict[str, Optional[str]]:
    out: Dict[str, Optional[str]] = {}
    for path in seeds:
        text = overrides.get(path)
        if text is None:
            try:
                text = decode_source(Path(path).read_bytes())
            except (OSError, SourceError):
                text = None
        out[path] = text
    return out


def _loader(source_of: Callable[[str], Optional[Source]], named: Callable[[str], Tuple[str, bool]],
            cache: MutableMapping[str, dict], facts_of: FactsOf) -> reach.Loader:
    """The facts of files by path, for ``reach.forward`` (through ``cache``, filled in place)."""

    def load(paths: Sequence[str]) -> Dict[str, Optional[ModuleFacts]]:
        items = [(p, source_of(p)) for p in paths]
        indexed = [(p, src) for p, src in items if src is not None]
        found = load_facts([(content_key(src.digest, named(p)[0]), Path(p), src, *named(p)) for p, src in indexed],
                           cache, facts_of)
        return dict(zip([p for p, _ in indexed], found))

    return load


def _reached_in_tree(files: List[Tuple[Path, Source]], seeds: Sequence[str], overrides: Mapping[str, str],
                     cache: MutableMapping[str, dict], facts_of: FactsOf) -> Tuple[List[Tuple[Path, Source]], Layout]:
    """Of a walked project's ``files``, those the analysis of ``seeds`` reaches (``reach``): what
    their names lead to, and the subclasses of their classes, with what those lead to."""
    layout = module_layout([path for path, _ in files])
    sources: Dict[str, Optional[Source]] = {os.path.abspath(path): source for path, source in files}

    def named(path: str) -> Tuple[str, bool]:
        return layout.modules.get(path) or module_name(Path(path))

    find, load = reach.layout_finder(layout), _loader(sources.get, named, cache, facts_of)
    reached = reach.forward(_seed_texts(seeds, overrides), named, find, load)
    probe = build_index([(Path(p), sources[p]) for p in sorted(reached) if sources.get(p) is not None],
                        cache, None, facts_of, layout)
    classes = reach.seed_classes(probe, [layout.modules[s][0] for s in seeds if s in layout.modules])
    if classes:
        texts = {p: functools.partial(_text_of, p, src) for p, src in sources.items()
                 if p not in reached and src is not None}
        more = reach.subclasses(classes, texts)
        if more:
            reached |= reach.forward({p: None for p in sorted(more)}, named, find, load)
    return [(path, source) for path, source in files if os.path.abspath(path) in reached], layout


def _text_of(path: str, source: Source) -> Optional[str]:
    if source.text is not None:
        return source.text
    try:
        return decode_source(Path(path).read_bytes())
    except (OSError, SourceError):
        return None


def _reached_on_disk(root: os.PathLike, resolver: SettingsResolver, seeds: Sequence[str], overrides: Mapping[str, str],
                     stamps: Optional[FileStamps], cache: MutableMapping[str, dict],
                     facts_of: FactsOf) -> List[Tuple[Path, Source]]:
    """For a root without a project marker: the ``seeds`` and the files that their names lead to,
    found on disk as Python imports them (``reach.disk_finder``), below ``root`` or the working
    directory; nothing walked."""
    gitignore = GitIgnore()

    def keep(path: str) -> bool:
        try:
            return not resolver.for_path(path, is_dir=False).is_excluded(path, gitignore=gitignore)
        except ConfigError:
            return False

    @functools.lru_cache(maxsize=None)
    def source_of(path: str) -> Optional[Source]:
        return _source_of(Path(path), overrides, stamps)

    def named(path: str) -> Tuple[str, bool]:
        return module_name(Path(path))

    reached = reach.forward(_seed_texts(seeds, overrides), named, reach.disk_finder([str(root), os.getcwd()], keep),
                            _loader(source_of, named, cache, facts_of))
    return [(Path(p), source) for p in sorted(reached) for source in [source_of(p)] if source is not None]


def _indexed_source(path: Path, absolute: str, stamps: Optional[FileStamps]) -> Optional[Source]:
    """The file as the index takes it (None: too large, unreadable, or nothing defined in it);
    from ``stamps`` without reading it, when it has not changed since it was last read."""
    try:
        st = os.stat(path)
        if st.st_size > DEFAULT_MAX_FILE_SIZE:
            return None
        known = stamps.get(absolute, st) if stamps is not None else None
        if known is not None and known[1] is not None:
            return Source(known[0]) if known[1] else None
        data = path.read_bytes()
    except OSError:
        return None
    try:
        text: Optional[str] = decode_source(data)
    except SourceError:
        text = None
    indexed = text is not None and _DEFINES_RE.search(text) is not None
    digest = file_digest(data)
    if stamps is not None:
        stamps.put(absolute, st, digest, indexed)
    return Source(digest, text) if indexed else None


def build_projects(tasks: Sequence[Task], resolver: SettingsResolver, cache_dir: Optional[os.PathLike] = None,
                   facts_of: FactsOf = facts_with_sites, walked: Optional[Walked] = None,
                   stamps: Optional[FileStamps] = None) -> Dict[str, ProjectIndex]:
    """One index per project root among ``tasks``, of what their files reach (``walked``,
    ``stamps``: as for ``build_project``)."""
    seeds: Dict[str, List[str]] = {}
    for task in tasks:
        if task.project is not None and task.error is None:
            seeds.setdefault(task.project, []).append(task.path)
    return {root: build_project(root, resolver, cache_dir, facts_of=facts_of, walked=walked, stamps=stamps,
                                seeds=seeds[root]) for root in sorted(seeds)}


class Projects:
    """The project indexes a long-lived process keeps (a flake8 worker, the language server):
    built once per project root, of what the files asked about reach, again when a file not among
    them is asked about, or after ``invalidate``; facts cached on disk per content."""

    def __init__(self, resolver: Optional[SettingsResolver] = None) -> None:
        self.resolver = resolver or SettingsResolver()
        self._indexes: Dict[Path, ProjectIndex] = {}
        # per root: the files its index was built for (None: every file); kept across ``invalidate``
        self._seeds: Dict[Path, Optional[FrozenSet[str]]] = {}

    def view(self, path: os.PathLike, overrides: Optional[Mapping[str, str]] = None) -> Optional[ModuleView]:
        """What the lint of ``path`` sees of its project; ``overrides``: unsaved texts by path."""
        root = project_root(path)
        index = self._index(root, [path], overrides) if root is not None else None
        return ModuleView(index, index.module_of(path)) if index is not None else None

    def prebuild(self, paths: Sequence[os.PathLike], facts_of: FactsOf = facts_with_sites) -> None:
        """Build now (``facts_of``: in worker processes) the indexes of the projects that ``paths``
        (files, or directories: their files) belong to, for those files: a flake8 run builds them
        once, before it forks its workers, instead of once in every worker."""
        seeds: Dict[Path, List[os.PathLike]] = {}
        named = set()  # roots named whole
        walked: Walked = {}  # the index of a root named whole walks it again
        for path in map(Path, paths):
            root = project_root(path / "__init__.py" if path.is_dir() else path)
            if root is not None:
                try:
                    found = discover([str(path)], self.resolver, walked=walked)
                except ConfigError:
                    found = discover([str(path)], self.resolver, tolerant=True)
                seeds.setdefault(root, []).extend(t.path for t in found if t.error is None)
                if path.is_dir() and os.path.samefile(path, root):
                    named.add(root)
        for root, files in seeds.items():
            index = self._index(root, files, facts_of=facts_of, named=root in named, walked=walked)
            if index is not None:
                index.load()  # a digest remembered from an earlier run leaves it unloaded

    def _index(self, root: Path, files: Sequence[os.PathLike], overrides: Optional[Mapping[str, str]] = None,
               facts_of: FactsOf = facts_with_sites, named: bool = False,
               walked: Optional[Walked] = None) -> Optional[ProjectIndex]:
        from .cache import find_cache_dir

        wanted = frozenset(os.path.abspath(f) for f in files)
        known = self._seeds.get(root, frozenset())
        index = self._indexes.get(root)
        if index is None or (known is not None and not wanted <= known):
            seeds = None if known is None or not all(f.endswith((".py", ".pyi")) for f in wanted) else known | wanted
            try:
                config = self.resolver.for_path(root, is_dir=True).config_file
                index = build_project(root, self.resolver, find_cache_dir(root, config), overrides, facts_of,
                                      walked=walked, seeds=seeds, named=named)
            except ConfigError:  # a broken [tool.detachlint]: the file is linted on its own
                return None
            self._indexes[root], self._seeds[root] = index, seeds
        return index

    def invalidate(self, path: Optional[os.PathLike] = None) -> None:
        if path is None:
            self._indexes.clear()
        else:
            root = project_root(path)
            if root is not None:
                self._indexes.pop(root, None)
