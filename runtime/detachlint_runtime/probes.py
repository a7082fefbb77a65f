"""Flagged statements counted by calls compiled into the user's code, for Python before 3.12
(torch-free). There, any global trace function costs every frame of the program (3.11 takes each
instruction through its tracing path and gives up its specialised instructions): a DQN ran 1.8x
slower under a trace function that returned at once. Instead, a user file with flagged rows is
compiled with each flagged statement between two calls, and nothing else changes:

    __detachlint_enter__(k)          # k: the statement's index in LineCounter's table
    <the statement>
    __detachlint_leave__()

(no try/finally: Dynamo breaks its graph at one; a statement that raises leaves the window open
until the next probe leaves), ``return`` and ``raise`` around their value,
a compound statement's flagged header around its expression (``if``/``while`` test,
``for`` iterable, ``with`` items, ``match`` subject): ``(enter(k), expr, leave())[1]``; a statement
that suspends (``yield``, ``await``) or jumps (``break``, a bare ``return``) and a ``try`` get
``enter(k); leave()`` before it: counted, no dispatch window. A lambda or generator
expression on a flagged row runs when called or iterated, maybe from another line: its body is
probed as an expression too (the trace function saw its frame run that row). The names live in
``builtins`` (no module's namespace changes) and the line numbers are the statement's own.
"""

from __future__ import annotations

import ast
from typing import Callable, Dict, List, Optional, Set, Tuple

ENTER, LEAVE = "__detachlint_enter__", "__detachlint_leave__"
VALUE = "__detachlint_value__"  # a local: the value of a probed ``return``, ``raise`` or header


def _suspends(node: ast.AST) -> bool:
    """Whether the statement itself (not a function or class defined in it) yields or awaits."""
    todo = [node]
    while todo:
        n = todo.pop()
        if isinstance(n, (ast.Yield, ast.YieldFrom, ast.Await, ast.AsyncFor, ast.AsyncWith)):
            return True
        todo.extend(c for c in ast.iter_child_nodes(n)
                    if not isinstance(c, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)))
    return False


def _header(node: ast.stmt) -> Tuple[int, int]:
    """First and last row of what the statement runs itself (a compound one: its header)."""
    body = getattr(node, "body", None)
    if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", ())])
        return first, body[0].lineno - 1
    return node.lineno, node.end_lineno or node.lineno


