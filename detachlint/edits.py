"""A fix's edits applied to text: locations to indices, spans, splicing. Plain text only (no
parser), so that a report can preview a fix on a run the cache served whole."""

from __future__ import annotations

import re
from typing import Iterable, List, Optional, Tuple

from .findings import Fix, Location

NEWLINE_RE = re.compile(r"\r\n?|\n")  # how LibCST (and so every Location) counts lines


class Offsets:
    """Location (1-based row, 0-based code-point column) -> index into the text."""

    def __init__(self, text: str) -> None:
        self.starts = [0]
        self.ends = []  # index of each line's end, before its line break
        for match in NEWLINE_RE.finditer(text):
            self.ends.append(match.start())
            self.starts.append(match.end())
        self.ends.append(len(text))

    def index(self, loc: Location) -> Optional[int]:
        if not 1 <= loc.row <= len(self.starts) or loc.column < 0:
            return None
        start = self.starts[loc.row - 1]
        if start + loc.column > self.ends[loc.row - 1]:
            return None
        return start + loc.column


def newline_of(text: str) -> str:
    """The file's line break, as LibCST decides it: the first one (default ``\\n``)."""
    match = NEWLINE_RE.search(text)
    return match.group(0) if match else "\n"


def edit_spans(text: str, offsets: Offsets, fix: Fix) -> Optional[List[Tuple[int, int, str]]]:
    """The fix's edits as sorted (start, end, content) index spans; None if any is out of range
    or two of its own edits overlap (a malformed fix is dropped, never half-applied)."""
    newline = newline_of(text)
    spans = []
    for edit in fix.edits:
        start, end = offsets.index(edit.location), offsets.index(edit.end_location)
        if start is None or end is None or end < start:
            return None
        content = edit.content
        if newline != "\n":
            content = NEWLINE_RE.sub(newline, content)
        spans.append((start, end, content))
    spans.sort(key=lambda s: (s[0], s[1]))
    for (s1, e1, _), (s2, e2, _) in zip(spans, spans[1:]):
        if s2 < e1 or (s2 == s1 and e2 == e1):
            return None
    return spans


def splice(text: str, spans: Iterable[Tuple[int, int, str]]) -> str:
    out, pos = [], 0
    for start, end, content in sorted(set(spans), key=lambda s: (s[0], s[1])):
        out.append(text[pos:start])
        out.append(content)
        pos = end
    out.append(text[pos:])
    return "".join(out)


def apply_fix(text: str, fix: Fix) -> Optional[str]:
    """``text`` with one fix's edits applied, unchecked (for previews); None if it is malformed."""
    spans = edit_spans(text, Offsets(text), fix)
    return None if spans is None else splice(text, spans)
