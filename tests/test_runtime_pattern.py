"""The runtime companion, run for real: torch in worker subprocesses, eager and torch.compile.

Most cases share one ``Confirmer.confirm`` call (one worker process, eager + aot_eager) so the
suite stays fast on two cores; a few run under inductor; CUDA cases run only where CUDA is.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")  # CI installs torch==2.13.0, then the runtime dist (./runtime)
pytest.importorskip("detachlint_runtime")

from detachlint.knowledge.catalog import KEPT_THROUGH_DATA  # noqa: E402
from detachlint.signature import Signature  # noqa: E402
from detachlint_runtime import Confirmer, canonical, confirm_findings, verdict_line  # noqa: E402
from detachlint_runtime.recipes import Config, NotApplicable  # noqa: E402
from detachlint_runtime.rules import reproduce  # noqa: E402
from detachlint_runtime.runner import aggregate  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
CUDA = torch.cuda.is_available()

# (id, signature, expected verdict, expected hazard on cpu-eager, expected hazard on cpu-aot_eager)
# A hazard of None means not confirmed in that configuration.
CASES = [
    # TAL001 .data writes: silent wrong gradient while a graph is pending; harmless after backward.
    ("tal001-mul-pending", {"rule": "TAL001", "ops": ["mul_"], "write": "inplace", "source": {"pending_graph": True}},
     "reproduced", "silent-wrong-gradient", "silent-wrong-gradient"),
    ("tal001-assign-pending", {"rule": "TAL001", "write": "assign", "source": {"pending_graph": True}},
     "reproduced", "silent-wrong-gradient", "silent-wrong-gradient"),
    ("tal001-init-no-graph",
     {"rule": "TAL001", "ops": ["normal_"], "write": "init", "source": {"pending_graph": False}},
     "not-reproduced", None, None),
    # TAL002 .data reads: a write through the alias is invisible; a copy is not an alias.
    ("tal002-data", {"rule": "TAL002", "ops": ["data"]}, "reproduced", "silent-wrong-gradient", "silent-wrong-gradient"),
    ("tal002-data-clone", {"rule": "TAL002", "ops": ["data", "clone"]}, "not-reproduced", None, None),
    # TAL101 torch.tensor(t): the copy-construct warning; a Python list does not warn.
    ("tal101-tensor", {"rule": "TAL101", "ops": ["tensor"]}, "reproduced", "copy-construct-warning",
     "copy-construct-warning"),
    ("tal101-list", {"rule": "TAL101", "ops": ["tensor"], "source": {"type": "list"}}, "not-reproduced", None, None),
    # TAL102 torch.tensor([t0, t1]): the graph is dropped; nothing to drop without grad.
    ("tal102-backward", {"rule": "TAL102", "ops": ["tensor"], "source": {"calls_backward": True}}, "reproduced",
     "graph-dropped", "graph-dropped"),
    ("tal102-no-grad", {"rule": "TAL102", "ops": ["tensor"], "source": {"calls_backward": False}}, "not-reproduced",
     None, None),
    # TAL103 torch.Tensor(t): an alias; a dtype mismatch raises instead.
    ("tal103-Tensor", {"rule": "TAL103", "ops": ["Tensor"]}, "reproduced", "alias", "alias"),
    ("tal103-LongTensor-of-float", {"rule": "TAL103", "ops": ["LongTensor"], "source": {"dtype": "float32"}},
     "not-reproduced", None, None),
    # TAL201 detach-inplace: .cpu().float().numpy() aliases a CPU float tensor, copies a float64 one.
    ("tal201-numpy-chain", {"rule": "TAL201", "ops": ["detach", "cpu", "float", "numpy", "mul_"]}, "reproduced",
     "source-mutated", "source-mutated"),
    ("tal201-numpy-chain-float64", {"rule": "TAL201", "ops": ["detach", "cpu", "float", "numpy", "mul_"],
                                    "source": {"dtype": "float64", "dtype_known": True}}, "not-reproduced", None, None),
    ("tal201-detach-saved", {"rule": "TAL201", "ops": ["detach", "mul_"], "source": {"pending_graph": True}},
     "reproduced", "version-error", "version-error"),
    # numpy writes: silent in eager, loud under compile (Dynamo traces numpy as torch ops).
    ("tal201-numpy-saved", {"rule": "TAL201", "ops": ["detach", "numpy", "mul_"], "source": {"pending_graph": True}},
     "reproduced", "silent-wrong-gradient", "version-error"),
    # TAL301 views: a view shares; reshape of a non-contiguous tensor copies.
    ("tal301-view", {"rule": "TAL301", "ops": ["view", "mul_"]}, "reproduced", "source-mutated", "source-mutated"),
    ("tal301-reshape-noncontiguous", {"rule": "TAL301", "ops": ["reshape", "mul_"], "source": {"contiguous": False}},
     "not-reproduced", None, None),
    ("tal301-source-written", {"rule": "TAL301", "ops": ["t"], "written": "source"}, "reproduced",
     "alias-mutated", "alias-mutated"),
    # a subscript's own index, the source written
    ("tal301-written-source", {"rule": "TAL301", "ops": ["__getitem__", "mul_"], "args": ["[0]", "0.5"],
                               "written": "source"}, "reproduced", "alias-mutated", "alias-mutated"),
    # the op's own arguments: narrow(0, 1, 1) is the second row, and the write is the static one
    ("tal301-narrow-args", {"rule": "TAL301", "ops": ["narrow", "clamp_"], "args": ["0, 1, 1", "0, 1"]},
     "reproduced", "source-mutated", "source-mutated"),
    # as_strided with its real arguments reproduces; without them there is no reproducer
    ("tal301-as-strided", {"rule": "TAL301", "ops": ["as_strided", "mul_"], "args": ["(2,), (1,)", "3"]},
     "reproduced", "source-mutated", "source-mutated"),
    ("tal301-as-strided-no-args", {"rule": "TAL301", "ops": ["as_strided", "mul_"]}, "no-reproducer", None, None),
    # expand + in-place: loud in eager, silently wrong under aot_eager/inductor.
    ("tal301-expand", {"rule": "TAL301", "ops": ["expand", "add_"]}, "reproduced", "overlap-error", "source-mutated"),
    # TAL401 snapshots: state_dict() aliases the weights; deepcopy does not.
    ("tal401-state-dict", {"rule": "TAL401", "ops": ["state_dict", "step"]}, "reproduced", "stale-snapshot",
     "stale-snapshot"),
    ("tal401-deepcopy", {"rule": "TAL401", "ops": ["state_dict", "deepcopy", "step"]}, "not-reproduced", None, None),
    ("tal401-weight-detach-ema", {"rule": "TAL401", "ops": ["detach", "mul_"], "source": {"module_state": True}},
     "reproduced", "stale-snapshot", "stale-snapshot"),
    ("tal401-weight-clone", {"rule": "TAL401", "ops": ["clone", "step"], "source": {"module_state": True}},
     "not-reproduced", None, None),
    # torch.from_numpy(arr) then a write: the array changes (a numpy source).
    ("tal301-from-numpy", {"rule": "TAL301", "ops": ["from_numpy", "mul_"]}, "reproduced", "source-mutated",
     "source-mutated"),
    # Ops and rules without a recipe.
    ("unknown-op", {"rule": "TAL001", "ops": ["frobnicate_"], "write": "inplace", "source": {"pending_graph": True}},
     "no-reproducer", None, None),
    ("unknown-rule", {"rule": "TAL900", "ops": ["mul_"]}, "no-reproducer", None, None),
]


SIG = {c[0]: c[1] for c in CASES}


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    cache = tmp_path_factory.mktemp("cache")
    confirmer = Confirmer(cache_dir=cache)
    out = confirmer.confirm([sig for _, sig, *_ in CASES])
    return {case[0]: r for case, r in zip(CASES, out)}, confirmer, cache


def by_config(confirmation):
    return {c["config"]: c for c in confirmation["configurations"]}


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_verdict_eager_and_compiled(results, case):
    name, sig, verdict, eager_hazard, compiled_hazard = case
    confirmation = results[0][name]
    # CPU truths: on a machine with a GPU, CUDA may honestly differ (test_cuda_eager_and_compiled).
    cpu = aggregate([c for c in confirmation["configurations"] if c["device"] == "cpu"], "", "")
    assert cpu["verdict"] == verdict, confirmation["summary"]
    configs = by_config(confirmation)
    if verdict == "no-reproducer":
        assert configs["cpu-eager"]["status"] == "no-reproducer"
        return
    for config, hazard in (("cpu-eager", eager_hazard), ("cpu-aot_eager", compiled_hazard)):
        result = configs[config]
        if hazard is None:
            assert result["status"] == "not-reproduced", result
            assert result["seen"] and result["observed"]
        else:
            assert result["status"] == "reproduced", result
            assert result["hazard"] == hazard, result
    diverges = {d["config"] for d in confirmation["divergent"]}
    assert ("cpu-aot_eager" in diverges) == (eager_hazard != compiled_hazard)


def test_unknown_dtype_runs_the_no_op_and_the_converting_case(results):
    eager = by_config(results[0]["tal201-numpy-chain"])["cpu-eager"]
    assert eager["details"]["dtype_cases"] == {"float32": "reproduced", "float64": "not-reproduced"}
    assert eager["details"]["seen_when"] == "float32"
    assert "as float32" in eager["observed"] and "as float64" in eager["observed"]


def test_op_arguments_are_kept(results):
    eager = by_config(results[0]["tal301-narrow-args"])["cpu-eager"]
    assert "narrow(0, 1, 1)" in eager["observed"] and "clamp_(0, 1)" in eager["observed"], eager["observed"]
    missing = by_config(results[0]["tal301-as-strided-no-args"])["cpu-eager"]
    assert "as_strided" in missing["observed"] and "TypeError" in missing["observed"]


def test_not_confirmed_says_what_was_seen(results):
    reshape = by_config(results[0]["tal301-reshape-noncontiguous"])["cpu-eager"]
    assert reshape["seen"] == "copy" and "reshape" in reshape["observed"]
    legacy = by_config(results[0]["tal103-LongTensor-of-float"])["cpu-eager"]
    assert legacy["seen"] == "legacy-dtype-error" and "TypeError" in legacy["observed"]


def test_cuda_is_skipped_with_a_reason_not_confirmed(results):
    for confirmation in results[0].values():
        for c in confirmation["configurations"]:
            if c["device"] == "cuda" and not CUDA:
                assert c["status"] == "skipped" and c["observed"]


def test_numpy_alias_is_not_applicable_off_the_cpu_with_the_reason():
    # Raised before any tensor is made, so this holds without a GPU; the verdict ignores it, as it
    # ignores a skipped configuration.
    with pytest.raises(NotApplicable, match="NumPy"):
        reproduce(Signature("TAL201", ("detach", "cpu", "float", "numpy", "mul_")), Config("cuda", "eager"))
    cpu = {"config": "cpu-eager", "device": "cpu", "backend": "eager", "status": "reproduced", "hazard": "h"}
    cuda = {"config": "cuda-eager", "device": "cuda", "backend": "eager", "status": "not-applicable",
            "observed": "on cuda a NumPy array cannot share the tensor's memory"}
    out = aggregate([cpu, cuda], "t", "k")
    assert out["verdict"] == "reproduced" and out["short"] == "reproduced (cpu-eager; cuda not-applicable)"


def test_second_run_hits_the_cache_and_reproduces_nothing(results):
    first, confirmer, cache = results
    assert confirmer.reproductions > 0
    again = Confirmer(cache_dir=cache)
    second = again.confirm([sig for _, sig, *_ in CASES])
    assert again.reproductions == 0 and again.cache_hits > 0
    for case, r in zip(CASES, second):
        assert r["verdict"] == first[case[0]]["verdict"]
        assert all(c["cached"] for c in r["configurations"] if c["status"] in ("reproduced", "not-reproduced"))
    files = list((Path(cache) / "runtime").rglob("*.json"))
    assert files and all(json.loads(f.read_text())["signature"] for f in files)


def test_equal_signatures_are_reproduced_once(tmp_path):
    a = {"rule": "TAL103", "ops": ["Tensor"], "source": {"dtype": "float32", "requires_grad": True}}
    b = {"source": {"requires_grad": True, "dtype": "float32"}, "ops": ["Tensor"], "rule": "TAL103"}
    assert canonical(Signature.from_json(a)) == canonical(Signature.from_json(b))
    confirmer = Confirmer(cache_dir=tmp_path, backends=("eager",))
    out = confirmer.confirm([a, b, a, None])
    assert confirmer.reproductions == 1 + (1 if CUDA else 0)
    assert [r["verdict"] for r in out] == ["reproduced", "reproduced", "reproduced", "no-reproducer"]


CRASHY = textwrap.dedent('''
    import os, time
    from detachlint_runtime.recipes import recipe, reproduced

    @recipe("TEST901")
    def crash(sig, config):
        os.abort()  # takes the whole worker process down (SIGABRT)

    @recipe("TEST902")
    def hang(sig, config):
        time.sleep(600)

    @recipe("TEST903")
    def fine(sig, config):
        import torch
        return reproduced("ok", f"ran on torch {torch.__version__}")
''')


def test_crash_and_hang_are_isolated(tmp_path, monkeypatch):
    (tmp_path / "crashy_recipes.py").write_text(CRASHY)
    recipes = str(tmp_path / "crashy_recipes.py")
    confirmer = Confirmer(cache_dir=tmp_path / "cache", backends=("eager",), devices=("cpu",),
                          recipe_modules=(recipes,), time_limits={"eager": 5})
    out = confirmer.confirm([{"rule": "TEST901", "ops": []}, {"rule": "TEST903", "ops": []},
                             {"rule": "TEST902", "ops": []}, {"rule": "TEST903", "ops": ["again"]}])
    statuses = [r["configurations"][0]["status"] for r in out]
    assert statuses == ["crashed", "reproduced", "timeout", "reproduced"]
    assert "signal 6" in out[0]["configurations"][0]["observed"]
    assert "5 s limit" in out[2]["configurations"][0]["observed"]
    assert out[0]["verdict"] == out[2]["verdict"] == "inconclusive"
    # Crashes and timeouts are not cached: the next run tries again.
    again = Confirmer(cache_dir=tmp_path / "cache", backends=("eager",), devices=("cpu",),
                      recipe_modules=(recipes,), time_limits={"eager": 5})
    again.confirm([{"rule": "TEST903", "ops": []}])
    assert again.reproductions == 0


def test_every_fixture_finding_gets_a_verdict(tmp_path):
    """The rules' own fixtures, through the companion: every finding is reproduced (no recipe
    error, nothing inconclusive); .data writes are confirmed exactly where a graph is pending."""
    from detachlint.pipeline import lint_path
    from fixture_expectations import fixture_files, selected_codes

    findings = []
    for path in fixture_files():
        findings.extend(lint_path(path, selected_codes(path, path.read_text(encoding="utf-8"))))
    out = confirm_findings(findings, cache_dir=tmp_path)
    assert out
    for f in out:
        where = (f.filename, f.location.row, f.code, f.confirmation["summary"])
        assert f.confirmation["verdict"] in ("reproduced", "not-reproduced", "mixed", "no-reproducer"), where
        assert f.confirmation["source"] == "pattern"
        assert not [c for c in f.confirmation["configurations"] if "the recipe failed" in c["observed"]], where
        assert verdict_line(f.confirmation) == f.confirmation["short"]
        if f.code in ("TAL001", "TAL003"):
            # a shape, stride or storage op through ``.data`` (TAL003): its claim, that the tensor
            # keeps its layout, is what is reproduced, pending graph or not
            alias_only = f.code == "TAL003" and f.signature.ops[:1] and f.signature.ops[0] in KEPT_THROUGH_DATA
            expected = "reproduced" if f.signature.source.pending_graph or alias_only else "not-reproduced"
            assert f.confirmation["verdict"] == expected, where


def test_recipes_call_every_op_kept_through_data():
    """The runtime's recipes know how to call each op the catalogue says changes only the alias."""
    from detachlint_runtime.rules.tal001 import SIZE_KEEPING_CALLS
    from detachlint_runtime.rules.tal003 import ALIAS_ONLY_CALLS

    assert set(ALIAS_ONLY_CALLS) == set(KEPT_THROUGH_DATA)
    assert set(SIZE_KEEPING_CALLS) == set(KEPT_THROUGH_DATA) - {"set_"}


