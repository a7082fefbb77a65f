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

A notebook that is not valid JSON or has no cell list gives one TAL999 finding. Reported findings
carry no fix; ``check --fix`` fixes notebooks through ``fixes.fix_notebook`` on the joined cells.
"""

from __future__ import annotations

import bisect
import dataclasses
import json
import re
from dataclasses import dataclass
from typing import Iterable, List, Optional, Sequence, Tuple

from .engine import lint_source, physical_lines
from .findings import Edit, Finding, Location, Related, parse_error_finding

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
        parts.append(text)
        row += count
    return "".join(parts), cmap


@dataclass(frozen=True)
class Placement:
    """A finding moved into its cell: locations (and the fix's edits, when they all fall in that
    cell; otherwise no fix) relative to ``cell``; ``related_cells`` says where each related
    location lies."""

    cell: int
    finding: Finding
    related_cells: Tuple[int, ...]


def place(finding: Finding, cmap: CellMap) -> Placement:
    cell, start = cmap.move(finding.location)
    end_cell, end = cmap.move(finding.end_location)
    if end_cell != cell:
        end = start
    related, cells = [], []
    for rel in finding.related:
        rel_cell, rel_start = cmap.move(rel.location)
        _, rel_end = cmap.move(rel.end_location)
        related.append(Related(rel_start, rel_end, rel.message))
        cells.append(rel_cell)
    fix = None
    if finding.fix is not None:
        moved = [(cmap.move(e.location), cmap.move(e.end_location), e.content) for e in finding.fix.edits]
        if all(a[0] == cell and b[0] == cell for a, b, _ in moved):
            fix = dataclasses.replace(finding.fix, edits=tuple(Edit(a[1], b[1], text) for a, b, text in moved))
    moved_finding = dataclasses.replace(finding, location=start, end_location=end, related=tuple(related),
                                        fix=fix, cell=cell)
    return Placement(cell, moved_finding, tuple(cells))


def map_finding(finding: Finding, cmap: CellMap) -> Finding:
    """The finding as reporters show it: cell-relative, related locations in other cells named in
    their message, and no fix (fixes are not written back into notebooks yet)."""
    placed = place(finding, cmap)
    related = tuple(
        rel if rel_cell == placed.cell else dataclasses.replace(rel, message=f"cell {rel_cell}: {rel.message}")
        for rel, rel_cell in zip(placed.finding.related, placed.related_cells)
    )
    return dataclasses.replace(placed.finding, related=related, fix=None)


def lint_joined(cells: Sequence[CodeCell], filename: str,
                codes: Optional[Iterable[str]] = None) -> Tuple[List[Finding], CellMap]:
    """Findings in joined-module coordinates, and the map back to cells (for callers such as the
    language server that place each location, related ones included, in its own cell)."""
    source, cmap = join_cells(cells)
    if not source.strip():
        return [], cmap
    return lint_source(source, filename, codes), cmap


def lint_notebook_cells(cells: Sequence[CodeCell], filename: str,
                        codes: Optional[Iterable[str]] = None) -> List[Finding]:
    findings, cmap = lint_joined(cells, filename, codes)
    return sorted((map_finding(f, cmap) for f in findings), key=Finding.sort_key)


def lint_notebook_bytes(data: bytes, filename: str, codes: Optional[Iterable[str]] = None) -> List[Finding]:
    try:
        text = data.decode("utf-8-sig")
        cells, is_python = read_cells(text)
    except UnicodeDecodeError:
        return [parse_error_finding(filename, "not a valid notebook: not UTF-8 text")]
    except NotebookError as exc:
        return [parse_error_finding(filename, str(exc))]
    if not is_python:
        return []
    return lint_notebook_cells(cells, filename, codes)
