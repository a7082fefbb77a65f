"""A valid file written for a newer Python than the one running detachlint is not a syntax error.

The first pass compiles with the running interpreter, so on 3.11 a PEP 695 ``type X = ...`` is a
SyntaxError; ``frontend/newer.py`` tells it from a broken file with LibCST's parser and reports an
analysis limit (a warning ``--fail-on error`` does not fail on). Every case asserts on every
Python: where the running one reads the syntax, the file is linted as any other (its TAL101);
where it does not, the one TAL999 warning names the line, the version and the syntax. Broken files
that merely look like the newer syntax (``class A[:``, ``type = = 1``) stay errors with Python's
message, and ``type = 3`` is linted as before. The sources are inline, not fixtures: every fixture
is parsed with ``ast`` by other tests, on whatever Python runs them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from test_robustness import ALL, assert_inside, cli, no_traceback

from detachlint.engine import lint_source
from detachlint.findings import PARSE_ERROR_CODE
from detachlint.frontend.firstpass import first_pass
from detachlint.frontend.newer import MAX_LEVELS, nesting_bound

ROOT = Path(__file__).parents[1]
RUNNING = sys.version_info[:2]
HEAD = "import torch\nx = torch.ones(1)\n"
TAIL = "y = torch.tensor(x)\n"  # TAL101 where the file is analysed

# name -> (source, the Python that reads it, what the notice calls it, the row it points at)
NEWER = {
    "type_alias": (HEAD + "type Pair = tuple[int, int]\n" + TAIL, (3, 12), "a `type` alias statement", 3),
    "generic_class": (HEAD + "class Box[T]:\n    item: T\n" + TAIL, (3, 12), "a type parameter list", 3),
    "generic_function": (HEAD + "def first[T: (int, str), *Ts, **P](items: list[T]) -> T:\n    return items[0]\n"
                         + TAIL, (3, 12), "a type parameter list", 3),
    "alias_in_function": (HEAD + "def f():\n    type Local = dict[str, int]\n    return Local\n" + TAIL, (3, 12),
                          "a `type` alias statement", 4),
    "fstring_same_quotes": (HEAD + 'names = {"a": 1}\nlabel = f"{names["a"]}"\n' + TAIL, (3, 12), "an f-string", 4),
    "fstring_backslash": (HEAD + 'label = f"{"\\n".join(["a", "b"])}"\n' + TAIL, (3, 12), "an f-string", 3),
    "fstring_comment": (HEAD + 'label = f"{x  # the tensor\n}"\n' + TAIL, (3, 12), "an f-string", 3),
    "type_param_default": (HEAD + "class Box[T = int]:\n    item: T\n" + TAIL, (3, 13), "a type parameter default", 3),
    "template_string": (HEAD + 'name = "a"\ngreeting = t"hello {name}"\n' + TAIL, (3, 14), "a template string", 4),
    "except_without_parentheses": (HEAD + "try:\n    z = 1\nexcept ValueError, TypeError:\n    z = 2\n" + TAIL,
                                   (3, 14), "`except` without parentheses", 5),
}
# Broken on every Python, though they start like the newer syntax: errors with Python's message.
BROKEN = {
    "class_bracket_unclosed": HEAD + "class A[:\n    pass\n" + TAIL,
    "type_assigned_twice": HEAD + "type = = 1\n" + TAIL,
    "type_alias_without_value": HEAD + "type X =\n" + TAIL,
    "type_parameters_empty": HEAD + "class A[]:\n    pass\n" + TAIL,
    "type_parameter_without_bound": HEAD + "class A[T: ]:\n    pass\n" + TAIL,
    "def_parameters_unclosed": HEAD + "def f[T(x):\n    pass\n" + TAIL,
    "fstring_field_unclosed": HEAD + 'names = {}\nlabel = f"{names["a"]"\n' + TAIL,
    "except_trailing_comma": HEAD + "try:\n    pass\nexcept ValueError,:\n    pass\n" + TAIL,
    "newer_then_broken": HEAD + "type Pair = tuple[int, int]\n" + TAIL + "z = = 1\n",
    "print_statement": HEAD + "print 'x'\n" + TAIL,
}
# Valid on 3.11: ``type`` as a name, brackets after ``class`` as a base's subscript.
VALID = HEAD + ("type = 3\nprint(type(x), type.__name__)\nclass A(list[int]):\n    pass\n"
                "names = {'a': 1}\nlabel = f\"{names['a']}\"\n") + TAIL


def _reads(version) -> bool:
    return RUNNING >= version


def _tal101_only(findings, source):
    return [(f.code, f.location.row) for f in findings] == [("TAL101", source.count("\n"))]


@pytest.mark.parametrize("name", sorted(NEWER))
def test_newer_syntax_is_linted_or_one_notice(name):
    source, version, what, row = NEWER[name]
    findings = lint_source(source, "x.py", ALL)
    if _reads(version):
        assert _tal101_only(findings, source), findings
    else:
        assert len(findings) == 1 and findings[0].code == PARSE_ERROR_CODE, findings
        need, have = "%d.%d" % version, "%d.%d" % RUNNING
        assert findings[0].severity.value == "warning", findings[0]
        assert findings[0].location.row == row, findings[0]
        assert findings[0].message.startswith(f"line {row} uses Python {need} syntax ("), findings[0].message
        assert what in findings[0].message and f"running detachlint ({have}) cannot parse" in findings[0].message
        assert findings[0].message.endswith(f"run detachlint with Python {need} or later")
        assert_inside(findings, source)
        assert lint_source(source, "x.py", ["TAL101"]) == []  # TAL999 not selected: silent


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_a_broken_file_that_looks_newer_stays_an_error(name):
    source = BROKEN[name]
    error = first_pass(source).error
    assert isinstance(error, SyntaxError)
    findings = lint_source(source, "x.py", ALL)
    assert [(f.code, f.severity.value) for f in findings] == [(PARSE_ERROR_CODE, "error")], findings
    assert findings[0].message == f"SyntaxError: {error.msg}" and findings[0].location.row == error.lineno


def test_type_as_a_name_is_linted_as_before():
    assert _tal101_only(lint_source(VALID, "x.py", ALL), VALID)


def test_deep_code_after_newer_syntax_never_reaches_libcst(tmp_path):
    """LibCST's native parser segfaults past 1,000-2,000 nested brackets; Python stops at 200, so it
    rejects this file on every version, and the guard keeps it from LibCST: one error, no crash."""
    deep = "(" * 1500 + "1" + ")" * 1500
    sources = {"deep_brackets": "type X = int\nx = " + deep + "\n",
               "deep_field": 'type X = int\nx = f"{' + deep + '}"\n',
               "deep_cut_field": 'type X = int\nx = f"{g("a", ' + deep + ')}"\n'}
    for name, source in sources.items():
        (tmp_path / f"{name}.py").write_text(source)
        bound = nesting_bound(source)
        assert bound is None or bound > MAX_LEVELS  # None: 3.12's tokenizer stops at 200 brackets
    proc = cli("--output-format", "json", ".", cwd=tmp_path)
    no_traceback(proc)
    assert proc.returncode == 1, proc.stderr[-2000:]  # not -11
    found = json.loads(proc.stdout)
    assert sorted((Path(f["filename"]).stem, f["code"], f["severity"]) for f in found) == [
        (name, PARSE_ERROR_CODE, "error") for name in sorted(sources)]


@pytest.mark.parametrize("levels", [10, 100, 1000])
def test_the_bound_is_never_below_the_nesting(levels):
    """The shapes that crash LibCST's native parser (brackets, unary operators, ``lambda``,
    ``elif`` ladders), inside the f-string and template string fields Python 3.11 cannot see and
    after a quote that ends an f-string early for it: the bound is at least the nesting."""
    brackets = "(" * levels + "1" + ")" * levels
    shapes = ["x = " + brackets, "x = " + "-" * levels + "1", "x = " + "not " * levels + "1",
              "f = " + "lambda: " * levels + "1", "if a:\n    pass\n" + "elif a:\n    pass\n" * levels,
              'x = f"{' + brackets + '}"', 'x = t"{' + brackets + '}"', 'x = f"{g("a", ' + brackets + ')}"',
              'x = f"{' + "not " * levels + '1}"', 'x = f"{g("a", ' + "lambda: " * levels + '1)}"',
              "".join(" " * i + "if a:\n" for i in range(min(levels, 99))) + " " * min(levels, 99) + "pass"]
    for shape in shapes:
        bound = nesting_bound(shape + "\n")
        # None: the tokenizer gave up (3.12's stops at 200 brackets), and LibCST is not asked either
        assert bound >= min(levels, 99) if bound is not None else levels > 200, (shape[:40], bound)


def test_real_code_stays_well_under_the_bound():
    """Long but flat code costs nothing per element: tables, messages, docstrings."""
    table = "x = [" + ", ".join(f"({i}, -{i}, 'a{i}')" for i in range(5000)) + "]\n"
    message = 'raise ValueError(f"expected {x!r} to be one of {", ".join(names)} ' + "word " * 400 + '")\n'
    docstring = 'def f():\n    """' + "word, " * 5000 + '"""\n'
    for source in (table, message, docstring, (ROOT / "detachlint" / "engine.py").read_text()):
        assert nesting_bound(source) < 100


def _project(tmp_path) -> Path:
    """A project with one newer-syntax module whose function writes its argument, called by
    another: the index has no facts of the first, and the second is linted."""
    (tmp_path / "newer.py").write_text(NEWER["type_alias"][0] + "def scale(t):\n    t.mul_(2)\n")
    (tmp_path / "user.py").write_text("import torch\nfrom newer import scale\nx = torch.ones(1)\n"
                                      "y = torch.tensor(x)\nscale(x)\n")
    return tmp_path


def test_cli_goes_on_and_does_not_fail_on_error(tmp_path):
    proc = cli("--fail-on", "error", "--output-format", "json", ".", cwd=_project(tmp_path))
    no_traceback(proc)
    found = sorted((Path(f["filename"]).name, f["code"], f["severity"], f["location"]["row"])
                   for f in json.loads(proc.stdout))
    assert ("user.py", "TAL101", "warning", 4) in found
    if _reads((3, 12)):
        assert ("newer.py", "TAL101", "warning", 4) in found and PARSE_ERROR_CODE not in str(found)
    else:
        assert ("newer.py", PARSE_ERROR_CODE, "warning", 3) in found
        assert [f for f in found if f[0] == "newer.py"] == [("newer.py", PARSE_ERROR_CODE, "warning", 3)]
    assert proc.returncode == 0, (found, proc.stderr[-2000:])


def test_fix_leaves_a_file_it_cannot_read_alone(tmp_path):
    source = NEWER["generic_class"][0]
    path = tmp_path / "newer.py"
    path.write_text(source)
    proc = cli("--fix", "--unsafe-fixes", "newer.py", cwd=tmp_path)
    no_traceback(proc)
    if _reads((3, 12)):
        assert path.read_text() == source.replace("torch.tensor(x)", "x.detach().clone()")
    else:
        assert path.read_text() == source and "TAL999 [warning]" in proc.stdout, proc.stdout


def test_flake8_reports_what_python_reports(tmp_path):
    """flake8 parses with ``ast`` before any plugin runs: on a Python that cannot read the file it
    reports E999 itself and detachlint adds nothing; on one that can, the plugin lints it."""
    (tmp_path / "newer.py").write_text(NEWER["type_alias"][0])
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-m", "flake8", "--select", "TAL,E999", "newer.py"], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=300)
    no_traceback(proc)
    codes = [line.split()[1] for line in proc.stdout.splitlines()]
    assert codes == (["TAL101"] if _reads((3, 12)) else ["E999"]), proc.stdout + proc.stderr[-2000:]


def test_language_server_shows_a_warning(tmp_path):
    pytest.importorskip("pygls")
    from test_lsp_robustness import RawClient

    source = NEWER["generic_function"][0]
    client = RawClient(tmp_path)
    try:
        client.start(tmp_path)
        diagnostics = client.diagnostics_for(client.open(tmp_path / "newer.py", source), timeout=120)
        found = [(d["code"], d["severity"], d["range"]["start"]["line"]) for d in diagnostics["params"]["diagnostics"]]
        if _reads((3, 12)):
            assert found == [("TAL101", 2, source.count("\n") - 1)]
        else:
            assert found == [(PARSE_ERROR_CODE, 2, 2)]  # Warning, on row 3
        assert client.proc.poll() is None
    finally:
        assert client.close() == 0
