"""``detachlint check --confirm``: the command-line side of the runtime companion.

``cli.py`` calls :func:`add_arguments` and :func:`confirm`; everything else about confirmation
(options, the progress bar, the missing-torch message) lives here. No torch import.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, List, Optional, TextIO

from .runner import ALL_BACKENDS, DEFAULT_BACKENDS, INSTALL_HINT, TorchMissing


def _backends(value: str) -> List[str]:
    names = [v.strip() for v in value.split(",") if v.strip()]
    if not names:
        raise argparse.ArgumentTypeError("give at least one backend, e.g. eager,aot_eager")
    return names


def _devices(value: str) -> List[str]:
    names = [v.strip() for v in value.split(",") if v.strip()]
    bad = [n for n in names if n not in ("cpu", "cuda")]
    if bad or not names:
        raise argparse.ArgumentTypeError(f"devices are cpu and cuda, not {', '.join(bad) or 'nothing'}")
    return names


def add_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "runtime confirmation (needs torch: pip install \"detachlint[runtime]\")")
    group.add_argument("--confirm", action="store_true",
                       help="reproduce each finding's pattern with torch and attach a verdict "
                            "(confirmed / not-confirmed / no-reproducer)")
    group.add_argument("--confirm-backends", type=_backends, default=list(DEFAULT_BACKENDS), metavar="NAMES",
                       help=f"eager and torch.compile backends to run (default: {','.join(DEFAULT_BACKENDS)}; "
                            f"add inductor for real compiles: {','.join(ALL_BACKENDS)}, 15-40 s cold)")
    group.add_argument("--confirm-devices", type=_devices, default=["cpu", "cuda"], metavar="NAMES",
                       help="devices to run on (default: cpu,cuda; cuda is skipped with a reason when absent)")
    group.add_argument("--confirm-cache-dir", default=os.environ.get("DETACHLINT_CACHE_DIR", ".detachlint_cache"),
                       metavar="DIR", help="where reproduction results are cached (default: .detachlint_cache)")
    group.add_argument("--no-confirm-cache", action="store_true", help="reproduce everything again")


class Progress:
    """A one-line progress bar on stderr, only when stderr is a terminal."""

    def __init__(self, stream: TextIO = sys.stderr) -> None:
        self.stream = stream
        self.enabled = bool(getattr(stream, "isatty", lambda: False)()) and not os.environ.get("CI")
        self.width = 0

    def __call__(self, done: int, total: int, label: str) -> None:
        if not self.enabled or total == 0:
            return
        filled = int(20 * done / total)
        text = f"\rconfirming [{'#' * filled}{'.' * (20 - filled)}] {done}/{total} {label}"[:100]
        self.stream.write(text.ljust(self.width))
        self.width = len(text)
        if done == total:
            self.stream.write("\r" + " " * self.width + "\r")
        self.stream.flush()


def confirm(args: argparse.Namespace, findings: List[Any]) -> Optional[List[Any]]:
    """The findings with ``confirmation`` attached; None (after printing the install command)
    when torch is missing, for the caller to exit 2."""
    from . import confirm_findings

    try:
        return confirm_findings(
            findings, backends=args.confirm_backends, devices=args.confirm_devices,
            cache_dir=None if args.no_confirm_cache else args.confirm_cache_dir, progress=Progress())
    except TorchMissing as exc:
        # pre-commit builds the hook's environment itself: torch goes into the hook's config.
        remedy = ("Add torch to the detachlint-confirm hook: additional_dependencies: [\"torch\"]"
                  if os.environ.get("PRE_COMMIT") else f"Install the runtime extra: {INSTALL_HINT}")
        print(f"detachlint: error: --confirm needs torch, which is not importable ({exc.detail or 'missing'}).\n"
              f"{remedy}", file=sys.stderr)
        return None
