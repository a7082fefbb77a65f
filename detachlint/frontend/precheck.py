"""Could this source produce a finding at all? A textual test, run before the LibCST parse.

A finding sits at one of its rule's *sites* (``Rule.sites``, ``sites.py``), which the pre-check
looks for in the text: a file that spells none of the selected rules' sites cannot produce a
finding and need not be parsed by LibCST (the engine still checks that it compiles, for TAL999).
Every rule also needs one piece of *evidence* that the analyses can only get from a name spelled
in the source, so a file that spells none of them cannot produce a finding either. The evidence,
as the analyses consult it (``analysis/tensors.py``, ``analysis/aliases.py``, ``rules/``):

- a tensor kind: ``torch`` (imports, qualified names, ``isinstance``), ``Tensor`` (string
  annotations), the methods only tensors have (``catalog.TENSOR_ONLY_METHODS``), parameter and
  buffer iterators, ``state_dict``, ``register_buffer``/``register_parameter`` (class attributes),
  and module iterators (``modules()``, ``children()``: their elements' ``weight``/``bias``);
- an array kind: ``numpy`` (qualified names and ``.numpy()``);
- a write the alias analysis records on a receiver of *unknown* kind: an in-place method
  (``catalog.INPLACE_METHODS``, ``INPLACE_VIEW_METHODS``) or an ``out=`` argument; augmented and
  item assignment count only on a tensor, an array or a value made through an op only tensors
  have (``catalog.TENSOR_EVIDENCE_OPS``), and state updates only reach snapshots (``state_dict``,
  ``parameters``, ``.detach()``, ``.data``), all listed above.

Method and attribute names count only after a dot (whitespace, line continuations and comments
may sit in between), so a variable named ``data`` or ``view`` is no evidence. The test is a
superset of what can fire: it may let a file through that yields nothing, never the reverse.
``tests/test_precheck.py`` proves findings equal with and without it on the fixtures, and
``python bench/run.py --precheck-equality`` on every torch source file.
"""

from __future__ import annotations

import functools
import re
from typing import FrozenSet, Optional

from ..knowledge import catalog
from .sites import Sites

# Names that are evidence wherever they appear (imports, annotations, keyword arguments).
WORD_EVIDENCE: FrozenSet[str] = frozenset({"torch", "Tensor", "numpy", "out"})

# Names that are evidence as an attribute or method (``x.<name>``).
ATTRIBUTE_EVIDENCE: FrozenSet[str] = frozenset().union(
    catalog.TENSOR_ONLY_METHODS,
    catalog.PARAMETER_ITERATORS,
    catalog.NAMED_PARAMETER_ITERATORS,
    catalog.STATE_SNAPSHOT_METHODS,
    catalog.INPLACE_METHODS,
    catalog.INPLACE_VIEW_METHODS,
    catalog.TENSOR_EVIDENCE_OPS,
    catalog.UNTRACKED_ALIAS_ATTRIBUTES,
    {"modules", "children", "named_modules", "named_children", "register_buffer", "register_parameter"},
)

_WORD_RE = re.compile(r"\b(?:%s)\b" % "|".join(sorted(WORD_EVIDENCE)))
# ``.name``, allowing what Python allows between the dot and the name inside brackets.
# A comment runs to the end of its line (the lookahead), which keeps the pattern unambiguous: a
# line such as ``x = 1.  # ## ##`` must not be split into comments in exponentially many ways.
_ATTRIBUTE_RE = re.compile(r"\.(?:[ \t\f\r\n\\]|#[^\r\n]*(?=[\r\n]|\Z))*(\w+)")


def may_have_findings(source: str, sites: Sites) -> bool:
    """False only when no rule whose sites are ``sites`` can fire on ``source``."""
    trigger = _trigger(sites)
    if trigger is None or not trigger.search(source):
        return False
    if _WORD_RE.search(source):
        return True
    evidence = ATTRIBUTE_EVIDENCE
    return any(match.group(1) in evidence for match in _ATTRIBUTE_RE.finditer(source))


@functools.lru_cache(maxsize=16)  # one vocabulary per run; the language server may change it
def _trigger(sites: Sites) -> Optional["re.Pattern[str]"]:
    """What a finding is *about*, at least one of which every rule needs besides the evidence
    above: one of its sites, spelled (``Sites`` says how each kind is looked for). A file of
    ``v = torch.zeros(3)`` lines has evidence but nothing to report. None: no site at all."""
    words = sites.attributes | sites.keywords | sites.loop_renames
    parts = []
    if words:
        parts.append(r"\b(?:%s)\b" % "|".join(sorted(words)))
    if sites.calls:
        parts.append(r"\b(?:%s)\s*\(" % "|".join(sorted(sites.calls)))  # a call, not ``x: torch.Tensor``
    if sites.inplace_calls:
        parts.append(r"\w_\s*\(")  # a call of anything named like an in-place op (``normalize_(x)``)
    if sites.writes:
        parts.append(r"(?:\*\*|//|>>|<<|[-+*/%@&|^])=(?!=)")  # augmented assignment
        parts.append(r"\]\s*=(?!=)")  # item assignment
    return re.compile("|".join(parts)) if parts else None
