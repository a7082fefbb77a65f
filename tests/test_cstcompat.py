"""Where LibCST's private API fails (``detachlint/cstcompat.py``), the findings stay the same and
one warning says so: each touchpoint is made to fail here, as a new LibCST might."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import List, Tuple

import libcst as cst
import pytest
from libcst.metadata import CodePosition, CodeRange

from detachlint import cstcompat, walk
from detachlint.engine import lint_source
from detachlint.rules import ALL_RULES

FIXTURE = Path(__file__).parent / "fixtures" / "tal301_view_alias_mutation.py"
CODES = [r.code for r in ALL_RULES]
_REAL_READ = cstcompat._read_visit_order


def _findings():
    return lint_source(FIXTURE.read_text(encoding="utf-8"), str(FIXTURE), CODES)


@pytest.fixture(scope="module")
def expected():
    found = _findings()
    assert any(f.code == "TAL301" for f in found)
    return found


@pytest.fixture
def fresh(monkeypatch, caplog):
    """Warnings captured, LibCST's ``__post_init__`` restored after the test whatever it does,
    and what the process learnt of LibCST forgotten."""
    monkeypatch.setattr(cst.CSTNode, "__post_init__", cst.CSTNode.__post_init__)
    caplog.set_level(logging.WARNING, logger="detachlint")
    _forget(monkeypatch)
    return caplog


def _forget(monkeypatch) -> None:
    """Every verdict, warning and cached order forgotten (all restored after the test)."""
    for module, name in [(cstcompat, "_VERDICTS"), (cstcompat, "_ORDERS"), (walk, "_CHILD_FIELDS"),
                         (walk, "_PLAN_CACHE"), (walk, "_UNHOOKED_PLANS"), (walk, "_INERT")]:
        monkeypatch.setattr(module, name, {})
    monkeypatch.setattr(cstcompat, "_WARNED", set())
    monkeypatch.setattr(cstcompat, "_SAMPLE_TREE", [])


def _warnings(caplog) -> List[str]:
    return [r.getMessage() for r in caplog.records if r.name == "detachlint" and r.levelno == logging.WARNING]


TRICKY = cstcompat.SAMPLE + cstcompat._PEP_695 + '''
x = (a)[b] if [c, d] else {e: f}
'''


class _Recorder:
    def __init__(self, parents: List[cst.CSTNode], skip_trivia: bool) -> None:
        self.events: List[Tuple[str, int, Tuple[int, ...]]] = []
        self.parents = parents
        self.skip_trivia = skip_trivia

    def __getattr__(self, name: str):
        if not name.startswith(("visit_", "leave_")) or (self.skip_trivia and name.split("_")[1] in walk.TRIVIA_NAMES):
            raise AttributeError(name)

        def hook(node):
            self.events.append((name, id(node), tuple(map(id, self.parents))))
            if name == "visit_FunctionDef" and node.name.value == "inner":
                return False  # honoured or not, as the walker is told

        return hook


def _walk_through_libcst(monkeypatch) -> None:
    """As where the fast walk disagreed with LibCST's on the sample, trivia skipped or not."""
    monkeypatch.setitem(cstcompat._VERDICTS, "the walker", False)
    monkeypatch.setitem(cstcompat._VERDICTS, "the walker over trivia", False)


def _events(module: cst.Module, skip_trivia: bool, honour_false: bool, prune: Tuple[type, ...]):
    parents: List[cst.CSTNode] = []
    recorder = _Recorder(parents, skip_trivia)
    walk.Walker([recorder], parents=parents, honour_false=honour_false, skip_trivia=skip_trivia,
                prune=prune).walk(module)
    assert parents == []
    return recorder.events


def test_no_warning_and_every_private_way_taken_where_libcst_is_as_expected(fresh, expected):
    assert _findings() == expected
    assert _warnings(fresh) == []
    assert cstcompat._VERDICTS == {"the walker": True, "the parser": True, "the position look-up": True}


def test_the_checks_run_before_a_fork(fresh):
    """``engine.check_libcst``: what a process about to fork its workers runs, so that they
    inherit the verdicts."""
    from detachlint.engine import check_libcst

    check_libcst()
    assert cstcompat._VERDICTS == {"the walker": True, "the parser": True, "the position look-up": True}
    assert cstcompat._ORDERS[cst.MatchCase] is not None  # the sample's classes, read once for all
    assert _warnings(fresh) == []


