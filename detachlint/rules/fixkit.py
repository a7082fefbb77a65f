"""Building a rule's fix from nodes: minimal edits (replace a node, insert after one), how this
module spells ``torch`` or ``copy.deepcopy``, and where a missing ``import copy`` goes.

A rule passes ``fix=lambda ctx: ...`` to ``ctx.report``; the engine calls it once positions are
known. Edits cover the smallest range that changes (``data`` → ``detach()``, not the statement),
so comments and formatting around them survive. Applying fixes is ``detachlint.fixes``' job.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Dict, List, Optional, Tuple

import libcst as cst

from ..analysis.base import Analysis, AnalysisContext
from ..analysis.torchnames import dotted_name
from ..findings import Applicability, Edit, Fix, Location

if TYPE_CHECKING:
    from ..context import Context

SAFE, UNSAFE = Applicability.SAFE, Applicability.UNSAFE
_NEWLINE_RE = re.compile(r"\r\n?|\n")  # LibCST's line breaks: positions count lines by these


def _loc(pos) -> Location:
    return Location(pos.line, pos.column)


def replace(ctx: "Context", node: cst.CSTNode, content: str) -> Edit:
    """Replace ``node``'s source range with ``content``."""
    rng = ctx.position(node)
    return Edit(_loc(rng.start), _loc(rng.end), content)


def insert_after(ctx: "Context", node: cst.CSTNode, content: str) -> Edit:
    end = _loc(ctx.position(node).end)
    return Edit(end, end, content)


def insert_before(ctx: "Context", node: cst.CSTNode, content: str) -> Edit:
    start = _loc(ctx.position(node).start)
    return Edit(start, start, content)


def replace_tail(ctx: "Context", inner: cst.CSTNode, outer: cst.CSTNode, content: str) -> Edit:
    """Replace the text from the end of ``inner`` to the end of ``outer`` (which contains it)."""
    return Edit(_loc(ctx.position(inner).end), _loc(ctx.position(outer).end), content)


def make_fix(applicability: Applicability, message: str, *edits: Edit, because: Optional[str] = None) -> Fix:
    """A fix titled ``message``; an unsafe one says why in its title, ``message (unsafe: because)``
    (what the ``full`` report's note and the editor's quick fix show)."""
    if applicability is UNSAFE and because:
        message = f"{message} (unsafe: {because})"
    return Fix(applicability, message, tuple(edits))


def is_pure(node: cst.BaseExpression) -> bool:
    """A name or attribute chain: evaluating it twice, or later, is unobservable in practice."""
    return dotted_name(node) is not None


# --- module-level names -------------------------------------------------------------------------

def _top_level_imports(module: cst.Module) -> Dict[str, str]:
    """local name -> what a module-level import binds it to (``T`` -> ``torch``)."""
    out: Dict[str, str] = {}
    for stmt in module.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, cst.Import):
                for alias in small.names:
                    full = dotted_name(alias.name) or ""
                    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                        out[alias.asname.name.value] = full
                    else:
                        out[full.split(".")[0]] = full.split(".")[0]
            elif (isinstance(small, cst.ImportFrom) and not small.relative and small.module is not None
                  and not isinstance(small.names, cst.ImportStar)):
                module_name = dotted_name(small.module) or ""
                for alias in small.names:
                    name = dotted_name(alias.name) or ""
                    local = name
                    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                        local = alias.asname.name.value
                    out[local] = f"{module_name}.{name}"
    return out


class ModuleImports(Analysis):
    """The module-level imports (local name -> what it is bound to) and, once a fix needs it,
    where a new import goes."""

    @classmethod
    def build(cls, ctx: AnalysisContext, scope: Optional[cst.CSTNode]) -> "ModuleImports":
        return cls(_top_level_imports(ctx.module))

    def __init__(self, names: Dict[str, str]) -> None:
        self.names = names
        self.insertion: Optional[Tuple[Location, str]] = None


