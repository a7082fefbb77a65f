"""No class in the package is over 500 lines (issue 32, item 3): a class that grows past that holds
several concerns, and is split by concern (``AliasAnalysis``: its calls, control flow and name
bookkeeping; ``TensorFacts``: its queries and the flow of kinds through a walk)."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import List, Tuple

PACKAGE = Path(__file__).resolve().parents[1] / "detachlint"
RUNTIME = Path(__file__).resolve().parents[1] / "runtime" / "detachlint_runtime"  # the companion too
LIMIT = 500


def oversized(source: str, limit: int = LIMIT) -> List[Tuple[str, int]]:
    """The classes of ``source`` (nested ones included) longer than ``limit`` lines, decorators in."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ClassDef):
            start = min([node.lineno] + [d.lineno for d in node.decorator_list])
            if node.end_lineno - start + 1 > limit:
                out.append((node.name, node.end_lineno - start + 1))
    return out


def test_no_class_is_over_500_lines():
    found = {path.relative_to(root.parent).as_posix(): big for root in (PACKAGE, RUNTIME)
             for path in sorted(root.rglob("*.py")) if (big := oversized(path.read_text(encoding="utf-8")))}
    assert not found, f"classes over {LIMIT} lines (split them by concern): {found}"


def test_the_size_check_can_fail():
    body = "\n".join(f"    x{i} = {i}" for i in range(LIMIT))
    assert oversized(f"class Big:\n{body}\n") == [("Big", LIMIT + 1)]
    assert oversized(f"class Small:\n{body}\n", limit=LIMIT + 1) == []