# --- the visit order ---

def test_source_unavailable(fresh, monkeypatch, expected):
    """The issue's case: the source of ``_visit_and_replace_children`` cannot be read (a LibCST
    installed without its .py files). It once gave an empty order, and no finding."""
    def unavailable(function):
        raise OSError("could not get source code")

    monkeypatch.setattr(cstcompat, "_source_of", unavailable)
    assert _findings() == expected
    [warning] = _warnings(fresh)
    assert "visit order" in warning and "OSError" in warning and "public API" in warning


def test_source_of_another_shape(fresh, monkeypatch, expected):
    """The method is there but says nothing this reader understands: every class reads as having
    no children, which the fields the class declares contradict."""
    monkeypatch.setattr(cstcompat, "_source_of", lambda function: "def f(self, visitor):\n    return self\n")
    assert _findings() == expected
    [warning] = _warnings(fresh)
    assert "visit order" in warning


def _reversed_order(cls):
    order, present = _REAL_READ(cls)
    return tuple(reversed(order)), present


def _none_visited_only_when_present(cls):
    order, present = _REAL_READ(cls)
    return order, frozenset()


@pytest.mark.parametrize("misread", [_reversed_order, _none_visited_only_when_present])
def test_order_read_wrong(fresh, monkeypatch, expected, misread):
    """An order that has every field but not LibCST's, or attribute hooks for fields LibCST
    skips when absent: only the comparison with ``module.visit`` on the samples can tell, and
    then nothing is walked the fast way."""
    module = cst.parse_module(TRICKY)
    events = _events(module, False, False, ())
    _forget(monkeypatch)
    monkeypatch.setattr(cstcompat, "_read_visit_order", misread)
    assert _findings() == expected
    [warning] = _warnings(fresh)
    assert "fast walker's event" in warning
    assert _events(module, False, False, ()) == events


def test_the_order_of_trivia_is_checked_where_a_walk_first_includes_trivia(fresh, monkeypatch, expected):
    """No built-in rule or analysis walks trivia: a wrong order of trivia fields costs the engine
    nothing, and is found, and walked around, where a walk first includes trivia."""
    module = cst.parse_module(TRICKY)
    events = _events(module, False, False, ())
    _forget(monkeypatch)
    monkeypatch.setattr(cstcompat, "_read_visit_order",
                        lambda cls: _reversed_order(cls) if cls in walk.TRIVIA else _REAL_READ(cls))
    assert _findings() == expected
    assert _warnings(fresh) == []
    assert _events(module, False, False, ()) == events
    [warning] = _warnings(fresh)
    assert "the walker over trivia falls back" in warning


def test_warned_once_per_process(fresh, monkeypatch, expected):
    monkeypatch.setattr(cstcompat, "_source_of", lambda function: "")
    assert _findings() == expected
    assert _findings() == expected
    assert len(_warnings(fresh)) == 1


# --- the parse without validation ---

def test_no_post_init(fresh, monkeypatch, expected):
    """A LibCST that validates some other way than ``CSTNode.__post_init__``."""
    libcst_own = cstcompat._VALIDATE
    monkeypatch.setattr(cst.CSTNode, "__post_init__", libcst_own)
    monkeypatch.setattr(cstcompat, "_VALIDATE", None)
    assert _findings() == expected
    [warning] = _warnings(fresh)
    assert "__post_init__" in warning and "the parser" in warning
    assert cst.CSTNode.__post_init__ is libcst_own  # nothing patched
    with pytest.raises(cst.CSTValidationError):
        cst.Name("")


def test_post_init_cannot_be_replaced(fresh, monkeypatch, expected):
    libcst_own = cst.CSTNode.__post_init__

    def refuse(hook):
        raise TypeError("can't set attributes of this type")

    monkeypatch.setattr(cstcompat, "_install", refuse)
    assert _findings() == expected
    [warning] = _warnings(fresh)
    assert "TypeError" in warning
    assert cst.CSTNode.__post_init__ is libcst_own
    with pytest.raises(cst.CSTValidationError):
        cst.Name("")  # validation on


