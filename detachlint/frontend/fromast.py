"""LibCST's tree of a module, built from Python's: the same nodes, without the trivia.

LibCST's parse is most of what linting a module costs: it makes a node for every space,
comment, comma and bracket, several times the nodes of Python's tree, and most of its time
goes into making them. The analyses and rules never look at trivia (``walk.py`` skips it) nor
decide on rows (``Context.after`` orders nodes by the source; ``tests/test_selection.py``), so a
tree that holds the same statements and expressions as LibCST's, with LibCST's defaults for the
trivia, gives them the same answers. ``to_cst`` builds that tree from Python's (which
costs about a seventeenth of LibCST's parse; building adds about as much), and the engine lints
it first: a module with nothing to report there (most modules) is never parsed by LibCST at all;
one with something is parsed and linted as before, so what is reported (messages, positions, fixes)
comes from LibCST's own tree. ``tests/test_fromast.py`` holds the trees equal, trivia aside, on
the fixtures, a torch sample and a module of every syntactic shape, and ``python bench/run.py
--screen-equality`` the findings on all torch files and on the evaluation corpus.

What Python's tree does not keep decides a few shapes (LibCST's own rules): an ``elif`` and an
``else:`` holding an ``if`` are told apart by the source, and so are a subscript by a bare tuple
(``x[1, 2]``: one element each) and by a parenthesised one (``x[(1, 2)]``: one element), and
likewise a ``case`` pattern's ``(a, b)`` and ``[a, b]``. Some syntax is rare enough that it is not
built (``Unsupported``): type parameters and aliases, starred subscripts; a module that uses it
goes to LibCST.
"""

from __future__ import annotations

import ast
import bisect
import dataclasses
import re
import types
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Union

import libcst as cst

from .units import Span, Unit


class Unsupported(Exception):
    """Syntax this builder does not make (the module goes to LibCST's parse)."""


_BINARY = {
    ast.Add: cst.Add, ast.Sub: cst.Subtract, ast.Mult: cst.Multiply, ast.MatMult: cst.MatrixMultiply,
    ast.Div: cst.Divide, ast.Mod: cst.Modulo, ast.Pow: cst.Power, ast.LShift: cst.LeftShift,
    ast.RShift: cst.RightShift, ast.BitOr: cst.BitOr, ast.BitXor: cst.BitXor, ast.BitAnd: cst.BitAnd,
    ast.FloorDiv: cst.FloorDivide,
}
_AUGMENTED = {
    ast.Add: cst.AddAssign, ast.Sub: cst.SubtractAssign, ast.Mult: cst.MultiplyAssign,
    ast.MatMult: cst.MatrixMultiplyAssign, ast.Div: cst.DivideAssign, ast.Mod: cst.ModuloAssign,
    ast.Pow: cst.PowerAssign, ast.LShift: cst.LeftShiftAssign, ast.RShift: cst.RightShiftAssign,
    ast.BitOr: cst.BitOrAssign, ast.BitXor: cst.BitXorAssign, ast.BitAnd: cst.BitAndAssign,
    ast.FloorDiv: cst.FloorDivideAssign,
}
_UNARY = {ast.UAdd: cst.Plus, ast.USub: cst.Minus, ast.Not: cst.Not, ast.Invert: cst.BitInvert}
_BOOLEAN = {ast.And: cst.And, ast.Or: cst.Or}
_COMPARE = {
    ast.Eq: cst.Equal, ast.NotEq: cst.NotEqual, ast.Lt: cst.LessThan, ast.LtE: cst.LessThanEqual,
    ast.Gt: cst.GreaterThan, ast.GtE: cst.GreaterThanEqual, ast.Is: cst.Is, ast.IsNot: cst.IsNot,
    ast.In: cst.In, ast.NotIn: cst.NotIn,
}
# Operators are trivia to every analysis but their class: one instance each, shared.
for _table in (_BINARY, _AUGMENTED, _UNARY, _BOOLEAN, _COMPARE):
    _table.update({k: v() for k, v in _table.items()})
