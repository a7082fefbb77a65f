"""Blanking the function bodies that can hold no finding (``frontend/units.py``) before LibCST
parses a module leaves every finding as it was; bodies that hold a site are never blanked."""

from __future__ import annotations

import ast
import textwrap

import pytest

from detachlint.analysis.project import ModuleView, build_index, module_name
from detachlint.frontend.units import LINE_RE, blanked, quiet_units
from detachlint.engine import every_site, lint_source

from test_incremental import _torch_sample
from test_precheck import ALL_CODES, SOURCES

SITES = every_site()  # those of every built-in rule


def _quiet_rows(source: str):
    source = textwrap.dedent(source)
    return [(u.first, u.last) for u in quiet_units(ast.parse(source), LINE_RE.findall(source), SITES)]


def _same_either_way(source: str, path: str, project=None, switch: str = "blank") -> None:
    """Findings equal with and without one of ``lint_source``'s shortcuts (``blank``, ``screen``)."""
    for codes in (None, ALL_CODES):
        assert lint_source(source, path, codes, project=project) == \
            lint_source(source, path, codes, project=project, **{switch: False})


def same_for_fixtures_and_torch(switch: str):
    """The fixture and torch-sample tests of ``_same_either_way`` for ``switch``."""

    @pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
    def fixtures(path):
        source = path.read_text(encoding="utf-8")
        _same_either_way(source, str(path), switch=switch)
        _same_either_way(source, str(path), ModuleView(build_index([(path, source)]), module_name(path)[0]), switch)

    @pytest.mark.parametrize("path", _torch_sample(25), ids=lambda p: p.name)
    def torch_sample(path):
        _same_either_way(path.read_text(encoding="utf-8"), path.name, switch=switch)

    return fixtures, torch_sample


test_fixture_findings_equal_with_and_without_blanking, test_torch_findings_equal_with_and_without_blanking = \
    same_for_fixtures_and_torch("blank")


def test_the_fixtures_have_bodies_to_blank_and_bodies_that_stay():
    """The equality above compares something: some fixture bodies are blanked, and every body a
    fixture finding sits in is kept."""
    blanked_bodies = 0
    for path in SOURCES:
        source = path.read_text(encoding="utf-8")
        quiet = quiet_units(ast.parse(source), LINE_RE.findall(source), SITES)
        blanked_bodies += len(quiet)
        for finding in lint_source(source, str(path), ALL_CODES, blank=False):
            assert not any(u.first <= finding.location.row <= u.last for u in quiet), (path, finding)
    assert blanked_bodies >= 10


QUIET = """
import torch

def norm(x: torch.Tensor) -> torch.Tensor:
    total = x.sum()
    return x / total

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(2, 2)

    def forward(self, x):
        for layer in self.layers:
            if layer.active:
                x = layer(x)
        return self.fc(x)
"""


def test_a_body_of_reads_and_fresh_values_is_quiet():
    # ``norm`` and ``forward``; ``__init__`` feeds the class table (``self.fc = ...``)
    assert _quiet_rows(QUIET) == [(5, 6), (14, 17)]


