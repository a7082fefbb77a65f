"""What a finding's message names is in the code it points to (issue 41, item 6).

Each name a message puts in backquotes (`grad`, `self.running_mean`; not code such as
`.clone()` or `x.add_(1)`) must occur in the source the finding points to: its line, the function
around it, or a line a related location points to in the same file; and no such name may be a
module the file imports (`torch` is never a tensor or an alias). Stdlib only: `eval/run.py` checks
every finding on the real projects with it, `tests/test_message_names.py` every fixture.
"""

from __future__ import annotations

import ast
import re
from typing import Callable, Iterable, List, Optional, Set

NAME_RE = re.compile(r"`([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)`")


def modules_imported(tree: ast.AST) -> Set[str]:
    """The names ``import x`` / ``import x.y as z`` bind: each is a module, never a value."""
    out: Set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                out.add(alias.asname or alias.name.split(".")[0])
    return out


def _around(tree: ast.AST, lines: List[str], row: int) -> str:
    """The innermost function holding ``row``, else the line itself."""
    best = None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno <= row <= (node.end_lineno or 0):
            if best is None or node.lineno >= best.lineno:
                best = node
    start, end = (best.lineno, best.end_lineno) if best is not None else (row, row)
    return "\n".join(lines[start - 1:end])


def occurs(name: str, text: str) -> bool:
    """``name`` as a whole (dotted) name in ``text``, spaces around its dots allowed."""
    pattern = r"\s*\.\s*".join(re.escape(part) for part in name.split("."))
    return re.search(rf"(?<![\w]){pattern}(?!\w)", text) is not None


class Parsed:
    """One source file, parsed once for the checks of all its findings."""

    def __init__(self, source: str) -> None:
        try:
            self.tree: Optional[ast.AST] = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            self.tree = None  # a TAL999: nothing to check against
        self.lines = source.splitlines()
        self.modules = modules_imported(self.tree) if self.tree is not None else set()


def problems(source: "str | Parsed", row: int, message: str, related_rows: Iterable[int] = (),
             defined: Callable[[str], bool] = lambda name: False) -> List[str]:
    """What is wrong with the names of one finding's ``message`` (empty when nothing is).
    ``defined``: whether a function or class of that name is defined in the project (a message
    may name a function of the project whose summary is its evidence, `Trainer.fit`, or the
    caller that backpropagates a helper's result)."""
    parsed = source if isinstance(source, Parsed) else Parsed(source)
    if parsed.tree is None:
        return []
    tree, lines, modules = parsed.tree, parsed.lines, parsed.modules
    text = "\n".join(_around(tree, lines, r) for r in {row, *related_rows} if 1 <= r <= len(lines))
    out = []
    for name in NAME_RE.findall(message):
        if name in modules:
            out.append(f"`{name}` is a module")
        elif name.split(".")[0] in modules | {"torch"}:
            continue  # an API the message suggests or quotes (`torch.stack`), not a value of the code
        elif defined(name.rpartition(".")[2]):
            continue  # a function of the project whose summary is the evidence (a caller's backward)
        elif not occurs(name, text):
            out.append(f"`{name}` is not in the code the finding points to")
    return out


def definitions(sources: Iterable[str]) -> Set[str]:
    """The names of every function and class the ``sources`` define."""
    out: Set[str] = set()
    for source in sources:
        out.update(re.findall(r"^\s*(?:async\s+)?(?:def|class)\s+(\w+)", source, re.MULTILINE))
    return out
