"""Jupyter notebooks: lint the code cells of an ``.ipynb`` as one module, report per cell.

The notebook is read with :mod:`json` (no nbformat dependency). Code cells are joined into one
module, so names flow from cell to cell as they do in a kernel (ruff does the same), and every
finding is mapped back to its cell: ``Finding.cell`` is the 1-based index of the cell in the
notebook (markdown cells count, as in the editor and in ruff), ``location`` the row and column
within that cell.

IPython syntax that is not Python is neutralised without moving any line: a cell magic (``%%time``
on the first line) skips the whole cell; line magics (``%matplotlib inline``), shell escapes
(``!pip install``) and help (``obj?``, ``??obj``) become ``pass`` at the same indentation, and
``x = !ls`` / ``x = %who_ls`` become ``x = ...``. Columns on every other line are unchanged.

Line numbers in messages and notes are mapped here too, in one place (``place``), so no rule knows about
cells: a message names another line as ``line N`` (outside backquoted code; N a row of the joined
module), which becomes ``line N`` when it is in the cell the text is shown in and ``cell C, line N``
otherwise. A parser's ``at R:C`` in a TAL999 message is mapped the same way. Related locations
carry their own ``cell``.

Fixes are placed the same way: each ``Edit`` carries its ``cell`` and cell-relative locations, so a
fix may edit several cells (``import copy`` added with the imports, the snapshot wrapped in its own
cell). A fix is dropped when an edit crosses a cell boundary or changes a line whose IPython syntax
was neutralised. ``check --fix`` applies exactly these through ``fixes.fix_notebook``.

A notebook that is not valid JSON or has no cell list gives one TAL999 finding.
"""

from __future__ import annotations

import bisect
import dataclasses
import json
import re
from dataclasses import dataclass
from typing import Iterable, List, Optional, Sequence, Set, Tuple

from .engine import lint_source, physical_lines
from .findings import PARSE_ERROR_CODE, Edit, Finding, Fix, Location, Related, parse_error_finding

# ``%magic``, ``!shell`` or ``?help`` at the start of a (possibly indented) line.
_ESCAPE_RE = re.compile(r"^(?P<indent>[ \t]*)[%!?]")
# ``name = !ls`` / ``a, b = %magic ...``
_ASSIGN_ESCAPE_RE = re.compile(r"^(?P<lhs>[ \t]*[\w.\[\], ()]+?[ \t]*=)[ \t]*[%!]")
# ``obj?``, ``obj.attr??``, ``func()?`` (the whole line is a dotted name followed by ? or ??).
_HELP_RE = re.compile(r"^(?P<indent>[ \t]*)[\w.\[\]()*]+\?{1,2}[ \t]*$")
_CELL_MAGIC_RE = re.compile(r"^[ \t]*%%")


class NotebookError(Exception):
    pass


@dataclass(frozen=True)
class CodeCell:
    number: int  # 1-based index among all cells of the notebook
    source: str


@dataclass
class CellMap:
    """Rows of the joined module -> (cell, row within the cell)."""

    starts: List[int]  # first joined row (1-based) of each linted cell
    numbers: List[int]  # the cell number of each linted cell
    counts: List[int]  # how many rows each linted cell has
    rewritten: Set[int] = dataclasses.field(default_factory=set)  # joined rows neutralise changed

    def locate(self, row: int) -> Tuple[int, int]:
        if not self.starts:
            return 1, row
        i = max(bisect.bisect_right(self.starts, row) - 1, 0)
        inner = row - self.starts[i] + 1
        return self.numbers[i], min(max(inner, 1), max(self.counts[i], 1))

    def move(self, loc: Location) -> Tuple[int, Location]:
        """A location in the joined module as (cell number, location within that cell)."""
        cell, row = self.locate(loc.row)
        return cell, Location(row, loc.column)

    def move_exact(self, loc: Location) -> Optional[Tuple[int, Location]]:
        """Like ``move`` for an edit: None when the row lies in no cell (past the end) instead of
        clamping it, since an edit must land exactly where it was computed. The end of the last
        cell (after its final line break) is a position in that cell."""
        if not self.starts or loc.row < self.starts[0]:
            return None
        i = bisect.bisect_right(self.starts, loc.row) - 1
        inner = loc.row - self.starts[i] + 1
        last = i == len(self.starts) - 1
        if inner > self.counts[i] and not (last and inner == self.counts[i] + 1 and loc.column == 0):
            return None
        return self.numbers[i], Location(inner, loc.column)

    def describe(self, row: int, home: Optional[int]) -> str:
        """A joined row as a message names it: ``line N`` in ``home`` (the cell the message is
        shown in), ``cell C, line N`` in another cell."""
        cell, inner = self.locate(row)
        return f"line {inner}" if cell == home else f"cell {cell}, line {inner}"

    def position(self, row: int, column: str, home: Optional[int]) -> str:
        """A joined ``row:column`` (parse errors) as ``row:column`` or ``cell C:row:column``."""
        cell, inner = self.locate(row)
        return f"{inner}:{column}" if cell == home else f"cell {cell}:{inner}:{column}"


