"""Fixes: what each rule's fix writes, how fixes are applied (conflicts deferred, results that
would not parse dropped, passes until nothing is left), how files are written (atomically, same
encoding, line endings and permissions, never over a file that changed), and the real
``detachlint check --fix / --unsafe-fixes / --diff / --fix-only``."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

import libcst as cst
import pytest

from detachlint.engine import lint_source
from detachlint.findings import Applicability, Edit, Fix, Location
from detachlint.fixes import FixError, SourceFile, apply_fixes, fix_file, fix_text, parses, unified_diff

from fixture_expectations import fixture_files, selected_codes

REPO = Path(__file__).resolve().parent.parent
ALL = ["TAL001", "TAL002", "TAL003", "TAL101", "TAL102", "TAL103", "TAL201", "TAL301", "TAL401"]


def fixed(source: str, codes=ALL, unsafe: bool = False) -> str:
    source = textwrap.dedent(source)
    return fix_text(source, lambda text: lint_source(text, "t.py", codes), unsafe).text


def fix_of(source: str, code: str):
    found = [f for f in lint_source(textwrap.dedent(source), "t.py", [code]) if f.code == code]
    assert len(found) == 1, found
    return found[0].fix


# --- what each rule's fix writes ----------------------------------------------------------------

def test_tal003_fix_is_the_same_write_under_no_grad():
    src = """\
        import torch
        from torch import nn


        def init(model: nn.Module, w: torch.Tensor):
            for p in model.parameters():
                p.data.mul_(0.99).add_(0.01)  # decay
            w.data[0] = 1.0
            w.data[1:] *= 2
            w.data += 1
            nn.init.zeros_(w.data)
            torch.add(w, 1, out=w.data)
        """
    # unsafe: a caller may hold a graph that saved model's parameters or w (issue 31)
    assert {f.fix.applicability for f in lint_source(textwrap.dedent(src), "t.py", ["TAL003"]) if f.fix} \
        == {Applicability.UNSAFE}
    out = fixed(src, ["TAL003"], unsafe=True)
    assert ("    for p in model.parameters():\n        with torch.no_grad():\n"
            "            p.mul_(0.99).add_(0.01)  # decay\n") in out
    assert "    with torch.no_grad():\n        w[0] = 1.0\n" in out
    assert "    with torch.no_grad():\n        w[1:] *= 2\n" in out
    assert "    with torch.no_grad():\n        w += 1\n" in out
    assert "    nn.init.zeros_(w)\n" in out  # torch.nn.init writes under no_grad itself
    assert "out=w.data)" in out  # out= may resize the .data tensor alone: not the same write
    handed = fix_of("import torch\ndef f(w: torch.Tensor):\n    w.data.zero_()\n", "TAL003")
    assert handed.applicability is Applicability.UNSAFE
    assert "a caller may hold a graph that saved `w`" in handed.message
    made_here = "import torch\ndef f():\n    w = torch.zeros(3)\n    w.data.zero_()\n    return w\n"
    assert fix_of(made_here, "TAL003").applicability is Applicability.SAFE
    module_level = "import torch\nw = torch.zeros(3)\nw.data.zero_()\n"
    assert fix_of(module_level, "TAL003").applicability is Applicability.SAFE
    built = ("import torch\nclass M(torch.nn.Module):\n    def __init__(self, enc):\n        super().__init__()\n"
             "        self.fc = torch.nn.Linear(2, 2)\n        self.fc.weight.data.zero_()\n"
             "        self.enc = enc\n        self.enc.weight.data.zero_()\n")
    applicability = {f.location.row: f.fix.applicability for f in lint_source(built, "t.py", ["TAL003"])}
    assert applicability == {6: Applicability.SAFE, 8: Applicability.UNSAFE}  # enc came from the caller


def test_tal003_fix_on_a_gradient_no_graph_here_saved_says_only_that():
    # autograd saves a `.grad` only through create_graph=True or an op that took it (issue 41)
    between = """\
        import torch


        def two_passes(run, leaf: torch.Tensor):
            loss = run(leaf).sum()
            leaf.grad.data.zero_()
            loss.backward()
        """
    handed = "import torch\ndef reset(leaf: torch.Tensor):\n    leaf.grad.data.zero_()\n"
    for src in (between, handed):
        fix = fix_of(src, "TAL003")
        assert fix.applicability is Applicability.UNSAFE
        assert ("no graph in this function saved the gradient `leaf.grad`, but one built outside it may have"
                in fix.message), fix.message


def test_tal003_fix_inside_no_grad_only_drops_data_and_adds_the_import():
    src = """\
        import torch


        class Opt:
            @torch.no_grad()
            def step(self, model: torch.nn.Module):
                for p in model.parameters():
                    p.data.add_(p.grad, alpha=-0.1)

            def zero(self, model: torch.nn.Module):
                with torch.no_grad():
                    for p in model.parameters():
                        p.data.zero_()
        """
    out = fixed(src, ["TAL003"], unsafe=True)
    assert "            p.add_(p.grad, alpha=-0.1)\n" in out and "                p.zero_()\n" in out
    assert out.count("no_grad") == 2
    bare = "from torch import nn\n\n\ndef f(m: nn.Linear):\n    m.weight.data.zero_()\n"
    assert fixed(bare, ["TAL003"], unsafe=True) == ("import torch\nfrom torch import nn\n\n\ndef f(m: nn.Linear):\n"
                                       "    with torch.no_grad():\n        m.weight.zero_()\n")


def test_tal003_fix_counts_lines_as_libcst_does():
    # A form feed is a line break to str.splitlines, not to Python or LibCST.
    src = "import torch\n\x0c\ndef f(w: torch.Tensor):\n    if w.sum() > 0:\n        w.data.zero_()\n"
    assert fixed(src, ["TAL003"], unsafe=True).endswith(
        "    if w.sum() > 0:\n        with torch.no_grad():\n            w.zero_()\n")


@pytest.mark.parametrize("line", [
    "w.data = torch.zeros(3)",  # rebinding .data is not a write into w
    "self_w.data *= 2; w.data.zero_()",  # two statements on one line
    "y = w.data.add_(1)",  # the write is part of a larger statement
    "w.data.t_()",  # transposes the .data tensor, not w
    "w.data.resize_(3)",
])
def test_tal003_no_fix_where_dropping_data_changes_the_program(line):
    src = f"import torch\n\ndef f(w: torch.Tensor, self_w: torch.Tensor):\n    {line}\n"
    assert all(f.fix is None for f in lint_source(src, "t.py", ["TAL003"]) if f.location.row == 4)


def test_tal003_no_safe_fix_where_a_graph_is_or_may_be_pending():
    pending = """\
        import torch


        def step(model: torch.nn.Module, x):
            loss = model(x).sum()
            for p in model.parameters():
                p.data.mul_(0.5)
            loss.backward()
        """
    assert fix_of(pending, "TAL001") is None  # an error: no edit keeps what the program computes
    maybe = """\
        import torch


        def step(model: torch.nn.Module, loss):
            for p in model.parameters():
                p.data.mul_(0.5)
            loss.backward()
        """
    # the caller may have built loss's graph from p: a graph that may be pending, an error (issue 31)
    (finding,) = lint_source(textwrap.dedent(maybe), "t.py", ["TAL001"])
    assert finding.severity.value == "error" and finding.fix is None
    assert "built before this function ran: `loss` comes from outside it" in " ".join(finding.notes)
    by_usage = "def f(p):\n    p.data.add_(1)\n"  # a tensor only by its usage
    assert fix_of(by_usage, "TAL003").applicability is Applicability.UNSAFE
    user_code = "import torch\n\ndef f(p: torch.Tensor, h):\n    p.data.copy_(h(p))\n"
    assert fix_of(user_code, "TAL003").applicability is Applicability.UNSAFE  # h would run under no_grad


# Programs whose TAL003 writes are fixed: each ``run()`` must return the same values before and
# after (the definition of a safe fix), and the fixed program must train without an error.
BEHAVIOUR = [
    """\
    import torch
    from torch import nn

    def run():
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 3), nn.Tanh(), nn.Linear(3, 1))
        for p in model.parameters():
            nn.init.normal_(p.data, 0, 0.5)
            p.data.mul_(0.9).add_(0.01)
            p.data[0] = 0.25
            p.data *= 1.5
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(3):
            loss = model(torch.randn(8, 4)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            for p in model.parameters():
                p.data.clamp_(-1, 1)
        return [p.detach().clone() for p in model.parameters()]
    """,
    """\
    import torch
    from torch import nn

    def run():
        torch.manual_seed(1)
        model, ema = nn.Linear(3, 3), nn.Linear(3, 3)
        opt = torch.optim.Adam(model.parameters(), lr=0.01)
        for _ in range(4):
            loss = model(torch.randn(5, 3)).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
            for e, p in zip(ema.parameters(), model.parameters()):
                e.data.mul_(0.9).add_(p.data, alpha=0.1)
        return [p.detach().clone() for p in ema.parameters()]
    """,
]


@pytest.mark.parametrize("program", BEHAVIOUR, ids=["init-and-clamp", "ema"])
def test_tal003_safe_fix_keeps_what_the_program_computes(program):
    torch = pytest.importorskip("torch")
    original = textwrap.dedent(program)
    outcome = fix_text(original, lambda text: lint_source(text, "t.py", ["TAL003"]), False)
    assert outcome.fixed and "with torch.no_grad():" in outcome.text
    assert not [f for f in outcome.remaining if f.code == "TAL003" and f.fix is not None]
    results = []
    for text in (original, outcome.text):
        namespace: dict = {}
        exec(compile(text, "t.py", "exec"), namespace)
        results.append(namespace["run"]())
    assert all(torch.equal(a, b) for a, b in zip(*results))


def test_tal002_fix_only_where_the_alias_is_consumed_at_once():
    src = "import torch\n\ndef f(x: torch.Tensor):\n    print(x.data)\n    return x.data.norm() * x.data\n"
    assert fixed(src, ["TAL002"]).endswith("    print(x.detach())\n    return x.detach().norm() * x.detach()\n")
    for kept in ("y = x.data.cpu()\n    return y", "return x.data", "(x.data, y) = (y, x)"):
        src = f"import torch\n\ndef f(x: torch.Tensor, y):\n    {kept}\n"
        assert all(f.fix is None for f in lint_source(src, "t.py", ["TAL002"])), kept


def test_tal101_copy_replacement_is_safe_and_skips_what_it_cannot_spell():
    src = """\
        import torch


        def f(u: torch.Tensor):
            x = torch.randn(3)
            a = torch.tensor(x, dtype=torch.float64, requires_grad=True)
            b = u.new_tensor(x)
            c = torch.tensor(x, pin_memory=True)
            return a, b, c
        """
    out = fixed(src, ["TAL101"])
    assert "a = x.detach().clone().to(dtype=torch.float64).requires_grad_()" in out
    assert "b = x.detach().clone().to(dtype=u.dtype, device=u.device)" in out
    assert "c = torch.tensor(x, pin_memory=True)" in out  # pin_memory has no spelling: no fix
    impure = "import torch\n\ndef f(x: torch.Tensor, m):\n    return m.w().new_tensor(x)\n"
    fix = fix_of(impure, "TAL101")
    assert fix is not None and fix.applicability is Applicability.UNSAFE  # m.w() would run twice


def test_tal101_fix_is_unsafe_where_only_an_annotation_shows_a_tensor():
    """Issue 41 (fresh-18): ``orig_im_size: torch.Tensor`` given a tuple; ``.detach()`` would raise."""
    src = "import torch\n\ndef f(size: torch.Tensor):\n    return torch.tensor(size)\n"
    fix = fix_of(src, "TAL101")
    assert fix is not None and fix.applicability is Applicability.UNSAFE
    assert "only the annotation of `size` says it is a tensor" in fix.message
    assert "torch.tensor(size)" in fixed(src, ["TAL101"])  # not applied as a safe fix
    assert "size.detach().clone()" in fixed(src, ["TAL101"], unsafe=True)


def test_tal101_keeps_a_comment_by_not_fixing():
    src = "import torch\n\ndef f(x: torch.Tensor):\n    return torch.tensor(\n        x,  # why\n    )\n"
    assert fix_of(src, "TAL101") is None


def test_tal102_stack_spelled_as_torch_is_bound():
    src = """\
        import torch as T


        def f(a: T.Tensor, b: T.Tensor):
            return T.tensor([a, b], dtype=T.float64)
        """
    fix = fix_of(src, "TAL102")
    assert fix.applicability is Applicability.UNSAFE
    assert "return T.stack([a, b]).to(dtype=T.float64)" in fixed(src, ["TAL102"], unsafe=True)
    assert "T.tensor" in fixed(src, ["TAL102"], unsafe=False)  # unsafe: not without --unsafe-fixes
    tail_comment = ("import torch\n\ndef f(a: torch.Tensor):\n"
                    "    return torch.tensor([a, a],  # why\n        dtype=torch.float64)\n")
    assert fix_of(tail_comment, "TAL102") is None  # the replaced `, dtype=...)` holds a comment
    inner = "import torch\n\ndef f(a: torch.Tensor):\n    return torch.tensor([a,  # why\n        a])\n"
    assert "torch.stack([a,  # why\n" in fixed(inner, ["TAL102"], unsafe=True)
    unbound = "from torch import tensor, Tensor\n\ndef f(a: Tensor, b: Tensor):\n    return tensor([a, b])\n"
    assert fix_of(unbound, "TAL102") is None


def test_tal103_clone_or_typed_copy():
    src = """\
        import torch


        def f(x: torch.Tensor):
            return torch.Tensor(x), torch.LongTensor(x.argmax(1)), torch.cuda.FloatTensor(x)
        """
    out = fixed(src, ["TAL103"], unsafe=True)
    assert "return x.clone(), x.argmax(1).to(torch.int64, copy=True), x.to(\"cuda\", torch.float32, copy=True)" in out


def test_alias_rules_unsafe_fixes():
    src = """\
        \"\"\"Training.\"\"\"
        from __future__ import annotations

        import torch


        def fit(model, optimizer, loader, x: torch.Tensor):
            best = model.state_dict()
            best_opt = optimizer.state_dict()
            for batch in loader:
                model(batch).sum().backward()
                optimizer.step()
            model.load_state_dict(best)
            optimizer.load_state_dict(best_opt)
            img = x.detach().cpu().numpy()
            img *= 255
            x.detach().zero_()
            x.detach()[0] = 1
            return img


        def step(state: torch.Tensor, delta: torch.Tensor):
            prev = state
            state += delta
            return state - prev
        """
    out = fixed(src, ["TAL201", "TAL301", "TAL401"], unsafe=True)
    assert out.count("import copy\n") == 1
    assert "from __future__ import annotations\n\nimport copy\nimport torch\n" in out
    assert "best = copy.deepcopy(model.state_dict())" in out
    assert "best_opt = copy.deepcopy(optimizer.state_dict())" in out
    assert "img = x.detach().clone().cpu().numpy()" in out
    assert "    x.detach().zero_()\n    x.detach()[0] = 1\n" in out  # the write is the point: no dead clone
    assert "prev = state.clone()" in out


# --- `import copy` goes in the right place, once --------------------------------------------------

def _ctx(source: str):
    from libcst.metadata import MetadataWrapper

    from detachlint.context import Context

    wrapper = MetadataWrapper(cst.parse_module(source), unsafe_skip_copy=True)
    return Context(source, "t.py", wrapper.module, wrapper)


def _with_import(source: str) -> str:
    from detachlint.fixes import apply_fixes
    from detachlint.rules.fixkit import require_import

    spelled, edits = require_import(_ctx(source), "copy", "deepcopy")
    assert spelled == "copy.deepcopy"
    return apply_fixes(source, [Fix(Applicability.UNSAFE, "", tuple(edits))]).text


@pytest.mark.parametrize("source, expected", [
    ('"""Doc."""\nfrom __future__ import annotations\n\nimport os\nimport torch\n\nx = 1\n',
     '"""Doc."""\nfrom __future__ import annotations\n\nimport copy\nimport os\nimport torch\n\nx = 1\n'),
    ("import argparse\nimport collections\nimport os\n",
     "import argparse\nimport collections\nimport copy\nimport os\n"),
    ("import abc\nimport argparse\n\nimport torch\n", "import abc\nimport argparse\nimport copy\n\nimport torch\n"),
    ('"""Doc."""\n\nx = 1\n', '"""Doc."""\n\nimport copy\nx = 1\n'),
    ('"""Doc."""', '"""Doc."""\nimport copy'),
    ("#!/usr/bin/env python\n# a comment\nimport torch\n",
     "#!/usr/bin/env python\n# a comment\nimport copy\nimport torch\n"),
    ("import torch\r\nx = 1\r\n", "import copy\r\nimport torch\r\nx = 1\r\n"),
])
def test_import_copy_placement(source, expected):
    assert _with_import(source) == expected


def test_existing_or_conflicting_copy_bindings():
    from detachlint.rules.fixkit import require_import

    assert require_import(_ctx("import copy as cp\n"), "copy", "deepcopy") == ("cp.deepcopy", [])
    assert require_import(_ctx("from copy import deepcopy\n"), "copy", "deepcopy") == ("deepcopy", [])
    assert require_import(_ctx("from copy import copy\n"), "copy", "deepcopy") == (None, [])
    assert require_import(_ctx("def f(copy):\n    return copy\n"), "copy", "deepcopy") == (None, [])
    spelled, edits = require_import(_ctx("x.copy()\nf(copy=True)\n"), "copy", "deepcopy")
    assert spelled == "copy.deepcopy" and len(edits) == 1


# --- applying edits -----------------------------------------------------------------------------

def _fix(*edits, applicability=Applicability.SAFE):
    return Fix(applicability, "t", tuple(Edit(Location(*a), Location(*b), c) for a, b, c in edits))


def test_conflicting_fixes_are_deferred_and_identical_edits_shared():
    text = "abcdef\n"
    first = _fix(((1, 1), (1, 3), "X"))
    overlapping = _fix(((1, 2), (1, 4), "Y"))
    touching = _fix(((1, 3), (1, 3), "Z"))
    shared = _fix(((1, 0), (1, 0), "import copy\n"), ((1, 5), (1, 6), "F"))
    shared2 = _fix(((1, 0), (1, 0), "import copy\n"))
    result = apply_fixes(text, [overlapping, first, touching, shared, shared2])
    assert result.text == "import copy\naXdeFf\n".replace("Ff", "F")  # one import, X and F applied
    assert result.deferred == [overlapping, touching]


def test_malformed_and_unparsable_fixes_are_dropped():
    text = "x = 1\ny = 2\n"
    outside = _fix(((9, 0), (9, 1), "z"))
    self_overlap = _fix(((1, 0), (1, 3), "a"), ((1, 1), (1, 2), "b"))
    breaks = _fix(((1, 4), (1, 5), "("))
    good = _fix(((2, 4), (2, 5), "3"))
    result = apply_fixes(text, [outside, self_overlap, breaks, good])
    assert result.text == "x = 1\ny = 3\n"
    assert set(map(id, result.rejected)) == {id(outside), id(self_overlap), id(breaks)}
    assert not parses("x.detach() = 1\n")  # LibCST alone would accept this; Python does not


def test_nested_data_writes_in_one_statement_are_left_alone():
    src = """\
        import torch


        def f(p: torch.nn.Parameter, q: torch.nn.Parameter, r: torch.Tensor):
            p.data.copy_(q.data.mul_(r.data.add_(1)))
            p.data.add_(p.grad.data)
        """
    outcome = fix_text(textwrap.dedent(src), lambda t: lint_source(t, "t.py", ["TAL003", "TAL002"]), True)
    # Dropping the outer ``.data`` alone would leave q's write behind, reported anew: no fix.
    assert "    p.data.copy_(q.data.mul_(r.data.add_(1)))\n" in outcome.text
    assert "    with torch.no_grad():\n        p.add_(p.grad.data)\n" in outcome.text
    assert_subset(outcome)


# --- every fixture: parses, converges, idempotent ------------------------------------------------

def _fixture_linter(path: Path, text: str):
    codes = selected_codes(path, text)
    return lambda t: lint_source(t, str(path), codes)


@pytest.mark.parametrize("unsafe", [False, True], ids=["safe", "unsafe"])
@pytest.mark.parametrize("path", fixture_files(), ids=lambda p: p.name)
def test_fixture_fixes_parse_converge_and_are_idempotent(path, unsafe):
    text = path.read_text(encoding="utf-8")
    lint = _fixture_linter(path, text)
    outcome = fix_text(text, lint, unsafe)
    assert parses(outcome.text)
    assert not [f for f in outcome.remaining if f.fix is not None and f.fix.applicability is Applicability.SAFE]
    if unsafe:
        assert not [f for f in outcome.remaining if f.fix is not None]
    again = fix_text(outcome.text, lint, unsafe)
    assert again.text == outcome.text and not again.fixed
    assert_subset(outcome)


def assert_subset(outcome):
    """The fixed text's findings are a subset of the original's minus those fixed: per code, no
    more than the original findings whose fix was not applied (a finding that surfaced in a later
    pass, like the inner write of ``p.data.copy_(q.data.mul_(2))``, had to be fixed as well)."""
    initial = set(map(id, outcome.initial))
    fixed_first = Counter(f.code for f in outcome.fixed if id(f) in initial)
    allowed = Counter(f.code for f in outcome.initial)
    allowed.subtract(fixed_first)
    remaining = Counter(f.code for f in outcome.remaining)
    extra = {code: n - allowed[code] for code, n in remaining.items() if n > allowed[code]}
    assert not extra, f"findings after fixing beyond the original's unfixed ones: {extra}"


def test_demo_fixes_converge_and_the_fixed_demo_trains(tmp_path):
    pytest.importorskip("torch")
    path = REPO / "demo" / "train.py"
    text = path.read_text(encoding="utf-8")
    lint = lambda t: lint_source(t, str(path))  # noqa: E731
    for unsafe in (False, True):
        outcome = fix_text(text, lint, unsafe)
        assert outcome.changed and parses(outcome.text)
        assert fix_text(outcome.text, lint, unsafe).text == outcome.text
        assert_subset(outcome)
        script = tmp_path / f"train_{'unsafe' if unsafe else 'safe'}.py"
        script.write_text(outcome.text, encoding="utf-8")
        run = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert run.returncode == 0 and "epoch 2:" in run.stdout, run.stderr


# --- files --------------------------------------------------------------------------------------

SAMPLE = "import torch\n\n\ndef f():\n    w = torch.zeros(3)\n    w.data.add_(1)  # ünïcode\n    return w\n"
FIXED = SAMPLE.replace("    w.data.add_(1)", "    with torch.no_grad():\n        w.add_(1)")


def _lint(codes=("TAL003",)):
    return lambda text: lint_source(text, "t.py", list(codes))


def test_file_keeps_crlf_encoding_bom_and_permissions(tmp_path):
    crlf = tmp_path / "crlf.py"
    crlf.write_bytes(SAMPLE.replace("\n", "\r\n").encode("utf-8"))
    latin = tmp_path / "latin.py"
    latin.write_bytes(("# -*- coding: latin-1 -*-\n" + SAMPLE).encode("latin-1"))
    bom = tmp_path / "bom.py"
    bom.write_bytes(b"\xef\xbb\xbf" + SAMPLE.encode("utf-8"))
    for path in (crlf, latin, bom):
        os.chmod(path, 0o751)
        result = fix_file(path, path.name, _lint())
        assert result.written and result.error is None, result.error
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o751
    assert crlf.read_bytes() == FIXED.replace("\n", "\r\n").encode("utf-8")
    assert latin.read_bytes() == ("# -*- coding: latin-1 -*-\n" + FIXED).encode("latin-1")
    assert bom.read_bytes() == b"\xef\xbb\xbf" + FIXED.encode("utf-8")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bom.py", "crlf.py", "latin.py"]  # no temp files left


def test_inserted_lines_follow_the_file_line_ending():
    src = ("import torch\r\n\r\ndef f(a: torch.Tensor):\r\n    return torch.tensor([a, a],\r\n"
           "        dtype=torch.float64)\r\n")
    out = fix_text(src, _lint(["TAL102"]), unsafe=True).text
    assert "\r\n" in out and "\n" not in out.replace("\r\n", "")


def test_refuses_a_file_changed_on_disk(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(SAMPLE, encoding="utf-8")
    source = SourceFile.read(path)
    path.write_text(SAMPLE + "# edited meanwhile\n", encoding="utf-8")
    with pytest.raises(FixError, match="changed on disk"):
        source.write(FIXED)
    assert path.read_text(encoding="utf-8").endswith("# edited meanwhile\n")


def test_refuses_a_read_only_file_and_keeps_symlinks(tmp_path):
    path = tmp_path / "ro.py"
    path.write_text(SAMPLE, encoding="utf-8")
    os.chmod(path, 0o444)
    if not os.access(path, os.W_OK):  # (root can write anyway)
        result = fix_file(path, "ro.py", _lint())
        assert not result.written and "not writable" in result.error
        assert path.read_text(encoding="utf-8") == SAMPLE
    real = tmp_path / "real.py"
    real.write_text(SAMPLE, encoding="utf-8")
    link = tmp_path / "link.py"
    link.symlink_to(real)
    assert fix_file(link, "link.py", _lint()).written
    assert link.is_symlink() and real.read_text(encoding="utf-8") == FIXED


def test_undecodable_file_is_not_touched(tmp_path):
    path = tmp_path / "bad.py"
    path.write_bytes(b"x = '\xff'\n")
    result = fix_file(path, "bad.py", _lint())
    assert result.outcome is None and path.read_bytes() == b"x = '\xff'\n"


def test_unified_diff_marks_a_missing_final_newline():
    diff = unified_diff("a = 1", "a = 2", "m.py")
    assert diff.startswith("--- m.py\n+++ m.py\n") and diff.endswith("\\ No newline at end of file\n")


# --- the real command line ----------------------------------------------------------------------

def detachlint(*args, cwd, stdin=None):
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "detachlint", *map(str, args)], cwd=cwd, input=stdin,
                          capture_output=True, text=True, env=env, timeout=120)


CLI_SAMPLE = textwrap.dedent("""\
    import torch


    def f(a: torch.Tensor):
        w = torch.ones(3)
        w.data.add_(1)
        b = torch.tensor(w)
        return torch.tensor([a, b])
    """)


def test_cli_diff_writes_nothing_and_exits_1(tmp_path):
    (tmp_path / "m.py").write_text(CLI_SAMPLE)
    proc = detachlint("check", "--diff", "m.py", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.startswith("--- m.py\n+++ m.py\n@@")
    assert "\n-    w.data.add_(1)\n" in proc.stdout and "\n+    with torch.no_grad():\n+        w.add_(1)\n" in proc.stdout
    assert "torch.stack" not in proc.stdout  # unsafe
    assert "Would fix 2 findings" in proc.stderr
    assert (tmp_path / "m.py").read_text() == CLI_SAMPLE
    unsafe = detachlint("check", "--diff", "--unsafe-fixes", "m.py", cwd=tmp_path)
    assert "+    return torch.stack([a, b])" in unsafe.stdout
    (tmp_path / "clean.py").write_text("x = 1\n")
    clean = detachlint("check", "--diff", "clean.py", cwd=tmp_path)
    assert clean.returncode == 0 and clean.stdout == ""


def test_cli_fix_then_fix_again_and_fix_only(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(CLI_SAMPLE)
    first = detachlint("check", "--fix", "--output-format", "concise", "m.py", cwd=tmp_path)
    assert first.returncode == 1  # the unsafe TAL102 finding remains
    codes = {line.split()[1] for line in first.stdout.splitlines() if line.startswith("m.py:")}
    assert codes == {"TAL102"}  # the unsafe fix is left; the fixed write brings no new finding
    assert "Found 3 findings (2 fixed, 1 remaining: " in first.stdout  # ruff's accounting, on stdout
    after = path.read_text()
    assert "    with torch.no_grad():\n        w.add_(1)\n" in after and "b = w.detach().clone()" in after
    second = detachlint("check", "--fix", "m.py", cwd=tmp_path)
    assert path.read_text() == after and "Found 1 finding (0 fixed, 1 remaining: " in second.stdout
    only = detachlint("check", "--fix-only", "--unsafe-fixes", "m.py", cwd=tmp_path)
    assert only.returncode == 0 and only.stdout == "" and "Fixed 1 finding" in only.stderr
    assert "torch.stack([a, b])" in path.read_text()
    assert detachlint("check", "m.py", "--select", "TAL001,TAL003,TAL101,TAL102,TAL103", cwd=tmp_path).returncode == 0


def test_cli_fix_stdin_prints_the_fixed_source(tmp_path):
    proc = detachlint("check", "--fix", "-", cwd=tmp_path, stdin=CLI_SAMPLE)
    assert proc.stdout == (CLI_SAMPLE.replace("    w.data.add_(1)", "    with torch.no_grad():\n        w.add_(1)")
                           .replace("torch.tensor(w)", "w.detach().clone()"))
    assert "TAL102" in proc.stderr and proc.returncode == 1


def test_json_and_sarif_carry_fixes(tmp_path):
    (tmp_path / "m.py").write_text(CLI_SAMPLE)
    data = json.loads(detachlint("check", "--output-format", "json", "m.py", cwd=tmp_path).stdout)
    by_code = {f["code"]: f["fix"] for f in data}
    assert by_code["TAL003"] == {
        "applicability": "safe", "message": "Remove `.data` and write under `with torch.no_grad():`",
        "edits": [{"content": "with torch.no_grad():\n        ", "location": {"row": 6, "column": 5},
                   "end_location": {"row": 6, "column": 5}},
                  {"content": "", "location": {"row": 6, "column": 6}, "end_location": {"row": 6, "column": 11}}]}
    assert by_code["TAL102"]["applicability"] == "unsafe"
    sarif = json.loads(detachlint("check", "--output-format", "sarif", "m.py", cwd=tmp_path).stdout)
    results = sarif["runs"][0]["results"]
    assert all("fixes" in r for r in results if r["ruleId"] in ("TAL003", "TAL101", "TAL102"))


# --- property: every fix on generated variants of the fixtures -----------------------------------

from hypothesis import HealthCheck, assume, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_KEYWORDS = {"self", "cls", "super", "print", "range", "len", "zip", "isinstance", "float", "int", "list", "tuple",
             "dict", "True", "False", "None", "torch", "copy"}


class _Rename(cst.CSTTransformer):
    """Renames every use of one name (not attributes, keyword arguments or imports): what a
    linter sees as the same program with other identifiers."""

    def __init__(self, old: str, new: str, import_alias: bool = False) -> None:
        self.old, self.new, self.import_alias = old, new, import_alias
        self.in_import = 0

    def visit_Import(self, node):
        self.in_import += 1

    def leave_Import(self, original, updated):
        self.in_import -= 1
        if not self.import_alias:
            return updated
        names = [a.with_changes(asname=cst.AsName(cst.Name(self.new)))
                 if isinstance(a.name, cst.Name) and a.name.value == self.old and a.asname is None else a
                 for a in updated.names]
        return updated.with_changes(names=names)

    def visit_ImportFrom(self, node):
        self.in_import += 1

    def leave_ImportFrom(self, original, updated):
        self.in_import -= 1
        return updated

    def leave_Attribute(self, original, updated):
        return updated.with_changes(attr=original.attr)

    def leave_Arg(self, original, updated):
        return updated.with_changes(keyword=original.keyword)

    def leave_Name(self, original, updated):
        if self.in_import or original.value != self.old:
            return updated
        return updated.with_changes(value=self.new)


class _Comment(cst.CSTTransformer):
    """Adds a comment line (and a blank line) above the chosen statements."""

    def __init__(self, picks) -> None:
        self.picks = picks
        self.i = 0

    def leave_SimpleStatementLine(self, original, updated):
        self.i += 1
        if self.picks[self.i % len(self.picks)]:
            lines = [cst.EmptyLine(), cst.EmptyLine(comment=cst.Comment("# generated comment"))]
            return updated.with_changes(leading_lines=[*updated.leading_lines, *lines])
        return updated


def _identifiers(module: cst.Module):
    names = set()

    class Collect(cst.CSTVisitor):
        def visit_Name(self, node):
            names.add(node.value)

    module.visit(Collect())
    return sorted(n for n in names if n not in _KEYWORDS and not n.startswith("__"))


@st.composite
def fixture_variants(draw):
    path = draw(st.sampled_from(fixture_files()))
    text = path.read_text(encoding="utf-8")
    codes = selected_codes(path, text)
    module = cst.parse_module(text)
    fresh = draw(st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True).filter(lambda s: s not in text))
    import keyword

    if keyword.iskeyword(fresh):
        fresh += "_"
    kind = draw(st.sampled_from(["torch-alias", "rename", "comments", "crlf", "none"]))
    if kind == "torch-alias" and "import torch\n" in text and "import torch." not in text:
        module = module.visit(_Rename("torch", "T" + fresh, import_alias=True))
    elif kind == "rename":
        module = module.visit(_Rename(draw(st.sampled_from(_identifiers(module))), fresh))
    elif kind == "comments":
        module = module.visit(_Comment(draw(st.lists(st.booleans(), min_size=2, max_size=7))))
    out = module.code
    if kind == "crlf":
        out = out.replace("\n", "\r\n")
    return out, draw(st.sampled_from([codes, ALL]))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(variant=fixture_variants(), unsafe=st.booleans())
def test_property_fixed_variants_parse_and_lose_only_fixed_findings(variant, unsafe):
    text, codes = variant
    lint = lambda t: lint_source(t, "variant.py", codes)  # noqa: E731
    outcome = fix_text(text, lint, unsafe)
    assert parses(outcome.text)
    assert_subset(outcome)
    assert fix_text(outcome.text, lint, unsafe).text == outcome.text


INJECTED = textwrap.dedent("""\


    import torch as _torch_injected


    def _injected(p: _torch_injected.Tensor, q: _torch_injected.Tensor, model, opt):
        loss = (p * q).sum()
        p.data.copy_(q.data.mul_(2))
        r = q * 2  # a tensor by more than an annotation: TAL101's fix is safe
        a = _torch_injected.tensor(r, dtype=_torch_injected.float64)
        b = _torch_injected.tensor([p.sum(), q.sum()])
        c = _torch_injected.Tensor(q)
        best = model.state_dict()
        opt.step()
        loss.backward()
        return a, b, c, best
    """)


# hypothesmith compiles the programs it draws, and Python warns about some (``"a"[1, 2]``)
@pytest.mark.filterwarnings("ignore::SyntaxWarning")
@settings(max_examples=15, deadline=None,  # hypothesmith itself discards many drafts: filter_too_much
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
@given(program=__import__("hypothesmith").from_node(), unsafe=st.booleans())
def test_property_generated_programs_with_injected_patterns(program, unsafe):
    text = program if program.endswith("\n") or not program else program + "\n"
    text = text + INJECTED
    assume(parses(text))
    lint = lambda t: lint_source(t, "gen.py", ALL)  # noqa: E731
    outcome = fix_text(text, lint, unsafe)
    assert parses(outcome.text)
    assert outcome.changed
    assert_subset(outcome)


# --- the editor: "fix all safe fixes in this file" ------------------------------------------------

try:  # the lsp extra; without it only the language-server test is skipped
    import pytest_lsp
    from lsprotocol import types as T
    from pytest_lsp import ClientServerConfig, LanguageClient
except ImportError:  # pragma: no cover
    pytest_lsp = None

from detachlint.fixes import changed_lines  # noqa: E402


def test_changed_lines_is_the_smallest_run():
    assert changed_lines("a\nb\nc\n", "a\nB\nB2\nc\n") == (1, 2, "B\nB2\n")
    assert changed_lines("a\nb", "a\nc") == (1, 2, "c")
    assert changed_lines("a\n", "a\n") == (1, 1, "")


if pytest_lsp is not None:
    @pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "detachlint", "lsp"],
                                                  server_env=dict(os.environ, PYTHONPATH=str(REPO))))
    async def lsp(lsp_client: LanguageClient):
        lsp_client.set_configuration({}, section="detachlint")
        yield
        await lsp_client.shutdown_session()

    @pytest.mark.asyncio
    async def test_lsp_fix_all_safe_fixes_in_this_file(lsp: LanguageClient, tmp_path):
        from test_lsp import apply_edits, open_and_wait

        text = CLI_SAMPLE + "\n\ndef g(p: torch.Tensor, q: torch.Tensor):\n    p.data.copy_(q.data.mul_(2))\n"
        uri, _ = await open_and_wait(lsp, tmp_path, "m.py", text, lambda d: len(d) > 0)
        start = T.Range(start=T.Position(line=0, character=0), end=T.Position(line=0, character=0))
        for only in ([T.CodeActionKind.Source], [T.CodeActionKind.SourceFixAll]):
            actions = await lsp.text_document_code_action_async(T.CodeActionParams(
                text_document=T.TextDocumentIdentifier(uri=uri), range=start,
                context=T.CodeActionContext(diagnostics=[], only=only)))
            (action,) = actions
            assert action.kind == "source.fixAll.detachlint"
            out = apply_edits(text, action.edit.changes[uri])
            assert out == fixed(text, None)  # the same passes as `check --fix`: nested writes too
            assert "    p.data.copy_(q.data.mul_(2))\n" in out and "torch.tensor([a, b])" in out  # not unsafe ones
            assert "    with torch.no_grad():\n        w.add_(1)\n" in out
        quick = await lsp.text_document_code_action_async(T.CodeActionParams(
            text_document=T.TextDocumentIdentifier(uri=uri), range=start,
            context=T.CodeActionContext(diagnostics=[], only=[T.CodeActionKind.QuickFix])))
        assert all(a.kind == T.CodeActionKind.QuickFix for a in quick or [])


# --- notebooks ----------------------------------------------------------------------------------

NOTEBOOK = REPO / "tests" / "fixtures" / "notebooks" / "train.ipynb"


def test_notebook_fix_rewrites_only_cell_sources(tmp_path):
    path = tmp_path / "nb.ipynb"
    original = NOTEBOOK.read_text(encoding="utf-8")
    path.write_text(original, encoding="utf-8")
    proc = detachlint("check", "--fix", "--unsafe-fixes", "nb.ipynb", cwd=tmp_path)
    assert proc.returncode in (0, 1), proc.stderr
    after = path.read_text(encoding="utf-8")
    before_nb, after_nb = json.loads(original), json.loads(after)
    sources = ["".join(c["source"]) for c in after_nb["cells"]]
    assert any("    p.data.add_(1)  # expect" in s for s in sources)  # a graph is pending: no edit keeps it
    assert any("snap = x.clone()" in s for s in sources)
    assert any("    !echo scaled\n" in s for s in sources) and any("??torch.tensor" in s for s in sources)
    for a, b in zip(before_nb["cells"], after_nb["cells"]):  # everything but the sources is untouched
        assert {k: v for k, v in a.items() if k != "source"} == {k: v for k, v in b.items() if k != "source"}
        assert type(a["source"]) is type(b["source"])
    assert {k: v for k, v in before_nb.items() if k != "cells"} == {k: v for k, v in after_nb.items() if k != "cells"}
    assert original.count("\n") == after.count("\n")  # same layout, line for line
    assert "TAL103" not in proc.stdout.replace("× TAL103", "")  # the fixed finding is gone
    again = detachlint("check", "--diff", "--unsafe-fixes", "nb.ipynb", cwd=tmp_path)
    assert again.returncode in (0, 1) and again.stdout == ""


def test_notebook_with_another_layout_is_left_alone(tmp_path):
    path = tmp_path / "nb.ipynb"
    compact = json.dumps(json.loads(NOTEBOOK.read_text(encoding="utf-8")), separators=(",", ":"))
    path.write_text(compact, encoding="utf-8")
    from detachlint.fixes import fix_notebook

    outcome = fix_notebook(compact, "nb.ipynb", None, unsafe=True)
    assert not outcome.changed and outcome.remaining  # still reported, never rewritten differently