# Each body holds one site (or one thing read module-wide): none is quiet.
LOUD = {
    ".data": "def f(p):\n    return p.data\n",
    "in-place method": "def f(x):\n    x.add_(1)\n",
    "helper named like one": "def f(x):\n    normalize_(x)\n",
    "init": "def f(w):\n    nn.init.normal_(w)\n",
    "out=": "def f(a, b):\n    add(a, a, out=b)\n",
    "inplace=": "def f(x):\n    return relu(x, inplace=True)\n",
    "augmented": "def f(x):\n    x += 1\n",
    "item": "def f(x):\n    x[0] = 1\n",
    "constructor": "def f(x):\n    return torch.tensor(x)\n",
    "legacy": "def f(x):\n    return FloatTensor(x)\n",
    "new_tensor": "def f(x, y):\n    return x.new_tensor(y)\n",
    "detach": "def f(x):\n    return x.detach()\n",
    "state_dict": "def f(m):\n    return m.state_dict()\n",
    "parameters": "def f(m):\n    return list(m.parameters())\n",
    "numpy in place": "def f(a):\n    np.copyto(a, 0)\n",
    "imported as": "from torch import tensor as make\ndef f(x):\n    return make(x)\n",
    "module alias": "import torch\nmake = torch.tensor\ndef f(x):\n    return make(x)\n",
    "star import": "from torch import *\ndef f(x):\n    return anything(x)\n",
    "second name in a loop": "def f(model, opt):\n    for e in range(3):\n        if e:\n            best = model\n",
    "import": "def f(x):\n    import numpy\n    return x\n",
    "class": "def f(x):\n    class A:\n        pass\n    return A\n",
    "global": "def f(x):\n    global y\n    y = x\n",
    "torch shadowed": "def f(torch):\n    return torch\n",
    "copy bound": "def f(x):\n    copy = x\n    return copy\n",
    "hook": "def f(m, h):\n    m.register_forward_hook(h)\n",
    "method sets self": "class A:\n    def f(self, x):\n        self.x = x\n",
    "method registers": "class A:\n    def f(self, x):\n        self.register_buffer('b', x)\n",
}


@pytest.mark.parametrize("name", sorted(LOUD))
def test_a_body_with_a_site_is_kept(name):
    assert _quiet_rows(LOUD[name]) == []


def test_a_renaming_outside_a_choice_in_a_loop_is_quiet():
    assert _quiet_rows("def f(model):\n    best = model\n    return best\n") == [(2, 3)]


def test_blanking_keeps_rows_and_columns():
    source = textwrap.dedent(QUIET)
    lines = LINE_RE.findall(source)
    out = blanked(lines, quiet_units(ast.parse(source), lines, SITES))
    assert out.count("\n") == source.count("\n")
    assert out.splitlines()[4] == "    pass" and out.splitlines()[5] == ""
    assert out.splitlines()[9:11] == source.splitlines()[9:11]  # __init__ kept


def test_a_finding_between_quiet_bodies_keeps_its_position_and_fix():
    source = textwrap.dedent("""\
        import torch

        def first(x):
            return x.sum()

        def train(model):
            for p in model.parameters():
                p.data.mul_(0.5)

        def last(y):
            return y.mean()
        """)
    assert _quiet_rows(source) == [(4, 4), (11, 11)]
    found = lint_source(source, "x.py", ALL_CODES)
    assert [(f.code, f.location.row, f.location.column) for f in found] == [("TAL003", 8, 8)]
    assert found == lint_source(source, "x.py", ALL_CODES, blank=False)


# --- table elements (``quiet_elements``) ---------------------------------------------------------

from detachlint.frontend.units import quiet_elements  # noqa: E402

_PADDING = "".join(f"    Info('op{i}', ref=torch.abs, dtypes=(torch.float32, torch.half), skips=(Skip('x'),)),\n"
                   for i in range(250))  # past the size from which a table's elements are walked


def _table(head: str, elements: str, tail: str = "") -> str:
    return (f"import torch\nfrom helpers import Info, Skip, weight\n{textwrap.dedent(head)}"
            f"TABLE = [\n{textwrap.indent(textwrap.dedent(elements), '    ')}{_PADDING}]\n{textwrap.dedent(tail)}")


def _spans(source: str):
    tree = ast.parse(source)
    lines = LINE_RE.findall(source)
    return {span.row for span in quiet_elements(tree, lines, SITES)}


def test_the_arguments_of_a_large_tables_class_calls_are_blanked():
    source = _table("", "Info('first', ref=torch.abs),\n")
    rows = _spans(source)
    assert 4 in rows and len(rows) == 251
    text = blanked(LINE_RE.findall(source), [], quiet_elements(ast.parse(source), LINE_RE.findall(source), SITES))
    assert text.splitlines()[3] == "    Info(" + " " * len("'first', ref=torch.abs") + "),"
    ast.parse(text)
    _same_either_way(source, "table.py")


