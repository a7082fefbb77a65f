"""The textual pre-check never loses a finding: results with and without it are equal."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from detachlint.knowledge import catalog
from detachlint.frontend.precheck import ATTRIBUTE_EVIDENCE, WORD_EVIDENCE, may_have_findings
from detachlint.engine import every_site, lint_source
from detachlint.findings import PARSE_ERROR_CODE
from detachlint.rules import ALL_RULES

ROOT = Path(__file__).parents[1]
ALL_CODES = [r.code for r in ALL_RULES] + [PARSE_ERROR_CODE]
SITES = every_site()  # those of every built-in rule
SOURCES = sorted((ROOT / "tests" / "fixtures").rglob("*.py")) + sorted((ROOT / "demo").rglob("*.py"))


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_fixture_findings_equal_with_and_without_precheck(path):
    source = path.read_text(encoding="utf-8")
    for codes in (None, ALL_CODES):
        assert lint_source(source, str(path), codes) == lint_source(source, str(path), codes, precheck=False)


def test_every_fixture_with_findings_passes_the_precheck():
    for path in SOURCES:
        source = path.read_text(encoding="utf-8")
        if lint_source(source, str(path), ALL_CODES, precheck=False):
            assert may_have_findings(source, SITES), path


# Each snippet yields a finding through exactly one kind of evidence; the pre-check must see it.
EVIDENCE = {
    "torch import": "import torch\ndef f(p):\n    torch.tensor(p.detach())\n",
    "inplace on unknown": "def f(x):\n    old = x\n    x.add_(1)\n    print(old)\n",
    "numpy": "import numpy as np\ndef f(a):\n    b = np.asarray(a)\n    b *= 2\n    return a\n",
    "conversion": "def f(batch):\n    images = batch.cpu().float().numpy()\n    images *= 255\n    return batch\n",
    "snapshot": "def f(model, opt):\n    best = model.state_dict()\n    opt.step()\n    save(best)\n",
    "parameters": "def f(model):\n    for p in model.parameters():\n        p.data.mul_(0.5)\n",
    "out=": "def f(a, y):\n    z = y\n    add(a, a, out=y)\n    print(z)\n",
}


@pytest.mark.parametrize("name", sorted(EVIDENCE))
def test_precheck_sees_each_kind_of_evidence(name):
    source = EVIDENCE[name]
    without = lint_source(source, "x.py", ALL_CODES, precheck=False)
    assert may_have_findings(source, SITES)
    assert lint_source(source, "x.py", ALL_CODES) == without


def test_plain_python_is_skipped_but_syntax_errors_still_reported():
    plain = "import os\n\ndef main(data, view):\n    data += 1\n    view[0] = data\n    return os.path.join('a', 'b')\n"
    assert not may_have_findings(plain, SITES)
    assert lint_source(plain, "x.py", ALL_CODES) == lint_source(plain, "x.py", ALL_CODES, precheck=False) == []
    broken = "def f(:\n    pass\n"
    assert not may_have_findings(broken, SITES)
    got = lint_source(broken, "x.py", ALL_CODES)
    assert [f.code for f in got] == [PARSE_ERROR_CODE]
    assert got == lint_source(broken, "x.py", ALL_CODES, precheck=False)
    assert lint_source(broken, "x.py", ["TAL001"]) == []


def test_attribute_evidence_allows_whitespace_and_comments_after_the_dot():
    assert may_have_findings("y = (x.  # comment\n     add_(1))\n", SITES)
    assert may_have_findings("y = x.\\\n    detach()\n", SITES)
    assert not may_have_findings("add_ = detach = 1\n", SITES)


def test_evidence_covers_the_catalogue_sets_the_analyses_consult():
    for group in (catalog.TENSOR_ONLY_METHODS, catalog.PARAMETER_ITERATORS, catalog.NAMED_PARAMETER_ITERATORS,
                  catalog.STATE_SNAPSHOT_METHODS, catalog.INPLACE_METHODS, catalog.INPLACE_VIEW_METHODS,
                  catalog.TENSOR_EVIDENCE_OPS):
        assert group <= ATTRIBUTE_EVIDENCE
    assert {"torch", "numpy"} <= WORD_EVIDENCE


def _torch_dir():
    try:
        import importlib.util

        spec = importlib.util.find_spec("torch")
    except Exception:  # pragma: no cover
        return None
    return Path(spec.origin).parent if spec and spec.origin else None


def test_torch_sources_equal_with_and_without_precheck():
    """Every torch file the pre-check skips gives the same findings linted without it (a few
    seconds: the skipped files are small). ``python bench/run.py --precheck-equality --full``
    lints every torch file both ways."""
    import sys

    sys.path.insert(0, str(ROOT / "bench"))
    from run import precheck_equality  # noqa: E402

    torch_dir = _torch_dir()
    if torch_dir is None:
        pytest.skip("torch is not installed")
    report = precheck_equality(torch_dir, jobs=os.cpu_count() or 1)
    assert report["differences"] == [], report["differences"][:5]
    assert report["skipped_by_precheck"] > 100  # the pre-check does skip files


def test_comment_runs_after_a_dot_stay_linear():
    import time

    source = "x = 1.  #" + " #" * 5000 + "\ny = 2\n"
    start = time.perf_counter()
    assert not may_have_findings(source, SITES)
    assert time.perf_counter() - start < 5  # exponential backtracking took minutes on such lines


# Evidence alone is not enough: a finding is about an alias, a constructor, a snapshot or a write.
@pytest.mark.parametrize("source", [
    "import torch\n" + "".join(f"v{i} = torch.zeros({i})\n" for i in range(50)),
    "import torch\ndef f(x: torch.Tensor):\n    y = x.view(-1)\n    return y.sum() == x.sum()\n",
])
def test_no_trigger_no_parse(source):
    assert not may_have_findings(source, SITES)
    assert lint_source(source, "t.py", ALL_CODES, precheck=False) == []


def test_a_project_helper_that_writes_is_a_trigger(tmp_path):
    from detachlint.pipeline import Projects

    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "helpers.py").write_text("def normalize(x):\n    x.sub_(x.mean())\n")
    source = ("import torch\nfrom helpers import normalize\n\n\ndef f(x: torch.Tensor):\n    y = x.view(-1)\n"
              "    normalize(x)\n    return y\n")
    (tmp_path / "main.py").write_text(source)
    view = Projects().view(tmp_path / "main.py")
    assert not may_have_findings(source, SITES) and view is not None and view.calls_effects()
    with_project = lint_source(source, "main.py", ALL_CODES, project=view)
    assert with_project == lint_source(source, "main.py", ALL_CODES, precheck=False, project=view)


def test_large_clean_file_is_checked_in_pieces_and_bad_pieces_fall_back():
    from detachlint.frontend.firstpass import CHUNKED_CHECK_SIZE, compiles_in_chunks

    # Just over the size (each line is about 21 characters): every check below reads the body
    # once or twice, and the suite's time is what a larger one would cost.
    body = "".join(f"v{i} = zeros({i})\n" for i in range(CHUNKED_CHECK_SIZE // 20))
    assert CHUNKED_CHECK_SIZE < len(body) < 1.25 * CHUNKED_CHECK_SIZE
    assert compiles_in_chunks(body)
    tricky = body + "if v1:\n    pass\nelse:\n    s = '''\nnot_code = (\n'''\n" + body + "x = (1,\n2)\n@decorator\ndef f():\n    pass\n"
    assert compiles_in_chunks(tricky)  # cuts inside a string, before else: and in brackets are rejoined
    assert not compiles_in_chunks(body + "x = (\n")  # a real error: the whole file is judged
    # what only the compiler checks across the module takes the whole module no more than a piece
    assert compiles_in_chunks("from __future__ import annotations\n" + body + "def f():\n    global v1\n")
    assert compiles_in_chunks(body + "global v1\nfrom __future__ import annotations\n")
    broken = body + "x = (\n"
    (finding,) = lint_source(broken, "big.py", ALL_CODES)
    assert finding.code == PARSE_ERROR_CODE and finding.location.row == broken.count("\n")
