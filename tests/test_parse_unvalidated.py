"""The engine's parse skips LibCST's node validation in its own thread only (``engine.parse_module``)."""

import threading
from pathlib import Path

import libcst as cst
import pytest

from detachlint import engine

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.mark.parametrize("path", sorted(FIXTURES.rglob("*.py")), ids=lambda p: p.name)
def test_same_tree_as_libcst(path):
    source = path.read_text(encoding="utf-8")
    try:
        expected = cst.parse_module(source)
    except cst.ParserSyntaxError:
        with pytest.raises(cst.ParserSyntaxError):
            engine.parse_module(source)
        return
    got = engine.parse_module(source)
    assert got.deep_equals(expected)
    assert got.code == source


def test_nodes_built_elsewhere_are_still_validated():
    engine.parse_module("x = 1\n")
    with pytest.raises(cst.CSTValidationError):
        cst.Name("")  # this thread, after a parse


def test_other_threads_validate_while_one_parses(monkeypatch):
    """While one thread is inside the parser, a node that another thread builds is validated."""
    inside, release, seen = threading.Event(), threading.Event(), []
    real = cst.parse_module

    def slow_parse(source, *args, **kwargs):
        inside.set()
        release.wait(10)
        return real(source, *args, **kwargs)

    monkeypatch.setattr(cst, "parse_module", slow_parse)
    parser = threading.Thread(target=engine.parse_module, args=("y = 2\n",))
    parser.start()
    try:
        assert inside.wait(10)
        try:
            cst.Name("")
        except cst.CSTValidationError:
            seen.append("validated")
    finally:
        release.set()
        parser.join(10)
    assert seen == ["validated"]
