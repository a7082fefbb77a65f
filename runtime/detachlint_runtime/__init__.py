"""detachlint's runtime companion, its own distribution (``runtime/`` in the detachlint checkout).

Two modes, one vocabulary each:

- ``detachlint run`` / ``pytest --detachlint`` (:mod:`.observe`): the user's own program runs
  unchanged while torch's hooks watch for the hazards; static findings get ``confirmed`` /
  ``observed`` / ``harmless-in-run`` / ``unobservable`` / ``not-run``.
- ``detachlint check --confirm`` (pattern mode, below): a finding's signature becomes a minimal
  reproducer; verdicts ``reproduced`` / ``not-reproduced`` / ``no-reproducer``, per configuration.

The core never imports this package except from the two CLI hooks. Importing it does not import
torch either: reproductions run in worker subprocesses (``detachlint_runtime.worker``), which import
torch and ``detachlint_runtime.recipes``; ``detachlint run`` imports torch when it starts.

Pattern signature
=================
Every finding a rule can confirm carries ``Finding.signature``, a
:class:`detachlint.signature.Signature`: the rule, its ops in one spelling each, their literal
arguments and what is known of the source tensor. ``docs/runtime.md`` ("The pattern signature",
generated from that class) describes the contract; the worker parses it with the same class.

Equal signatures (compared by their canonical JSON, key order ignored) are reproduced once.

Confirmation (pattern mode)
===========================
``confirm_findings`` returns the findings with ``Finding.confirmation`` set to::

    {"verdict": "reproduced" | "not-reproduced" | "mixed" | "no-reproducer" | "inconclusive",
     "source": "pattern",
     "summary": "reproduced silent-wrong-gradient on cpu-eager, cpu-aot_eager; skipped on ...",
     "by_config": {"cpu-eager": "reproduced", "cpu-aot_eager": "not-reproduced", "cuda-eager": "skipped"},
     "configurations": [{"config": "cpu-eager", "device": "cpu", "backend": "eager",
                         "status": "reproduced" | "not-reproduced" | "no-reproducer" | "skipped"
                                   | "timeout" | "crashed",
                         "hazard": "silent-wrong-gradient" | "version-error" | "source-mutated" | ...,
                         "seen": what was seen instead when not reproduced ("copy", ...),
                         "observed": "human-readable account of what ran and what it showed",
                         "details": {...}, "seconds": 0.01, "cached": false}, ...],
     "divergent": [{"config": "cpu-aot_eager", "eager": "...", "compiled": "..."}],
     "short": "reproduced (cpu-eager, cpu-aot_eager; cuda skipped)",  # for text output
     "torch": "2.13.0+cpu", "signature_key": "..."}

The verdict is about the pattern as the linter understood it, never about the user's program.
``mixed``: the configurations that ran disagree; each one's status is shown. ``no-reproducer``: no
recipe for the rule or an op, or the recipe itself failed (the error is in ``observed``).
``inconclusive``: nothing ran to completion (timeouts, crashes, skips).

Configurations
==============
Devices ``cpu`` and ``cuda`` (``cuda`` reported as ``skipped`` with the reason when
unavailable, never confirmed); backends ``eager`` (no compile), ``aot_eager`` and, only on
request, ``inductor``. The default is eager + ``aot_eager``: ``aot_eager`` reproduced every
``inductor`` outcome in the reference matrix at a fraction of the cost (inductor's first compile
takes 15-40 s on two cores). Results are cached per (signature, configuration) under
``<cache_dir>/runtime/torch-<version>/``, keyed by the torch, detachlint and detachlint_runtime
versions and the recipe modules' sources (extra ones included), each entry checksummed; an entry
that does not match is recomputed.
"""

from __future__ import annotations

import dataclasses
import importlib
from typing import Any, Iterable, List

from .names import ALL_BACKENDS, DEFAULT_BACKENDS, INSTALL_HINT, TorchMissing
from .names import __version__  # noqa: F401 - the distribution's version

_FROM_RUNNER = ("Confirmer", "canonical", "cuda_probe", "torch_version", "verdict_line")


def __getattr__(name: str) -> Any:
    """The runner's names, imported when first asked for: detachlint's command line imports this
    package for its options on every run, and the runner brings subprocesses and threads."""
    if name in _FROM_RUNNER:
        return getattr(importlib.import_module(".runner", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ALL_BACKENDS", "DEFAULT_BACKENDS", "INSTALL_HINT", "Confirmer", "TorchMissing", "canonical",
    "confirm_findings", "cuda_probe", "torch_available", "torch_version", "verdict_line",
]


def torch_available() -> bool:
    from .runner import torch_version

    try:
        torch_version()
    except TorchMissing:
        return False
    return True


def confirm_findings(findings: Iterable, **options) -> List:
    """The findings with ``confirmation`` set; ``options`` go to :class:`Confirmer`.
    Raises :class:`TorchMissing` when torch cannot be imported."""
    from .runner import Confirmer

    findings = list(findings)
    confirmer = Confirmer(**options)
    confirmations = confirmer.confirm(f.signature for f in findings)
    return [dataclasses.replace(f, confirmation=c) for f, c in zip(findings, confirmations)]