_CONVERSIONS = {-1: None, 115: "s", 114: "r", 97: "a"}
_NAMED_CONSTANTS = {True: "True", False: "False", None: "None"}
_COMMENT_RE = re.compile(r"#[^\r\n]*")

_Body = Union[cst.IndentedBlock, cst.SimpleStatementSuite]


class _Makers:
    """``_n.Call(func, args)`` makes ``cst.Call(func, args)`` without running its ``__init__``: the
    trivia LibCST's constructors make anew for every node (a default factory per space and
    bracket, three quarters of the time it takes to build a tree) are made once per class here
    and shared, which a tree that is only read allows; nothing is validated, as in the engine's
    parse (``engine.parse_module``), so every node of the tree is made this way."""

    def __getattr__(self, name: str) -> Callable[..., Any]:
        maker = _maker(getattr(cst, name))
        setattr(self, name, maker)
        return maker


def _maker(cls: type) -> Callable[..., Any]:
    params, sets, defaults = [], [], {}
    for i, f in enumerate(dataclasses.fields(cls)):
        if f.default is not dataclasses.MISSING:
            defaults[f"_d{i}"] = f.default
            params.append(f"{f.name}=_d{i}")
        elif f.default_factory is not dataclasses.MISSING:
            made = f.default_factory()
            defaults[f"_d{i}"] = tuple(made) if isinstance(made, list) else made
            params.append(f"{f.name}=_d{i}")
        else:
            params.append(f.name)
        # a node's fields are slots (LibCST's ``add_slots``): the slot's own setter skips the
        # look-up ``object.__setattr__`` makes per field (a third of the time of a node)
        slot = next((k.__dict__[f.name] for k in cls.__mro__ if f.name in k.__dict__), None)
        if isinstance(slot, types.MemberDescriptorType):
            defaults[f"_s{i}"] = slot.__set__
            sets.append(f"    _s{i}(_o, {f.name})\n")
        else:
            sets.append(f"    _set(_o, {f.name!r}, {f.name})\n")
    # the names of the function's own are not names of fields (``MatchClass.cls``)
    code = f"def make({', '.join(params)}):\n    _o = _new(_class)\n{''.join(sets)}    return _o\n"
    namespace: Dict[str, Any] = {"_new": object.__new__, "_set": object.__setattr__, "_class": cls, **defaults}
    exec(code, namespace)  # noqa: S102 - a constructor generated from the dataclass's own fields
    return namespace["make"]


_n = _Makers()


def to_cst(tree: ast.Module, lines: Sequence[str], units: Iterable[Unit] = (), spans: Iterable[Span] = ()) -> cst.Module:
    """LibCST's tree of the module whose Python tree is ``tree`` and whose physical lines (with
    their line breaks) are ``lines``, trivia left at LibCST's defaults; with ``units`` and
    ``spans``, LibCST's tree of ``units.blanked(lines, units, spans)``. Raises ``Unsupported``
    (and ``RecursionError`` where Python's own tree was too deep to walk)."""
    builder = _Builder(lines, units, spans)
    try:
        return _n.Module(body=builder.statements(tree.body))
    finally:
        builder.__dict__.clear()  # its tables of its own methods are a cycle (with the module's lines)


