"""flake8 plugin: a thin adapter over the engine (entry point ``TAL = detachlint.flake8:Checker``).

flake8 owns selection (``--select``/``--ignore``/``--extend-select``), ``# noqa``,
``--per-file-ignores``, stdin and output formats, and filters what the plugin yields. Rules that
are off by default (TAL002) are added to flake8's default ignore list, so ``--extend-select
TAL002`` turns them on as users expect; ``--select TAL`` (the plugin's name, how flake8 users turn
a plugin on) gives detachlint's default rules, as ``detachlint check`` does, not the opt-in ones. The engine runs only the rules flake8's own decision
engine selects (asked once, in ``parse_options``), so no time goes to rules whose findings flake8
would drop, and a file gets the same analysis as under ``detachlint check`` with the same rules.

Columns: the engine reports 0-based code-point columns; flake8 expects 0-based and adds 1 itself,
so they pass through unchanged.

Facts across files come from the project index of the file's project (``pipeline.Projects``),
built once per flake8 process from the same files ``detachlint check`` would index.

Importing this module is cheap: the engine (and with it LibCST) is imported on first use, and
torch never is.
"""

from __future__ import annotations

from typing import Any, FrozenSet, Iterator, List, Optional, Sequence, Tuple

from . import __version__

_ALL_CODES: Optional[FrozenSet[str]] = None


def _all_codes() -> FrozenSet[str]:
    """Every rule code plus the parse-error code; flake8 decides which of them are shown."""
    global _ALL_CODES
    if _ALL_CODES is None:
        from .findings import PARSE_ERROR_CODE
        from .rules import RULES

        _ALL_CODES = frozenset([r.code for r in RULES] + [PARSE_ERROR_CODE])
    return _ALL_CODES


def off_by_default() -> List[str]:
    from .rules import RULES

    return sorted(r.code for r in RULES if not r.default_enabled)


PLUGIN = "TAL"  # the entry point's name: flake8 selects the plugin by it


def named_explicitly(code: str, options: Any) -> bool:
    """Whether ``--select``/``--extend-select`` (or their config keys) name ``code`` with a selector
    more specific than the plugin's name: ``TAL002`` or ``TAL0``, not ``TAL``. flake8 users write
    ``select = E,F,W,TAL`` to turn a plugin on; that must not turn on the opt-in rules too (an
    explicit select beats flake8's default ignore, where the plugin registers them)."""
    chosen = list(getattr(options, "select", None) or []) + list(getattr(options, "extend_select", None) or [])
    return any(len(s) > len(PLUGIN) and code.startswith(s) for s in chosen)


def flake8_selection(options: Any) -> FrozenSet[str]:
    """The TAL codes flake8's select/ignore options let through, decided by flake8 itself, less
    the opt-in rules that only a plugin-wide selector let in (``named_explicitly``). When flake8's
    decision engine cannot be asked: the default rules and the opt-in ones named (flake8 filters)."""
    off = set(off_by_default())
    wanted = frozenset(c for c in _all_codes() if c not in off or named_explicitly(c, options))
    try:
        from flake8.style_guide import Decision, DecisionEngine

        decider = DecisionEngine(options)
        return frozenset(c for c in wanted if decider.decision_for(c) is Decision.Selected)
    except Exception:  # an internal flake8 API: never let a change there break the run
        return wanted


_PROJECTS: Any = None  # pipeline.Projects, one per flake8 process


_STDIN = ("-", "stdin", "<stdin>")


def _projects() -> Any:
    global _PROJECTS
    if _PROJECTS is None:
        from .pipeline import Projects

        _PROJECTS = Projects()
    return _PROJECTS


def _project_view(filename: str) -> Any:
    """The project index for ``filename`` (built once per project root and process, its facts
    cached on disk), so that flake8 sees what ``detachlint check`` sees; None for stdin."""
    return None if filename in _STDIN else _projects().view(filename)


def _prebuild(options: Any) -> None:
    """The indexes of the projects flake8 was pointed at, built in flake8's main process with as
    many worker processes as flake8 will use: its workers are forked from it and inherit them,
    where each would otherwise build every index again."""
    import multiprocessing

    if multiprocessing.parent_process() is not None:  # a worker that re-reads the options (spawn)
        return
    paths = [p for p in getattr(options, "filenames", None) or [] if p not in _STDIN]
    jobs = getattr(options, "jobs", None)
    try:
        count = None if jobs is None or jobs.is_auto else jobs.n_jobs  # flake8's JobsArgument
    except AttributeError:
        count = 1
    from .runner import facts_in_parallel

    _projects().prebuild(paths, facts_in_parallel(count))


class Checker:
    """flake8 AST plugin. ``tree`` is unused but makes flake8 treat this as an AST plugin;
    ``lines`` gives the source text (files and stdin alike) without rereading the file."""

    name = "detachlint"
    version = __version__

    def __init__(self, tree: Any, filename: str, lines: Sequence[str]) -> None:
        self.filename = filename
        self.source = "".join(lines)

    # The codes flake8 will show, set by ``parse_options``; None before it: every code (flake8 filters).
    selected: Optional[FrozenSet[str]] = None

    @classmethod
    def add_options(cls, option_manager: Any) -> None:
        # TAL002 and friends: registered with flake8's default ignore, so plain ``flake8`` keeps
        # them off while ``--extend-select TAL002`` turns them on (``--select TAL`` does not:
        # ``flake8_selection``).
        option_manager.extend_default_ignore(off_by_default())

    @classmethod
    def parse_options(cls, options: Any) -> None:
        cls.selected = flake8_selection(options)
        if cls.selected != frozenset():
            _prebuild(options)

    def run(self) -> Iterator[Tuple[int, int, str, type]]:
        from .pipeline import check_source

        codes = self.selected if self.selected is not None else _all_codes()
        if not codes:
            return
        # flake8 only runs AST plugins on files ``ast`` parsed (otherwise it reports E999 itself),
        # so a TAL999 here means LibCST could not analyse a file Python accepts: worth showing.
        # flake8 applies ``# noqa`` (and honours ``--disable-noqa``) itself. flake8 has read the
        # whole file already, so no size limit applies here.
        result = check_source(self.source, self.filename, codes, noqa=False, project=_project_view(self.filename))
        if result.internal_error is not None:  # flake8 reports a plugin's exception for its file
            raise RuntimeError(f"detachlint: internal error: {result.internal_error} (please report this)")
        for finding in result.findings:
            yield (finding.location.row, finding.location.column,
                   f"{finding.code} {finding.message}", type(self))
