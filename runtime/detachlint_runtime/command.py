"""``detachlint check --confirm``: the command-line side of the runtime companion.

``detachlint.cli`` calls :func:`add_arguments` and :func:`confirm` (and, for ``detachlint run``,
:func:`add_run_arguments` and :func:`run`); everything else about confirmation
(options, the progress bar, the missing-torch message) lives here. No torch import.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, List, Optional, TextIO

from .names import ALL_BACKENDS, DEFAULT_BACKENDS, INSTALL_HINT, TorchMissing


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
        "pattern-mode confirmation (the runtime companion, detachlint_runtime)")
    group.add_argument("--confirm", action="store_true",
                       help="reproduce each finding's pattern with torch and attach a verdict per "
                            "configuration (reproduced / not-reproduced / no-reproducer)")
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
        remedy = ("Add torch to the detachlint-confirm hook: additional_dependencies: [\"torch==2.13.0\", \"./runtime\"]"
                  if os.environ.get("PRE_COMMIT") else f"Install it: {INSTALL_HINT}")
        print(f"detachlint: error: --confirm needs torch, which is not importable ({exc.detail or 'missing'}).\n"
              f"{remedy}", file=sys.stderr)
        return None


# -- detachlint run -------------------------------------------------------------------------------

def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    from .report import FORMATS

    # As with python -m, everything after the module's name is the module's (`-m pytest -q`).
    parser.add_argument("-m", dest="module", nargs=argparse.REMAINDER, metavar="MODULE [ARGS]",
                        help="run a library module as a script, like python -m; the arguments after it are the module's")
    parser.add_argument("--output", metavar="FILE", help="write the findings with their verdicts to FILE")
    parser.add_argument("--output-format", choices=FORMATS, default="text",
                        help="format of --output (default: text; json is check's finding list with "
                             "`confirmation`)")
    parser.add_argument("--fail-on", choices=("never", "confirmed", "observed"), default="never",
                        help="exit 1 (when the program itself succeeded) if a finding is confirmed (a hazard "
                             "wrong whatever the code meant), or with `observed` also if what a finding "
                             "describes happened (default: never; the exit status is the program's)")
    parser.add_argument("--select", metavar="CODES",
                        help="rule codes for the static findings (default: the default rules; ALL for all)")
    parser.add_argument("--watch", choices=("flagged", "all"), default="flagged",
                        help="flagged (default): observe torch's ops only while a flagged line runs and "
                             "while an alias or snapshot it made is alive (close to the program's own "
                             "speed); all: every op of the run, so that hazards at lines with no static "
                             "finding are reported too (origin: runtime), at the cost of a dispatch mode")
    parser.add_argument("program", nargs=argparse.REMAINDER, metavar="SCRIPT [ARGS] | ARGS",
                        help="the script and its arguments (with -m: the module's arguments)")


def run(args: argparse.Namespace) -> int:
    """``detachlint run``: the program's own exit status, after the report."""
    from .runner import torch_version
    from .program import Program, ProgramError

    try:
        torch_version()
    except TorchMissing as exc:
        print(f"detachlint: error: `detachlint run` needs torch, which is not importable ({exc.detail}).\n"
              f"Install it: {INSTALL_HINT}", file=sys.stderr)
        return 2
    program = list(args.program)
    if program and program[0] == "--":
        program = program[1:]
    module = None
    if args.module is not None:
        if not args.module:
            print("detachlint: error: argument -m: expected a module name", file=sys.stderr)
            return 2
        module, program = args.module[0], args.module[1:] + program
    codes = None
    if args.select:
        from .static import all_codes

        wanted = [c.strip().upper() for c in args.select.split(",") if c.strip()]
        codes = all_codes() if "ALL" in wanted else [c for c in all_codes() if any(c.startswith(w) for w in wanted)]
    try:
        target = Program(module=module, argv=program)
    except ProgramError as exc:
        print(f"detachlint: error: {exc}", file=sys.stderr)
        return 2
    from .observe import Observer
    from .report import failed, write_report

    observer = Observer(codes, watch_all=args.watch == "all", instrument=True)
    if target.path:
        observer.programs.append(target.path)
    status = target.run(observer)
    results = observer.results()
    try:
        write_report(results, args.output, args.output_format)
    except OSError as exc:
        print(f"detachlint: error: cannot write {args.output}: {exc.strerror or exc}", file=sys.stderr)
        return status or 2
    return status or (1 if failed(results, args.fail_on) else 0)
