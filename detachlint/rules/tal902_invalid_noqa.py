"""TAL902 invalid-noqa: a ``# noqa`` comment that silences other than what it seems to.

The findings are made where ``# noqa`` is applied (``noqa.apply_noqa``): this class is the rule's
documentation and registry entry."""

from __future__ import annotations

from ..findings import Severity
from .base import Rule, Sites


class InvalidNoqa(Rule):
    """
    ## What it does
    Flags `# noqa` comments with a lower-case detachlint code (`# noqa: tal001`): flake8 (and
    detachlint, which parses them as flake8 7 does) compares codes case-sensitively, so it
    silences nothing. (`# noqa: TAL`, which flake8 reads as a blanket `# noqa`, silences this
    finding too under flake8, so it is not reported anywhere.)

    ## Why is this bad?
    The finding it was written for stays reported, or, where the comment was meant for a finding
    still to come, the author believes the line is exempt. ruff warns about such comments
    ("Invalid `# noqa` directive").

    ## Example
    ```python
    import torch

    def reset(p: torch.Tensor):
        p.data.zero_()  # noqa: tal003
    ```

    ## Use instead
    ```python
    import torch

    def reset(p: torch.Tensor):
        p.data.zero_()  # noqa: TAL003
    ```
    """

    code = "TAL902"
    severity = Severity.WARNING
    summary = "a `# noqa` comment with a lower-case code, which silences nothing"
    sites = Sites()  # reports at no node: its findings are made where `# noqa` is applied
