"""The ``detachlint`` command: argument parsing, then the engine, then a reporter.

Thin on purpose: which rules run comes from ``config``, which files from ``files``, findings and
suppressions from ``engine``, presentation from ``report``. Nothing here parses Python.

Exit codes (ruff's contract): 0 no findings, 1 findings (a file that could not be read or parsed
counts), 2 usage, configuration or internal error.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from . import __version__
from .config import FAIL_ON, ConfigError, SettingsResolver, config_arguments, parse_per_file_ignore, split_codes
from .report import FORMATS

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


class UsageError(Exception):
    pass


def _codes(value: str) -> List[str]:
    return split_codes(value)


# -- hooks into the runtime companion (its own distribution, ``runtime/`` in the checkout) ------
RUNTIME_INSTALL = "pip install torch==2.13.0 && pip install ./runtime  (from a detachlint checkout)"


def _runtime_command() -> Any:
    """``detachlint_runtime.command``, or None when the runtime companion is not installed."""
    try:
        import detachlint_runtime.command as command  # imports no torch
    except ImportError:
        return None
    return command


def _runtime_missing(what: str) -> int:
    remedy = ('Add it to the hook: additional_dependencies: ["torch==2.13.0", "./runtime"]'
              if os.environ.get("PRE_COMMIT") else f"Install it: {RUNTIME_INSTALL}")  # pre-commit builds its env
    print(f"detachlint: error: {what} needs the runtime companion (detachlint_runtime), which is not "
          f"installed.\n{remedy}", file=sys.stderr)
    return EXIT_ERROR


def _parser() -> argparse.ArgumentParser:
    # allow_abbrev=False: ``--stat`` is not ``--statistics`` (ruff's parser takes no abbreviations).
    parser = argparse.ArgumentParser(
        prog="detachlint", description="Find unsafe copy, detach and aliasing patterns in PyTorch code.",
        allow_abbrev=False)
    parser.add_argument("--version", action="version", version=f"detachlint {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    check = sub.add_parser("check", help="lint files and directories (default: .)", allow_abbrev=False,
                           description="Lint Python files, stubs and notebooks.")
    check.add_argument("paths", nargs="*", metavar="PATH", help="files or directories; '-' reads stdin")
    check.add_argument("--config", action="append", metavar="PATH | 'KEY = VALUE'",
                       help="a configuration file used for every path (pyproject.toml with [tool.detachlint], "
                            "or a TOML file with the options at the top level), or one option as TOML, e.g. "
                            "--config \"fail-on = 'error'\" (repeatable; options win over the file)")
    check.add_argument("--isolated", action="store_true", help="read no configuration file")
    check.add_argument("--show-settings", action="store_true",
                       help="print the settings the first path is linted with, and exit")
    check.add_argument("--show-files", action="store_true", help="print the files that would be linted, and exit")
    sel = check.add_argument_group("rule selection (command line wins over [tool.detachlint])")
    sel.add_argument("--select", type=_codes, metavar="CODES", help="rule codes or prefixes to enable (ALL for all)")
    sel.add_argument("--ignore", type=_codes, metavar="CODES", help="rule codes or prefixes to disable")
    sel.add_argument("--extend-select", type=_codes, metavar="CODES", help="enable these on top of select")
    sel.add_argument("--extend-ignore", type=_codes, metavar="CODES", help="disable these on top of ignore")
    sel.add_argument("--per-file-ignores", action="append", metavar="PATTERN:CODES",
                     help="ignore CODES in files matching PATTERN (repeatable; replaces the configured table)")
    sel.add_argument("--ignore-noqa", action="store_true", default=None,
                     help="report findings on lines with `# noqa` too (also `ignore-noqa` in the config)")
    sel.add_argument("--extend-per-file-ignores", action="append", metavar="PATTERN:CODES",
                     help="like --per-file-ignores, added to the configured table")
    files = check.add_argument_group("file selection")
    files.add_argument("--exclude", type=_codes, metavar="GLOBS", help="replace the default exclusions")
    files.add_argument("--extend-exclude", type=_codes, metavar="GLOBS", help="exclude these as well")
    files.add_argument("--force-exclude", action="store_true", default=None,
                       help="apply exclusions to files named on the command line too (for pre-commit)")
    files.add_argument("--respect-gitignore", action=argparse.BooleanOptionalAction, default=None,
                       help="skip files ignored by .gitignore (default: on)")
    files.add_argument("--stdin-filename", metavar="PATH",
                       help="the path of the file read from stdin (config, per-file-ignores, display)")
    files.add_argument("--max-file-size", metavar="SIZE",
                       help="skip (with a notice) files larger than SIZE, e.g. 10MB; 0: no limit (default: 10MB)")
    perf = check.add_argument_group("performance")
    perf.add_argument("-j", "--jobs", type=int, metavar="N", help="worker processes (default: all cores; 1: none)")
    perf.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    perf.add_argument("--cache-dir", metavar="DIR",
                      help="where the cache lives (default: .detachlint_cache next to the config; "
                           "env DETACHLINT_CACHE_DIR)")
    out = check.add_argument_group("output")
    out.add_argument("--output-format", choices=FORMATS,
                     default=os.environ.get("DETACHLINT_OUTPUT_FORMAT") or "full",
                     help="how findings are printed (default: full, as ruff; env DETACHLINT_OUTPUT_FORMAT)")
    out.add_argument("--statistics", action="store_true", help="print a count per rule instead of findings")
    out.add_argument("-q", "--quiet", action="store_true", help="print findings only, no summary")
    out.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    out.add_argument("--fail-on", choices=FAIL_ON, default=None,
                     help="exit 1 for findings of this severity or worse (default: warning; config fail-on)")
    out.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                     help="colour output (auto: on a terminal, honouring NO_COLOR and FORCE_COLOR)")

    fix = check.add_argument_group("fixes (safe fixes keep behaviour; unsafe ones change what the code computes)")
    fix.add_argument("--fix", action=argparse.BooleanOptionalAction, default=False,
                     help="apply safe fixes in place; report what is left (--no-fix: do not)")
    fix.add_argument("--fixable", type=_codes, metavar="CODES",
                     help="rules whose fixes are offered and applied (default: ALL; also `fixable` in the config)")
    fix.add_argument("--unfixable", type=_codes, metavar="CODES",
                     help="rules whose fixes are neither offered nor applied (also `unfixable` in the config)")
    fix.add_argument("--exit-non-zero-on-fix", action="store_true",
                     help="with --fix: exit 1 when a file was fixed, even if no finding remains")
    fix.add_argument("--unsafe-fixes", action="store_true", help="with --fix, --fix-only or --diff: unsafe fixes too")
    fix.add_argument("--fix-only", action="store_true", help="apply fixes, report nothing else (exit 0)")
    fix.add_argument("--diff", action="store_true",
                     help="print the fixes as a unified diff, write nothing; exit 1 if a file would change")
    fix.add_argument("--show-fixes", action="store_true", help="with --fix: list the fixed findings per file")
    fix.add_argument("--add-noqa", action="store_true",
                     help="add `# noqa: CODE` to every line with a finding (files are rewritten), then exit 0")

    runtime = _runtime_command()
    if runtime is not None:
        runtime.add_arguments(check)
    else:  # accepted, so that the error names the install command instead of "unrecognized"
        check.add_argument("--confirm", action="store_true", help=f"needs the runtime companion: {RUNTIME_INSTALL}")
        for name in ("--confirm-backends", "--confirm-devices", "--confirm-cache-dir"):
            check.add_argument(name, help=argparse.SUPPRESS)
        check.add_argument("--no-confirm-cache", action="store_true", help=argparse.SUPPRESS)
    run = sub.add_parser("run", help="run a program and confirm findings in that run (needs the runtime companion)",
                         allow_abbrev=False,
                         description="Run a Python program (like `python script.py` or `python -m module`) while "
                                     "detachlint's runtime companion watches for the hazards of its findings.")
    if runtime is not None:
        runtime.add_run_arguments(run)
    else:
        run.add_argument("-m", dest="module", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
        run.add_argument("program", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)

    rule = sub.add_parser("rule", help="explain a rule", description="Print a rule's documentation.",
                          allow_abbrev=False)
    rule.add_argument("code", nargs="?", metavar="CODE", help="a rule code such as TAL001")
    rule.add_argument("--all", action="store_true", help="list every rule")

    lsp = sub.add_parser("lsp", help="run the language server on stdin/stdout (needs the lsp extra)",
                         allow_abbrev=False)
    lsp.add_argument("--stdio", action="store_true", help="accepted for editors; stdio is the only transport")
    return parser


def use_color(choice: str, stream: Any) -> bool:
    if choice != "auto":
        return choice == "always"
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return bool(getattr(stream, "isatty", lambda: False)())


def _overrides(args: argparse.Namespace) -> Dict[str, Any]:
    overrides: Dict[str, Any] = {}
    for key in ("select", "ignore", "extend_select", "extend_ignore", "exclude", "extend_exclude",
                "force_exclude", "respect_gitignore", "max_file_size", "fail_on", "ignore_noqa", "fixable", "unfixable"):
        value = getattr(args, key)
        if value is not None:
            overrides[key.replace("_", "-")] = value
    for key in ("per_file_ignores", "extend_per_file_ignores"):
        table: Dict[str, List[str]] = {}
        for spec in getattr(args, key) or ():
            glob, codes = parse_per_file_ignore(spec)
            table.setdefault(glob, []).extend(codes)
        if table:
            overrides[key.replace("_", "-")] = table
    return overrides


def _resolver(args: argparse.Namespace) -> SettingsResolver:
    """``--config`` options, then the dedicated flags over them, over the configuration file."""
    config_file, options = config_arguments(args.config)
    if args.isolated and config_file is not None:
        raise UsageError("--isolated reads no configuration file: it takes no --config PATH")
    return SettingsResolver({**options, **_overrides(args)}, config_file, isolated=args.isolated)


class _Sources:
    """Source lines for the ``full`` format, read again only when it is asked for."""

    def __init__(self) -> None:
        self.texts: Dict[str, Optional[str]] = {}

    def __call__(self, filename: str, cell: Optional[int]) -> Optional[List[str]]:
        from .files import SourceError, decode_source

        if filename not in self.texts:
            try:
                data = Path(filename).read_bytes()
                self.texts[filename] = data.decode("utf-8-sig") if cell else decode_source(data)
            except (OSError, SourceError, UnicodeDecodeError):
                self.texts[filename] = None
        text = self.texts[filename]
        if text is None:
            return None
        if cell is not None:
            from .notebook import NotebookError, read_cells

            try:
                cells = {c.number: c.source for c in read_cells(text)[0]}
            except NotebookError:
                return None
            text = cells.get(cell)
            if text is None:
                return None
        return text.splitlines()


class _FixReport:
    """What ``--fix`` / ``--diff`` did over all files: the summary line and the exit code."""

    def __init__(self, diff: bool) -> None:
        self.diff = diff
        self.fixed: Counter = Counter()  # code -> findings fixed (or that would be, with --diff)
        self.by_file: Dict[str, Counter] = {}  # for --show-fixes
        self.changed_files = 0
        self.errors = 0

    def add(self, display: str, result: Any) -> None:
        if result.fix_error is not None:
            self.errors += 1
            print(f"detachlint: error: {display}: not fixed: {result.fix_error}", file=sys.stderr)
        if result.fixed:
            self.changed_files += 1
            self.fixed.update(result.fixed)
            self.by_file[display] = Counter(result.fixed)
        if result.diff:
            sys.stdout.write(result.diff)

    def listing(self) -> str:
        """``--show-fixes``, as ruff prints it: each file, then ``N × CODE (name)``."""
        from .report.common import plural, rule_name

        if not self.by_file:
            return ""
        out = [f"{'Would fix' if self.diff else 'Fixed'} {plural(sum(self.fixed.values()), 'finding')}:"]
        for display, counts in sorted(self.by_file.items()):
            out.append(f"- {display}:")
            out.extend(f"    {n} × {code} ({rule_name(code)})" for code, n in sorted(counts.items()))
        return "\n".join(out) + "\n\n"

    def summary(self) -> str:
        from .fixes import summary

        n = sum(self.fixed.values())
        files = f"{self.changed_files} file{'' if self.changed_files == 1 else 's'}"
        if self.diff:
            return (f"Would fix {n} finding{'' if n == 1 else 's'} in {files} ({summary(self.fixed)}).\n" if n
                    else "No fixes available.\n")
        return f"Fixed {n} finding{'' if n == 1 else 's'} in {files} ({summary(self.fixed)}).\n" if n else ""


def _cache_dir(args: argparse.Namespace, resolver: SettingsResolver) -> Optional[str]:
    from .cache import find_cache_dir

    if args.no_cache:
        return None
    cwd = os.getcwd()
    return args.cache_dir or str(find_cache_dir(cwd, resolver.for_path(cwd, is_dir=True).config_file))


def _lint_stdin(args: argparse.Namespace, resolver: SettingsResolver, sources: _Sources, fix: Any,
                fixes: Optional[_FixReport]) -> Tuple[List[Any], int]:
    from .analysis.project import ModuleView
    from .config import DEFAULT_MAX_FILE_SIZE
    from .files import SourceError, decode_source, display_path
    from . import runner
    from .pipeline import build_project, check_bytes, project_root

    name = args.stdin_filename
    settings = resolver.for_path(name or os.getcwd(), is_dir=name is None)
    data = sys.stdin.buffer.read()
    if name and settings.force_exclude and settings.is_excluded(name):
        return [], 0
    display = display_path(Path(name)) if name else "-"
    sources.texts[display] = data.decode("utf-8-sig", errors="replace")  # for --output-format full
    limit = DEFAULT_MAX_FILE_SIZE if settings.max_file_size is None else settings.max_file_size
    project = None
    root = project_root(name) if name and name.endswith((".py", ".pyi")) else None
    if root is not None:  # the project it belongs to, with this text for its file
        try:
            overrides = {name: decode_source(data)}
        except SourceError:
            overrides = {}
        index = build_project(root, resolver, _cache_dir(args, resolver), overrides,
                              runner.facts_in_parallel(args.jobs), seeds=[name])
        project = ModuleView(index, index.module_of(name))
    result = check_bytes(data, display, settings.codes_for(name or "-"), fix=fix, max_file_size=limit,
                         notebook=bool(name) and name.endswith(".ipynb"), project=project,
                         noqa=not settings.ignore_noqa)
    if fixes is not None:
        fixes.add(display, result)
        if fix.write:  # like ruff: the fixed source on stdout, findings on stderr
            sys.stdout.buffer.write(result.fixed_data if result.fixed_data is not None else data)
            sys.stdout.flush()
    return _collect([(display, result)])


def _collect(results: Sequence[Tuple[str, Any]]) -> Tuple[List[Any], int]:
    """Findings in file order, notices and internal errors on stderr."""
    findings: List[Any] = []
    internal_errors = 0
    for display, result in results:
        findings.extend(result.findings)
        if result.skipped:
            print(f"detachlint: warning: {result.skipped}", file=sys.stderr)
        if result.internal_error:
            internal_errors += 1
            print(f"detachlint: error: internal error while checking {display}: "
                  f"{result.internal_error} (please report this)", file=sys.stderr)
    return findings, internal_errors


def _lint_files(args: argparse.Namespace, resolver: SettingsResolver, paths: Sequence[str], fix: Any,
                fixes: Optional[_FixReport]) -> Tuple[List[Any], int]:
    """Discovered files through the pipeline, in parallel and through the cache (``runner``)."""
    from . import runner
    from .cache import FileStamps
    from .pipeline import build_projects, tasks_for

    walked: dict = {}  # what discovery found under each named directory: its project index reuses it
    tasks = tasks_for(paths, resolver, walked)
    cache_dir = _cache_dir(args, resolver)
    stats = runner.RunStats()
    stamps = FileStamps(cache_dir) if cache_dir is not None else None
    indexes = build_projects(tasks, resolver, cache_dir, runner.facts_in_parallel(args.jobs), walked, stamps)
    results = runner.run(tasks, jobs=args.jobs, cache_dir=cache_dir, stats=stats, fix=fix, indexes=indexes,
                         freeze=True, stamps=stamps)
    if stamps is not None:
        stamps.save()
    if fixes is not None:
        for task, result in zip(tasks, results):
            fixes.add(task.display, result)
    if os.environ.get("DETACHLINT_RUNNER_STATS"):  # for bench/run.py: jobs, cache hits, peak memory per worker
        import json

        print("detachlint-stats: " + json.dumps({"files": stats.files, "jobs": stats.jobs, "cache_hits": stats.cache_hits,
                                                 "worker_peak_rss": list(stats.worker_peak_rss.values()),
                                                 "indexed": {root: sorted(index.keys) for root, index in indexes.items()}}),
              file=sys.stderr)
    return _collect([(task.display, result) for task, result in zip(tasks, results)])


def run_check(args: argparse.Namespace) -> int:
    from .findings import Severity, drop_fixes
    from .pipeline import FixMode
    from .report import ReportOptions, render
    from .report import statistics as stats

    if args.output_format not in FORMATS:  # the default may come from DETACHLINT_OUTPUT_FORMAT
        raise UsageError(f"unknown output format {args.output_format!r} (choose from {', '.join(FORMATS)})")
    # Like ruff: --stdin-filename without paths means "read stdin" (what editors send).
    paths = args.paths or (["-"] if args.stdin_filename else ["."])
    if "-" in paths and len(paths) > 1:
        raise UsageError("'-' (stdin) cannot be combined with other paths")
    if args.add_noqa and (args.fix or args.fix_only or args.diff or paths == ["-"]):
        raise UsageError("--add-noqa rewrites files: it takes paths, and no --fix, --fix-only or --diff")
    # A path that does not exist is reported as a TAL999 finding for it, and the rest is linted
    # (ruff's E902, flake8's E902): one typo does not hide every other finding.
    resolver = _resolver(args)  # validates the command line before any work
    here = resolver.for_path(os.getcwd(), is_dir=True)  # run-wide settings come from the working directory's
    fail_on, unfixable = here.fail_on, here.unfixable
    if args.show_settings:
        return _show_settings(resolver, paths[0] if paths[0] != "-" else args.stdin_filename or os.getcwd())
    if args.show_files:
        from .pipeline import tasks_for

        sys.stdout.write("".join(f"{task.display}\n" for task in tasks_for(paths, resolver)))
        return EXIT_CLEAN

    sources = _Sources()
    fix = fixes = None
    if args.fix or args.fix_only or args.diff:
        fix = FixMode(unsafe=args.unsafe_fixes, write=not args.diff, unfixable=unfixable)
        fixes = _FixReport(diff=args.diff)
    if paths == ["-"]:
        findings, internal_errors = _lint_stdin(args, resolver, sources, fix, fixes)
    else:
        findings, internal_errors = _lint_files(args, resolver, paths, fix, fixes)
    findings = drop_fixes(findings, unfixable)  # neither ``[*]`` nor a fix in the output

    if args.add_noqa:
        return _add_noqa(findings, args.quiet) or (EXIT_ERROR if internal_errors else EXIT_CLEAN)
    if fixes is not None and (args.diff or args.fix_only):
        sys.stderr.write("" if args.quiet else (fixes.listing() if args.show_fixes else "") + fixes.summary())
        if internal_errors or fixes.errors:
            return EXIT_ERROR
        return EXIT_FINDINGS if args.diff and fixes.changed_files and not args.exit_zero else EXIT_CLEAN
    if args.confirm:
        runtime = _runtime_command()
        if runtime is None:
            return _runtime_missing("--confirm")
        findings = runtime.confirm(args, findings)
        if findings is None:  # torch is missing; the install command was printed
            return EXIT_ERROR
    options = ReportOptions(color=use_color(args.color, sys.stdout), quiet=args.quiet, sources=sources,
                            unsafe_fixes=args.unsafe_fixes,
                            fixed=None if fixes is None else sum(fixes.fixed.values()),  # ruff: (F fixed, R remaining)
                            unchecked=internal_errors)
    if args.statistics:
        text = stats.render(findings, options, args.output_format)
    else:
        text = render(args.output_format, findings, options)
    report = sys.stderr if fixes is not None and paths == ["-"] else sys.stdout  # stdout holds the code
    if fixes is not None and args.show_fixes and not args.quiet:
        report.write(fixes.listing())
    report.write(text)
    report.flush()
    if internal_errors or (fixes is not None and fixes.errors):
        return EXIT_ERROR
    if args.exit_non_zero_on_fix and fixes is not None and fixes.changed_files:
        return EXIT_FINDINGS
    failing = [f for f in findings if fail_on == "warning" or f.severity is Severity.ERROR]
    return EXIT_FINDINGS if failing and not args.exit_zero else EXIT_CLEAN


def _show_settings(resolver: SettingsResolver, path: str) -> int:
    """``--show-settings``: what a file under ``path`` is linted with, one ``key = value`` a line."""
    settings = resolver.for_path(path)
    rows = [("path", path), ("config-file", settings.config_file), ("root", settings.root),
            ("select", sorted(settings.codes_for(path))),
            ("per-file-ignores", [f"{p.glob}: {', '.join(c)}" for p, c in settings.per_file_ignores]),
            ("exclude", [p.glob for p in settings.exclude]), ("respect-gitignore", settings.respect_gitignore),
            ("force-exclude", settings.force_exclude), ("max-file-size", settings.max_file_size),
            ("fail-on", settings.fail_on)]
    sys.stdout.write("".join(f"{key} = {value}\n" for key, value in rows))
    return EXIT_CLEAN


def _add_noqa(findings: Sequence[Any], quiet: bool) -> int:
    """``--add-noqa``: each file with findings rewritten with ``# noqa: CODE`` on their lines."""
    from .findings import PARSE_ERROR_CODE
    from .fixes import FixError, add_noqa

    by_file: Dict[str, List[Any]] = {}
    for f in findings:
        if f.code != PARSE_ERROR_CODE and f.cell is None:  # notebooks' cells are not lines of the file
            by_file.setdefault(f.filename, []).append(f)
    added = failed = 0
    for filename, found in sorted(by_file.items()):
        try:
            added += add_noqa(Path(filename), found)
        except (FixError, OSError) as exc:  # say which file, carry on with the rest
            failed += 1
            print(f"detachlint: error: {filename}: noqa not added: {exc}", file=sys.stderr)
    if not quiet:
        print(f"Added {added} noqa directive{'' if added == 1 else 's'}.", file=sys.stderr)
    return EXIT_ERROR if failed else 0


