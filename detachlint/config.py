"""``[tool.detachlint]`` in pyproject.toml (or ``detachlint.toml``): which rules run on which file,
and which files are skipped.

Configuration is hierarchical, like ruff's: each file uses the closest configuration above it
(in a directory, ``.detachlint.toml``, then ``detachlint.toml``, then a ``pyproject.toml`` that has
a ``[tool.detachlint]`` table; the first two hold the options at the top level), and that file's directory is the project root against
which its relative globs are resolved. Command-line options are one more layer on top.

Rule selection follows ruff: selectors are rule codes, prefixes of them (``TAL1``) or ``ALL``;
within a layer the most specific selector that matches a rule wins, and ``ignore`` beats
``select`` at equal specificity; a layer that sets ``select`` starts again from scratch, while
``extend-select`` / ``ignore`` adjust what the previous layer chose. TAL999 (a file that cannot be
read, decoded or parsed) is always reported unless an ignore selector names it.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, FrozenSet, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from .files import GitIgnore
from .findings import PARSE_ERROR_CODE
from .rules import RULES

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.9/3.10 only
    import tomli as tomllib

CONFIG_FILE = "pyproject.toml"
# What a directory's configuration is, in ruff's order: the first of these present (a pyproject.toml
# only when it has a [tool.detachlint] table); the other two hold the options at the top level.
CONFIG_FILES = (".detachlint.toml", "detachlint.toml", CONFIG_FILE)

# ruff's default exclusions, plus our own cache directory.
DEFAULT_EXCLUDE: Tuple[str, ...] = (
    ".bzr", ".direnv", ".eggs", ".git", ".git-rewrite", ".hg", ".ipynb_checkpoints", ".mypy_cache",
    ".nox", ".pants.d", ".pyenv", ".pytest_cache", ".pytype", ".ruff_cache", ".svn", ".tox", ".venv",
    ".vscode", "__pypackages__", "_build", "buck-out", "dist", "node_modules", "site-packages", "venv",
    ".detachlint_cache",
)

_LIST_KEYS = ("select", "ignore", "extend-select", "extend-ignore", "exclude", "extend-exclude", "fixable", "unfixable")
_BOOL_KEYS = ("respect-gitignore", "force-exclude", "ignore-noqa")
_TABLE_KEYS = ("per-file-ignores", "extend-per-file-ignores")
KNOWN_KEYS = frozenset(_LIST_KEYS + _BOOL_KEYS + _TABLE_KEYS + ("runtime", "max-file-size", "fail-on"))
FAIL_ON = ("error", "warning")  # the least severe finding that makes ``check`` exit 1
_CODE_KEYS = ("select", "ignore", "extend-select", "extend-ignore", "fixable", "unfixable")

PathLike = Union[str, "os.PathLike[str]"]


# Files above this size are skipped with a notice (``max-file-size``).
DEFAULT_MAX_FILE_SIZE = 10 * 1024 * 1024


class ConfigError(Exception):
    """A configuration or command-line value the user must fix; the message is shown as is."""


def _known_codes() -> Tuple[str, ...]:
    # Read the registry's data each time: a rule registered from outside counts too.
    return tuple(r.code for r in RULES) + (PARSE_ERROR_CODE,)


def validate_selector(selector: str, where: str) -> str:
    if not isinstance(selector, str):
        raise ConfigError(f"{where}: expected a rule code string, got {selector!r}")
    if selector == "ALL" or (selector and any(code.startswith(selector) for code in _known_codes())):
        return selector
    raise ConfigError(
        f"{where}: unknown rule selector {selector!r} (use ALL, a rule code such as TAL001, or a prefix "
        f"of one; see `detachlint rule --all`)"
    )


def _matches(selector: str, code: str) -> bool:
    return selector == "ALL" or code.startswith(selector)


def _specificity(selector: str) -> int:
    return 0 if selector == "ALL" else len(selector)


@dataclass(frozen=True)
class _Layer:
    """One source of selection (the config file, then the command line)."""

    select: Optional[Tuple[str, ...]]
    extend_select: Tuple[str, ...] = ()
    ignore: Tuple[str, ...] = ()


def _apply_layers(layers: Sequence[_Layer]) -> FrozenSet[str]:
    all_codes = _known_codes()
    enabled = {r.code for r in RULES if r.default_enabled} | {PARSE_ERROR_CODE}
    for layer in layers:
        selects = (layer.select or ()) + layer.extend_select
        updates: Dict[str, bool] = {}
        for code in all_codes:
            # The most specific matching selector decides; at equal specificity ignore wins.
            best: Optional[Tuple[int, int, bool]] = None
            for sel in selects:
                if _matches(sel, code) and code != PARSE_ERROR_CODE:
                    cand = (_specificity(sel), 0, True)
                    best = cand if best is None or cand > best else best
            for sel in layer.ignore:
                if _matches(sel, code):
                    cand = (_specificity(sel), 1, False)
                    best = cand if best is None or cand > best else best
            if best is not None:
                updates[code] = best[2]
        if layer.select is not None:
            # TAL999 is not chosen by select: it stays on unless this layer ignores it.
            enabled = {c for c, on in updates.items() if on}
            if updates.get(PARSE_ERROR_CODE, True):
                enabled.add(PARSE_ERROR_CODE)
        else:
            for code, on in updates.items():
                (enabled.add if on else enabled.discard)(code)
    return frozenset(enabled)


# --- globs -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Pattern:
    """A glob from the config (relative to the project root) or the command line (relative to the
    working directory). Like ruff, a pattern matches a path's basename or its full path, and ``*``
    may cross directory separators."""

    glob: str
    base: Path

    @functools.cached_property
    def _globs(self) -> Tuple[str, str, Optional[str]]:
        """The basename glob, the full-path glob and, for ``**/name``, ``name`` under the base:
        computed once (matching runs for every entry of every walked directory)."""
        glob = self.glob.replace(os.sep, "/").rstrip("/") or "/"
        absolute = glob if os.path.isabs(glob) else (self.base / glob).as_posix()
        # "**/name" should also match "name" directly under the base.
        direct = (self.base / glob[3:]).as_posix() if glob.startswith("**/") else None
        return glob, absolute, direct

    def matches(self, path: Path) -> bool:
        return self._matcher.matches(path)

    @functools.cached_property
    def _matcher(self) -> "_Matcher":
        return _Matcher((self,))


class _Matcher:
    """Several patterns as two regular expressions, one for the basename and one for the full
    path: one match per path instead of three ``fnmatch`` calls per pattern (discovery asks for
    every entry of every walked directory)."""

    def __init__(self, patterns: Sequence[Pattern]) -> None:
        names, fulls = [], []
        for pattern in patterns:
            glob, absolute, direct = pattern._globs
            names.append(fnmatch.translate(glob))
            fulls.extend(fnmatch.translate(g) for g in (absolute, direct) if g is not None)
        self._name = re.compile("|".join(names)).match if names else None
        self._full = re.compile("|".join(fulls)).match if fulls else None

    def matches(self, path: Path) -> bool:
        return self.matches_entry(path.name, path.as_posix())

    def matches_entry(self, name: str, posix: str) -> bool:
        """``posix``: the absolute path with forward slashes; ``name``: its last part."""
        return self._name is not None and (self._name(name) is not None
                                           or self._full(posix) is not None)  # type: ignore[misc]


def _abspath(path: PathLike) -> Path:
    # Absolute without resolving symlinks: the user's view of the tree is what globs are about.
    return Path(os.path.abspath(os.fspath(path)))


# --- settings ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Settings:
    """The effective configuration for the files under one project root."""

    root: Path
    config_file: Optional[Path]
    enabled: FrozenSet[str]
    per_file_ignores: Tuple[Tuple[Pattern, Tuple[str, ...]], ...] = ()
    exclude: Tuple[Pattern, ...] = ()
    respect_gitignore: bool = True
    force_exclude: bool = False
    runtime: Mapping[str, Any] = field(default_factory=dict)
    max_file_size: Optional[int] = None  # bytes; None: the runner's default; 0: no limit
    fail_on: str = "warning"  # findings of this severity or worse make ``check`` exit 1
    ignore_noqa: bool = False  # ``# noqa`` comments suppress nothing
    unfixable: FrozenSet[str] = frozenset()  # codes whose fixes are neither offered nor applied

    def codes_for(self, path: PathLike) -> FrozenSet[str]:
        """The rule codes enabled for ``path``, per-file-ignores applied."""
        if not self.per_file_ignores:
            return self.enabled
        target = _abspath(path)
        ignored = [sel for pattern, sels in self.per_file_ignores if pattern.matches(target) for sel in sels]
        if not ignored:
            return self.enabled
        return frozenset(c for c in self.enabled if not any(_matches(sel, c) for sel in ignored))

    def matches_exclude(self, path: PathLike) -> bool:
        """Whether ``path`` itself matches ``exclude``/``extend-exclude`` (its parents not looked at)."""
        return self._exclude.matches(_abspath(path))

    def excludes_entry(self, name: str, absolute: str) -> bool:
        """``matches_exclude`` for an entry of a walked directory: ``absolute`` as a string (no
        ``Path`` made per entry)."""
        return self._exclude.matches_entry(name, absolute if os.sep == "/" else Path(absolute).as_posix())

    @functools.cached_property
    def _exclude(self) -> _Matcher:
        return _Matcher(self.exclude)

    def is_excluded(self, path: PathLike, *, gitignore: Optional["GitIgnore"] = None) -> bool:
        """Whether ``path`` (or a directory above it, below the project root) is excluded by
        ``exclude``/``extend-exclude``, or, with respect-gitignore, by a ``.gitignore``."""
        target = _abspath(path)
        candidates = [target]
        for parent in target.parents:  # like ruff: up to the project root, or all the way if outside it
            if parent == self.root:
                break
            candidates.append(parent)
        if any(self.matches_exclude(c) for c in candidates):
            return True
        if self.respect_gitignore:
            return (gitignore or GitIgnore()).ignored(target)
        return False


def _table(raw: Mapping[str, Any], where: str) -> Dict[str, Any]:
    """Check a ``[tool.detachlint]``-shaped mapping and normalise key spelling."""
    out: Dict[str, Any] = {}
    for key, value in raw.items():
        norm = key.replace("_", "-")
        if norm not in KNOWN_KEYS:
            known = ", ".join(sorted(KNOWN_KEYS))
            raise ConfigError(f"{where}: unknown option {key!r} (known options: {known})")
        if norm in _LIST_KEYS:
            if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
                raise ConfigError(f"{where}: {norm} must be a list of strings, got {value!r}")
            value = tuple(value)
            if norm in _CODE_KEYS:
                for sel in value:
                    validate_selector(sel, f"{where}: {norm}")
        elif norm in _BOOL_KEYS:
            if not isinstance(value, bool):
                raise ConfigError(f"{where}: {norm} must be true or false, got {value!r}")
        elif norm in _TABLE_KEYS:
            if not isinstance(value, Mapping):
                raise ConfigError(f"{where}: {norm} must be a table of glob = [codes]")
            checked = {}
            for glob, codes in value.items():
                if not isinstance(codes, (list, tuple)) or not all(isinstance(c, str) for c in codes):
                    raise ConfigError(f"{where}: {norm}[{glob!r}] must be a list of rule codes")
                checked[glob] = tuple(validate_selector(c, f"{where}: {norm}[{glob!r}]") for c in codes)
            value = checked
        elif norm == "fail-on" and value not in FAIL_ON:
            raise ConfigError(f"{where}: fail-on must be one of {', '.join(map(repr, FAIL_ON))}, got {value!r}")
        elif norm == "runtime" and not isinstance(value, Mapping):
            raise ConfigError(f"{where}: runtime must be a table")
        elif norm == "max-file-size":
            try:
                value = parse_size(value)
            except ValueError as exc:
                raise ConfigError(f"{where}: max-file-size: {exc}") from None
        out[norm] = value
    return out


def parse_size(value: object) -> int:
    """``max-file-size``: bytes as an integer, or a string such as ``"512KB"``, ``"10MB"``, ``"1GB"``
    (powers of 1024); 0 means no limit."""
    if isinstance(value, bool):
        raise ValueError(f"expected a size such as 10MB, got {value!r}")
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"expected a size of 0 or more, got {value!r}")
        return value
    if isinstance(value, str):
        text = value.strip().upper().replace(" ", "")
        for suffix, scale in (("KB", 1 << 10), ("MB", 1 << 20), ("GB", 1 << 30), ("K", 1 << 10), ("M", 1 << 20),
                              ("G", 1 << 30), ("B", 1), ("", 1)):
            if text.endswith(suffix):
                number = text[: len(text) - len(suffix)] if suffix else text
                try:
                    amount = float(number)
                except ValueError:
                    break
                if amount < 0:
                    break
                return int(amount * scale)
    raise ValueError(f"expected a size such as 10MB, got {value!r}")


def read_config(path: Path) -> Optional[Dict[str, Any]]:
    """The checked ``[tool.detachlint]`` table of a pyproject.toml, or None if it has none."""
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:  # tomllib decodes UTF-8 itself
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if path.name != CONFIG_FILE:  # ``--config detachlint.toml``: the options at the top level, as in ruff.toml
        return _table(data, str(path))
    tool = data.get("tool")
    if not isinstance(tool, dict) or "detachlint" not in tool:
        return None
    table = tool["detachlint"]
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.detachlint] must be a table")
    return _table(table, f"{path}: [tool.detachlint]")


def config_in(directory: PathLike) -> Optional[Path]:
    """The configuration file of ``directory`` itself (``CONFIG_FILES``' order), or None."""
    for name in CONFIG_FILES:
        candidate = Path(directory, name)
        if candidate.is_file() and (name != CONFIG_FILE or read_config(candidate) is not None):
            return candidate
    return None


def find_config(start: PathLike) -> Optional[Path]:
    """The closest configuration file (``.detachlint.toml``, ``detachlint.toml``, or a
    pyproject.toml with a ``[tool.detachlint]`` table) at or above ``start``."""
    here = _abspath(start)
    if not here.is_dir():
        here = here.parent
    return next((c for c in map(config_in, (here, *here.parents)) if c is not None), None)


def config_arguments(values: Optional[Iterable[str]]) -> Tuple[Optional[Path], Dict[str, Any]]:
    """``--config`` values: at most one file, and options written as TOML (``fail-on = 'error'``)."""
    path: Optional[Path] = None
    options: Dict[str, Any] = {}
    for value in values or ():
        if os.path.isfile(value):
            if path is not None:
                raise ConfigError(f"--config: two configuration files given ({path}, {value})")
            path = Path(value)
            continue
        try:
            options.update(tomllib.loads(value))
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"--config {value!r}: neither a file nor a `KEY = VALUE` option in TOML ({exc})") from None
    return path, _table(options, "--config")


