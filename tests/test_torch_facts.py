"""PyTorch facts are decided in one place: ``knowledge/torch_facts.py``, over the data of
``knowledge/catalog.py`` (issue 32: "optimizer class" was decided three ways, and a parameter
annotated ``torch.optim.SGD`` was not an optimizer where one named ``optimizer`` was). A module
that spells one of these facts again fails here, with the predicate to call instead."""

from __future__ import annotations

import ast
import builtins
import re
from pathlib import Path

import pytest

from detachlint.knowledge import catalog, saved_ops

PACKAGE = Path(__file__).resolve().parents[1] / "detachlint"
HOME = {"knowledge/__init__.py", "knowledge/catalog.py", "knowledge/saved_ops.py", "knowledge/torch_facts.py"}
# Vocabularies of names, not decisions: the rules' sites (``WRITES``: numpy's in-place functions by
# name) and the pre-check's evidence words (``Tensor``, ``numpy``).
VOCABULARY = {"rules/base.py", "frontend/precheck.py"}

STRAY = {
    r"""["']torch\.optim['".]""": "an optimizer class: torch_facts.is_optimizer_class",
    r"OPTIMIZER_NAME_PATTERN": "an optimizer's name: torch_facts.is_optimizer_name",
    r"INPLACE_METHODS\s+or\s+[\w.]+\s+in\s+catalog\.INPLACE_VIEW_METHODS": "a method that writes its receiver: "
                                                                           "torch_facts.writes_receiver",
    r"NUMPY_INPLACE_FUNCTIONS": "a function that writes its first argument: torch_facts.writes_first_argument",
    r"catalog\.VIEW_METHODS": "a view method: torch_facts.is_view_method",
    r"catalog\.VIEW_ATTRIBUTES": "a view attribute: torch_facts.is_view_attribute",
    r"catalog\.MAY_ALIAS_METHODS": "a method that may return its receiver: torch_facts.may_return_receiver",
    r"catalog\.MAY_ALIAS_CONVERSIONS": "a may-alias conversion: torch_facts.may_alias_conversion",
    r"catalog\.COPY_INTENT_CONVERSION": "a conversion meant as a copy: torch_facts.is_copy_intent_conversion, "
                                        "converts_argument",
    r"saved_ops|SAVES_(?:RESULT|INPUT)": "an op that saves for backward: torch_facts.saves_result, saves_input",
}


def _code(path: Path) -> str:
    """The module without comments and docstring-only lines (they may name a fact)."""
    lines = [line.split("#", 1)[0] for line in path.read_text(encoding="utf-8").splitlines()]
    return "\n".join(line for line in lines if not line.strip().startswith(("``", '"""')))


@pytest.mark.parametrize("pattern", list(STRAY))
def test_no_module_decides_a_torch_fact_of_its_own(pattern):
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        name = path.relative_to(PACKAGE).as_posix()
        if name in HOME or (name in VOCABULARY and pattern == "NUMPY_INPLACE_FUNCTIONS"):
            continue
        if re.search(pattern, _code(path)):
            found.append(name)
    assert not found, f"{found} decide {STRAY[pattern]} themselves"


# Op names of views, conversions and ops that save for backward; Python's own names (``float``,
# ``type``) are left out, as they name builtins as often as tensor methods.
OP_NAMES = (catalog.VIEW_METHODS | catalog.VIEW_ATTRIBUTES | catalog.VIEW_FUNCTIONS | catalog.MAY_ALIAS_METHODS
            | catalog.MAY_ALIAS_CONVERSIONS | {q.rsplit(".", 1)[-1] for q in catalog.FUNCTION_EFFECTS}
            | saved_ops.SAVES_RESULT | saved_ops.SAVES_INPUT) - set(dir(builtins))


def _op_lists(tree: ast.AST):
    """The inline collections of two or more op names (``("asarray", "as_tensor")``): a list of
    ops of the module's own. One name compared alone (``method == "to"``) asks about that op."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            ops = [e.value for e in node.elts if isinstance(e, ast.Constant) and e.value in OP_NAMES]
            if len(ops) >= 2:
                yield node.lineno, ops


def test_no_module_keeps_a_list_of_ops_of_its_own():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        name = path.relative_to(PACKAGE).as_posix()
        if name in HOME or name in VOCABULARY:
            continue
        found += [f"{name}:{line} {ops}" for line, ops in _op_lists(ast.parse(path.read_text(encoding="utf-8")))]
    assert not found, f"inline lists of ops (put them in catalog.py, ask torch_facts): {found}"


def test_the_op_list_check_can_fail():
    stray = ast.parse('if func.attr in ("asarray", "as_tensor", "from_numpy"):\n    pass\n')
    assert [ops for _, ops in _op_lists(stray)] == [["asarray", "as_tensor", "from_numpy"]]
    assert not list(_op_lists(ast.parse('if func.value in ("len", "isinstance", "float"):\n    pass\n')))
