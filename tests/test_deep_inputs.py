"""Code nested deeper than LibCST or detachlint's walkers can take never crashes a surface.

LibCST's native parser segfaults on some valid Python (a 12,500-operand ``or`` chain, a long
``elif`` ladder) and the recursive walkers raise RecursionError earlier still. The first pass
(``frontend/firstpass.py``) measures every file on Python's own tree and reports one TAL999 for
it instead. A file Python's parser rejects never reaches LibCST's native parser, which recurses
per level on invalid code too (5,000 ``a(`` lines at column 0 segfaulted it): its TAL999 is
Python's own message. Each shape goes through the engine here, and through every surface at least
once: ``detachlint check`` with one job, with two, from stdin, flake8 (subprocesses) and the
language server.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from detachlint.frontend.firstpass import MAX_FRAMES, MAX_LOOPS, first_pass, too_deep
from detachlint.engine import lint_source, physical_lines
from detachlint.analysis.project import ModuleView, build_index
from detachlint.frontend.units import LINE_RE
from detachlint.findings import PARSE_ERROR_CODE

from test_robustness import ALL, assert_inside

ROOT = Path(__file__).parents[1]
DEEP = "too deeply nested"
PARENS = "too many nested parentheses"  # Python's own verdict (its tokenizer stops at 200 levels)
INVALID = "SyntaxError: invalid syntax"  # Python's own verdict

# name -> (source, what the TAL999 says, the line it points at or None)
SHAPES = {
    "or_chain": ("import torch\nx = " + " or ".join(["a"] * 12500) + "\n", DEEP, 2),
    "and_chain_in_function": ("import torch\ndef f(a):\n    return " + " and ".join(["a"] * 9000) + "\n", DEEP, 3),
    "parens_at_column_0": ("import torch\n" + "(\n" * 5000 + "1" + ")" * 5000 + "\n", PARENS, None),
    "lists_at_column_0": ("import torch\n" + "[\n" * 5000 + "]" * 5000 + "\n", PARENS, None),
    # Python rejects these; each segfaulted LibCST's native parser when it was asked for the
    # message: a name at column 0 looked like a new statement to a bracket count
    "calls_opened_at_column_0": ("import torch\n" + "a(\n" * 5000, PARENS, 202),
    "or_lines_then_syntax_error": ("import torch\nx = (\n" + "a or\n" * 20000 + "a)\nx = = 1\n", INVALID, 20004),
    "lambda_lines_then_syntax_error": ("import torch\nf = (\n" + "lambda:\n" * 1000 + "1)\nx = = 1\n", INVALID, 1004),
    "elif_ladder_then_syntax_error": ("import torch\nif x:\n    pass\n" + "elif x:\n    pass\n" * 5000 + "x = = 1\n",
                                      INVALID, 10004),
    "lambda_chain": ("import torch\nf = " + "lambda: " * 5000 + "1\n", DEEP, None),
    "elif_ladder_340kb": ("import torch\nx = 0\nif x == 0:\n    y = 0\n"
                          + "".join(f"elif x == {i}:\n    y = {i}\n" for i in range(1, 12000)), DEEP, None),
    "elif_ladder_python_takes": ("import torch\nx = 0\nif x == 0:\n    y = 0\n"
                                 + "".join(f"elif x == {i}:\n    y = {i}\n" for i in range(1, 1000)), DEEP, None),
    "deep_expression": ("import torch\nx = " + "-" * 2000 + "torch.ones(1)\n", DEEP, 2),
    "attribute_chain": ("import torch\nx = torch" + ".t" * 450 + "\n", DEEP, 2),
    "concatenated_strings": ("import torch\nx = " + " ".join(['"a"'] * 3000) + "\n", DEEP, 2),
    "nested_for_loops": ("import torch\ndef f(a):\n" + "".join("    " * (i + 1) + "for a in a:\n" for i in range(20))
                         + "    " * 21 + "a.add_(1)\n", DEEP, None),
}
# Each shape also holds a constructor call, so that the pre-check sends it to the parser (a file
# with nothing to report is never parsed by LibCST, however deep).
SHAPES = {name: (source + "w = torch.tensor(v)\n", message, row) for name, (source, message, row) in SHAPES.items()}
LONG_LINE = "import torch\nx = [" + ", ".join(["torch.ones(1)"] * 20000) + "]\ny = torch.tensor(x[0])\n"
NORMAL = "import torch\nx = torch.ones(1)\ny = torch.tensor(x)\n"  # one TAL101 on row 3


def _python_gives_up(source: str) -> bool:
    return first_pass(source).gave_up


def _limit(name: str) -> bool:
    """Valid code that detachlint's parser or analyses cannot take: an analysis limit, a warning
    (issue 41); what Python itself rejects or gives up on stays an error, as in ruff."""
    source, message, _ = SHAPES[name]
    return message == DEEP and not _python_gives_up(source)


def _check_one(findings, source, message, row, limit):
    assert [f.code for f in findings] == [PARSE_ERROR_CODE], findings
    assert message in findings[0].message, findings[0].message
    assert findings[0].severity.value == ("warning" if limit else "error"), findings[0]
    if row is not None:
        assert findings[0].location.row == row
    assert_inside(findings, source)


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_engine_reports_one_tal999_quickly(name):
    source, message, row = SHAPES[name]
    start = time.perf_counter()
    _check_one(lint_source(source, "x.py", ALL), source, message, row, _limit(name))
    assert time.perf_counter() - start < 30
    assert lint_source(source, "x.py", ["TAL001"]) == []  # TAL999 not selected: silent


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_the_index_first_pass_is_the_engines(tmp_path, name):
    """A file the project index parsed is not parsed by Python again: the index's verdict on
    its tree stands in for the first pass, with the same findings; a changed text is parsed."""
    source = SHAPES[name][0] + "def g():\n    pass\n"
    path = tmp_path / "shape.py"
    view = ModuleView(build_index([(path, source)]), "shape")
    known = view.first_pass(source)
    # None where Python cannot parse it, or where the index's own scan gave up (an elif ladder
    # deeper than the recursion limit): then the engine parses it itself
    assert known is None or known.compiles and first_pass(source).tree is not None
    assert known is not None or name in ("parens_at_column_0", "lists_at_column_0", "lambda_chain",
                                         "elif_ladder_340kb", "elif_ladder_python_takes",
                                         "calls_opened_at_column_0", "or_lines_then_syntax_error",
                                         "lambda_lines_then_syntax_error", "elif_ladder_then_syntax_error")
    assert lint_source(source, "x.py", ALL, project=view) == lint_source(source, "x.py", ALL)
    assert view.first_pass(source + "\n") is None


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_the_measure_takes_lines_with_or_without_their_breaks(newline):
    """The index measures with the lines it splits for blanking (``LINE_RE``: breaks kept), the
    engine with physical lines: the same verdicts, a long string's pieces counted alike."""
    sources = [SHAPES[name][0].replace("\n", newline) for name in sorted(SHAPES)] + [
        "x = (" + newline.join(f'"a{i}"' for i in range(3000)) + ")" + newline,
        "x = (" + newline.join("'a'" for _ in range(80)) + ")" + newline,  # short but for its breaks
        "def f():" + newline + "    return [" + newline + ("        'ä' 'b'," + newline) * 400 + "    ]" + newline]
    measured = 0
    for source in sources:
        tree = first_pass(source).tree
        if tree is None:
            continue
        for limit in (MAX_FRAMES, 60, 25):
            assert too_deep(tree, physical_lines(source), limit) == too_deep(tree, LINE_RE.findall(source), limit)
            measured += 1
    assert measured >= 3 * 6


