"""The tree built from Python's (``frontend/fromast.py``) is LibCST's, trivia aside, and the
screen the engine runs on it (``engine._may_report``) never hides a finding."""

from __future__ import annotations

import ast
import dataclasses
import gc
import textwrap
from pathlib import Path

import libcst as cst
import pytest

from detachlint.frontend import units
from detachlint.frontend.fromast import Unsupported, to_cst
from detachlint.frontend.units import LINE_RE, blanked, quiet_code
from detachlint.engine import every_site, lint_source, parse_module, screen_reports, select_rules
from detachlint.walk import TRIVIA

from test_incremental import _torch_sample
from test_precheck import ALL_CODES, SOURCES
from test_units import same_for_fixtures_and_torch

# What LibCST keeps of the source's spelling, and the built tree does not: formatting fields, and
# the text of strings and numbers (their values are compared).
_FORMATTING = {"lpar", "rpar", "header", "footer", "encoding", "default_indent", "default_newline",
               "has_trailing_newline", "indent", "start", "end", "leading_lines", "lines_after_decorators"}
_STRINGS = (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)


def _significant(values):
    return [v for v in values if not (isinstance(v, cst.CSTNode) and type(v) in TRIVIA)]


def difference(built, parsed, path="module"):
    """Where two trees differ other than in trivia (None: nowhere)."""
    if isinstance(built, _STRINGS) and isinstance(parsed, _STRINGS):
        # ``"a" "b"`` is one string in Python's tree; ``f"{x}" "y"`` one f-string
        if isinstance(built, cst.SimpleString) and isinstance(parsed, cst.SimpleString) \
                and built.evaluated_value != parsed.evaluated_value:
            return f"{path}: {built.value} != {parsed.value}"
        return None
    if type(built) is not type(parsed):
        return f"{path}: {type(built).__name__} != {type(parsed).__name__}"
    if isinstance(built, (cst.Integer, cst.Float, cst.Imaginary)):
        return None if built.evaluated_value == parsed.evaluated_value else f"{path}: {built.value} != {parsed.value}"
    if isinstance(built, cst.FormattedStringText):
        return None  # escapes spelt or not
    if not isinstance(built, cst.CSTNode):
        return None if built == parsed else f"{path}: {built!r} != {parsed!r}"
    for field in dataclasses.fields(built):
        if field.name in _FORMATTING:
            continue
        mine, theirs = getattr(built, field.name), getattr(parsed, field.name)
        if isinstance(mine, (list, tuple)) or isinstance(theirs, (list, tuple)):
            mine, theirs = _significant(mine), _significant(theirs)
            if len(mine) != len(theirs):
                return f"{path}.{field.name}: {len(mine)} != {len(theirs)} elements"
            for i, (a, b) in enumerate(zip(mine, theirs)):
                found = difference(a, b, f"{path}.{field.name}[{i}]")
                if found:
                    return found
            continue
        if any(isinstance(v, cst.MaybeSentinel) or isinstance(v, cst.CSTNode) and type(v) in TRIVIA
               for v in (mine, theirs)):
            continue
        found = difference(mine, theirs, f"{path}.{field.name}")
        if found:
            return found
    return None


def _built(source: str, blank: bool = False) -> cst.Module:
    tree, lines = ast.parse(source), LINE_RE.findall(source)
    quiet, spans = quiet_code(tree, lines, every_site()) if blank else ([], [])
    return to_cst(tree, lines, quiet, spans)


def _parsed(source: str, blank: bool = False) -> cst.Module:
    tree, lines = ast.parse(source), LINE_RE.findall(source)
    quiet, spans = quiet_code(tree, lines, every_site()) if blank else ([], [])
    return parse_module(blanked(lines, quiet, spans))