# -- inductor: a few real cases (first compile 15-40 s cold on two cores) -----------------------

def test_inductor_agrees_with_aot_eager(tmp_path):
    sigs = [SIG["tal001-mul-pending"], SIG["tal301-expand"]]  # .data silent gradient; expand + in-place
    confirmer = Confirmer(cache_dir=tmp_path, backends=("eager", "inductor"), devices=("cpu",))
    out = confirmer.confirm(sigs)
    data, expand = (by_config(r) for r in out)
    assert data["cpu-inductor"]["status"] == "reproduced"
    assert data["cpu-inductor"]["hazard"] == "silent-wrong-gradient"
    assert expand["cpu-eager"]["hazard"] == "overlap-error"
    assert expand["cpu-inductor"]["hazard"] == "source-mutated"  # silently wrong under inductor
    assert [d["config"] for d in out[1]["divergent"]] == ["cpu-inductor"]


# -- CUDA: runs only on a machine with a GPU ----------------------------------------------------

@pytest.mark.skipif(not CUDA, reason="CUDA is not available (torch.cuda.is_available() is False)")
def test_cuda_eager_and_compiled(tmp_path):
    sigs = [SIG["tal001-mul-pending"], {"rule": "TAL201", "ops": ["detach", "cpu", "float", "numpy", "mul_"]},
            {"rule": "TAL301", "ops": ["view", "mul_"]}, {"rule": "TAL401", "ops": ["state_dict", "step"]}]
    confirmer = Confirmer(cache_dir=tmp_path, backends=("eager", "aot_eager"), devices=("cuda",))
    data, numpy_chain, view, snapshot = (by_config(r) for r in confirmer.confirm(sigs))
    for config in ("cuda-eager", "cuda-aot_eager"):
        assert data[config]["hazard"] == "silent-wrong-gradient"
        assert view[config]["status"] == "reproduced"
        assert snapshot[config]["status"] == "reproduced"
        # .cpu() of a CUDA tensor copies: the NumPy alias cannot happen there.
        assert numpy_chain[config]["status"] == "not-applicable" and "NumPy" in numpy_chain[config]["observed"]


