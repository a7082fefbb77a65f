"""Source text in, findings out: parse once, build the analyses once, run every selected rule in
one traversal, apply suppressions. Reading, decoding, notebooks, size limits, caching and crash
containment are the pipeline's (``pipeline.py``), which every surface calls.
"""

from __future__ import annotations

import ast
import bisect
import dataclasses
import functools
import itertools
import re
from typing import Iterable, List, Optional, Sequence, Tuple, Type, Union

import libcst as cst
from libcst.metadata import MetadataWrapper

from .analysis.base import with_requirements
from .frontend.fromast import to_cst
from .frontend.newer import newer_syntax
from .frontend.firstpass import (CHUNKED_CHECK_SIZE, PIECES_SIZE, FirstPass, compiles_in_chunks, first_pass,
                                 first_pass_in_pieces, gc_paused, physical_lines, too_deep)
from .frontend.precheck import may_have_findings
from .frontend.sites import Sites
from .frontend.units import RowMap, Span, Unit, blanked, collapsed, function_units, quiet_code, source_lines
from .analysis.project import ModuleView
from .context import Context
from .cstcompat import parse_module, positions  # parse_module: LibCST's, without its node validation
from .findings import PARSE_ERROR_CODE, Finding, Location, Related, analysis_limit_finding, parse_error_finding
from .noqa import apply_noqa, file_exempt_codes, mentions_noqa, skips_file
from .rules import ALL_RULES
from .rules.base import Rule
from .walk import Walker, significant_children


def _location(pos) -> Location:
    return Location(pos.line, pos.column)


def select_rules(codes: Optional[Iterable[str]]) -> List[Type[Rule]]:
    if codes is None:
        return [r for r in ALL_RULES if r.default_enabled]
    wanted = set(codes)
    return [r for r in ALL_RULES if r.code in wanted]


def vocabulary(rules: Sequence[Type[Rule]]) -> Optional[Sites]:
    """The sites of ``rules`` together (``Rule.sites``): what the fast paths look for; None when
    one of them declares none (then they are off)."""
    return _vocabulary(tuple(rules))


def every_site() -> Optional[Sites]:
    """The sites of every registered rule: the project index decides the quiet code for these,
    which serves any selection (a body quiet for more sites is quiet for fewer)."""
    return vocabulary(ALL_RULES)


@functools.lru_cache(maxsize=16)  # one selection per run; the language server may change it
def _vocabulary(rules: Tuple[Type[Rule], ...]) -> Optional[Sites]:
    return Sites.union(rule.sites for rule in rules)


def lint_module(module: cst.Module, source: str, filename: str, rules: Sequence[Type[Rule]],
                project: Optional[ModuleView] = None, rows: Optional[RowMap] = None) -> List[Finding]:
    """``rows``: the module's row of each row of ``source``, where that is a ``units.collapsed``
    text; the findings, their related places and their fixes' edits are given in the module's."""
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    ctx = Context(source, filename, wrapper.module, wrapper, project, rows)
    _walk(ctx, wrapper.module, rules)
    findings = []
    for rep in ctx.reports:
        pos = ctx.position(rep.node)
        related = tuple(
            Related(_location(ctx.position(n).start), _location(ctx.position(n).end), msg) for n, msg in rep.related
        )
        fix = rep.fix(ctx) if rep.fix is not None else None
        finding = Finding(rep.code, rep.message, rep.severity, filename, _location(pos.start), _location(pos.end),
                          fix, related, rep.signature, notes=tuple(rep.notes))
        findings.append(_moved(finding, rows) if rows else finding)
    return findings


def check_libcst() -> None:
    """Run ``cstcompat``'s checks of LibCST's private API now instead of on first use: a process
    about to fork workers runs them once, and each worker inherits the verdicts (and the visit
    orders read) instead of paying for them."""
    module = parse_module("x = 1\n")
    positions(MetadataWrapper(module, unsafe_skip_copy=True))
    Walker([]).walk(module)