def test_a_long_line_is_linted_not_refused():
    codes = [f.code for f in lint_source(LONG_LINE, "x.py", ALL)]
    assert "TAL101" in codes and PARSE_ERROR_CODE not in codes


def test_just_below_the_limits_is_linted():
    # a chain of unary operators (3 frames each) just below MAX_FRAMES, and MAX_LOOPS nested
    # loops, still get their findings
    deep = "import torch\nx = " + "-" * (MAX_FRAMES // 3 - 10) + "torch.ones(1)\ny = torch.tensor(x)\n"
    assert [f.code for f in lint_source(deep, "x.py", ALL)] == ["TAL101"]
    loops = ("import torch\ndef f(a):\n    b = a\n" + "".join("    " * (i + 1) + "for c in a:\n" for i in range(MAX_LOOPS))
             + "    " * (MAX_LOOPS + 1) + "a.add_(1)\n    print(b)\n")
    assert PARSE_ERROR_CODE not in [f.code for f in lint_source(loops, "x.py", ALL)]


def _cli(args, cwd, stdin=None):
    env = dict(os.environ, PYTHONPATH=str(ROOT), NO_COLOR="1")
    env.pop("DETACHLINT_CACHE_DIR", None)
    return subprocess.run([sys.executable, "-m", "detachlint", "check", "--no-cache", *args], cwd=cwd, env=env,
                          input=stdin, capture_output=True, text=True, timeout=600)


def _by_file(output: str):
    found = {}
    for line in output.splitlines():
        name, sep, rest = line.partition(".py:")
        if sep:
            found.setdefault(Path(name).name, []).append(rest)
    return found


@pytest.fixture(scope="module")
def shape_dir(tmp_path_factory):
    directory = tmp_path_factory.mktemp("deep")
    for name, (source, _, _) in SHAPES.items():
        (directory / f"{name}.py").write_text(source)
    (directory / "long_line.py").write_text(LONG_LINE)
    (directory / "normal.py").write_text(NORMAL)
    return directory


def _assert_every_shape(output: str, shapes) -> None:
    found = _by_file(output)
    for name in shapes:
        _, message, _ = SHAPES[name]
        assert len(found.get(name, [])) == 1, (name, found.get(name))
        assert "TAL999" in found[name][0] and message in found[name][0], found[name]
    assert any("TAL101" in f for f in found["long_line"])


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_cli_every_shape(shape_dir, jobs):
    proc = _cli(["-j", jobs, "--output-format", "concise", "."], shape_dir)
    assert proc.returncode == 1, (proc.returncode, proc.stderr[-2000:])  # not -11
    assert "Traceback" not in proc.stderr + proc.stdout
    _assert_every_shape(proc.stdout, SHAPES)


def test_cli_analysis_limits_do_not_fail_on_error(shape_dir):
    """An analysis limit is a warning in JSON and never fails ``--fail-on error``; a syntax error does."""
    import json

    limits = sorted(n for n in SHAPES if _limit(n))
    assert "nested_for_loops" in limits and len(limits) >= 5
    proc = _cli(["--fail-on", "error", "--output-format", "json", *[f"{n}.py" for n in limits]], shape_dir)
    found = json.loads(proc.stdout)
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
    assert sorted((Path(f["filename"]).stem, f["code"], f["severity"]) for f in found) == [
        (n, "TAL999", "warning") for n in limits]
    rejected = [n for n in SHAPES if SHAPES[n][1] == INVALID][0]
    proc = _cli(["--fail-on", "error", "--output-format", "json", "nested_for_loops.py", f"{rejected}.py"], shape_dir)
    assert proc.returncode == 1 and {f["severity"] for f in json.loads(proc.stdout)} == {"warning", "error"}


@pytest.mark.parametrize("name", ["or_chain", "elif_ladder_340kb", "lambda_chain", "parens_at_column_0",
                                  "calls_opened_at_column_0"])
def test_cli_stdin(tmp_path, name):
    source, message, _ = SHAPES[name]
    proc = _cli(["--output-format", "concise", "--stdin-filename", f"{name}.py", "-"], tmp_path, stdin=source)
    assert proc.returncode == 1, (proc.returncode, proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr + proc.stdout
    assert "TAL999" in proc.stdout and message in proc.stdout


def test_flake8_every_shape_python_can_parse(shape_dir):
    # flake8 parses every file with ``ast`` itself before any plugin runs: where Python gives up
    # (RecursionError, MemoryError) flake8 itself fails, and where Python finds a syntax error it
    # reports E999 and runs no plugin. The other shapes must come back as one TAL999 each, unless
    # another plugin (pyflakes recurses per ``elif``) stops flake8 first: one file per run.
    shapes = [n for n, (source, message, _) in SHAPES.items()
              if message == DEEP and not _python_gives_up(source)]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    outputs = []
    for name in shapes + ["long_line"]:
        proc = subprocess.run([sys.executable, "-m", "flake8", "--select", "TAL", "-j", "1", f"{name}.py"],
                              cwd=shape_dir, env=env, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 1, (name, proc.returncode, proc.stderr[-2000:])  # not -11
        if '"pyflakes[F]" failed' in proc.stdout + proc.stderr:
            shapes.remove(name)
            continue
        assert "Traceback" not in proc.stderr + proc.stdout
        outputs.append(proc.stdout)
    assert len(shapes) >= 4
    _assert_every_shape("".join(outputs), shapes)


def test_flake8_shapes_python_rejects(shape_dir):
    """flake8 reports E999 with Python's message for these and runs no plugin on them: the run
    goes on, and the normal file beside them is linted."""
    shapes = [n for n, (source, _, _) in SHAPES.items() if first_pass(source).error.__class__ is SyntaxError]
    assert len(shapes) >= 5
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-m", "flake8", "--select", "TAL,E999", "-j", "1",
                           *[f"{name}.py" for name in shapes], "normal.py"],
                          cwd=shape_dir, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 1, (proc.returncode, proc.stderr[-2000:])  # not -11
    assert "Traceback" not in proc.stderr + proc.stdout
    found = _by_file(proc.stdout)
    for name in shapes:
        assert len(found.get(name, [])) == 1 and "E999" in found[name][0] and SHAPES[name][1] in found[name][0], (
            name, found.get(name))
    assert [f[:12] for f in found["normal"]] == ["3:5: TAL101 "]


def test_language_server_every_shape(tmp_path):
    pytest.importorskip("pygls")
    from test_lsp_robustness import RawClient

    client = RawClient(tmp_path)
    try:
        client.start(tmp_path)
        for name, (source, message, _) in SHAPES.items():
            uri = client.open(tmp_path / f"{name}.py", source)
            diagnostics = client.diagnostics_for(uri, timeout=120)["params"]["diagnostics"]
            assert [d["code"] for d in diagnostics] == ["TAL999"], (name, diagnostics)
            assert message in diagnostics[0]["message"]
            assert diagnostics[0]["severity"] == (2 if _limit(name) else 1), (name, diagnostics)  # Warning / Error
            assert client.proc.poll() is None
        uri = client.open(tmp_path / "normal.py", NORMAL)  # a normal file after them all
        assert [d["code"] for d in client.diagnostics_for(uri, timeout=120)["params"]["diagnostics"]] == ["TAL101"]
    finally:
        assert client.close() == 0


# ------------------------------------------------------------------------------------- fuzzing

# Lines that each open one more level, at column 0 (where a bracket count takes a name for a new
# statement), under a head, then an ending that closes, breaks or leaves them open.
_LINES = ["a(", "(", "[", "{", "f(x,", "a[", "lambda:", "a or", "a +", "not", "-", ".b", "elif x:\n    pass"]
_ENDINGS = ["", "a)\n", "x = = 1\n", "a)\nx = = 1\n"]


def _column_0_shapes():
    for i, line in enumerate(_LINES):
        head = "if x:\n    pass\n" if line.startswith("elif") else "x = (\n" if i >= 6 else ""
        for j, ending in enumerate(_ENDINGS):
            yield f"col0_{i:02}_{j}", "import torch\n" + head + (line + "\n") * 5000 + ending


def test_column_0_shapes_through_the_cli(tmp_path):
    """Every line shape and ending: one ``detachlint check -j 1`` run neither crashes nor stops,
    each file Python rejects gets one TAL999 with Python's message and row, and the normal file
    among them is linted."""
    expected = {}
    for name, source in _column_0_shapes():
        (tmp_path / f"{name}.py").write_text(source)
        error = first_pass(source).error
        if error.__class__ is SyntaxError:
            expected[name] = f"{error.lineno}:", error.msg
    assert len(expected) >= 30
    (tmp_path / "normal.py").write_text(NORMAL)
    proc = _cli(["-j", "1", "--output-format", "concise", "."], tmp_path)
    assert proc.returncode == 1, (proc.returncode, proc.stderr[-2000:])  # not -11
    assert "Traceback" not in proc.stderr + proc.stdout
    found = _by_file(proc.stdout)
    for name, (row, message) in expected.items():
        assert len(found.get(name, [])) == 1, (name, found.get(name))
        assert found[name][0].startswith(row) and f"TAL999 [error] SyntaxError: {message}" in found[name][0], (
            name, found[name])
    assert [f[:12] for f in found["normal"]] == ["3:5: TAL101 "]


_OPENERS = [("(", ")"), ("[", "]"), ("{", "}"), ("f(", ")"), ("a[", "]"), ("(lambda: ", ")"), ("{k: ", "}")]
_PREFIXES = ["-", "not ", "~", "lambda: ", "await ", "a if a else ", "*"]
_SUFFIXES = [".t", "()", "[0]", ".add_(1)", " + a", " or a", " and a", " < a", " ** a", ' "s"', " if a else a"]


@st.composite
def deep_expressions(draw):
    """An expression built of random layers, some repeated thousands of times: deep (prefix
    operators, brackets, chains) and wide (operand chains, long lines)."""
    expr = "torch.ones(1)"
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["wrap", "prefix", "suffix"]))
        count = draw(st.sampled_from([1, 10, 150, 400, 1000, 3000, 12000]))
        if kind == "wrap":
            opener, closer = draw(st.sampled_from(_OPENERS))
            count = min(count, 250)
            expr = opener * count + expr + closer * count
        elif kind == "prefix":
            expr = draw(st.sampled_from(_PREFIXES)) * count + expr
        else:
            expr = expr + draw(st.sampled_from(_SUFFIXES)) * count
    return expr


