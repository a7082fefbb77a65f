"""Rules declare their sites (``Rule.sites``), and the engine's fast paths (the textual pre-check,
the blanking of function bodies with no site) look for the selected rules' sites: a rule from
outside ``detachlint.rules`` that declares its own gets them too, and one that declares none
turns them off, so that it is never silenced."""

from __future__ import annotations

import ast
import contextlib
import textwrap

import libcst as cst
import pytest

import detachlint.rules as registry
from detachlint import engine
from detachlint.frontend.precheck import may_have_findings
from detachlint.analysis.project import ModuleView, build_index
from detachlint.analysis.tensors import TensorFacts
from detachlint.frontend.units import LINE_RE, quiet_units
from detachlint.engine import every_site, lint_source, select_rules, vocabulary
from detachlint.findings import Severity
from detachlint.pipeline import facts_with_sites
from detachlint.rules import ALL_RULES, RULES
from detachlint.rules.base import Rule, Sites

BUILTIN = list(ALL_RULES)


class HookOnTensor(Rule):
    """
    ## What it does
    A rule from outside, for these tests: reports `t.register_hook(fn)` on a tensor.
    """

    code = "TAL980"
    name = "hook-on-tensor"
    severity = Severity.WARNING
    requires = (TensorFacts,)
    sites = Sites(calls=frozenset({"register_hook"}))

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "register_hook" \
                and self.analysis(TensorFacts).is_tensor(func.value):
            self.ctx.report(node, self.code, "a hook on a tensor", self.severity)


class HookOnTensorUndeclared(HookOnTensor):
    """
    ## What it does
    The same rule, with no sites declared.
    """

    code = "TAL981"
    name = "hook-on-tensor-undeclared"
    sites = None


QUIET = "".join(f"\n\ndef quiet_{i}(x: torch.Tensor):\n    y = x.view(-1)\n    return y.sum() + {i}\n"
                for i in range(40))
# No built-in rule's site: no ``.data``, ``.detach()``, constructor, snapshot or write of any kind.
SOURCE = "import torch\n" + QUIET + textwrap.dedent("""\


    def watch(w: torch.Tensor):
        w.register_hook(print)
        return w
    """)
WATCH_ROW = SOURCE.splitlines().index("    w.register_hook(print)") + 1


@contextlib.contextmanager
def registered(rule):
    """``rule`` registered as a plugin registers its own (``rules.register``), then removed."""
    rules, infos = list(ALL_RULES), list(RULES)
    registry.register(rule)
    try:
        yield
    finally:
        ALL_RULES[:] = rules
        RULES[:] = infos
        registry.registry._INFO.pop(rule.code)


@pytest.fixture
def parsed(monkeypatch):
    """The texts LibCST parses, as the engine hands them over."""
    texts = []

    def parse(text):
        texts.append(text)
        return real(text)

    real = engine.parse_module
    monkeypatch.setattr(engine, "parse_module", parse)
    return texts


def test_every_builtin_rule_declares_its_sites():
    for rule in BUILTIN:
        assert isinstance(rule.sites, Sites), rule.code
    assert every_site() is not None


def test_the_builtin_fast_paths_would_silence_the_outside_rule():
    """What the built-in rules' sites alone decide of ``SOURCE``: nothing to report, and the body
    that holds ``register_hook`` quiet."""
    builtin = vocabulary(BUILTIN)
    assert builtin is not None
    assert not may_have_findings(SOURCE, builtin)
    lines = LINE_RE.findall(SOURCE)
    assert any(u.first <= WATCH_ROW <= u.last for u in quiet_units(ast.parse(SOURCE), lines, builtin))


@registered(HookOnTensor)
def test_an_outside_rule_that_declares_its_sites_fires_with_the_fast_paths_on(parsed):
    sites = vocabulary(select_rules([HookOnTensor.code]))
    assert sites == HookOnTensor.sites  # selecting one rule: only its sites are looked for
    assert may_have_findings(SOURCE, sites)
    for codes in ([HookOnTensor.code], None):  # alone, and among the default rules
        parsed.clear()
        found = lint_source(SOURCE, "watch.py", codes)
        assert [(f.code, f.location.row) for f in found] == [(HookOnTensor.code, WATCH_ROW)]
        # LibCST parsed the body with the site, and none of the quiet ones (blanked, collapsed)
        assert len(parsed) == 1 and "w.register_hook(print)" in parsed[0]
        assert "x.view(-1)" not in parsed[0] and parsed[0].count("    pass\n") == 40
    parsed.clear()
    assert lint_source(QUIET, "quiet.py", [HookOnTensor.code]) == []
    assert parsed == []  # the pre-check: no ``register_hook(`` in the file, nothing parsed


@registered(HookOnTensorUndeclared)
def test_an_outside_rule_without_sites_turns_the_fast_paths_off(parsed):
    assert vocabulary(select_rules([HookOnTensorUndeclared.code, "TAL001"])) is None
    found = lint_source(SOURCE, "watch.py", [HookOnTensorUndeclared.code])
    assert [(f.code, f.location.row) for f in found] == [(HookOnTensorUndeclared.code, WATCH_ROW)]
    assert parsed == [SOURCE]  # parsed whole: nothing blanked
    parsed.clear()
    assert lint_source(QUIET, "quiet.py", [HookOnTensorUndeclared.code]) == []
    assert parsed == [QUIET]  # no pre-check either


def test_quiet_code_the_index_decided_for_fewer_sites_is_not_used(tmp_path, parsed):
    """The project index decides a file's quiet code for every rule registered when it is built;
    a rule registered later has sites it did not look for, so the engine decides again."""
    path = tmp_path / "watch.py"
    path.write_text(SOURCE)
    view = ModuleView(build_index([(path, SOURCE)], facts_of=facts_with_sites), "watch")
    first = view.first_pass(SOURCE)  # the facts are computed now, for the built-in rules' sites
    assert first is not None and first.sites == vocabulary(BUILTIN)
    assert any(u.first <= WATCH_ROW <= u.last for u in first.quiet or [])
    with registered(HookOnTensor):
        found = lint_source(SOURCE, str(path), [HookOnTensor.code], project=view)
    assert [(f.code, f.location.row) for f in found] == [(HookOnTensor.code, WATCH_ROW)]
    assert len(parsed) == 1 and "x.view(-1)" not in parsed[0]  # blanked all the same, for its own sites


def test_selecting_fewer_rules_makes_the_fast_paths_stronger():
    only = vocabulary(select_rules(["TAL103"]))
    assert only is not None and only <= every_site()  # type: ignore[operator]
    writes = "import torch\ndef f(x: torch.Tensor):\n    x += 1\n    return x\n"
    assert may_have_findings(writes, every_site())  # type: ignore[arg-type]
    assert not may_have_findings(writes, only)
    lines = LINE_RE.findall(writes)
    assert quiet_units(ast.parse(writes), lines, every_site()) == []  # type: ignore[arg-type]
    assert [(u.first, u.last) for u in quiet_units(ast.parse(writes), lines, only)] == [(3, 4)]


def test_noqa_rules_still_report_where_no_rule_can_fire():
    source = "import os\n\ndef f():\n    return os.sep  # noqa: tal001\n"
    assert [f.code for f in lint_source(source, "n.py", ["TAL902"])] == ["TAL902"]
    source = "import os\n\ndef f():\n    return os.sep  # noqa: TAL001\n"
    assert [f.code for f in lint_source(source, "n.py", ["TAL001", "TAL901"])] == ["TAL901"]
    assert [f.code for f in lint_source("def f(:\n", "e.py", ["TAL103", "TAL999"])] == ["TAL999"]
