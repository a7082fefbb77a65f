"""Suppression comments, parsed exactly as flake8 7 parses them, so that a line (or file) is
silenced the same way whether detachlint runs as ``detachlint check``, under pre-commit, in an
editor or as a flake8 plugin (``tests/test_noqa_parity.py`` runs flake8 itself on the same lines).

- ``# noqa`` (one space, any case) silences every finding on its line; ``# noqa: TAL001,TAL1``
  only codes that start with one of the listed ones, compared case-sensitively (flake8 does; a
  lower-case ``# noqa: tal001`` therefore silences nothing). A list that does not parse as codes
  (``# noqa: TAL``) is a blanket ``# noqa``, as in flake8.
- ``# flake8: noqa`` on a line of its own skips the whole file (flake8's file-level exemption;
  ruff honours it too). ``# detachlint: skip-file`` does the same for detachlint alone.
- ``# detachlint: noqa: TAL002`` on a line of its own exempts the whole file from those codes
  (ruff's ``# ruff: noqa: F401``).
- Directives that do not do what they seem to are findings (``apply_noqa``): TAL902 for
  ``# noqa: tal001`` (silences nothing); TAL901, like ruff's RUF100, for a code in
  ``# noqa: TAL...`` that silenced nothing, with a fix.
"""

from __future__ import annotations

import io
import re
import tokenize
from typing import Callable, Collection, Dict, FrozenSet, List, Optional, Sequence, Tuple

from .findings import PARSE_ERROR_CODE, Applicability, Edit, Finding, Fix, Location, Severity

# flake8/defaults.py, NOQA_INLINE_REGEX_STR and NOQA_FILE (flake8 7.x), verbatim.
NOQA_RE = re.compile(r"# noqa(?::[\s]?(?P<codes>([A-Z]+[0-9]+(?:[,\s]+)?)+))?", re.IGNORECASE)
_FLAKE8_FILE_RE = re.compile(r"\s*# flake8[:=]\s*noqa", re.IGNORECASE)
_FLAKE8_MENTION_RE = re.compile(r"# flake8[:=]", re.IGNORECASE)  # what a line the one above matches holds
_SKIP_FILE_RE = re.compile(r"^\s*#\s*detachlint:\s*skip-file\b", re.MULTILINE)
_SPLIT_RE = re.compile(r"[,\s]")
_FILE_CODES_RE = re.compile(r"^[ \t]*#[ \t]*detachlint:[ \t]*noqa:[ \t]*(?P<codes>[A-Z]+[0-9]+(?:[, \t]+[A-Z]+[0-9]+)*)",
                            re.MULTILINE)

UNUSED_NOQA = "TAL901"
INVALID_NOQA = "TAL902"


def noqa_codes(line: str) -> Optional[FrozenSet[str]]:
    """None when the line has no noqa; an empty set for a blanket noqa; else the codes."""
    match = NOQA_RE.search(line)
    if match is None:
        return None
    codes = match.group("codes")
    if not codes:
        return frozenset()
    return frozenset(c.strip() for c in _SPLIT_RE.split(codes) if c.strip())


def is_suppressed(finding: Finding, lines: Sequence[str]) -> bool:
    row = finding.location.row
    if not 1 <= row <= len(lines):
        return False
    codes = noqa_codes(lines[row - 1])
    if codes is None:
        return False
    return not codes or finding.code.startswith(tuple(codes))


def skips_file(source: str, flake8_comment: bool = True) -> bool:
    """``# detachlint: skip-file``, or ``# flake8: noqa`` alone on a line (flake8 matches from the
    line's start). ``flake8_comment=False`` under flake8, which applies its own (and lets
    ``--disable-noqa`` override it)."""
    # Every file is asked: the line-by-line searches only run where their words are (a tenth of
    # the time, on torch's sources).
    if "skip-file" in source and _SKIP_FILE_RE.search(source):
        return True
    return flake8_comment and _FLAKE8_MENTION_RE.search(source) is not None and any(
        _FLAKE8_FILE_RE.match(line) for line in source.splitlines())


def noqa_edit(line: str, code: str) -> Optional[Tuple[int, int, str]]:
    """How to suppress ``code`` on ``line``: (start column, end column, new text) in code points,
    or None when the line already suppresses it or cannot take a comment (``\\`` continuation).
    An existing ``# noqa: A1`` list is extended (``# noqa: A1, TAL001``)."""
    body = line.rstrip("\r\n")
    codes = noqa_codes(body)
    if codes is not None:
        if not codes or any(code.startswith(c) for c in codes):
            return None
        match = NOQA_RE.search(body)
        assert match is not None
        end = match.start("codes") + len(match.group("codes").rstrip(", \t"))  # flake8's group ends in the separator
        return end, end, f", {code}"
    stripped = body.rstrip()
    if stripped.endswith("\\"):
        return None
    return len(stripped), len(body), f"  # noqa: {code}"