@settings(max_examples=int(os.environ.get("DETACHLINT_FUZZ_EXAMPLES", "12")), deadline=None,
          derandomize=not os.environ.get("DETACHLINT_FUZZ_EXAMPLES"), suppress_health_check=list(HealthCheck))
@given(deep_expressions(), st.sampled_from(["x = {}\n", "def f(a):\n    return {}\n", "async def f(a):\n    y = {}\n",
                                            "if a:\n    pass\nelif {}:\n    pass\n", "print({})\n"]))
def test_deep_and_wide_expressions_never_crash(expr, template):
    # in a subprocess: a segfault must fail the test, not end the test run
    source = "import torch\n" + template.format(expr)
    code = ("import sys\nfrom detachlint.engine import lint_source\nfrom detachlint.rules import ALL_RULES\n"
            "codes = [r.code for r in ALL_RULES] + ['TAL999']\n"
            "found = lint_source(sys.stdin.read(), 'fuzz.py', codes)\n"
            "print('\\n'.join(f'{f.code} {f.location.row}' for f in found))\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-c", code], input=source, capture_output=True, text=True, env=env,
                          timeout=300)
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-3000:])
    rows = len(physical_lines(source))
    for line in proc.stdout.split():
        if line.isdigit():
            assert 1 <= int(line) <= rows