def read_cells(text: str) -> Tuple[List[CodeCell], bool]:
    """The code cells of a notebook's JSON text, and whether the notebook is Python at all."""
    try:
        nb = json.loads(text)
    except ValueError as exc:
        raise NotebookError(f"not a valid notebook: {exc}") from None
    if not isinstance(nb, dict):
        raise NotebookError("not a valid notebook: the top level is not a JSON object")
    cells = nb.get("cells")
    if cells is None and isinstance(nb.get("worksheets"), list):  # nbformat 3
        cells = [c for ws in nb["worksheets"] if isinstance(ws, dict) for c in ws.get("cells", [])]
    if not isinstance(cells, list):
        raise NotebookError("not a valid notebook: no 'cells' list")
    metadata = nb.get("metadata") if isinstance(nb.get("metadata"), dict) else {}
    language = (metadata.get("language_info") or {}).get("name") or (metadata.get("kernelspec") or {}).get(
        "language")
    is_python = not isinstance(language, str) or language.lower() in ("python", "python3", "ipython")
    out = []
    for number, cell in enumerate(cells, start=1):
        if not isinstance(cell, dict):
            raise NotebookError(f"not a valid notebook: cell {number} is not an object")
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", cell.get("input", ""))
        if isinstance(source, list) and all(isinstance(s, str) for s in source):
            source = "".join(source)
        if not isinstance(source, str):
            raise NotebookError(f"not a valid notebook: cell {number} has no source text")
        out.append(CodeCell(number, source))
    return out, is_python


def neutralise(source: str) -> Optional[str]:
    """The cell as plain Python with the same lines, or None for a cell magic cell."""
    lines = physical_lines(source)
    first = next((line for line in lines if line.strip()), "")
    if _CELL_MAGIC_RE.match(first):
        return None
    out = []
    continued = False
    for line in lines:
        if continued:  # a ``\``-continued magic or shell line
            out.append("")
            continued = line.rstrip().endswith("\\")
            continue
        assign = _ASSIGN_ESCAPE_RE.match(line)
        escape = _ESCAPE_RE.match(line)
        help_ = _HELP_RE.match(line)
        if assign:
            out.append(assign.group("lhs") + " ...")
        elif escape or help_:
            indent = (escape or help_).group("indent")
            out.append(indent + "pass")
        else:
            out.append(line)
            continue
        continued = line.rstrip().endswith("\\")
    return "".join(line + "\n" for line in out)


def join_cells(cells: Sequence[CodeCell]) -> Tuple[str, CellMap]:
    parts: List[str] = []
    cmap = CellMap([], [], [])
    row = 1
    for cell in cells:
        text = neutralise(cell.source)
        if text is None:
            continue
        count = text.count("\n")
        cmap.starts.append(row)
        cmap.numbers.append(cell.number)
        cmap.counts.append(count)
        original = physical_lines(cell.source)
        cmap.rewritten.update(row + i for i, line in enumerate(text.split("\n")[:count])
                              if i >= len(original) or original[i] != line)
        parts.append(text)
        row += count
    return "".join(parts), cmap


@dataclass(frozen=True)
class Placement:
    """A finding moved into its cell: locations relative to ``cell``, each related location and
    edit with its own ``cell``, and every ``line N`` in its texts named for the reader of that
    cell; ``related_cells`` says where each related location lies."""

    cell: int
    finding: Finding
    related_cells: Tuple[int, ...]


# ``line 37`` as rules write it; ``at 5:4`` in a parser's message (TAL999).
_LINE_REF_RE = re.compile(r"\bline (\d+)\b")
_PARSE_POSITION_RE = re.compile(r"\bat (\d+):(\d+)\b")
_CODE_RE = re.compile(r"(`[^`]*`)")  # backquoted code is quoted source: never rewritten