class _Rebinds(cst.CSTVisitor):
    """Counts the ``Name`` nodes spelling ``name`` that are not ``x.name``, ``f(name=...)``, a
    reference ``name.attr`` or part of an import: a local binding that would shadow the module."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.found = False

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        # ``node.attr`` is never a binding, and a bare ``name.attr`` is a use of the module.
        if not isinstance(node.value, cst.Name):
            node.value.visit(self)
        return False

    def visit_Arg(self, node: cst.Arg) -> bool:
        node.value.visit(self)
        return False

    def visit_Import(self, node: cst.Import) -> bool:
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False

    def visit_Name(self, node: cst.Name) -> None:
        if node.value == self.name:
            self.found = True


def module_name(ctx: "Context", qualified: str) -> Optional[str]:
    """How module-level imports spell ``qualified`` (``torch`` → ``T`` after ``import torch as T``;
    ``copy.deepcopy`` → ``deepcopy`` after ``from copy import deepcopy``), or None."""
    imports = ctx.get(ModuleImports).names
    candidates = [local for local, full in imports.items() if full == qualified]
    if qualified in candidates:
        return qualified
    if candidates:
        return sorted(candidates)[0]
    head, _, member = qualified.rpartition(".")
    if head:
        owner = module_name(ctx, head)
        if owner is not None:
            return f"{owner}.{member}"
    return None


def torch_spelling(ctx: "Context") -> Optional[str]:
    """The name ``torch`` itself is bound to in this module, or None (then no fix may use it)."""
    return module_name(ctx, "torch")


def line_text(ctx: "Context", row: int) -> str:
    """The text of physical line ``row`` as LibCST counts lines (``str.splitlines`` also breaks
    at form feeds and other separators, which would shift every row after one)."""
    return _NEWLINE_RE.split(ctx.source)[row - 1]


def _insertion_point(ctx: "Context") -> Tuple[Location, str]:
    """Where a new top-level import goes, and the text around it: with the other imports (in
    alphabetical place within the first block), else after the docstring and ``__future__``."""
    body = list(ctx.module.body)
    i = 0
    if body and _is_docstring(body[0]):
        i = 1
    while i < len(body) and _is_future(body[i]):
        i += 1
    header_end = i
    first_import = next((j for j in range(header_end, len(body)) if _import_module(body[j]) is not None), None)
    if first_import is None:
        if header_end < len(body):
            return _before(ctx, body[header_end])
        if header_end == 0:
            return Location(1, 0), "{import}\n"
        line = ctx.position(body[header_end - 1]).end.line
        text = line_text(ctx, line)
        return Location(line, len(text)), "\n{import}"
    j = first_import
    while j < len(body):
        name = _import_module(body[j])
        if name is None or name.lower() >= "copy":
            return _before(ctx, body[j])
        if j + 1 >= len(body) or _import_module(body[j + 1]) is None or body[j + 1].leading_lines:
            break
        j += 1
    # After the last import of the block: at the start of the statement that follows it, if any.
    if j + 1 < len(body) and not body[j + 1].leading_lines:
        return _before(ctx, body[j + 1])
    line = ctx.position(body[j]).end.line
    text = line_text(ctx, line)
    return Location(line, len(text)), "\n{import}"


def _before(ctx: "Context", stmt: cst.CSTNode) -> Tuple[Location, str]:
    """Before ``stmt`` and the comment lines directly above it (they belong to it)."""
    comments = 0
    for line in reversed(getattr(stmt, "leading_lines", ())):
        if line.comment is None:
            break
        comments += 1
    return Location(ctx.position(stmt).start.line - comments, 0), "{import}\n"


def _is_docstring(stmt: cst.CSTNode) -> bool:
    return (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
            and isinstance(stmt.body[0], cst.Expr)
            and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString)))


def _is_future(stmt: cst.CSTNode) -> bool:
    return (isinstance(stmt, cst.SimpleStatementLine) and bool(stmt.body)
            and all(isinstance(s, cst.ImportFrom) and s.module is not None
                    and dotted_name(s.module) == "__future__" for s in stmt.body))


def _import_module(stmt: cst.CSTNode) -> Optional[str]:
    """The module a top-level import line imports (the first one), else None."""
    if not isinstance(stmt, cst.SimpleStatementLine) or not stmt.body:
        return None
    first = stmt.body[0]
    if not all(isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body):
        return None
    if isinstance(first, cst.Import):
        return dotted_name(first.names[0].name) or ""
    if first.relative:
        return "~"  # relative imports sort after everything
    return dotted_name(first.module) if first.module is not None else ""


def require_import(ctx: "Context", module: str, member: str) -> Tuple[Optional[str], List[Edit]]:
    """Spell ``module.member`` here, with the ``import module`` edit to add when it is missing.
    (None, []) when the name ``module`` is used for something else in this file."""
    spelled = module_name(ctx, f"{module}.{member}")
    if spelled is not None:
        return spelled, []
    table = ctx.get(ModuleImports)
    if module in table.names:  # ``from copy import copy``: the name is taken
        return None, []
    rebinds = _Rebinds(module)
    ctx.module.visit(rebinds)
    if rebinds.found:
        return None, []
    if table.insertion is None:
        table.insertion = _insertion_point(ctx)
    location, template = table.insertion
    return f"{module}.{member}", [Edit(location, location, template.format(**{"import": f"import {module}"}))]


class _CommentCounter(cst.CSTVisitor):
    def __init__(self) -> None:
        self.count = 0

    def visit_Comment(self, node: cst.Comment) -> None:
        self.count += 1


def comments_in(node: cst.CSTNode) -> int:
    counter = _CommentCounter()
    node.visit(counter)
    return counter.count


def has_comment(node: cst.CSTNode) -> bool:
    """Replacing a node that holds a comment would drop it: such nodes are edited more narrowly
    or not at all."""
    return comments_in(node) > 0


def is_simple_value(node: cst.BaseExpression) -> bool:
    """A name chain or a literal: moving or repeating its evaluation changes nothing."""
    return is_pure(node) or isinstance(node, (cst.SimpleString, cst.Integer, cst.Float))


_ATOMS = (cst.Name, cst.Attribute, cst.Call, cst.Subscript)


def copy_after(ctx: "Context", node: cst.BaseExpression, method: str = "clone") -> Tuple[Edit, ...]:
    """Make ``node``'s value a copy: ``.clone()`` (``.copy()`` for an array) after it, in
    parentheses when it is not an atom. Only insertions, so anything inside survives."""
    if isinstance(node, _ATOMS) and not node.lpar:
        return (insert_after(ctx, node, f".{method}()"),)
    start = _loc(ctx.position(node).start)
    return (Edit(start, start, "("), insert_after(ctx, node, f").{method}()"))


def wrap_call(ctx: "Context", node: cst.CSTNode, func: str) -> Tuple[Edit, ...]:
    """``func(node)``, as two insertions (comments inside ``node`` survive)."""
    start = _loc(ctx.position(node).start)
    return (Edit(start, start, f"{func}("), insert_after(ctx, node, ")"))


def detach_fix(ctx, data: cst.Attribute):
    """TAL002's fix where the alias is consumed at once: ``X.data`` → ``X.detach()``, editing
    only the attribute name (the same values; only the version counter differs)."""
    return make_fix(SAFE, "Replace `.data` with `.detach()`", replace(ctx, data.attr, "detach()"))


# --- call arguments, for the constructor rules' fixes ------------------------------------------

_ATOMS = (cst.Name, cst.Attribute, cst.Call, cst.Subscript)


def receiver_code(ctx, node: cst.BaseExpression) -> str:
    """Source for ``node`` usable before ``.method()``: parenthesised unless it is an atom."""
    code = ctx.code_for(node).strip()
    return code if isinstance(node, _ATOMS) else f"({code})"


def copy_replacement(ctx, source: cst.BaseExpression, kwargs: Dict[str, cst.Arg],
                     like: Optional[cst.BaseExpression] = None) -> str:
    """The copy that ``torch.tensor(source, **kwargs)`` meant: ``source.detach().clone()``,
    with ``dtype=``/``device=`` as ``.to(...)`` and ``requires_grad=True`` as ``.requires_grad_()``.
    ``like`` is the receiver of ``like.new_tensor(source)``, whose dtype and device are the default."""
    base = receiver_code(ctx, source)
    is_detached = (isinstance(source, cst.Call) and isinstance(source.func, cst.Attribute)
                   and source.func.attr.value == "detach" and not source.args)
    text = f"{base}.clone()" if is_detached else f"{base}.detach().clone()"
    to_args = []
    for key in ("dtype", "device"):
        if key in kwargs:
            to_args.append(f"{key}={ctx.code_for(kwargs[key].value).strip()}")
        elif like is not None:
            to_args.append(f"{key}={receiver_code(ctx, like)}.{key}")
    if to_args:
        text += f".to({', '.join(to_args)})"
    grad = kwargs.get("requires_grad")
    if grad is not None and not (isinstance(grad.value, cst.Name) and grad.value.value == "False"):
        text += ".requires_grad_()" if isinstance(grad.value, cst.Name) and grad.value.value == "True" \
            else f".requires_grad_({ctx.code_for(grad.value).strip()})"
    return text


def keywords_of(call: cst.Call) -> Dict[str, cst.Arg]:
    return {a.keyword.value: a for a in call.args if a.keyword is not None}


def positional_args(call: cst.Call):
    return [a for a in call.args if a.keyword is None and not a.star]


def only_args(call: cst.Call, keywords=()) -> bool:
    """One positional argument, no ``*``/``**``, and no keyword outside ``keywords``."""
    return (len(positional_args(call)) == 1 and not any(a.star for a in call.args)
            and all(a.keyword is None or a.keyword.value in keywords for a in call.args))