def _moved(finding: Finding, rows: RowMap) -> Finding:
    """``finding`` with the rows of a ``collapsed`` text mapped to the module's."""
    def at(location: Location) -> Location:
        return Location(rows(location.row), location.column)

    fix = finding.fix
    if fix is not None:
        fix = dataclasses.replace(fix, edits=tuple(dataclasses.replace(
            e, location=at(e.location), end_location=at(e.end_location)) for e in fix.edits))
    related = tuple(dataclasses.replace(r, location=at(r.location), end_location=at(r.end_location))
                    for r in finding.related)
    return dataclasses.replace(finding, location=at(finding.location), end_location=at(finding.end_location),
                               fix=fix, related=related)


def _walk(ctx: Context, module: cst.Module, rules: Sequence[Type[Rule]]) -> None:
    instances = [rule(ctx) for rule in rules]
    # Analyses that follow the traversal (flow-sensitive tensor kinds) take part in it, first in
    # and last out; the others are built when a rule first asks. One walk gives LibCST's visitor
    # events to every participant, without LibCST rebuilding every node as ``module.visit`` does.
    walking = {a for a in with_requirements(a for rule in rules for a in rule.requires) if a.walks}
    participants = [ctx.get(a) for a in sorted(walking, key=lambda a: a.__name__)]
    Walker([*participants, *instances], parents=ctx.parents).walk(module)


class _Reported(Exception):
    """A rule reported on the tree built from Python's: the module goes to LibCST's parse."""


class _ScreenContext(Context):
    spare = False  # whether a report is kept (``screen_reports``' ``spare``), not the walk's end

    def report(self, *args, **kwargs) -> None:  # type: ignore[override]
        if not self.spare:
            raise _Reported
        super().report(*args, **kwargs)

    def line(self, node: cst.CSTNode) -> int:
        """The built tree's rows are not the module's (its trivia are LibCST's defaults): a rule that
        decides on a row, comparing it with one the project index holds, gets LibCST's answer
        instead (``ctx.after`` orders nodes alike on both trees)."""
        raise _Reported

    def cited_line(self, node: cst.CSTNode) -> int:
        return 0  # a row only a message cites: whether the rule reports does not depend on it


Screened = Union[bool, List[Unit]]


def _may_report(text: str, filename: str, rules: Sequence[Type[Rule]], project: Optional[ModuleView],
                tree: Optional[ast.Module] = None, lines: Sequence[str] = (), quiet: Sequence[Unit] = (),
                spans: Sequence[Span] = (), rows: Optional[RowMap] = None) -> Screened:
    """Whether the rules report anything on LibCST's tree of ``text``, asked of the tree built
    from Python's (``frontend/fromast.py``: the same statements and expressions, for about an
    eighth of the cost, Python's parse included); where they do, the function bodies LibCST need
    not parse (``screen_reports``' ``spare``). True also wherever that tree cannot be built or
    linted: LibCST's decides.
    ``tree``: Python's tree of the module ``text`` is ``blanked(lines, quiet, spans)`` of, when
    the first pass has it (else ``text`` is parsed, and ``rows`` maps its rows to the module's)."""
    try:
        return screen_reports(text, filename, rules, project, tree, lines, quiet, spans, rows, spare=True)
    except Exception:  # Unsupported syntax, RecursionError, a rule that trips on the built tree
        return True