# Each element stays, and the findings are the same with and without blanking.
TABLE_TRAPS = {
    # the later read of a base whose view was written (TAL301 names it)
    "read_after_view_write": ("base = torch.zeros(3)\nview = base[0:2]\nview.add_(1)\n", "Info('x', value=base),\n", ""),
    # the owner of a later ``.data`` (TAL001 asks whether it was used before)
    "data_owner_used_before": ("", "Info('x', value=weight),\n", "weight.data.zero_()\n"),
    # a site inside a lambda: reported in the element
    "site_in_a_lambda": ("", "Info('x', op=lambda x: x.data.add_(1)),\n", ""),
    # an element that may alias its argument
    "ordered_dict": ("from collections import OrderedDict\n", "OrderedDict(weight=weight),\n", ""),
    # a name a module-level value may alias, through an import's alias of ``OrderedDict``
    "aliased_through_a_class": ("from collections import OrderedDict as OD\nkept = OD(weight)\n",
                                "Info('x', value=weight),\n", ""),
    # a backward pass
    "backward": ("", "Info('x', op=torch.zeros(1, requires_grad=True).sum().backward()),\n", ""),
    # a backward pass through ``torch.autograd.grad`` under another name
    "grad_under_another_name": ("from torch.autograd import grad as g\n",
                                "Info('x', g=g(torch.ones(1, requires_grad=True).sum(), [])),\n", ""),
    # a name a module-level value may alias, through a comprehension's loop
    "aliased_through_a_comprehension": ("kept = [w for w in (weight,)]\n", "Info('x', value=weight),\n", ""),
    # a name bound by ``:=`` inside a module-level comprehension, which binds in the module
    "bound_in_a_comprehension": ("if any((held := t) for t in (weight,)):\n    pass\n",
                                 "Info('x', value=held),\n", ""),
}


@pytest.mark.parametrize("name", TABLE_TRAPS)
def test_elements_an_analysis_can_see_stay(name):
    head, element, tail = TABLE_TRAPS[name]
    source = _table(head, element, tail)
    row = 2 + head.count("\n") + 2
    assert source.splitlines()[row - 1].strip() == element.strip()
    assert row not in _spans(source)
    _same_either_way(source, "table.py")


def test_the_traps_report_what_they_guard():
    """Two traps are findings whose evidence lies in the element that stays."""
    for name in ("data_owner_used_before", "site_in_a_lambda"):
        head, element, tail = TABLE_TRAPS[name]
        assert lint_source(_table(head, element, tail), "table.py", ALL_CODES), name


def test_an_element_calling_a_project_function_stays(tmp_path):
    """``Wrap`` is a function of the project that returns its argument: what the element makes
    aliases ``base``, so the engine keeps the table's elements whole."""
    source = _table("", "Wrap(base),\n").replace("from helpers import Info, Skip, weight\n",
                                                   "from helpers import Info, Skip, weight\nfrom util import Wrap\n"
                                                   "base = torch.zeros(3)\n")
    files = [(tmp_path / "util.py", "def Wrap(x):\n    return x\n"), (tmp_path / "table.py", source)]
    view = ModuleView(build_index(files), "table")
    assert view.index.function("table", "Wrap") is not None
    _same_either_way(source, str(tmp_path / "table.py"), view)


def test_names_that_are_only_spelt_in_strings_or_loops_do_not_keep_an_element():
    """``backward`` in a skip's reason is no backward pass; a comprehension's loop name (``op``
    below) is gone once the module-level list is made, so it is no state of the module."""
    head = "ops = [op for op in TABLE if op]\n"
    source = _table("", "Info('x', skips=(Skip('sparse backward'),), value=op),\n", head)
    assert 4 in _spans(source)
    _same_either_way(source, "table.py")