# -- the command line ---------------------------------------------------------------------------

def run_cli(args, cwd, env=None):
    env = dict(os.environ, **(env or {}))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-m", "detachlint", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


def test_cli_confirm_json_and_text(tmp_path):
    fixture = str(FIXTURES / "tal103_legacy_constructor_alias.py")
    # CPU truths (--confirm-devices cpu): on CUDA the legacy constructors behave differently.
    proc = run_cli(["check", "--confirm", "--confirm-devices", "cpu", "--output-format", "json", fixture], cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    findings = json.loads(proc.stdout)
    assert findings and all(f["confirmation"]["verdict"] == "reproduced" for f in findings)
    assert all(c["config"] for f in findings for c in f["confirmation"]["configurations"])
    assert (tmp_path / ".detachlint_cache" / "runtime").is_dir()
    text = run_cli(["check", "--confirm", "--confirm-devices", "cpu", fixture], cwd=tmp_path)  # cached now
    assert "reproduced" in text.stdout, text.stdout
    sarif = json.loads(run_cli(["check", "--confirm", "--confirm-devices", "cpu", "--output-format", "sarif", fixture],
                               cwd=tmp_path).stdout)
    results = sarif["runs"][0]["results"]
    assert results and all(r["properties"]["confirmation"]["verdict"] == "reproduced" for r in results)


def test_cli_confirm_and_run_without_the_runtime_dist(tmp_path):
    """The core alone (no detachlint_runtime importable): --confirm and run exit 2 and name a command
    that works from a checkout; plain linting is unaffected."""
    shim = tmp_path / "shim" / "detachlint_runtime"
    shim.mkdir(parents=True)
    (shim / "__init__.py").write_text("raise ImportError(\"No module named 'detachlint_runtime' (simulated)\")\n")
    fixture = str(FIXTURES / "tal103_legacy_constructor_alias.py")
    env = {"PYTHONPATH": str(shim.parent)}
    for args in (["check", "--confirm", fixture], ["check", "--confirm", "--confirm-backends", "eager", fixture],
                 ["run", fixture], ["run", "-m", "json.tool"]):
        proc = run_cli(args, cwd=tmp_path, env=env)
        assert proc.returncode == 2, (args, proc.stderr)
        assert "pip install ./runtime" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    plain = run_cli(["check", fixture], cwd=tmp_path, env=env)
    assert plain.returncode == 1  # the linter itself never needs the runtime or torch


def test_core_never_imports_torch():
    code = ("import sys, detachlint, detachlint.cli, detachlint.engine, detachlint_runtime, "
            "detachlint_runtime.command; "
            "print('torch' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert proc.stdout.strip() == "False", proc.stderr


def test_progress_bar_only_on_a_terminal():
    import io

    from detachlint_runtime.command import Progress

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    plain, tty = io.StringIO(), Terminal()
    Progress(plain)(1, 4, "TAL001 mul_ on cpu-eager")
    bar = Progress(tty)
    bar.enabled = True  # CI may set CI=1; the bar itself is what is tested here
    bar(1, 4, "TAL001 mul_ on cpu-eager")
    assert plain.getvalue() == ""
    assert "confirming [#####" in tty.getvalue() and "1/4" in tty.getvalue()