def screen_reports(text: str, filename: str, rules: Sequence[Type[Rule]], project: Optional[ModuleView],
                   tree: Optional[ast.Module] = None, lines: Sequence[str] = (), quiet: Sequence[Unit] = (),
                   spans: Sequence[Span] = (), rows: Optional[RowMap] = None, spare: bool = False) -> Screened:
    """``_may_report`` without its safety net (for the tests: the built tree must not need it).
    With ``spare``, where the rules report, the walk goes on to its end, and the answer is the
    top-level function bodies (the module's rows) that hold no report and read nothing module-wide
    (``function_units``), when there are any: a body's findings come from itself and the rest of
    the module (``incremental.py``), so LibCST's lint may skip those (on the bench's 300 torch
    files, the 5 with findings cost 0.22 s of LibCST's lint before, 0.16 s with this)."""
    own = tree is None
    if own:
        tree, lines, quiet, spans = first_pass(text).tree, source_lines(text), (), ()
        if tree is None:
            return True
    module = to_cst(tree, lines, quiet, spans)
    # only a top-level function can be spared: a module of classes alone ends at its first report,
    # as without ``spare``, rather than walking on and parsing its text again for nothing
    spare = spare and any(isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) for s in tree.body)
    if own:
        del tree  # freed before the walk (parsed again if a report asks for its bodies)
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    ctx = _ScreenContext(text, filename, wrapper.module, wrapper, project)
    ctx.spare = spare
    try:
        _walk(ctx, wrapper.module, rules)
    except _Reported:
        return True
    if not ctx.reports:
        return False
    spared = _spared(first_pass(text).tree if own else tree, lines, wrapper.module, [r.node for r in ctx.reports])
    if own and rows:
        spared = [Unit(rows(u.first), rows(u.last), u.indent) for u in spared]
    return spared or True


def _spared(tree: Optional[ast.Module], lines: Sequence[str], module: cst.Module,
            reported: Sequence[cst.CSTNode]) -> List[Unit]:
    """Of ``function_units(tree, lines, methods=False)``, the bodies of the functions in ``module``
    (the tree built from ``tree``, top-level statement for statement) that hold none of ``reported``."""
    if tree is None or len(tree.body) != len(module.body):
        return []
    ids = {id(node) for node in reported}
    units = {u.last: u for u in function_units(tree, lines, methods=False)}
    out = []
    for stmt, built in zip(tree.body, module.body):
        unit = units.get(stmt.end_lineno or 0) if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
        if unit is None or unit.first <= stmt.lineno:
            continue
        if not isinstance(built, cst.FunctionDef):
            return []  # not the tree it was built from
        stack: List[cst.CSTNode] = [built]
        while stack:
            node = stack.pop()
            if id(node) in ids:
                break
            stack += significant_children(node)
        else:
            out.append(unit)
    return out


# Where LibCST rejects what Python accepts, a skipped file must still reach LibCST for its TAL999:
# a line continuation right before the end of the file (found by tests/test_fuzz.py).
_LIBCST_STRICTER_RE = re.compile(r"\\(?:\r\n|\r|\n)?[\s]*\Z")


def refused(source: str, first: Optional[FirstPass] = None) -> Optional[Tuple[str, int, int, bool]]:
    """Why LibCST must not see ``source`` (message, row, column, and whether it is a limit of
    detachlint's on code Python, this one or a newer, accepts rather than an error in the code), or None
    to go on with it. LibCST's native parser sees only what Python's parser accepted and ``too_deep``
    passed (``frontend/newer.py`` bounds the nesting of what it gives it from the tokens): it
    recurses per level and segfaults on deep code, valid or not (5,000 ``a(`` lines at column 0,
    a long operator chain followed by a syntax error), so a file Python rejects gets Python's own
    message and position, as flake8's E999 words it, unless LibCST reads it as syntax of a newer
    Python than the running one (``frontend/newer.py``). ``first``: the first pass of ``source``, when
    the caller has it (else it is made here)."""
    first = first if first is not None else first_pass(source)
    if first.measured:
        return (first.deep.message, first.deep.row, first.deep.column, True) if first.deep is not None else None
    if first.gave_up:
        return (f"too deeply nested for detachlint's parser: Python's own parser gave up "
                f"({type(first.error).__name__})", 1, 0, False)
    if first.tree is not None:
        deep = too_deep(first.tree, physical_lines(source))
        return (deep.message, deep.row, deep.column, True) if deep is not None else None
    exc = first.error
    if isinstance(exc, SyntaxError):
        newer = newer_syntax(source, exc)  # valid for a newer Python than this one: a limit
        if newer is not None:
            return newer.message, newer.row, newer.column, True
        row, column = _inside(source, exc.lineno or 1, (exc.offset or 1) - 1)
        return f"{type(exc).__name__}: {exc.msg}", row, column, False
    return f"{type(exc).__name__}: {exc}", 1, 0, False  # ValueError (a NUL byte), ...