def run_rule(args: argparse.Namespace) -> int:
    from .docs import rule_list, rule_text
    from .rules import rule_by_code

    if args.all:
        sys.stdout.write(rule_list())
        return EXIT_CLEAN
    if not args.code:
        raise UsageError("give a rule code (e.g. `detachlint rule TAL001`) or --all")
    rule = rule_by_code(args.code.upper())
    if rule is None:
        raise UsageError(f"unknown rule code {args.code!r}; `detachlint rule --all` lists them")
    sys.stdout.write(rule_text(rule))
    return EXIT_CLEAN


def run_lsp(args: argparse.Namespace) -> int:
    try:
        from .lsp import main as lsp_main
    except ImportError as exc:
        print(f"detachlint: error: the language server needs its extra: pip install '.[lsp]' from a detachlint checkout ({exc})",
              file=sys.stderr)
        return EXIT_ERROR
    return lsp_main(["--stdio"] if args.stdio else [])


def run_program(args: argparse.Namespace) -> int:
    runtime = _runtime_command()
    if runtime is None:
        return _runtime_missing("`detachlint run`")
    return runtime.run(args)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = _parser()
    args, extra = parser.parse_known_args(argv)
    if extra:  # reported by the subcommand's parser, with its usage (``detachlint check: error: ...``)
        commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
        (commands.get(args.command) or parser).error(f"unrecognized arguments: {' '.join(extra)}")
    handlers = {"check": run_check, "rule": run_rule, "lsp": run_lsp, "run": run_program}
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_ERROR
    # Never die on an unencodable message or file name (C locale, undecodable paths).
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    try:
        return handlers[args.command](args)
    except (ConfigError, UsageError) as exc:
        print(f"detachlint: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:
        # `detachlint check | head`: the reader left; say nothing more and don't trace back.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_FINDINGS
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