def test_the_measure_is_iterative():
    # far deeper than Python's recursion limit, in Python's tree: measured without recursing
    tree = ast.parse("x = " + " or ".join(["a"] * 50000) + "\n")
    assert too_deep(tree, ["x = ..."]) is not None


def test_more_code_than_libcst_can_take_at_once_is_one_clear_tal999(monkeypatch):
    """What stays once the quiet code is blanked is what LibCST must hold: past the limit, one
    TAL999 that says so, instead of an allocator that aborts the process (a generated module of
    megabytes whose statements all read the name a site spells)."""
    import detachlint.engine as engine

    monkeypatch.setattr(engine, "LIBCST_LIMIT", 20_000)
    linked = "import torch\nk = 3\n" + "".join(f"v{i} = torch.zeros(k)\n" for i in range(4000)) + "v1.data.add_(k)\n"
    (finding,) = lint_source(linked, "generated.py")
    assert finding.code == PARSE_ERROR_CODE and "too large for detachlint's parser" in finding.message
    # the same module whose statements share no name with the site: blanked, and linted
    apart = linked.replace("torch.zeros(k)", "torch.zeros(3)")
    assert [f.code for f in lint_source(apart, "generated.py")] == ["TAL003"]


def test_a_long_strings_pieces_are_counted_alike_with_and_without_the_tokenizer():
    """A docstring-like literal is one piece without tokenizing it; concatenations of
    triple-quoted literals, and one holding an escaped quote, are counted by the tokenizer."""
    from detachlint.frontend import firstpass

    body = "a" * 400
    cases = {f'x = """{body}"""\n': 1, f"x = r'''{body}\n{body}'''\n": 1,
             f'x = ("""{body}"""\n     """b""")\n': 2, f'x = """a\\"""{body}"""\n': 1,
             f'x = (f"""{{y}}{body}""" \'c\')\n': 2}
    for source, pieces in cases.items():
        value = ast.parse(source).body[0].value
        assert firstpass._string_pieces(value, source.splitlines(True)) == pieces, source[:40]