def parse_per_file_ignore(spec: str) -> Tuple[str, List[str]]:
    """``PATTERN:CODE[,CODE...]`` from the command line."""
    glob, sep, codes = spec.rpartition(":")
    if not sep or not glob or not codes:
        raise ConfigError(f"--per-file-ignores: expected PATTERN:CODES, got {spec!r}")
    return glob, [c.strip() for c in codes.split(",") if c.strip()]


def build_settings(config_file: Optional[Path], cli_overrides: Optional[Mapping[str, Any]] = None,
                   cwd: Optional[Path] = None) -> Settings:
    cwd = _abspath(cwd or os.getcwd())
    config = read_config(config_file) if config_file is not None else {}
    config = config or {}
    cli = _table(cli_overrides or {}, "command line")
    root = config_file.parent if config_file is not None else cwd

    def layer(table: Mapping[str, Any]) -> _Layer:
        return _Layer(
            select=table.get("select"),
            extend_select=table.get("extend-select", ()),
            ignore=table.get("ignore", ()) + table.get("extend-ignore", ()),
        )

    def patterns(globs: Iterable[str], base: Path) -> Tuple[Pattern, ...]:
        return tuple(Pattern(g, base) for g in globs)

    # exclude replaces the defaults; extend-exclude adds to whatever exclude is in force.
    exclude = patterns(DEFAULT_EXCLUDE, root)
    if "exclude" in config:
        exclude = patterns(config["exclude"], root)
    exclude += patterns(config.get("extend-exclude", ()), root)
    if "exclude" in cli:
        exclude = patterns(cli["exclude"], cwd)
    exclude += patterns(cli.get("extend-exclude", ()), cwd)

    # As in ruff, --per-file-ignores on the command line replaces the configured table.
    if "per-file-ignores" in cli:
        pfi_table, pfi_base = cli["per-file-ignores"], cwd
    else:
        pfi_table, pfi_base = config.get("per-file-ignores", {}), root
    per_file_ignores = tuple((Pattern(g, pfi_base), tuple(codes)) for g, codes in pfi_table.items())
    # extend-per-file-ignores adds to the table in force: the configuration's, then the command line's
    per_file_ignores += tuple((Pattern(g, root), tuple(codes))
                              for g, codes in config.get("extend-per-file-ignores", {}).items())
    per_file_ignores += tuple((Pattern(g, cwd), tuple(codes))
                              for g, codes in cli.get("extend-per-file-ignores", {}).items())

    def flag(key: str, default: bool) -> bool:
        return cli.get(key, config.get(key, default))

    return Settings(
        root=root,
        config_file=config_file,
        enabled=_apply_layers([layer(config), layer(cli)]),
        per_file_ignores=per_file_ignores,
        exclude=exclude,
        respect_gitignore=flag("respect-gitignore", True),
        force_exclude=flag("force-exclude", False),
        ignore_noqa=flag("ignore-noqa", False),
        # ruff's fixable (default: all) and unfixable, resolved as select and ignore are
        unfixable=frozenset(_known_codes()) - _apply_layers(
            [_Layer(select=("ALL",))] + [_Layer(select=t.get("fixable"), ignore=t.get("unfixable", ())) for t in (config, cli)]),
        runtime=dict(config.get("runtime", {})),
        max_file_size=cli.get("max-file-size", config.get("max-file-size")),
        fail_on=cli.get("fail-on", config.get("fail-on", "warning")),
    )