# A generated table of numbers (``torch/sparse/_triton_ops_meta.py``).
_NUMBERS = "".join(f"    ('mm', 'A100', (0, torch.int8, {i})): {{(192, {i}, 256): (2, 8, 1, 4), (1, 2): -3}},\n"
                   for i in range(300))


def test_a_literal_tables_tuples_and_dicts_are_blanked_and_its_lists_keep_their_elements():
    source = ("import torch\n"
              f"DATA: dict = {{\n{_NUMBERS}}}\n"
              f"ROWS = [\n{''.join(f'    [{i}, ({i}, 2.0), None],  # {i}' + chr(10) for i in range(700))}]\n"
              f"PAIRS = (\n{''.join(f'    ({i}, -{i}),' + chr(10) for i in range(1500))})\n"
              "rows = torch.tensor(ROWS[0])\n")
    lines = LINE_RE.findall(source)
    text = blanked(lines, [], quiet_elements(ast.parse(source), lines, SITES))
    ast.parse(text)
    out = text.splitlines()
    # a value made of literals goes, a key that reads a name stays
    key, _, value = lines[2].rstrip("\n").partition(": {")
    assert out[2] == key + ": {" + " " * (len(value) - 2) + "},"
    # a list is never emptied (``[]`` has a kind of its own): its tuples go, its numbers stay
    row = out.index("ROWS = [") + 1
    assert out[row] == "    [0, (" + " " * len("0, 2.0") + "), None],  # 0"
    # a tuple made of literals goes whole
    start = out.index("PAIRS = (")
    assert {line.strip() for line in out[start + 1:start + 1501]} == {""} and out[start + 1501] == ")"
    _same_either_way(source, "numbers.py")


# --- top-level statements (``quiet_statements``) ---------------------------------------------------

from detachlint.frontend import units  # noqa: E402
from detachlint.frontend.firstpass import first_pass  # noqa: E402
from detachlint.frontend.units import quiet_statements  # noqa: E402
from detachlint.engine import _quiet_code  # noqa: E402


@pytest.fixture
def any_size(monkeypatch):
    """Top-level statements are analysed in every module, not only in large ones."""
    monkeypatch.setattr(units, "_STATEMENTS_SIZE", 0)


def _as_scripts(path):
    """A fixture's cases as module-level code: each top-level function's body on its own, after
    the file's imports, and all of them in one script (names then meet across cases)."""
    source = path.read_text(encoding="utf-8")
    lines = LINE_RE.findall(source)
    tree = ast.parse(source)
    head = "".join("".join(lines[s.lineno - 1:s.end_lineno]) for s in tree.body
                   if isinstance(s, (ast.Import, ast.ImportFrom)))
    bodies = []
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef):
            body = textwrap.dedent("".join(lines[stmt.body[0].lineno - 1:stmt.end_lineno]))
            try:
                ast.parse(body)  # a docstring less indented than the code does not dedent
            except SyntaxError:
                continue
            bodies.append(body)
    return [head + body for body in bodies] + [head + "".join(bodies)]


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_fixture_cases_as_scripts_lint_the_same_with_top_level_statements_blanked(path, any_size):
    for source in _as_scripts(path):
        _same_either_way(source, "script.py")


SCRIPT = '''\
import torch
import numpy as np
from torch import nn
from torch.autograd import backward as run_backward

"""A training script: a string stays (a fix's import goes after a docstring)."""
model = nn.Linear(2, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
snap = model.state_dict()
w = torch.randn(3)  # not a constant-filled buffer: its view is a copy gone wrong (issue 41)
u = w[0]
w.mul_(2)
print(u)
seed = torch.manual_seed(0)
table = np.ones(3) * 2
torch.set_num_threads(1)
loss = model(torch.ones(2)).sum()
run_backward(loss)
epochs = 3
opt.step()
print(snap["weight"])
'''


def _blank_statements(source):
    lines = LINE_RE.findall(source)
    rows = [row for s in quiet_statements(ast.parse(source), lines, SITES) for row in range(s.row, s.end_row + 1)]
    return [lines[row - 1].split(" =")[0].split("(")[0] for row in rows]  # adjacent statements: one span