class _Instrument:
    def __init__(self, rows: Set[int], alias: Set[int], add: Callable[[int, Optional[int]], int]) -> None:
        self.rows, self.alias, self.add = rows, alias, add
        self.probed = 0

    def _call(self, name: str, at: ast.AST, *args: ast.expr) -> ast.Call:
        return ast.copy_location(ast.Call(ast.copy_location(ast.Name(name, ast.Load()), at), list(args), []), at)

    def _expr(self, k: int, expr: ast.expr) -> ast.expr:
        """``(enter(k), expr, leave())[1]``: no value of ours passes through (Dynamo may reorder the calls)."""
        both = ast.Tuple([self._call(ENTER, expr, ast.Constant(k)), expr, self._call(LEAVE, expr)], ast.Load())
        return ast.copy_location(ast.Subscript(ast.copy_location(both, expr), ast.Constant(1), ast.Load()), expr)

    def _hoisted(self, k: int, node: ast.stmt, field: str) -> List[ast.stmt]:
        """``enter(k); VALUE = <the field's expression>; leave()`` before the statement, which then
        reads VALUE: the calls' results are not used (Dynamo moves such calls after its graph;
        one whose result is used, it traces into, and breaks the graph there)."""
        expr = getattr(node, field)
        name = ast.copy_location(ast.Name(VALUE, ast.Store()), expr)
        setattr(node, field, ast.copy_location(ast.Name(VALUE, ast.Load()), expr))
        return [ast.copy_location(ast.Expr(self._call(ENTER, node, ast.Constant(k))), node),
                ast.copy_location(ast.Assign([name], expr), node),
                ast.copy_location(ast.Expr(self._call(LEAVE, node)), node), node]

    def deferred(self, tree: ast.AST, first_of: Dict[int, int]) -> None:
        """Probe the bodies of lambdas and generator expressions that start on a flagged row."""
        for node in ast.walk(tree):
            if isinstance(node, (ast.Lambda, ast.GeneratorExp)) and node.lineno in self.rows:
                hot = node.lineno if node.lineno in self.alias else None
                k = self.add(first_of.get(node.lineno, node.lineno), hot)
                self.probed += 1
                if isinstance(node, ast.Lambda):
                    node.body = self._expr(k, node.body)
                else:
                    node.elt = self._expr(k, node.elt)

    def body(self, stmts: List[ast.stmt], docstring: bool) -> List[ast.stmt]:
        out: List[ast.stmt] = []
        for i, node in enumerate(stmts):
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(node, field, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                    setattr(node, field, self.body(inner, field == "body" and isinstance(
                        node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))))
            for handler in getattr(node, "handlers", ()):
                handler.body = self.body(handler.body, False)
            for case in getattr(node, "cases", ()):
                case.body = self.body(case.body, False)
            out.extend(self.statement(node, docstring and i == 0))
        return out

    def statement(self, node: ast.stmt, docstring: bool) -> List[ast.stmt]:
        first, last = _header(node)
        own = {r for r in range(first, last + 1) if r in self.rows}
        is_docstring = docstring and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) \
            and isinstance(node.value.value, str)
        if not own or is_docstring or isinstance(node, (ast.Global, ast.Nonlocal)) \
                or isinstance(node, ast.ImportFrom) and node.module == "__future__":
            return [node]
        hot = min(own & self.alias) if own & self.alias else None
        k = self.add(first, hot)
        self.probed += 1
        if isinstance(node, ast.If):
            return self._hoisted(k, node, "test")
        if isinstance(node, (ast.For, ast.AsyncFor)) and not _suspends(node.iter):
            return self._hoisted(k, node, "iter")
        if isinstance(node, ast.Match):
            return self._hoisted(k, node, "subject")
        if isinstance(node, (ast.While, ast.For, ast.AsyncFor)):
            if isinstance(node, ast.While):
                node.test = self._expr(k, node.test)
            else:
                node.iter = self._expr(k, node.iter)
            return [node]
        if isinstance(node, ast.With):
            items = node.items
            items[0].context_expr = ast.copy_location(ast.BoolOp(ast.Or(), [
                self._call(ENTER, node, ast.Constant(k)), items[0].context_expr]), items[0].context_expr)
            items[-1].context_expr = ast.copy_location(ast.Subscript(ast.copy_location(ast.Tuple(
                [items[-1].context_expr, self._call(LEAVE, node)], ast.Load()), node), ast.Constant(0), ast.Load()),
                items[-1].context_expr)
            return [node]
        mark = [ast.copy_location(ast.Expr(self._call(ENTER, node, ast.Constant(k))), node),
                ast.copy_location(ast.Expr(self._call(LEAVE, node)), node)]
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                     ast.ClassDef)) or _suspends(node) \
                or isinstance(node, (ast.Break, ast.Continue, ast.Pass)) \
                or isinstance(node, ast.Return) and node.value is None \
                or isinstance(node, ast.Raise) and node.exc is None:
            return mark + [node]  # a try, an async with, a yield, a jump: counted, no window
        if isinstance(node, ast.Return):
            return self._hoisted(k, node, "value")
        if isinstance(node, ast.Raise):
            return self._hoisted(k, node, "exc")
        # No try/finally (Dynamo breaks the graph at one): a statement that raises leaves the window
        # open until the next probe's leave.
        return [mark[0], node, mark[1]]


def instrument(source: bytes, path: str, rows: Set[int], alias: Set[int],
               add: Callable[[int, Optional[int]], int], first_of: Optional[Dict[int, int]] = None
               ) -> Optional[ast.Module]:
    """The module's tree with its flagged statements probed, or None (nothing to probe, or a
    syntax error: Python's own compile then reports it as it would). ``add(first row, alias row or
    None)`` gives a statement its probe's index; ``first_of``: row -> first row of its statement."""
    try:
        tree = ast.parse(source, path)
    except (SyntaxError, ValueError):
        return None
    work = _Instrument(rows, alias, add)
    work.deferred(tree, first_of or {})  # before the statements' probes add lambdas of their own
    tree.body = work.body(tree.body, True)
    if not work.probed:
        return None
    return ast.fix_missing_locations(tree)
