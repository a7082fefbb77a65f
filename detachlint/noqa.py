"""Suppression comments, parsed exactly as flake8 7 parses them, so that a line (or file) is
silenced the same way whether detachlint runs as ``detachlint check``, under pre-commit, in an
editor or as a flake8 plugin (``tests/test_noqa_parity.py`` runs flake8 itself on the same lines).

- ``# noqa`` (one space, any case) silences every finding on its line; ``# noqa: TAL001,TAL1``
  only codes that start with one of the listed ones, compared case-sensitively (flake8 does; a
  lower-case ``# noqa: tal001`` therefore silences nothing). A list that does not parse as codes
  (``# noqa: TAL``) is a blanket ``# noqa``, as in flake8.
- ``# flake8: noqa`` on a line of its own skips the whole file (flake8's file-level exemption;
  ruff honours it too). ``# detachlint: skip-file`` does the same for detachlint alone.
"""

from __future__ import annotations

import re
from typing import FrozenSet, Optional, Sequence, Tuple

from .findings import Finding

# flake8/defaults.py, NOQA_INLINE_REGEX_STR and NOQA_FILE (flake8 7.x), verbatim.
NOQA_RE = re.compile(r"# noqa(?::[\s]?(?P<codes>([A-Z]+[0-9]+(?:[,\s]+)?)+))?", re.IGNORECASE)
_FLAKE8_FILE_RE = re.compile(r"\s*# flake8[:=]\s*noqa", re.IGNORECASE)
_FLAKE8_MENTION_RE = re.compile(r"# flake8[:=]", re.IGNORECASE)  # what a line the one above matches holds
_SKIP_FILE_RE = re.compile(r"^\s*#\s*detachlint:\s*skip-file\b", re.MULTILINE)
_SPLIT_RE = re.compile(r"[,\s]")


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