def test_a_scripts_statements_that_share_no_name_with_a_site_are_blanked(any_size):
    """What stays: each site, the values its names hold (``model``, ``w``), a view of what is
    written (``u``) and the later reads (``print(u)``), what a backward pass under another name
    reads; what goes reads only modules and binds what nothing else spells."""
    assert _blank_statements(SCRIPT) == ["seed", "table", "torch.set_num_threads", "epochs"]
    found = {(f.code, f.location.row) for f in lint_source(SCRIPT, "script.py", ALL_CODES)}
    assert {("TAL301", 12), ("TAL401", 9)} <= found
    _same_either_way(SCRIPT, "script.py")


@pytest.mark.parametrize("head", [
    "np = x\n",  # the module's name bound to a tensor, by a statement that could go itself
    "from checkpoint import np\n",  # a ``from`` import of the same name
])
def test_a_module_name_bound_otherwise_is_no_module(head, any_size):
    source = f"import torch\nimport numpy as np\nx = torch.zeros(3)\n{head}y = np[0]\nx.add_(1)\nprint(y)\n"
    assert _blank_statements(source) == []
    _same_either_way(source, "script.py")


def test_a_large_generated_module_needs_libcst_for_its_site_alone():
    """At the real threshold: 4,000 ``vN = torch.zeros(k)`` lines, one ``.data`` write."""
    source = "import torch\n" + "".join(f"v{i} = torch.zeros({i % 7 + 1})\n" for i in range(4000)) + "v1.data.add_(1)\n"
    assert sum(len(line) for line in source.splitlines()) > units._STATEMENTS_SIZE
    assert len(_blank_statements(source)) == 3999
    findings = lint_source(source, "generated.py")
    assert [(f.code, f.location.row) for f in findings] == [("TAL003", 4002)]
    _same_either_way(source, "generated.py")


def test_a_statement_calling_a_project_function_stays(tmp_path, any_size):
    """``util.reset()`` reads no name the sites spell, but calls a function of the project (whose
    summary may step an optimizer): the engine keeps the statement."""
    source = "import torch\nimport util\nw = torch.ones(2)\nsnap = w.detach()\nutil.reset()\nprint(snap)\n"
    assert _blank_statements(source) == ["util.reset"]
    files = [(tmp_path / "util.py", "import torch\nopt = None\n\ndef reset():\n    opt.step()\n"),
             (tmp_path / "script.py", source)]
    view = ModuleView(build_index(files), "script")
    assert view.index.function("script", "util.reset") is not None
    assert _quiet_code(source, first_pass(source), view, SITES)[2] == []
    assert _quiet_code(source, first_pass(source), None, SITES)[2] != []
    _same_either_way(source, str(tmp_path / "script.py"), view)


# LibCST parses the blanked module with each run of emptied lines as one (``units.collapsed``); the
# findings come back in the module's rows.
from detachlint.frontend.units import collapsed  # noqa: E402

COLLAPSED = '''\
"""Quiet code before the findings: the rows LibCST sees are fewer than the module's."""
from torch import Tensor, nn
import numpy as np

SEED = 1

SIZES = [1, 2]
WIDTH = 3


def quiet_one(x):
    y = x + 1
    z = y * 2

    return z


def quiet_two(x):
    return x.sum()


def train(model):
    for p in model.parameters():
        p.data.mul_(
            0.5,
        )


def running_max(scores: Tensor):
    best = scores[0]

    scores.mul_(0.5)
    return best


def ignored(model):
    for p in model.parameters():
        p.data.zero_()  # noqa: TAL003
'''


