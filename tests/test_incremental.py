"""Re-linting an edited buffer by its top-level functions gives the whole module's findings."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from detachlint.analysis.project import ModuleView, build_index, module_name
from detachlint.engine import lint_source
from detachlint.incremental import UnitCache, blanked, differences, units

from test_precheck import ALL_CODES, SOURCES

ROOT = Path(__file__).parents[1]


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_units_equal_the_whole_module_on_fixtures(path):
    source = path.read_text(encoding="utf-8")
    project = ModuleView(build_index([(path, source)]), module_name(path)[0])
    for codes, view in ((ALL_CODES, None), (ALL_CODES, project)):
        assert differences(source, str(path), codes, view) == []


def _torch_sample(n: int):
    spec = importlib.util.find_spec("torch")
    if spec is None or spec.origin is None:
        return []
    root = Path(spec.origin).parent
    files = sorted(p for p in root.rglob("*.py"))
    return [files[i * len(files) // n] for i in range(n)]


@pytest.mark.parametrize("path", _torch_sample(15), ids=lambda p: p.name)
def test_units_equal_the_whole_module_on_torch(path):
    source = path.read_text(encoding="utf-8")
    assert differences(source, path.name, ALL_CODES) == []


MODULE = '''\
import torch

def first(p):
    loss = (p * p).sum()
    p.data.mul_(2)
    loss.backward()

@torch.no_grad()
def second(w):
    w.data.add_(1)

def third(x):
    y = x.detach()
    y.add_(1)
    return x
'''


def test_an_edit_inside_one_function_relints_only_that_function():
    cache = UnitCache()
    assert cache.lint(MODULE, "m.py", ALL_CODES) == lint_source(MODULE, "m.py", ALL_CODES)
    assert cache.partial_lints == 0
    edited = MODULE.replace("p.data.mul_(2)", "p.data.mul_(3)")
    assert cache.lint(edited, "m.py", ALL_CODES) == lint_source(edited, "m.py", ALL_CODES)
    assert cache.partial_lints == 1
    fixed = MODULE.replace("    y.add_(1)\n", "    y = y + 1\n")  # a finding goes away
    assert cache.lint(fixed, "m.py", ALL_CODES) == lint_source(fixed, "m.py", ALL_CODES)
    assert cache.partial_lints == 2
    assert cache.lint(MODULE, "m.py", ALL_CODES) == lint_source(MODULE, "m.py", ALL_CODES)
    assert cache.partial_lints == 2  # every part cached
    # the context changes (an import): the whole module again, every key new
    moved = MODULE.replace("import torch\n", "import torch as T\nimport torch\n")
    assert cache.lint(moved, "m.py", ALL_CODES) == lint_source(moved, "m.py", ALL_CODES)
    assert cache.partial_lints == 2


def test_blanking_keeps_rows_and_columns():
    lines, found = units(MODULE)
    assert [(u.first, u.last) for u in found] == [(4, 6), (10, 10), (13, 15)]
    text = blanked(lines, found, keep=found[1])
    assert len(text.splitlines()) == len(MODULE.splitlines())
    assert text.splitlines()[9] == MODULE.splitlines()[9] and text.splitlines()[3] == "    pass"
    assert units("def f(): return 1\n")[1] == []  # a body on the header's line is context
    assert units("def f(:\n") is None
