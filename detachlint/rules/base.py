"""What a rule is: a short class with its documentation, code and default severity (its name and
whether it is on by default are the registry's data, ``rules/registry.py``).

A rule's docstring is its documentation, in four parts (## What it does, ## Why is this bad?,
## Example, ## Use instead), rendered by ``detachlint rule``, the README and the LSP hover.
Rules receive the per-module ``Context``, declare the analyses they ask for in ``requires`` and
the nodes they report at in ``sites``, and report nodes; they never parse or walk on their own.

Adding a rule
-------------
One new file, ``rules/talNNN_<name>.py`` (after its code and name), holding the class: the
four-part docstring, ``code``, ``severity``, ``summary``, ``requires``, ``sites`` and the
``visit_*`` methods; its line in ``registry.RULES``; its fixture, ``tests/fixtures/talNNN_<name>.py``
(findings marked inline: ``# expect: TALNNN warning``); and its docs, which
``python -m detachlint.docs`` writes from the docstring (``docs/rules.md``, the README's table).
Nothing else: the engine's fast paths (the textual pre-check, the skipping of function bodies
that hold no site) look for the sites the selected rules declare. A rule from outside (a
plugin's, a test's) is added with ``rules.register(cls)``, and gets the same fast paths when it
declares its ``sites``.
"""

from __future__ import annotations

import inspect
import re
from typing import TYPE_CHECKING, ClassVar, Dict, Optional, Tuple, Type, TypeVar

from ..knowledge import catalog
from ..analysis.base import Analysis
from ..frontend.sites import Sites
from ..findings import Severity, rules_doc_uri
from .registry import anchor, rule_info

if TYPE_CHECKING:
    from ..context import Context

A = TypeVar("A", bound=Analysis)

__all__ = ["Rule", "Sites", "WRITES"]

# A write of any kind, where the alias rules report (``AliasRule``): an in-place method or a
# function named like one, numpy's in-place functions, ``out=``/``inplace=``, an augmented or an
# item assignment.
WRITES = Sites(calls=frozenset(name.rsplit(".", 1)[-1] for name in catalog.NUMPY_INPLACE_FUNCTIONS),
               keywords=catalog.WRITE_KEYWORDS, inplace_calls=True, writes=True)


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    severity: ClassVar[Severity] = Severity.WARNING
    default_enabled: ClassVar[bool] = True
    summary: ClassVar[str] = ""
    # The analyses the rule asks for (``self.analysis(TensorFacts)``): only these are built for it.
    requires: ClassVar[Tuple[Type[Analysis], ...]] = ()
    # The nodes the rule reports at (``frontend/sites.py``). The engine skips a file that spells
    # none of the selected rules' sites, skips the function bodies that hold none, and first runs
    # the rules on a tree built from Python's, which has no comments: a rule that reads comments,
    # or whose sites are unknown, leaves it None, and then every file is parsed whole.
    sites: ClassVar[Optional[Sites]] = None

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        info = rule_info(cls.__dict__.get("code", ""))
        if info is not None:  # a built-in rule: its name and default are the registry's
            cls.name, cls.default_enabled = info.name, info.default_enabled

    def __init__(self, ctx: "Context") -> None:
        self.ctx = ctx

    def analysis(self, kind: Type[A]) -> A:
        """The analysis ``kind`` of this module (or of the scope being visited), typed."""
        if kind not in self.requires:
            raise TypeError(f"{type(self).__name__} asks for {kind.__name__} without declaring it in `requires`")
        return self.ctx.get(kind)

    @classmethod
    def documentation(cls) -> str:
        return inspect.cleandoc(cls.__doc__ or "")

    @classmethod
    def sections(cls) -> Dict[str, str]:
        """The documentation split on its ``## `` headings."""
        out: Dict[str, str] = {}
        current = ""
        for line in cls.documentation().splitlines():
            match = re.match(r"^## (.+)$", line)
            if match:
                current = match.group(1).strip()
                out[current] = ""
            elif current:
                out[current] += line + "\n"
        return {k: v.strip("\n") for k, v in out.items()}

    @classmethod
    def anchor(cls) -> str:
        return anchor(cls.code, cls.name)

    @classmethod
    def url(cls) -> Optional[str]:  # type: ignore[override]
        """Where the rule is documented: the metadata's documentation URL, else the shipped
        ``rules.md`` (a ``file:`` URI), if present (``findings.rules_doc_uri``)."""
        return rules_doc_uri(cls.anchor())