EVERY_SHAPE = '''
"""Docstring."""
from __future__ import annotations
import os.path as osp, sys
from . import sibling
from ..pkg.mod import (a as b, c)
from torch import *
x = 1; y = 2
a, *rest = b = [1, *y]
del a, b
del (c)
t: "Tensor" = None
n += 1 ; m <<= 2
assert x, "message"
global_name = -1 + +2 - ~3 ** 4 // 5 % 6 @ m >> 1 << 2 & 3 | 4 ^ 5
flag = not a and b or c and not d or e
chain = a < b <= c > d >= e == f != g is h is not i in j not in k
num = (0x1F, 1_000, 1.5e-3, 2j, 1.0j, ..., None, True, False)
text = ("a" "b", b"bytes", rb"\\d", f"{x!r:>{width}} and {y=} {{braces}}", f"a" "b")
item = d[1], d[1:2], d[::2], d[1, 2], d[(1, 2)], d[()], d[x,], d[..., None], d[:, 0], d[(x,)]
item = d[(6 * i + j), :], d[(a), (b)], d[((a), b)], d[(a),], d[a, (b)], d[(  # (
    a), b]
call = f(a, *b, k=1, **c), g(k=1, *rest), h(x for x in y if x if not x), i()
comps = [x for x in y for z in x], {k: v for k, v in d.items()}, {s for s in t}, (g for g in h)
lam = lambda: 0, lambda a, /, b=1, *c, d, e=2, **f: a, lambda *, k: k
walrus = [y := f(x), y ** 2]
cond = a if b else c
both = {**a, "b": 1}, {1, 2}, [], (), {}


@decorator
@other.decorator(arg)
def function(a, b: int = 1, /, c=2, *args: str, d, e: "x" = 3, **kwargs) -> "Result":
    """Doc."""
    global x
    if a: return
    elif b:
        pass
    else:
        if c:
            pass
    if d:
        pass
    else:
        pass
    for i, (j, k) in enumerate(b):
        continue
    else:
        break
    while x: x -= 1
    while y:
        pass
    else:
        pass
    try:
        pass
    except (ValueError, TypeError) as exc:
        raise RuntimeError("r") from exc
    except Exception:
        raise
    else:
        pass
    finally:
        pass
    with open(a) as f, lock, open(b) as (g, h):
        yield f
    yield from b
    yield
    def inner():
        nonlocal a
        return a
    class Local: pass
    return (yield)


async def coroutine():
    async with a as b:
        await b
    async for item in aiter():
        pass
    return [x async for x in y], await z


class Model(nn.Module, metaclass=Meta, **options):
    attr: int
    value = 1

    def forward(self, x):
        return x


class Empty: ...


match command.split():
    case [action]:
        pass
    case [action, obj, *rest] | (action, obj) | (action), obj if obj:
        pass
    case {"x": x, **others} | Point(1, y=2) | Point() | None | True | -1 | 1 + 2j | "s" | a.b:
        pass
    case (q as r) | [*_] | () | []:
        pass
    case _: pass
match a, b:
    case x, y: pass
'''


def test_every_shape_is_built_as_libcst_parses_it():
    assert difference(_built(EVERY_SHAPE), _parsed(EVERY_SHAPE)) is None


def test_no_node_of_the_built_tree_goes_through_libcsts_constructor(monkeypatch):
    """Every node is made by ``fromast``'s makers: no default factory runs, no node is validated."""
    made = []
    monkeypatch.setattr(cst.CSTNode, "__post_init__", lambda node: made.append(type(node).__name__))
    _built(EVERY_SHAPE)
    assert made == []


def test_shapes_python_does_not_keep_come_from_the_source():
    """``elif`` against ``else: if``, a bare tuple subscript against a parenthesised one, and
    keyword arguments before a star: a builder that ignored the source would get these wrong."""
    built = _built("if a:\n    pass\nelif b:\n    pass\nif c:\n    pass\nelse:\n    if d:\n        pass\n"
                   "x[1, 2]\nx[(1, 2)]\nf(k=1, *a)\nx[(i), :]\n")
    first, second = built.body[0], built.body[1]
    assert isinstance(first.orelse, cst.If) and isinstance(second.orelse, cst.Else)
    assert len(built.body[2].body[0].value.slice) == 2 and len(built.body[3].body[0].value.slice) == 1
    assert [a.star for a in built.body[4].body[0].value.args] == ["", "*"]
    assert [a.keyword is not None for a in built.body[4].body[0].value.args] == [True, False]
    assert len(built.body[5].body[0].value.slice) == 2


def test_unsupported_syntax_is_refused():
    with pytest.raises(Unsupported):
        _built("x[*a]\n")


@pytest.mark.parametrize("path", SOURCES + _torch_sample(25), ids=lambda p: p.name)
def test_real_modules_are_built_as_libcst_parses_them(path, monkeypatch):
    source = path.read_text(encoding="utf-8")
    assert difference(_built(source), _parsed(source)) is None
    # blanked: quiet bodies, slimmed runs, top-level statements (in every module) and table elements
    monkeypatch.setattr(units, "_STATEMENTS_SIZE", 0)
    assert difference(_built(source, blank=True), _parsed(source, blank=True)) is None


TABLE = "import torch\n\nclass Info:\n    pass\n\nTABLE = [\n" + "".join(
    f"    Info('op{i}', (1, {i}), {{'k': [{i}, 2]}}, torch.float32, sample=lambda: {i}),\n" for i in range(700)
) + "]\n\nSCALES = {" + ", ".join(f"'s{i}': ({i}, {i}.5)" for i in range(900)) + "}\n"


