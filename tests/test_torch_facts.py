"""PyTorch facts are decided in one place: ``analysis/torch_facts.py``, over the data of
``analysis/catalog.py`` (issue 32: "optimizer class" was decided three ways, and a parameter
annotated ``torch.optim.SGD`` was not an optimizer where one named ``optimizer`` was). A module
that spells one of these facts again fails here, with the predicate to call instead."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "detachlint"
HOME = {"analysis/catalog.py", "analysis/torch_facts.py"}
# The rules' sites (``WRITES``: numpy's in-place functions by name) are a vocabulary, not decisions.
VOCABULARY = {"rules/base.py"}

STRAY = {
    r"""["']torch\.optim['".]""": "an optimizer class: torch_facts.is_optimizer_class",
    r"OPTIMIZER_NAME_PATTERN": "an optimizer's name: torch_facts.is_optimizer_name",
    r"INPLACE_METHODS\s+or\s+[\w.]+\s+in\s+catalog\.INPLACE_VIEW_METHODS": "a method that writes its receiver: "
                                                                           "torch_facts.writes_receiver",
    r"NUMPY_INPLACE_FUNCTIONS": "a function that writes its first argument: torch_facts.writes_first_argument",
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
