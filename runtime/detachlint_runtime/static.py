"""The one place where the runtime companion asks the core for static findings.

Everything else in this package talks to the core only through ``Finding`` objects and the
reporters; when the core's pipeline moves, this function is what gets re-pointed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, List, Optional


def static_findings(path: Path, codes: Optional[Iterable[str]] = None) -> list:
    """The core linter's findings for one file (``codes``: rule codes; None: the default ones)."""
    from detachlint.pipeline import lint_path

    return [f for f in lint_path(Path(path), list(codes) if codes is not None else None, str(path))
            if f.code.startswith("TAL")]


def all_codes() -> List[str]:
    from detachlint.rules import ALL_RULES

    return [r.code for r in ALL_RULES]