def relocate_text(text: str, cmap: CellMap, home: Optional[int], parse_error: bool = False) -> str:
    """``text`` with each joined-module row it names (``line N``) made relative to its cell, and
    the cell named when it is not ``home``. Code in backquotes is left as written."""
    parts = _CODE_RE.split(text)
    for i in range(0, len(parts), 2):  # even parts lie outside backquotes
        part = _LINE_REF_RE.sub(lambda m: cmap.describe(int(m.group(1)), home), parts[i])
        if parse_error:
            part = _PARSE_POSITION_RE.sub(lambda m: "at " + cmap.position(int(m.group(1)), m.group(2), home), part)
        parts[i] = part
    return "".join(parts)


def _rows_changed(edit: Edit) -> range:
    """The joined rows whose text an edit changes: those it spans, less the last when it ends at
    that row's start after a line break (``import copy\n`` inserted before a line leaves it as is)."""
    first, last = edit.location.row, edit.end_location.row
    if edit.end_location.column == 0 and (last > first or edit.content.endswith("\n")):
        last -= 1
    return range(first, last + 1)


def _place_fix(fix: Fix, cmap: CellMap, home: int, cross_cell: bool) -> Optional[Fix]:
    """The fix with cell-relative edits, or None when an edit crosses a cell boundary, touches a
    line neutralise rewrote (IPython syntax) or, unless ``cross_cell``, leaves the finding's cell."""
    edits = []
    for e in fix.edits:
        start, end = cmap.move_exact(e.location), cmap.move_exact(e.end_location)
        if start is None or end is None or start[0] != end[0] or (not cross_cell and start[0] != home):
            return None
        if any(row in cmap.rewritten for row in _rows_changed(e)):
            return None
        edits.append(Edit(start[1], end[1], e.content, start[0]))
    return dataclasses.replace(fix, message=relocate_text(fix.message, cmap, home), edits=tuple(edits))


def place(finding: Finding, cmap: CellMap, cross_cell: bool = False) -> Placement:
    """Move a finding of the joined module into its cell. ``cross_cell``: keep fixes that edit
    other cells too (the command line applies them; a client that edits one cell's document at a
    time, such as the language server, gets only fixes confined to the finding's cell)."""
    cell, start = cmap.move(finding.location)
    end_cell, end = cmap.move(finding.end_location)
    if end_cell != cell:
        end = start
    related, cells = [], []
    for rel in finding.related:
        rel_cell, rel_start = cmap.move(rel.location)
        rel_end_cell, rel_end = cmap.move(rel.end_location)
        if rel_end_cell != rel_cell:
            rel_end = rel_start
        related.append(Related(rel_start, rel_end, relocate_text(rel.message, cmap, rel_cell), rel_cell))
        cells.append(rel_cell)
    fix = None if finding.fix is None else _place_fix(finding.fix, cmap, cell, cross_cell)
    message = relocate_text(finding.message, cmap, cell, parse_error=finding.code == PARSE_ERROR_CODE)
    notes = tuple(relocate_text(note, cmap, cell) for note in finding.notes)
    moved_finding = dataclasses.replace(finding, message=message, location=start, end_location=end,
                                        related=tuple(related), fix=fix, cell=cell, notes=notes)
    return Placement(cell, moved_finding, tuple(cells))


def map_finding(finding: Finding, cmap: CellMap) -> Finding:
    """The finding as reporters and ``--fix`` see it: cell-relative, each related location and
    edit naming its cell, fixes across cells kept."""
    return place(finding, cmap, cross_cell=True).finding


def lint_joined(cells: Sequence[CodeCell], filename: str,
                codes: Optional[Iterable[str]] = None, noqa: bool = True) -> Tuple[List[Finding], CellMap]:
    """Findings in joined-module coordinates, and the map back to cells (for callers such as the
    language server that place each location, related ones included, in its own cell)."""
    source, cmap = join_cells(cells)
    if not source.strip():
        return [], cmap
    return lint_source(source, filename, codes, noqa=noqa), cmap


def lint_notebook_cells(cells: Sequence[CodeCell], filename: str,
                        codes: Optional[Iterable[str]] = None, noqa: bool = True) -> List[Finding]:
    findings, cmap = lint_joined(cells, filename, codes, noqa)
    return sorted((map_finding(f, cmap) for f in findings), key=Finding.sort_key)


def lint_notebook_bytes(data: bytes, filename: str, codes: Optional[Iterable[str]] = None,
                        noqa: bool = True) -> List[Finding]:
    try:
        text = data.decode("utf-8-sig")
        cells, is_python = read_cells(text)
    except UnicodeDecodeError:
        return [parse_error_finding(filename, "not a valid notebook: not UTF-8 text")]
    except NotebookError as exc:
        return [parse_error_finding(filename, str(exc))]
    if not is_python:
        return []
    return lint_notebook_cells(cells, filename, codes, noqa)