def test_blanked_tables_are_built_as_libcst_parses_the_blanked_text():
    tree, lines = ast.parse(TABLE), LINE_RE.findall(TABLE)
    assert quiet_code(tree, lines, every_site())[1], "the table's elements are blanked"
    assert difference(_built(TABLE, blank=True), _parsed(TABLE, blank=True)) is None


test_fixture_findings_equal_with_and_without_the_screen, test_torch_findings_equal_with_and_without_the_screen = \
    same_for_fixtures_and_torch("screen")


def test_the_screen_answers_without_its_safety_net():
    """Every fixture and torch sample is screened without an exception, and the screen says
    "reported" exactly for the modules LibCST's tree has findings in: the equality above is not
    the safety net's."""
    rules = select_rules(ALL_CODES)
    said = {True: 0, False: 0}
    for path in SOURCES + _torch_sample(25):
        source = path.read_text(encoding="utf-8")
        reported = screen_reports(source, str(path), rules, None)
        assert reported == bool(lint_source(source, str(path), ALL_CODES, noqa=False, screen=False)), path
        said[reported] += 1
    assert said[True] >= 5 and said[False] >= 1


# One function reports, the other holds a site and no finding. TAL101's message cites no row;
# TAL201's cites the one the alias was made on (``ctx.cited_line``, which the screen answers).
_COPIES = """

    def copies(x: torch.Tensor) -> torch.Tensor:
        y = x.clone()
        y.mul_(2)
        return y
"""
SPARED = {
    "TAL101": textwrap.dedent("""
        import torch


        def rebuilt(x: torch.Tensor) -> torch.Tensor:
            return torch.tensor(x)
    """) + textwrap.dedent(_COPIES),
    "TAL201": textwrap.dedent("""
        import torch


        def shares(x: torch.Tensor) -> torch.Tensor:
            y = x.detach()
            y.add_(1)
            return x
    """) + textwrap.dedent(_COPIES),
}


@pytest.mark.parametrize("code", sorted(SPARED))
@pytest.mark.parametrize("indexed", [False, True], ids=["module-tree", "index-first-pass"])
def test_libcst_parses_only_the_bodies_the_screen_reported_in(monkeypatch, indexed, code):
    """Where the screen reports, LibCST's parse skips the top-level bodies that hold no report
    (with the module's own tree, or, when the index gave the first pass, with the collapsed
    text's), and the findings are those of LibCST's lint of the whole module."""
    import detachlint.engine as engine
    from detachlint.analysis.project import ModuleView, build_index

    source = SPARED[code]
    project = ModuleView(build_index([(Path("m.py"), source)]), "m") if indexed else None
    parsed = []
    monkeypatch.setattr(engine, "parse_module", lambda text: parsed.append(text) or parse_module(text))
    findings = lint_source(source, "m.py", project=project)
    assert [f.code for f in findings] == [code]
    (text,) = parsed
    assert "y.mul_(2)" not in text and "x.clone()" not in text
    monkeypatch.undo()
    assert findings == lint_source(source, "m.py", project=project, screen=False)


def test_a_screened_module_leaves_no_node_to_the_cyclic_gc():
    """The screen's trees are freed as soon as it finds nothing, by reference counting: no cycle (a
    walker's recursive closure, a builder's tables of its own methods, a visitor class made per
    call) keeps a node alive until the cyclic GC scans them all (``ast.literal_eval``'s own
    closure, which LibCST's ``evaluated_value`` calls, is such a cycle, but it holds no node)."""
    rules = select_rules(ALL_CODES)
    screened = 0
    for path in SOURCES + _torch_sample(25):
        source = path.read_text(encoding="utf-8")
        screen_reports(source, str(path), rules, None)  # imports and caches made once
        gc.collect()
        gc.disable()
        gc.set_debug(gc.DEBUG_SAVEALL)
        try:
            reported = screen_reports(source, str(path), rules, None)
            gc.collect()
            nodes = sum(isinstance(o, (cst.CSTNode, ast.AST)) for o in gc.garbage)
        finally:
            gc.set_debug(0)
            gc.garbage.clear()
            gc.enable()
        if not reported:  # a report unwinds the walk with an exception, and LibCST parses the module anyway
            assert nodes == 0, path
            screened += 1
    assert screened >= 5


REFUSED = textwrap.dedent("""
    import torch

    def scale(w: torch.Tensor, index):
        w.data[*index] = 0
""")


def test_a_module_the_builder_refuses_is_linted_by_libcst():
    assert [f.code for f in lint_source(REFUSED, "m.py")] == ["TAL003"]