_NOQA_WORD_RE = re.compile(r"noqa", re.IGNORECASE)


def mentions_noqa(source: str) -> bool:
    return _NOQA_WORD_RE.search(source) is not None


def file_exempt_codes(source: str) -> Tuple[str, ...]:
    """The codes (or prefixes) ``# detachlint: noqa: CODES`` lines exempt the whole file from."""
    if "detachlint:" not in source:
        return ()
    return tuple(c for m in _FILE_CODES_RE.finditer(source) for c in _SPLIT_RE.split(m.group("codes")) if c)


def _is_comment(line: str, column: int) -> bool:
    """Whether ``column`` of ``line`` is inside a comment (not a string), by the line's tokens; a
    line that does not tokenize alone (inside a triple-quoted string) is not taken for one."""
    try:
        for tok in tokenize.generate_tokens(io.StringIO(line).readline):
            if tok.type == tokenize.COMMENT:
                return tok.start[1] <= column
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return False
    return False


def apply_noqa(findings: Sequence[Finding], lines: Sequence[str], filename: str,
               selected: Callable[[str], bool], known: Collection[str], inline: bool = True) -> List[Finding]:
    """The findings ``# noqa`` comments leave, plus TAL901/TAL902 where ``selected`` (``known``:
    every rule code). ``inline``: whether this pass applies line comments (flake8 applies them)."""
    kept: List[Finding] = []
    silenced: Dict[int, List[str]] = {}  # row -> codes of the findings its comment silenced
    for f in findings:
        row = f.location.row
        if inline and f.code != PARSE_ERROR_CODE and is_suppressed(f, lines):
            silenced.setdefault(row, []).append(f.code)
        else:
            kept.append(f)
    report_unused, report_invalid = inline and selected(UNUSED_NOQA), selected(INVALID_NOQA)
    if not (report_unused or report_invalid):
        return kept
    for row, line in enumerate(lines, 1):
        match = NOQA_RE.search(line) if _NOQA_WORD_RE.search(line) else None
        if match is None or not _is_comment(line, match.start()):
            continue
        start, end = Location(row, match.start()), Location(row, match.end())
        listed = match.group("codes")
        # (``# noqa: TAL`` acts as a blanket noqa, which would silence its own TAL902 under flake8)
        tokens = [c for c in _SPLIT_RE.split(listed or "") if c]
        lower = [c for c in tokens if c.upper().startswith("TAL") and c != c.upper()]
        if report_invalid and lower:
            kept.append(Finding(INVALID_NOQA, f"`{lower[0]}` in `# noqa` silences nothing: codes are matched "
                                f"case-sensitively; write `{lower[0].upper()}`", Severity.WARNING, filename, start, end))
        if not report_unused:
            continue
        here = silenced.get(row, ())
        unused = [c for c in tokens if c.startswith("TAL") and c == c.upper() and not any(code.startswith(c) for code in here)]
        if unused:
            # as ruff's RUF100 words it: a code whose rules did not all run silences nothing here
            # either, but may in a run that selects them
            off = [c for c in unused if not all(selected(k) for k in known if k.startswith(c))]
            parts = [f"{label}: {', '.join(f'`{c}`' for c in group)}"
                     for label, group in (("unused", [c for c in unused if c not in off]), ("non-enabled", off)) if group]
            kept.append(Finding(UNUSED_NOQA, f"unused `noqa` directive ({'; '.join(parts)})",
                                Severity.WARNING, filename, start, end,
                                fix=_drop_codes(line, row, match, tokens, unused)))
    return kept


def _drop_codes(line: str, row: int, match: "re.Match[str]", tokens: Sequence[str], unused: Collection[str]) -> Fix:
    """``# noqa: TAL101, E501`` -> ``# noqa: E501``; the whole comment (and the spaces before it)
    when nothing is left."""
    left = [c for c in tokens if c not in unused]
    if left:
        start, text = match.start(), f"# noqa: {', '.join(left)}"
    else:
        start, text = len(line[:match.start()].rstrip()), ""
    return Fix(Applicability.SAFE, "Remove unused `noqa` directive" if not left else "Remove the unused codes",
               (Edit(Location(row, start), Location(row, match.end()), text),))