def _caused_by_recursion(exc: BaseException) -> bool:
    """A RecursionError, or an exception raised while one was being handled (LibCST's position
    metadata turns one into a KeyError on the way out of its context managers)."""
    seen = 0
    current: Optional[BaseException] = exc
    while current is not None and seen < 50:
        if isinstance(current, RecursionError):
            return True
        current = current.__cause__ or current.__context__
        seen += 1
    return False


def _inside(source: str, row: int, column: int) -> Tuple[int, int]:
    """The nearest position that exists in ``source`` (1-based row, 0-based column)."""
    lines = physical_lines(source) or [""]
    if row > len(lines):
        return len(lines), len(lines[-1])
    row = max(row, 1)
    return row, max(0, min(column, len(lines[row - 1])))


def _quiet_code(source: str, first: FirstPass, project: Optional[ModuleView],
                sites: Sites) -> Tuple[List[str], List[Unit], List[Span]]:
    """The lines of ``source``, the function bodies and the arguments of table elements that can
    hold no finding of rules whose sites are ``sites`` (``frontend/units.py``): LibCST's parse,
    most of what a module costs, skips them once blanked. ``first``: its quiet code, when it has
    no tree, was decided for ``sites`` or more. An element that calls a function of the project
    stays (its summary may write, step or return an argument), and so does a body that calls one
    writing an argument. Nothing where LibCST may reject what Python accepts (its verdict is
    wanted)."""
    lines = source_lines(source)
    if _LIBCST_STRICTER_RE.search(source) is not None:
        return lines, [], []
    quiet, spans = (first.quiet or [], first.elements or []) if first.tree is None else quiet_code(
        first.tree, lines, sites)
    if project is not None:
        spans = [s for s in spans if not any(project.index.function(project.module, c) for c in s.calls)]
        if quiet and project.calls_effects():
            # a body that calls a project function writing an argument holds that write (a site
            # no text of its own spells): it stays
            starts = project.index.writing_calls(source)
            if starts:
                ends = list(itertools.accumulate(len(line) for line in lines))  # where each row ends
                rows = sorted({bisect.bisect_right(ends, at) + 1 for at in starts})
                quiet = [u for u in quiet if not _holds_row(rows, u.first, u.last)]
    return lines, quiet, spans


def _holds_row(rows: Sequence[int], first: int, last: int) -> bool:
    """Whether one of the sorted ``rows`` lies in ``first..last``."""
    at = bisect.bisect_left(rows, first)
    return at < len(rows) and rows[at] <= last


def _touches(findings: Sequence[Finding], spans: Sequence[Span]) -> bool:
    """Whether a finding, a related place or an edit of a fix reaches into a blanked span: its
    message or fix may then spell what was blanked, so the module is linted again without."""
    ranges = [(f.location, f.end_location) for f in findings]
    ranges += [(r.location, r.end_location) for f in findings for r in f.related]
    ranges += [(e.location, e.end_location) for f in findings if f.fix is not None for e in f.fix.edits]
    return any(span.overlaps(start.row, start.column, end.row, max(end.column, start.column + 1) if
                             end.row == start.row else end.column)
               for start, end in ranges for span in spans)