def _collapsed_rows(source: str) -> int:
    """How many rows ``collapsed`` drops from the blanked module; every row it keeps is that row
    of the blanked module, and every row it drops is empty there."""
    lines, quiet, spans = _quiet_code(source, first_pass(source), None, SITES)
    text, rows = collapsed(lines, quiet, spans)
    whole, short = LINE_RE.findall(blanked(lines, quiet, spans)), LINE_RE.findall(text)
    kept = [rows(row) for row in range(1, len(short) + 1)]
    assert kept == sorted(set(kept)) and [whole[row - 1] for row in kept] == short
    assert all(whole[row - 1] in ("\n", "\r\n", "") for row in set(range(1, len(whole) + 1)) - set(kept))
    return len(whole) - len(short)


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_collapsed_runs_of_emptied_lines_keep_positions_messages_fixes_and_noqa(newline, any_size):
    """The import a fix adds goes where it went (before the quiet statements), the continuation
    lines of a multi-line write are each re-indented, a message's "line N" and the related
    places are the module's rows, and the ``noqa`` after the quiet code still silences its line."""
    source = COLLAPSED.replace("\n", newline)
    assert _collapsed_rows(source) == 8
    found = lint_source(source, "m.py", ALL_CODES)
    assert found == lint_source(source, "m.py", ALL_CODES, blank=False)
    assert [(f.code, f.location.row, f.location.column) for f in found] == [("TAL003", 24, 8), ("TAL301", 32, 4)]
    assert [(e.location.row, e.content) for e in found[0].fix.edits if not e.content.strip()][-2:] == \
        [(25, "    "), (26, "    ")]
    assert found[0].fix.edits[0].location.row == 2 and found[0].fix.edits[0].content == "import torch\n"
    assert "(line 30)" in found[1].notes[0] and "line 33" in found[1].notes[0]
    assert [r.location.row for r in found[1].related] == [30, 33]


def test_collapsing_drops_only_empty_lines_of_the_blanked_fixtures():
    assert sum(_collapsed_rows(path.read_text(encoding="utf-8")) for path in SOURCES) > 0


def test_where_libcst_rejects_the_collapsed_module_the_error_is_the_blanked_modules(monkeypatch):
    """LibCST's position of an error is one in the text it was given: for it, the blanked module
    is parsed uncollapsed."""
    import libcst as cst

    import detachlint.engine as engine

    def reject(text):
        last = len(LINE_RE.findall(text))
        raise cst.ParserSyntaxError("rejected", lines=text.splitlines(), raw_line=last, raw_column=0)

    monkeypatch.setattr(engine, "parse_module", reject)
    monkeypatch.setattr(engine, "_may_report", lambda *args: True)
    (finding,) = lint_source(COLLAPSED, "m.py")
    assert (finding.code, finding.location.row) == ("TAL999", len(LINE_RE.findall(COLLAPSED)))
    assert finding == lint_source(COLLAPSED, "m.py", blank=False)[0]


# A body with no site but something read module-wide keeps only the statements that hold it
# (``units._slimmed``); the rest become ``pass``, each run of them one.
from detachlint.frontend.units import quiet_code  # noqa: E402

SLIM = """\
import torch

class Net(torch.nn.Module):
    def __init__(self, n):
        super().__init__()
        size = n * 2
        self.w = torch.zeros(size)
        if n > 3:
            print("large")
            import numpy as np
        elif n > 2:
            print("medium")
        else:
            if n:
                print("small")
        x = 1; import math

    def reset(self):
        self.w.data.zero_()

def setup():
    global STATE
    STATE = 1
    import os

def helpers():
    from torch import tensor as make
    try:
        import scipy
    except ImportError:
        scipy = None
    return make, scipy
"""