class _Builder:
    def __init__(self, lines: Sequence[str], units: Iterable[Unit], spans: Iterable[Span]) -> None:
        self.lines = lines
        # blanked code: a unit's statements are one ``pass``; a span's inside is empty
        self._units = {u.first: u.last for u in units}
        self._spans = sorted((s.row, _byte_column(lines[s.row - 1], s.column),
                              s.end_row, _byte_column(lines[s.end_row - 1], s.end_column)) for s in spans)
        self._starts = [(r, c) for r, c, _, _ in self._spans]
        self._expressions: Dict[type, Callable[[ast.expr], cst.BaseExpression]] = {
            ast.Name: self._name, ast.Attribute: self._attribute, ast.Call: self._call,
            ast.Constant: self._constant, ast.Subscript: self._subscript, ast.BinOp: self._binary,
            ast.UnaryOp: self._unary, ast.BoolOp: self._boolean, ast.Compare: self._compare,
            ast.Tuple: self._tuple, ast.List: self._list, ast.Set: self._set, ast.Dict: self._dict,
            ast.ListComp: self._list_comp, ast.SetComp: self._set_comp, ast.GeneratorExp: self._generator,
            ast.DictComp: self._dict_comp, ast.IfExp: self._if_exp, ast.Lambda: self._lambda,
            ast.JoinedStr: self._joined, ast.NamedExpr: self._named, ast.Await: self._await,
            ast.Yield: self._yield, ast.YieldFrom: self._yield_from, ast.Starred: self._starred,
        }
        self._statements: Dict[type, Callable] = {
            ast.FunctionDef: self._function, ast.AsyncFunctionDef: self._function, ast.ClassDef: self._class,
            ast.If: self._if, ast.For: self._for, ast.AsyncFor: self._for, ast.While: self._while,
            ast.With: self._with, ast.AsyncWith: self._with, ast.Try: self._try,
        }
        if hasattr(ast, "TryStar"):
            self._statements[ast.TryStar] = self._try
        if hasattr(ast, "Match"):
            self._statements[ast.Match] = self._match
        self._small: Dict[type, Callable] = {
            ast.Expr: lambda s: _n.Expr(self.expr(s.value)),
            ast.Assign: self._assign, ast.AugAssign: self._augassign, ast.AnnAssign: self._annassign,
            ast.Return: lambda s: _n.Return(self.maybe(s.value)),
            ast.Pass: lambda s: _n.Pass(), ast.Break: lambda s: _n.Break(), ast.Continue: lambda s: _n.Continue(),
            ast.Raise: self._raise, ast.Delete: self._delete, ast.Import: self._import,
            ast.ImportFrom: self._import_from, ast.Global: lambda s: _n.Global([_n.NameItem(_n.Name(n)) for n in s.names]),
            ast.Nonlocal: lambda s: _n.Nonlocal([_n.NameItem(_n.Name(n)) for n in s.names]),
            ast.Assert: lambda s: _n.Assert(self.expr(s.test), self.maybe(s.msg)),
        }

    # ------------------------------------------------------------------ statements

    def statements(self, body: Sequence[ast.stmt]) -> List[cst.BaseStatement]:
        """Compound statements one each; consecutive simple ones that share a line (``a; b``) make
        one ``SimpleStatementLine``, as in LibCST."""
        out: List[cst.BaseStatement] = []
        run: List[cst.BaseSmallStatement] = []
        last = -1
        blank_to = 0
        for stmt in body:
            if self._units or self._spans:
                decorators = getattr(stmt, "decorator_list", None)
                row = decorators[0].lineno if decorators else stmt.lineno
                if row <= blank_to or self._blank(stmt):
                    continue
                if row in self._units:
                    blank_to = self._units[row]
                    if run:
                        out.append(_n.SimpleStatementLine(run))
                        run = []
                    out.append(_n.SimpleStatementLine([_n.Pass()]))
                    continue
            small = self._small.get(stmt.__class__)
            if small is None:
                if run:
                    out.append(_n.SimpleStatementLine(run))
                    run = []
                make = self._statements.get(stmt.__class__)
                if make is None:
                    raise Unsupported(stmt.__class__.__name__)
                out.append(make(stmt))
                continue
            if run and stmt.lineno != last:
                out.append(_n.SimpleStatementLine(run))
                run = []
            run.append(small(stmt))
            last = stmt.end_lineno  # ``a = (1,\n 2); b = 3``: ``b`` shares the line ``a`` ends on
        if run:
            out.append(_n.SimpleStatementLine(run))
        return out

    def _blank(self, first: ast.AST, last: Optional[ast.AST] = None) -> bool:
        """Whether one span holds all of ``first`` to ``last`` (default: ``first``)."""
        if not self._spans:
            return False
        last = last or first
        start = (first.lineno, first.col_offset)
        i = bisect.bisect_right(self._starts, start) - 1
        if i < 0:
            return False
        _, _, end_row, end_column = self._spans[i]
        return (last.end_lineno, last.end_col_offset) <= (end_row, end_column)

    def _suite(self, body: Sequence[ast.stmt]) -> _Body:
        """A compound statement's block: on lines of its own, or after the colon (``if x: y``)."""
        first = body[0]
        after_colon = self._text(first.lineno, 0, first.lineno, first.col_offset).strip() != ""
        if after_colon and all(s.__class__ in self._small for s in body):
            return _n.SimpleStatementSuite([self._small[s.__class__](s) for s in body])
        return _n.IndentedBlock(self.statements(body))

    def _else(self, orelse: Sequence[ast.stmt]) -> Optional[cst.Else]:
        return _n.Else(self._suite(orelse)) if orelse else None

    def _decorators(self, stmt) -> List[cst.Decorator]:
        return [_n.Decorator(self.expr(d)) for d in stmt.decorator_list]

    def _function(self, stmt) -> cst.FunctionDef:
        if getattr(stmt, "type_params", None):
            raise Unsupported("type parameters")
        return _n.FunctionDef(
            _n.Name(stmt.name), self._parameters(stmt.args), self._suite(stmt.body),
            decorators=self._decorators(stmt),
            returns=_n.Annotation(self.expr(stmt.returns)) if stmt.returns is not None else None,
            asynchronous=_n.Asynchronous() if isinstance(stmt, ast.AsyncFunctionDef) else None)

    def _class(self, stmt: ast.ClassDef) -> cst.ClassDef:
        if getattr(stmt, "type_params", None):
            raise Unsupported("type parameters")
        bases = [self._argument(b) for b in stmt.bases]
        keywords = [self._keyword(k) for k in stmt.keywords]
        return _n.ClassDef(_n.Name(stmt.name), self._suite(stmt.body), bases=bases, keywords=keywords,
                            decorators=self._decorators(stmt))

    def _if(self, stmt: ast.If) -> cst.If:
        orelse: Union[cst.If, cst.Else, None] = None
        if len(stmt.orelse) == 1 and isinstance(stmt.orelse[0], ast.If) and self._is_elif(stmt.orelse[0]):
            orelse = self._if(stmt.orelse[0])
        else:
            orelse = self._else(stmt.orelse)
        return _n.If(self.expr(stmt.test), self._suite(stmt.body), orelse)

    def _is_elif(self, stmt: ast.If) -> bool:
        return self._text(stmt.lineno, stmt.col_offset, stmt.lineno, stmt.col_offset + 4) == "elif"

    def _for(self, stmt) -> cst.For:
        return _n.For(self.expr(stmt.target), self.expr(stmt.iter), self._suite(stmt.body),
                       self._else(stmt.orelse),
                       asynchronous=_n.Asynchronous() if isinstance(stmt, ast.AsyncFor) else None)

    def _while(self, stmt: ast.While) -> cst.While:
        return _n.While(self.expr(stmt.test), self._suite(stmt.body), self._else(stmt.orelse))

    def _with(self, stmt) -> cst.With:
        items = [_n.WithItem(self.expr(i.context_expr),
                              _n.AsName(self.expr(i.optional_vars)) if i.optional_vars is not None else None)
                 for i in stmt.items]
        return _n.With(items, self._suite(stmt.body),
                        asynchronous=_n.Asynchronous() if isinstance(stmt, ast.AsyncWith) else None)

    def _try(self, stmt) -> Union[cst.Try, cst.TryStar]:
        star = stmt.__class__.__name__ == "TryStar"
        handler = _n.ExceptStarHandler if star else _n.ExceptHandler
        handlers = [handler(self._suite(h.body), type=self.maybe(h.type),
                            name=_n.AsName(_n.Name(h.name)) if h.name else None)
                    for h in stmt.handlers]
        final = _n.Finally(self._suite(stmt.finalbody)) if stmt.finalbody else None
        make = _n.TryStar if star else _n.Try
        return make(self._suite(stmt.body), handlers=handlers, orelse=self._else(stmt.orelse),
                    finalbody=final)

    def _match(self, stmt) -> cst.Match:
        cases = [_n.MatchCase(self._pattern(c.pattern), self._suite(c.body), guard=self.maybe(c.guard))
                 for c in stmt.cases]
        return _n.Match(self.expr(stmt.subject), cases)

    def _pattern(self, node) -> cst.MatchPattern:
        name = node.__class__.__name__
        if name == "MatchValue":
            return _n.MatchValue(self.expr(node.value))
        if name == "MatchSingleton":
            return _n.MatchSingleton(_n.Name(_NAMED_CONSTANTS[node.value]))
        if name == "MatchSequence":
            elements = [self._pattern(p) if p.__class__.__name__ == "MatchStar" else _n.MatchSequenceElement(self._pattern(p))
                        for p in node.patterns]
            # ``[a, b]`` and a bare ``a, b`` are LibCST's MatchList, ``(a, b)`` its MatchTuple
            bracket = self._text(node.lineno, node.col_offset, node.lineno, node.col_offset + 1)
            if bracket == "(" and (not node.patterns or self._opens(node, node.patterns[0])):
                return _n.MatchTuple(elements)
            return _n.MatchList(elements)
        if name == "MatchStar":
            return _n.MatchStar(_n.Name(node.name) if node.name is not None else None)
        if name == "MatchMapping":
            elements = [_n.MatchMappingElement(self.expr(k), self._pattern(p)) for k, p in zip(node.keys, node.patterns)]
            return _n.MatchMapping(elements, rest=_n.Name(node.rest) if node.rest is not None else None)
        if name == "MatchClass":
            return _n.MatchClass(self.expr(node.cls), [_n.MatchSequenceElement(self._pattern(p)) for p in node.patterns],
                                 [_n.MatchKeywordElement(_n.Name(k), self._pattern(p))
                                  for k, p in zip(node.kwd_attrs, node.kwd_patterns)])
        if name == "MatchAs":
            return _n.MatchAs(pattern=self._pattern(node.pattern) if node.pattern is not None else None,
                              name=_n.Name(node.name) if node.name is not None else None)
        if name == "MatchOr":
            return _n.MatchOr([_n.MatchOrElement(self._pattern(p)) for p in node.patterns])
        raise Unsupported(name)

    def _assign(self, stmt: ast.Assign) -> cst.Assign:
        return _n.Assign([_n.AssignTarget(self.expr(t)) for t in stmt.targets], self.expr(stmt.value))

    def _augassign(self, stmt: ast.AugAssign) -> cst.AugAssign:
        return _n.AugAssign(self.expr(stmt.target), _AUGMENTED[stmt.op.__class__], self.expr(stmt.value))

    def _annassign(self, stmt: ast.AnnAssign) -> cst.AnnAssign:
        return _n.AnnAssign(self.expr(stmt.target), _n.Annotation(self.expr(stmt.annotation)), self.maybe(stmt.value))

    def _raise(self, stmt: ast.Raise) -> cst.Raise:
        return _n.Raise(self.maybe(stmt.exc), _n.From(self.expr(stmt.cause)) if stmt.cause is not None else None)

    def _delete(self, stmt: ast.Delete) -> cst.Del:
        if len(stmt.targets) == 1:
            return _n.Del(self.expr(stmt.targets[0]))
        return _n.Del(_n.Tuple([_n.Element(self.expr(t)) for t in stmt.targets]))

    def _import(self, stmt: ast.Import) -> cst.Import:
        return _n.Import([self._alias(a) for a in stmt.names])

    def _import_from(self, stmt: ast.ImportFrom) -> cst.ImportFrom:
        names: Union[cst.ImportStar, List[cst.ImportAlias]]
        names = _n.ImportStar() if stmt.names[0].name == "*" else [self._alias(a) for a in stmt.names]
        module = _dotted(stmt.module) if stmt.module else None
        return _n.ImportFrom(module, names, relative=[_n.Dot() for _ in range(stmt.level or 0)])

    @staticmethod
    def _alias(alias: ast.alias) -> cst.ImportAlias:
        return _n.ImportAlias(_dotted(alias.name), _n.AsName(_n.Name(alias.asname)) if alias.asname else None)

    def _parameters(self, args: ast.arguments) -> cst.Parameters:
        positional = [*args.posonlyargs, *args.args]
        defaults: List[Optional[ast.expr]] = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
        made = [self._param(a, d) for a, d in zip(positional, defaults)]
        kwonly = [self._param(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults)]
        star_arg: Union[cst.Param, cst.ParamStar, cst.MaybeSentinel] = cst.MaybeSentinel.DEFAULT
        if args.vararg is not None:
            star_arg = self._param(args.vararg, None, "*")
        elif kwonly:
            star_arg = _n.ParamStar()
        count = len(args.posonlyargs)
        return _n.Parameters(params=made[count:], star_arg=star_arg, kwonly_params=kwonly,
                              star_kwarg=self._param(args.kwarg, None, "**") if args.kwarg is not None else None,
                              posonly_params=made[:count], posonly_ind=_n.ParamSlash() if count else cst.MaybeSentinel.DEFAULT)

    def _param(self, arg: ast.arg, default: Optional[ast.expr], star: str = "") -> cst.Param:
        annotation = _n.Annotation(self.expr(arg.annotation)) if arg.annotation is not None else None
        return _n.Param(_n.Name(arg.arg), annotation, default=self.maybe(default), star=star)

    # ------------------------------------------------------------------ expressions

    def expr(self, node: ast.expr) -> cst.BaseExpression:
        make = self._expressions.get(node.__class__)
        if make is None:
            raise Unsupported(node.__class__.__name__)
        return make(node)

    def maybe(self, node: Optional[ast.expr]) -> Optional[cst.BaseExpression]:
        return self.expr(node) if node is not None else None

    @staticmethod
    def _name(node: ast.Name) -> cst.Name:
        return _n.Name(node.id)

    def _attribute(self, node: ast.Attribute) -> cst.Attribute:
        return _n.Attribute(self.expr(node.value), _n.Name(node.attr))

    def _call(self, node: ast.Call) -> cst.Call:
        if self._spans and (node.args or node.keywords):
            inside = sorted([*node.args, *node.keywords], key=_position)
            if self._blank(inside[0], max(inside, key=_end)):
                return _n.Call(self.expr(node.func), [])
        args = [self._argument(a) for a in node.args] + [self._keyword(k) for k in node.keywords]
        if node.keywords and node.args and _position(node.keywords[0]) < _position(node.args[-1]):
            # ``f(k=1, *rest)``: LibCST keeps the order of the source, Python's tree does not
            pairs = sorted(zip([*node.args, *node.keywords], args), key=lambda p: _position(p[0]))
            args = [made for _, made in pairs]
        return _n.Call(self.expr(node.func), args)

    def _argument(self, node: ast.expr) -> cst.Arg:
        if isinstance(node, ast.Starred):
            return _n.Arg(self.expr(node.value), star="*")
        return _n.Arg(self.expr(node))

    def _keyword(self, node: ast.keyword) -> cst.Arg:
        if node.arg is None:
            return _n.Arg(self.expr(node.value), star="**")
        return _n.Arg(self.expr(node.value), keyword=_n.Name(node.arg))

    @staticmethod
    def _constant(node: ast.Constant) -> cst.BaseExpression:
        value = node.value
        if value is None or value is True or value is False:
            return _n.Name(_NAMED_CONSTANTS[value])
        if value is Ellipsis:
            return _n.Ellipsis()
        if isinstance(value, (str, bytes)):
            return _n.SimpleString(repr(value))
        if isinstance(value, bool) or not isinstance(value, (int, float, complex)):
            raise Unsupported(type(value).__name__)
        if isinstance(value, int):
            return _n.Integer(repr(value))
        if isinstance(value, float):
            return _n.Float(repr(value))
        return _n.Imaginary(repr(value.imag) + "j")

    def _subscript(self, node: ast.Subscript) -> cst.Subscript:
        index = node.slice
        if isinstance(index, ast.Tuple) and index.elts and not self._parenthesised(index):
            elements = [_n.SubscriptElement(self._slice(e)) for e in index.elts]
        else:
            elements = [_n.SubscriptElement(self._slice(index))]
        return _n.Subscript(self.expr(node.value), elements)

    def _parenthesised(self, node: ast.Tuple) -> bool:
        """``x[(a, b)]`` rather than ``x[a, b]`` or ``x[(a), b]``."""
        return self._opens(node, node.elts[0])

    def _opens(self, node: ast.AST, first: ast.AST) -> bool:
        """Whether ``node`` opens with a parenthesis of its own, before its ``first`` element:
        one that does not close right after that element."""
        if (node.lineno, node.col_offset) == (first.lineno, first.col_offset):
            return False
        before = self._text(node.lineno, node.col_offset, first.lineno, first.col_offset)
        after = self._text(first.end_lineno, first.end_col_offset, node.end_lineno, node.end_col_offset)
        return _COMMENT_RE.sub("", before).count("(") > _COMMENT_RE.sub("", after.split(",", 1)[0]).count(")")

    def _text(self, row: int, column: int, end_row: int, end_column: int) -> str:
        """The source between two of Python's positions (columns in UTF-8 bytes)."""
        lines = [line.encode("utf-8") for line in self.lines[row - 1:end_row]]
        if row == end_row:
            return lines[0][column:end_column].decode("utf-8", "replace")
        return b"".join([lines[0][column:], *lines[1:-1], lines[-1][:end_column]]).decode("utf-8", "replace")

    def _slice(self, node: ast.expr) -> Union[cst.Index, cst.Slice]:
        if isinstance(node, ast.Slice):
            return _n.Slice(self.maybe(node.lower), self.maybe(node.upper), self.maybe(node.step))
        if isinstance(node, ast.Starred):
            raise Unsupported("starred subscript")
        return _n.Index(self.expr(node))

    def _binary(self, node: ast.BinOp) -> cst.BinaryOperation:
        return _n.BinaryOperation(self.expr(node.left), _BINARY[node.op.__class__], self.expr(node.right))

    def _unary(self, node: ast.UnaryOp) -> cst.UnaryOperation:
        return _n.UnaryOperation(_UNARY[node.op.__class__], self.expr(node.operand))

    def _boolean(self, node: ast.BoolOp) -> cst.BooleanOperation:
        operator = _BOOLEAN[node.op.__class__]
        left = self.expr(node.values[0])
        for value in node.values[1:]:  # ``a or b or c`` is ``(a or b) or c`` in LibCST's tree
            left = _n.BooleanOperation(left, operator, self.expr(value))
        return left

    def _compare(self, node: ast.Compare) -> cst.Comparison:
        return _n.Comparison(self.expr(node.left), [_n.ComparisonTarget(_COMPARE[op.__class__], self.expr(c))
                                                     for op, c in zip(node.ops, node.comparators)])

    def _elements(self, elts: Sequence[ast.expr]) -> List[cst.BaseElement]:
        return [_n.StarredElement(self.expr(e.value)) if isinstance(e, ast.Starred) else _n.Element(self.expr(e))
                for e in elts]

    def _tuple(self, node: ast.Tuple) -> cst.Tuple:
        if self._spans and node.elts and self._blank(node.elts[0], node.elts[-1]):
            return _n.Tuple([])
        return _n.Tuple(self._elements(node.elts))

    def _list(self, node: ast.List) -> cst.List:
        return _n.List(self._elements(node.elts))

    def _set(self, node: ast.Set) -> cst.Set:
        return _n.Set(self._elements(node.elts))

    def _dict(self, node: ast.Dict) -> cst.Dict:
        if self._spans and node.values and self._blank(node.keys[0] or node.values[0], node.values[-1]):
            return _n.Dict([])
        return _n.Dict([_n.StarredDictElement(self.expr(v)) if k is None else _n.DictElement(self.expr(k), self.expr(v))
                         for k, v in zip(node.keys, node.values)])

    def _for_in(self, generators: Sequence[ast.comprehension]) -> cst.CompFor:
        inner: Optional[cst.CompFor] = None
        for gen in reversed(generators):
            inner = _n.CompFor(self.expr(gen.target), self.expr(gen.iter), [_n.CompIf(self.expr(i)) for i in gen.ifs],
                                inner, asynchronous=_n.Asynchronous() if gen.is_async else None)
        assert inner is not None
        return inner

    def _list_comp(self, node: ast.ListComp) -> cst.ListComp:
        return _n.ListComp(self.expr(node.elt), self._for_in(node.generators))

    def _set_comp(self, node: ast.SetComp) -> cst.SetComp:
        return _n.SetComp(self.expr(node.elt), self._for_in(node.generators))

    def _generator(self, node: ast.GeneratorExp) -> cst.GeneratorExp:
        return _n.GeneratorExp(self.expr(node.elt), self._for_in(node.generators))

    def _dict_comp(self, node: ast.DictComp) -> cst.DictComp:
        return _n.DictComp(self.expr(node.key), self.expr(node.value), self._for_in(node.generators))

    def _if_exp(self, node: ast.IfExp) -> cst.IfExp:
        return _n.IfExp(self.expr(node.test), self.expr(node.body), self.expr(node.orelse))

    def _lambda(self, node: ast.Lambda) -> cst.Lambda:
        return _n.Lambda(self._parameters(node.args), self.expr(node.body))

    def _joined(self, node: ast.JoinedStr) -> cst.FormattedString:
        return _n.FormattedString(self._parts(node.values))

    def _parts(self, values: Sequence[ast.expr]) -> List[cst.BaseFormattedStringContent]:
        parts: List[cst.BaseFormattedStringContent] = []
        for value in values:
            if isinstance(value, ast.FormattedValue):
                spec = self._parts(value.format_spec.values) if isinstance(value.format_spec, ast.JoinedStr) else None
                parts.append(_n.FormattedStringExpression(self.expr(value.value), _CONVERSIONS.get(value.conversion),
                                                           spec))
            elif isinstance(value, ast.Constant) and isinstance(value.value, str):
                parts.append(_n.FormattedStringText(value.value.replace("{", "{{").replace("}", "}}")))
            else:
                raise Unsupported("f-string part")
        return parts

    def _named(self, node: ast.NamedExpr) -> cst.NamedExpr:
        return _n.NamedExpr(self.expr(node.target), self.expr(node.value))

    def _await(self, node: ast.Await) -> cst.Await:
        return _n.Await(self.expr(node.value))

    def _yield(self, node: ast.Yield) -> cst.Yield:
        return _n.Yield(self.maybe(node.value))

    def _yield_from(self, node: ast.YieldFrom) -> cst.Yield:
        return _n.Yield(_n.From(self.expr(node.value)))

    def _starred(self, node: ast.Starred) -> cst.StarredElement:
        # a starred assignment target (``a, *b = x``) is reached through ``_elements``; anywhere
        # else LibCST's shape depends on the context
        raise Unsupported("starred expression")


def _dotted(name: str) -> Union[cst.Name, cst.Attribute]:
    parts = name.split(".")
    node: Union[cst.Name, cst.Attribute] = _n.Name(parts[0])
    for part in parts[1:]:
        node = _n.Attribute(node, _n.Name(part))
    return node


def _position(node: ast.AST):
    return (node.lineno, node.col_offset)


def _end(node: ast.AST):
    return (node.end_lineno, node.end_col_offset)


def _byte_column(line: str, column: int) -> int:
    """A character column as Python's tree counts it (UTF-8 bytes)."""
    return column if line.isascii() else len(line[:column].encode("utf-8"))