def test_post_init_that_does_more_than_validate(fresh, monkeypatch, expected):
    """A LibCST whose ``__post_init__`` does work the tree needs (here: on the samples' comment),
    which skipping it would leave undone."""
    validate = cstcompat._VALIDATE

    def post_init(node):
        validate(node)
        if isinstance(node, cst.Comment) and node.value == "# a comment":
            object.__setattr__(node, "value", "# made by __post_init__")

    monkeypatch.setattr(cstcompat, "_VALIDATE", post_init)
    monkeypatch.setattr(cst.CSTNode, "__post_init__", post_init)
    assert _findings() == expected
    [warning] = _warnings(fresh)
    assert "differs from the validated parse" in warning
    assert cst.CSTNode.__post_init__ is post_init  # LibCST's own, put back
    assert cstcompat.parse_module("# a comment\n").header[0].comment.value == "# made by __post_init__"


# --- positions ---

def test_position_method_gone(fresh, monkeypatch, expected):
    monkeypatch.setattr(cstcompat, "_POSITION_GEN", "_gen_renamed")
    assert _findings() == expected
    [warning] = _warnings(fresh)
    assert "AttributeError" in warning and "position" in warning


def test_positions_read_wrong(fresh, monkeypatch, expected):
    real = cstcompat._gen_positions

    def a_line_off(wrapper):
        return {node: CodeRange(CodePosition(r.start.line + 1, r.start.column), CodePosition(r.end.line + 1, r.end.column))
                for node, r in real(wrapper).items()}

    monkeypatch.setattr(cstcompat, "_gen_positions", a_line_off)
    assert _findings() == expected
    [warning] = _warnings(fresh)
    assert "differs from MetadataWrapper.resolve" in warning


# --- the walker through LibCST's visit: the same events ---

@pytest.mark.parametrize("skip_trivia", [False, True])
@pytest.mark.parametrize("honour_false", [False, True])
@pytest.mark.parametrize("prune", [(), (cst.BaseExpression,), walk.STATEMENTS_ONLY])
def test_walking_through_libcst_fires_the_fast_walks_events(fresh, monkeypatch, skip_trivia, honour_false, prune):
    module = cst.parse_module(TRICKY)
    fast = _events(module, skip_trivia, honour_false, prune)
    _walk_through_libcst(monkeypatch)
    assert _events(module, skip_trivia, honour_false, prune) == fast


def test_a_class_of_unknown_order_is_walked_by_libcst_inside_a_fast_walk(fresh, monkeypatch):
    module = cst.parse_module(TRICKY)
    fast = _events(module, False, True, ())
    _forget(monkeypatch)
    unknown = {cst.Call, cst.If, cst.MatchCase}

    def read(cls):
        if cls in unknown:
            raise OSError("could not get source code")
        return _REAL_READ(cls)

    monkeypatch.setattr(cstcompat, "_read_visit_order", read)
    assert _events(module, False, True, ()) == fast
    assert all(cstcompat._ORDERS[c] is not None for c in (cst.Module, cst.Name))  # the rest fast
    assert cstcompat._VERDICTS["the walker over trivia"] is True
    assert len(_warnings(fresh)) == 1


def test_children_through_libcst(fresh, monkeypatch):
    module = cst.parse_module(TRICKY)
    _walk_through_libcst(monkeypatch)
    stack = [module]
    while stack:
        node = stack.pop()
        assert walk.children(node) == list(node.children)
        stack.extend(node.children)
    assert walk._CHILD_FIELDS and set(walk._CHILD_FIELDS.values()) == {None}


def test_every_node_class_reads_its_declared_fields():
    """The check on what is read (every field declared to hold nodes, nothing else) holds for
    every node class of the installed LibCST: it fails only where LibCST changed."""
    classes = {c for c in walk._subclasses(cst.CSTNode) if hasattr(c, "_visit_and_replace_children")
               and cst.CSTNode in c.__mro__ and c.__dataclass_fields__ and not getattr(c, "__abstractmethods__", None)}
    assert len(classes) > 200
    assert [c for c in classes if _REAL_READ(c) is None] == []