def test_a_body_read_only_module_wide_keeps_what_is_read_and_becomes_pass_elsewhere():
    lines = LINE_RE.findall(SLIM)
    bodies, _ = quiet_code(ast.parse(SLIM), lines, SITES)
    out = blanked(lines, bodies)
    rows = out.splitlines()
    assert out.count("\n") == SLIM.count("\n")
    assert rows[4:7] == ["        pass", "", "        self.w = torch.zeros(size)"]  # the class table's
    assert rows[7:15] == ["        if n > 3:", "            pass", "            import numpy as np",
                          "        elif n > 2:", "            pass", "        else:", "            if n:",
                          "                pass"]
    assert rows[15] == "        x = 1; import math"  # shares its line with what stays
    assert rows[17:19] == SLIM.splitlines()[17:19]  # a site: kept whole
    assert rows[20:24] == SLIM.splitlines()[20:24]  # ``global``: kept whole
    assert rows[26:32] == ["    from torch import tensor as make", "    try:", "        import scipy",
                           "    except ImportError:", "        pass", "    pass"]
    compile(out, "<slim>", "exec")
    for codes in (None, ALL_CODES):
        found = lint_source(SLIM, "slim.py", codes)
        assert [f.code for f in found if f.location.row == 19] == ["TAL003"]  # reported as before
        assert found == lint_source(SLIM, "slim.py", codes, blank=False)


CHILDREN_SAMPLE = '''
from __future__ import annotations
import os.path as osp
from .. import sibling
global_name: int = 1
async def f(a, /, b: int = 2, *args, c, d=3, **kw) -> None:
    global g
    async with open(a) as h, b:
        async for x in h:
            await x
    try:
        pass
    except (ValueError, os.error) as exc:
        raise RuntimeError(f"{exc!r:>{a}}") from exc
    merged = {**kw, "z": 1}
    def inner():
        nonlocal b
        b += 1
        return [y async for y in z if (w := y)]
    match a:
        case {"k": 1, **rest}:
            pass
        case Point(x=0, y=[1, *others]) | None:
            pass
        case [_, (q as r)]:
            pass
    return lambda *, k=1: {k: v for k, v in kw.items()} or {1, 2} or (yield)
@decorator(1)
class C(Base, metaclass=M):
    x = t[1:2, ::3] if not a and b else -c
    del x
    assert a is not b, "message"
    for i in range(3):
        continue
    else:
        break
    while i < 3 <= 4:
        i = j = k
'''


def test_child_nodes_are_the_node_children_but_contexts_and_operators():
    """``child_nodes`` skips what can hold no node (contexts, operators, and fields of names and
    flags such as ``Name.id``): never a node that ``ast.iter_child_nodes`` yields otherwise."""
    import ast

    from detachlint.frontend.units import _generic_children, child_nodes

    leaves = (ast.expr_context, ast.operator, ast.unaryop, ast.boolop, ast.cmpop)
    sources = [CHILDREN_SAMPLE] + [p.read_text(encoding="utf-8") for p in SOURCES]
    seen = set()
    for source in sources:
        for node in ast.walk(ast.parse(source)):
            seen.add(type(node))
            expected = [c for c in ast.iter_child_nodes(node) if not isinstance(c, leaves)]
            assert [id(c) for c in child_nodes(node)] == [id(c) for c in expected], ast.dump(node)[:200]
            # the general walk, for a class whose docstring states no grammar, answers alike
            assert [id(c) for c in _generic_children(type(node), node)] == [id(c) for c in expected]
    assert {ast.Name, ast.Attribute, ast.Constant, ast.keyword, ast.arg, ast.alias, ast.ImportFrom, ast.Global,
            ast.Nonlocal, ast.FormattedValue, ast.comprehension, ast.ExceptHandler, ast.MatchAs,
            ast.MatchMapping, ast.MatchStar, ast.MatchClass} <= seen


def test_source_lines_are_line_re_lines():
    """``source_lines`` (``readlines``) splits exactly as ``LINE_RE`` says a line ends: at ``\\r\\n``,
    ``\\r`` and ``\\n`` only, each line keeping its break, the last one without one."""
    from detachlint.frontend.units import LINE_RE, source_lines

    for text in ("", "x", "a\nb", "a\nb\n", "a\r\nb\rc\n", "\n\n", "\r\r\n\n", "a\x0cb\nc\u2028d\x1ce\n",
                 "x = '\ud800'\r\n", "tail without break\r", "def f():\r\n    return 1"):
        assert source_lines(text) == LINE_RE.findall(text), repr(text)