def _parse_and_lint(source: str, filename: str, rules: Sequence[Type[Rule]], project: Optional[ModuleView],
                    first: Optional[FirstPass], sites: Optional[Sites], screen: bool) -> List[Finding]:
    """``sites``: the rules' sites, for blanking the quiet code (None: nothing is blanked)."""
    if first is None and len(source) > PIECES_SIZE:
        first = first_pass_in_pieces(source, sites)  # no tree of the whole module (None: not shown)
    first = first if first is not None else first_pass(source)
    refusal = refused(source, first)
    lines, quiet, spans = _quiet_code(source, first, project, sites) if refusal is None and sites is not None \
        else ([], [], [])
    tree, first.tree = first.tree, None  # freed before LibCST's tree is built: peak memory is LibCST's alone
    if refusal is not None:
        message, row, column, limit = refusal
        return [(analysis_limit_finding if limit else parse_error_finding)(filename, message, row, column)]
    text, rows = collapsed(lines, quiet, spans) if quiet or spans else (source, None)
    screened: Screened = True
    # LibCST's own verdict is wanted where it may differ from Python's (``_LIBCST_STRICTER_RE``)
    if screen and _LIBCST_STRICTER_RE.search(source) is None and _code_size(text) <= LIBCST_LIMIT:
        lines = lines or source_lines(source)
        screened = _may_report(text, filename, rules, project, tree, lines, quiet, spans, rows)
        if screened is False:
            return []  # most modules: nothing reported on the tree built from Python's, and LibCST never parses them
    del tree
    if screened is not True:  # bodies that hold no report: LibCST parses the module without them
        spared = [*quiet, *screened]
        kept = [s for s in spans if not any(u.first <= s.row and s.end_row <= u.last for u in screened)]
        findings = _lint_blanked(*collapsed(lines, spared, kept), lines, spared, kept, filename, rules, project)
        if not _touches(findings, [*kept, *(Span(u.first, 0, u.last + 1, 0, ()) for u in screened)]):
            return findings
    findings = _lint_blanked(text, rows, lines, quiet, spans, filename, rules, project)
    if spans and _touches(findings, spans):
        findings = _lint_blanked(*collapsed(lines, quiet), lines, quiet, (), filename, rules, project)
    return findings


def _lint_blanked(text: str, rows: Optional[RowMap], lines: Sequence[str], quiet: Sequence[Unit],
                  spans: Sequence[Span], filename: str, rules: Sequence[Type[Rule]],
                  project: Optional[ModuleView]) -> List[Finding]:
    """The findings of ``text``, the module ``lines`` with ``quiet`` and ``spans`` blanked and
    ``collapsed`` (``rows``). Where LibCST rejects it, the blanked module uncollapsed is parsed
    instead, for the error's position in it."""
    findings = _parse_and_lint_text(text, filename, rules, project, rows)
    if findings is None:
        findings = _parse_and_lint_text(blanked(lines, quiet, spans), filename, rules, project) or []
    return findings


# The most code (characters other than spaces and line breaks, what is left once the quiet code is
# blanked) LibCST is asked to parse at once: its tree costs about 750 bytes per character, and past
# what the machine has, its native allocator aborts the process. Torch's largest is 343 kB.
LIBCST_LIMIT = 2_000_000


def _code_size(source: str) -> int:
    """Characters other than spaces and line breaks (a ``collapsed`` text has the module's)."""
    return len(source) - source.count(" ") - source.count("\n") - source.count("\r")


def _parse_and_lint_text(source: str, filename: str, rules: Sequence[Type[Rule]],
                         project: Optional[ModuleView], rows: Optional[RowMap] = None) -> Optional[List[Finding]]:
    """The findings of ``source``; None where ``rows`` moves rows (a ``collapsed`` text) and LibCST
    rejects it."""
    code = _code_size(source)
    if code > LIBCST_LIMIT:
        return [analysis_limit_finding(filename, f"too large for detachlint's parser: {code:,} characters of code that "
                                              f"may hold a finding, more than {LIBCST_LIMIT:,} (its tree needs about "
                                              "750 bytes per character)")]
    try:
        module = parse_module(source)
    except cst.ParserSyntaxError as exc:
        if rows:
            return None
        row, column = _inside(source, exc.raw_line, exc.raw_column)  # LibCST may point past the end
        findings = [parse_error_finding(filename, f"SyntaxError: {exc.message}", row, column)]
    except (RecursionError, MemoryError) as exc:
        findings = [analysis_limit_finding(filename, f"too deeply nested for detachlint's parser: {type(exc).__name__}")]
    else:
        try:
            findings = lint_module(module, source, filename, rules, project, rows)
        except Exception as exc:
            if not _caused_by_recursion(exc):
                raise
            findings = [analysis_limit_finding(filename, "too deeply nested for detachlint's analyses: RecursionError")]
    return findings