def load_settings(start: PathLike, cli_overrides: Optional[Mapping[str, Any]] = None) -> Settings:
    """The settings for a file or directory: the closest config above it, then ``cli_overrides``
    (keys spelled as in ``[tool.detachlint]``; globs relative to the working directory)."""
    return build_settings(find_config(start), cli_overrides)


class SettingsResolver:
    """Settings per directory for a whole run, each config file read once."""

    def __init__(self, cli_overrides: Optional[Mapping[str, Any]] = None, config_file: Optional[PathLike] = None,
                 isolated: bool = False) -> None:
        """``config_file`` (``--config PATH``): that file for every path, no discovery (ruff's rule);
        ``isolated`` (``--isolated``): no configuration file at all."""
        self.cli_overrides = dict(cli_overrides or {})
        self.isolated = isolated
        self.config_file = _abspath(config_file) if config_file is not None else None
        if self.config_file is not None and read_config(self.config_file) is None:
            raise ConfigError(f"{config_file}: no [tool.detachlint] table")
        self._cwd = _abspath(os.getcwd())
        self._by_config: Dict[Optional[Path], Settings] = {}
        self._by_dir: Dict[str, Optional[Path]] = {}
        # Fail early, before any file is read, if the command line itself is invalid.
        _table(self.cli_overrides, "command line")

    def _config_for_dir(self, directory: str) -> Optional[Path]:
        # Strings, not paths: asked for every walked directory and every discovered file.
        if directory not in self._by_dir:
            parent = os.path.dirname(directory)
            found = None if self.isolated else config_in(directory)
            if found is None and parent != directory:
                found = self._config_for_dir(parent)
            self._by_dir[directory] = found
        return self._by_dir[directory]

    def for_path(self, path: PathLike, *, is_dir: Optional[bool] = None) -> Settings:
        target = os.path.abspath(os.fspath(path))  # as ``_abspath``
        if is_dir is None:
            is_dir = os.path.isdir(target)
        config = self.config_file or self._config_for_dir(target if is_dir else os.path.dirname(target))
        if config not in self._by_config:
            self._by_config[config] = build_settings(config, self.cli_overrides, self._cwd)
        return self._by_config[config]


_SELECTOR_RE = re.compile(r"[,\s]+")


def split_codes(value: str) -> List[str]:
    """``TAL001,TAL1`` (or space separated) from the command line."""
    return [v for v in _SELECTOR_RE.split(value) if v]
