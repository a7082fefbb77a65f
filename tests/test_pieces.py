"""A large module's first pass a piece at a time (``firstpass.first_pass_in_pieces``): the same
facts and findings as from Python's tree of the whole module, which is never built."""

from __future__ import annotations

import pytest

from detachlint import engine
from detachlint.analysis import project
from detachlint.frontend import firstpass, units
from detachlint.analysis.project import module_facts
from detachlint.engine import every_site, lint_source

from test_incremental import _torch_sample
from test_precheck import ALL_CODES, SOURCES
from test_units import SCRIPT, SLIM, _as_scripts


@pytest.fixture
def in_pieces(monkeypatch):
    """Every module is read in pieces, as small as they can be, and its top-level statements are
    analysed whatever its size."""
    monkeypatch.setattr(engine, "PIECES_SIZE", 0)
    monkeypatch.setattr(project, "PIECES_SIZE", 0)
    monkeypatch.setattr(firstpass, "_CHUNK_SIZE", 1)
    monkeypatch.setattr(units, "_STATEMENTS_SIZE", 0)


def _sources():
    out = [(p.name, p.read_text(encoding="utf-8")) for p in SOURCES]
    out += [(f"{p.name}:script{i}", s) for p in SOURCES for i, s in enumerate(_as_scripts(p))]
    out += [("script", SCRIPT), ("slim", SLIM), ("future and global", FUTURE_AND_GLOBAL)]
    return out + [(p.name, p.read_text(encoding="utf-8")) for p in _torch_sample(12)]


# What only the compiler checks across the whole module (the placement of a future import, a
# ``global`` after a use): read in pieces all the same, with the same facts and findings.
FUTURE_AND_GLOBAL = """\
from __future__ import annotations

import torch

_cache = None


def remember(p: torch.Tensor) -> torch.Tensor:
    global _cache
    _cache = p.detach()
    _cache.add_(1)
    return p


global _cache
x = torch.zeros(3)
y = x.detach()
y.add_(1)
print(x)
"""


def _facts_and_findings(source):
    facts = module_facts(source, "m", vocabulary=every_site())
    return (facts.to_json() if facts is not None else None,
            [lint_source(source, "m.py", codes) for codes in (None, ALL_CODES)])


def test_facts_and_findings_in_pieces_equal_the_whole_modules(monkeypatch):
    sources = _sources()
    monkeypatch.setattr(units, "_STATEMENTS_SIZE", 0)
    whole = [_facts_and_findings(source) for _, source in sources]
    monkeypatch.setattr(engine, "PIECES_SIZE", 0)
    monkeypatch.setattr(project, "PIECES_SIZE", 0)
    monkeypatch.setattr(firstpass, "_CHUNK_SIZE", 1)
    read = []
    monkeypatch.setattr(firstpass, "pieces", lambda s, each=None, pieces=firstpass.pieces: read.append(
        pieces(s, each)) or read[-1])
    for (name, source), expected in zip(sources, whole):
        assert _facts_and_findings(source) == expected, name
    assert sum(len(r) > 1 for r in read if r is not None) > len(sources)  # the pieces were many


def test_a_piece_that_does_not_parse_alone_is_joined_with_the_next(in_pieces):
    source = "import torch\nx = '''\nclass A:\n'''\ndef f(p):\n    p.data.add_(1)\nelse_ = 1\n"
    assert [source[b:e] for b, e in firstpass.pieces(source)] == [
        "import torch\n", "x = '''\nclass A:\n'''\n", "def f(p):\n    p.data.add_(1)\n", "else_ = 1\n"]
    assert [f.code for f in lint_source(source, "m.py")] == ["TAL003"]


@pytest.mark.parametrize("header", ["", "from __future__ import annotations\n"])
def test_a_large_module_with_a_site_is_never_parsed_whole(monkeypatch, header):
    """Above ``PIECES_SIZE``, neither the engine nor the project index asks Python for the
    whole module's tree; the site is reported and the statements that share no name with it are
    blanked. A future import (atop most modern modules, generated ones too) changes none of it:
    its tree was 2 GB on the generated 9.9 MB module."""
    rows = [f"v{i} = torch.zeros(k)\n" for i in range(100_000)]
    source = header + "import torch\nk = 3\nw = torch.ones(3)\n" + "".join(rows) + "w.data.add_(1)\n"
    shift = header.count("\n")
    assert len(source) > firstpass.PIECES_SIZE

    def whole(text):
        assert text != source, "the whole module parsed"
        return parse(text)

    parse = firstpass.first_pass
    monkeypatch.setattr(firstpass, "first_pass", whole)
    monkeypatch.setattr(engine, "first_pass", whole)
    found = lint_source(source, "big.py")
    assert [(f.code, f.location.row) for f in found] == [("TAL003", 100_004 + shift)]
    facts = module_facts(source, "big", vocabulary=every_site())
    assert facts is not None and facts.deep is None
    blank = {row for span in facts.elements for row in range(span.row, span.end_row + 1)}
    assert blank == set(range(4 + shift, 100_004 + shift)) | {2 + shift}  # ``k = 3`` too: nothing that stays reads it
