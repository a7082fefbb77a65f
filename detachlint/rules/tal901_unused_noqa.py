"""TAL901 unused-noqa: a code in ``# noqa: TAL...`` that silenced nothing (ruff's RUF100).

The findings are made where ``# noqa`` is applied (``noqa.apply_noqa``), after every rule ran:
this class is the rule's documentation and registry entry."""

from __future__ import annotations

from ..findings import Severity
from .base import Rule, Sites


class UnusedNoqa(Rule):
    """
    ## What it does
    Flags rule codes in a `# noqa: TAL...` comment that silenced no finding on their line, as
    ruff's RUF100 does; codes of rules that did not run are named "non-enabled". Codes of other
    tools are left alone. Not on by default (select it: `--extend-select TAL901`); under flake8,
    which applies `# noqa` itself, it is not reported.

    ## Why is this bad?
    A stale suppression hides the next real finding on that line: once the code it was written for
    is gone, the comment silences whatever the rule finds there later.

    ## Example
    ```python
    import torch

    def scale(w: torch.Tensor):
        return w * 2  # noqa: TAL001
    ```

    ## Use instead
    ```python
    import torch

    def scale(w: torch.Tensor):
        return w * 2
    ```

    ## Fix safety
    The fix removes the unused codes (the whole comment when none is left). It is safe: a code
    that silenced nothing changes no finding of this run when removed (a non-enabled one may
    matter to a run that selects its rule, as with ruff).
    """

    code = "TAL901"
    severity = Severity.WARNING
    summary = "a `# noqa` code that silenced nothing"
    sites = Sites()  # reports at no node: its findings are made where `# noqa` is applied