def lint_source(source: str, filename: str = "<stdin>", codes: Optional[Iterable[str]] = None,
                precheck: bool = True, noqa: bool = True, project: Optional[ModuleView] = None,
                blank: bool = True, screen: bool = True) -> List[Finding]:
    """Lint Python source text. ``codes`` are the enabled rule codes (None: the default set).

    Never raises for bad input: a file that does not parse yields one TAL999 finding.
    ``precheck``: skip the LibCST parse when no rule can fire (``frontend/precheck.py``); a
    skipped file still gets TAL999 when Python cannot parse it. ``blank``: LibCST does not parse
    the function bodies that can hold no finding (``frontend/units.py``). ``screen``: the rules
    run first on the tree built from Python's (``frontend/fromast.py``), and LibCST parses the
    module only when they report something there. Results are the same either way.
    ``noqa=False`` leaves ``# noqa`` comments to the caller (flake8 applies them itself, and
    its ``--disable-noqa`` must be able to bring the findings back). ``project``: what the
    project index knows of this module and the rest of the project (None: this file alone).
    """
    if skips_file(source, flake8_comment=noqa):
        return []
    findings = _lint_source(source, filename, codes, precheck, project, blank, screen)
    exempt = file_exempt_codes(source)
    if exempt:
        findings = [f for f in findings if f.code == PARSE_ERROR_CODE or not f.code.startswith(exempt)]
    if mentions_noqa(source):  # ``# noqa`` (and its checks) only where the word is
        wanted = {r.code for r in select_rules(codes)}
        findings = apply_noqa(findings, physical_lines(source), filename, wanted.__contains__,
                              [r.code for r in ALL_RULES], inline=noqa)
    return sorted(findings, key=Finding.sort_key)


def _lint_source(source: str, filename: str, codes: Optional[Iterable[str]], precheck: bool,
                 project: Optional[ModuleView], blank: bool, screen: bool) -> List[Finding]:
    rules = select_rules(codes)
    # The fast paths look for the selected rules' sites; a rule that declares none (one from
    # outside may) turns them off, and every file is parsed whole.
    sites = vocabulary(rules)
    screen = screen and sites is not None  # a rule that declares its sites reads no comments
    # The project index parsed the project's files with Python's parser already: what it found for
    # this very text is not parsed again.
    first = project.first_pass(source) if project is not None else None
    if precheck and sites is not None and not may_have_findings(source, sites) and not (
            project is not None and project.calls_effects()):
        wants_parse_errors = codes is None or PARSE_ERROR_CODE in set(codes)
        if not wants_parse_errors:
            return []
        if _LIBCST_STRICTER_RE.search(source) is None:  # else LibCST's own verdict is wanted
            if first is None and len(source) > CHUNKED_CHECK_SIZE and compiles_in_chunks(source):
                return []  # nothing to report, and Python accepts it: memory bounded by a piece
            first = first or first_pass(source)
            if first.compiles:
                return []
    blanking = sites if blank else None
    if first is not None and first.measured and blanking is not None and not (
            first.sites is not None and blanking <= first.sites):
        first = None  # its quiet code was decided for other sites than these: parsed again
    with gc_paused():
        findings = _parse_and_lint(source, filename, rules, project, first, blanking, screen)
    if codes is not None and PARSE_ERROR_CODE not in set(codes):
        findings = [f for f in findings if f.code != PARSE_ERROR_CODE]
    return findings
