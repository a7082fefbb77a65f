"""``detachlint lsp``: a Language Server (pygls 2.x) that is a thin adapter over the engine.

What it does:

- diagnostics on open and save at once, on change after a per-document debounce (0.3 s), for
  Python files and for notebook cells (``notebookDocument/*`` sync: the cells of a notebook are
  linted together, as one module, and each finding is shown in its own cell; a cell sent as a
  plain text document is linted on its own);
- pushed with ``textDocument/publishDiagnostics``, or pulled with ``textDocument/diagnostic`` by
  clients that announce pull support (then nothing is pushed, so nothing is shown twice);
- severity, code, ``codeDescription.href`` (the rule's documentation), ``source = "detachlint"``
  and related information (alias origin, mutation, later read) for every finding;
- positions converted from the engine's code points to the client's units (UTF-16 unless the
  client negotiated another encoding);
- settings: the closest configuration file (``config.load_settings`` on the
  document's path) with the client's ``detachlint`` section (``workspace/configuration`` or
  ``initializationOptions``: select, ignore, extend-select, extend-ignore, fixable, unfixable,
  ignore-noqa) layered on top;
- hover on a diagnostic: the rule's documentation; code actions: the finding's safe fix
  (``quickfix``; its unsafe fix, of kind ``quickfix.unsafe``, only with the client setting
  ``unsafeFixes``, as ruff's server offers them only when asked), "suppress with ``# noqa:
  TALxxx``" (added to an existing noqa list when there is one), and ``source.fixAll.detachlint``
  (every safe fix of the document).

A document that does not parse gets the engine's TAL999 diagnostic, replacing stale ones.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, FrozenSet, List, Mapping, Optional, Sequence, Tuple
from urllib.parse import unquote, urlparse

from . import __version__
from .findings import PARSE_ERROR_CODE, Finding, Location, Related, Severity, drop_fixes
from .noqa import noqa_edit
from .report.common import rule_url

try:
    from lsprotocol import types as T
    from pygls.lsp.server import LanguageServer
    from pygls.uris import to_fs_path
except ImportError as _exc:  # pragma: no cover - exercised only without the extra
    _IMPORT_ERROR: Optional[ImportError] = _exc
    LanguageServer = object  # type: ignore[assignment,misc]
else:
    _IMPORT_ERROR = None

log = logging.getLogger(__name__)

DEBOUNCE_S = 0.3
SECTION = "detachlint"
# Client setting names (as VS Code would camel-case them, too) -> [tool.detachlint] keys.
CLIENT_KEYS = {
    "select": "select", "ignore": "ignore",
    "extend-select": "extend-select", "extendSelect": "extend-select", "extend_select": "extend-select",
    "extend-ignore": "extend-ignore", "extendIgnore": "extend-ignore", "extend_ignore": "extend-ignore",
    "fixable": "fixable", "unfixable": "unfixable",
    "ignore-noqa": "ignore-noqa", "ignoreNoqa": "ignore-noqa", "ignore_noqa": "ignore-noqa",
}
FLAG_KEYS = ("ignore-noqa",)  # true or false; every other key is a list of rule codes
# Not a [tool.detachlint] key (the CLI's ``--unsafe-fixes``): whether quick fixes include unsafe ones.
UNSAFE_FIXES_KEYS = ("unsafeFixes", "unsafe-fixes", "unsafe_fixes")
UNSAFE_KIND = "quickfix.unsafe"  # a quickfix (clients that ask for ``quickfix`` get it), told apart
PYTHON_SUFFIXES = (".py", ".pyi")


# --- pure helpers (no server state) ----------------------------------------------------------


def client_overrides(raw: Any) -> Dict[str, Any]:
    """The client's ``detachlint`` settings as ``[tool.detachlint]`` keys (unknown keys, and
    values of the wrong type, dropped)."""
    if not isinstance(raw, Mapping):
        return {}
    if isinstance(raw.get(SECTION), Mapping):  # a whole settings object rather than the section
        raw = raw[SECTION]
    out: Dict[str, Any] = {}
    for key, value in raw.items():
        target = CLIENT_KEYS.get(key)
        if target is None:
            continue
        if target in FLAG_KEYS:
            if isinstance(value, bool):
                out[target] = value
            continue
        if isinstance(value, str):
            value = [v for v in value.replace(",", " ").split() if v]
        if isinstance(value, (list, tuple)):
            out[target] = list(out.get(target, [])) + [str(v) for v in value]
    return out


def client_unsafe_fixes(raw: Any) -> Optional[bool]:
    """The client's ``unsafeFixes`` setting (None when it does not say)."""
    if not isinstance(raw, Mapping):
        return None
    if isinstance(raw.get(SECTION), Mapping):
        raw = raw[SECTION]
    value = next((raw[k] for k in UNSAFE_FIXES_KEYS if k in raw), None)
    return value if isinstance(value, bool) else None


def hover_markdown(finding: Finding) -> str:
    from .rules import rule_by_code

    rule = rule_by_code(finding.code)
    head = f"**{finding.code}**" + (f" ({rule.name})" if rule is not None else "") + f": {finding.message}"
    if rule is None:
        return head
    doc = rule.documentation()
    url = rule.url()
    return f"{head}\n\n---\n\n{doc}" + (f"\n\n[Documentation]({url})" if url else "")


# --- what the server keeps per document ------------------------------------------------------


@dataclass
class Placed:
    """A finding placed in one text document (a file, or one notebook cell): its locations and
    its fix's edits are relative to that document; related locations carry their own document."""

    uri: str
    finding: Finding
    related: Tuple[Tuple[str, Related], ...]
    diagnostic: Any = None  # the T.Diagnostic sent for it


@dataclass
class Target:
    """What gets linted as one unit: a text document, or a whole notebook."""

    key: str  # the text document or notebook uri
    notebook: bool
    path: Optional[Path]  # the file on disk, for configuration; None for untitled buffers
    filename: str  # what the engine reports as the file name
    cells: List[Tuple[int, str, str]] = field(default_factory=list)  # (number, cell uri, source)
    source: str = ""
    as_cell: bool = False  # a notebook cell sent as a plain text document
    versions: Tuple[Any, ...] = ()


def _uri_path(uri: str) -> Optional[Path]:
    parsed = urlparse(uri)
    if parsed.scheme == "file":
        fs = to_fs_path(uri)
        return Path(fs) if fs else None
    if parsed.path.endswith(".ipynb") or ".ipynb" in parsed.path:  # vscode-notebook-cell:/a/b.ipynb#W1
        return Path(unquote(parsed.path))
    return None


def lint_target(target: Target, overrides: Mapping[str, Any], fallback_root: Optional[Path],
                projects: Optional[Any] = None, units: Optional[Any] = None) -> Tuple[List[Placed], Optional[str], Optional[str]]:
    """Run the pipeline for one target (in a worker thread): placed findings, a configuration
    warning, and the internal error that stopped the lint (a bug in a rule), if any.
    ``projects``: the server's ``pipeline.Projects`` (facts across the files of the workspace);
    ``units``: its ``incremental.UnitCache`` (an edit inside one function re-lints that function)."""
    from .config import DEFAULT_MAX_FILE_SIZE, ConfigError, load_settings
    from .notebook import CodeCell, neutralise, place
    from .pipeline import check_cells, check_source

    warning = None
    codes: Optional[FrozenSet[str]] = None
    noqa, unfixable = True, frozenset()
    limit = DEFAULT_MAX_FILE_SIZE
    start = target.path or fallback_root or Path.cwd()
    try:
        settings = load_settings(start, overrides)
    except ConfigError as exc:
        warning = f"detachlint: {exc}; using the default rules"
    else:
        if target.path is not None and settings.is_excluded(target.path):
            return [], None, None
        codes = settings.codes_for(target.path or start)
        noqa, unfixable = not settings.ignore_noqa, settings.unfixable
        if settings.max_file_size is not None:
            limit = settings.max_file_size

    if not target.notebook:
        source = neutralise(target.source) if target.as_cell else target.source
        if source is None:
            return [], warning, None
        project = None
        if projects is not None and target.path is not None and not target.as_cell:
            project = projects.view(target.path)
        result = check_source(source, target.filename, codes, noqa=noqa, max_file_size=limit, project=project,
                              units=None if target.as_cell else units)
        placed = [Placed(target.key, f, tuple((target.key, r) for r in f.related))
                  for f in drop_fixes(result.findings, unfixable)]
        return placed, warning or result.skipped, result.internal_error

    cells = [CodeCell(number, source) for number, _, source in target.cells]
    uris = {number: uri for number, uri, _ in target.cells}
    result, cmap = check_cells(cells, target.filename, codes, noqa=noqa)
    placed = []
    for finding in drop_fixes(result.findings, unfixable):
        where = place(finding, cmap)
        related = tuple((uris[c], rel) for rel, c in zip(where.finding.related, where.related_cells))
        placed.append(Placed(uris[where.cell], where.finding, related))
    return placed, warning, result.internal_error


def fix_all(target: Target, overrides: Mapping[str, Any], fallback_root: Optional[Path],
            projects: Optional[Any] = None) -> Optional[str]:
    """The document with every safe fix applied (passes until none is left), or None when nothing
    changes. Notebooks are not fixed here: a fix's rows are those of the joined cells."""
    if target.notebook or target.as_cell:
        return None
    import dataclasses

    from .fixes import fix_text

    def lint(text: str) -> List[Finding]:
        placed, _, error = lint_target(dataclasses.replace(target, source=text), overrides, fallback_root, projects)
        if error is not None:
            raise RuntimeError(error)  # no fix over a text the rules could not analyse
        return [p.finding for p in placed]

    try:
        outcome = fix_text(target.source, lint, unsafe=False)
    except RuntimeError:  # the lint failed (already in the client's log): offer nothing
        return None
    return outcome.text if outcome.changed else None


# --- the server ------------------------------------------------------------------------------


class DetachlintServer(LanguageServer):  # type: ignore[misc,valid-type]
    def __init__(self) -> None:
        super().__init__(
            "detachlint",
            __version__,
            text_document_sync_kind=T.TextDocumentSyncKind.Incremental,
            notebook_document_sync=T.NotebookDocumentSyncOptions(
                notebook_selector=[T.NotebookDocumentFilterWithCells(
                    cells=[T.NotebookCellLanguage(language="python")], notebook="jupyter-notebook")],
                save=True,
            ),
        )
        self.debounce = DEBOUNCE_S
        self.init_overrides: Dict[str, List[str]] = {}  # from initializationOptions
        self.overrides: Dict[str, List[str]] = {}  # those, updated by workspace/configuration
        self.init_unsafe_fixes = False  # ``unsafeFixes`` in initializationOptions
        self.unsafe_fixes = False  # that, updated by workspace/configuration: offer unsafe quick fixes
        self.pull = False  # the client pulls diagnostics: never push
        self.results: Dict[str, List[Placed]] = {}  # text document / cell uri -> placed findings
        self.target_uris: Dict[str, List[str]] = {}  # target key -> the uris it last published to
        self._pending: Dict[str, "asyncio.Task[None]"] = {}
        self.opened: Dict[str, None] = {}  # open targets, keyed by the uri as the client spells it
        self._warned: set = set()
        self.lint_count = 0  # how many lints ran (debounce is observable through this)
        from .pipeline import Projects

        self.projects = Projects()  # the workspace's project index, rebuilt when a file is saved
        from .incremental import UnitCache

        self.units = UnitCache()  # findings per top-level function of the open buffers

    # -- targets --

    def _root(self) -> Optional[Path]:
        root = self.workspace.root_path if self.workspace is not None else None
        return Path(root) if root else None

    def target_for(self, key: str) -> Optional[Target]:
        """The current contents of a text document or notebook, or None if it is not open or not
        something to lint."""
        ws = self.workspace
        notebook = ws.get_notebook_document(notebook_uri=key)
        if notebook is not None:
            path = _uri_path(notebook.uri)
            cells = []
            for number, cell in enumerate(notebook.cells, start=1):
                if cell.kind != T.NotebookCellKind.Code or not self.has_document(cell.document):
                    continue
                doc = ws.get_text_document(cell.document)
                if (doc.language_id or "python") != "python":
                    continue
                cells.append((number, cell.document, doc.source))
            versions = (notebook.version,) + tuple(ws.get_text_document(u).version for _, u, _ in cells)
            return Target(key, True, path, str(path) if path else key, cells=cells, versions=versions)
        if not self.has_document(key):
            return None
        doc = ws.get_text_document(key)
        path = _uri_path(key)
        scheme = urlparse(key).scheme
        as_cell = scheme != "file" and path is not None and path.suffix == ".ipynb"
        if not as_cell:
            is_python = doc.language_id == "python" or (path is not None and path.suffix in PYTHON_SUFFIXES)
            if not is_python:
                return None
        return Target(key, False, path, str(path) if path else key, source=doc.source, as_cell=as_cell,
                      versions=(doc.version,))

    def has_document(self, uri: str) -> bool:
        return unquote(uri) in self.workspace.text_documents  # pygls keys documents by unquoted uri

    def key_for(self, uri: str) -> str:
        """A cell's notebook, or the document itself."""
        notebook = self.workspace.get_notebook_document(cell_uri=uri)
        return notebook.uri if notebook is not None else uri

    # -- linting --

    def schedule(self, key: str, delay: Optional[float] = None) -> None:
        if self.pull:  # the client asks when it wants them; just drop what is now stale
            for uri in self.target_uris.pop(key, [key]):
                self.results.pop(uri, None)
            return
        pending = self._pending.pop(key, None)
        if pending is not None:
            pending.cancel()
        self._pending[key] = asyncio.ensure_future(self._lint_later(key, self.debounce if delay is None else delay))

    async def _lint_later(self, key: str, delay: float) -> None:
        try:
            if delay:
                await asyncio.sleep(delay)
            await self.refresh(key)
        except asyncio.CancelledError:
            pass
        finally:
            task = asyncio.current_task()
            if self._pending.get(key) is task:
                del self._pending[key]

    async def lint(self, key: str) -> Optional[Tuple[Target, List[Placed]]]:
        target = self.target_for(key)
        if target is None:
            return None
        loop = asyncio.get_running_loop()
        placed, warning, error = await loop.run_in_executor(None, lint_target, target, dict(self.overrides),
                                                            self._root(), self.projects, self.units)
        if error is not None:  # a bug in a rule (contained by the pipeline): say so in the log, keep serving
            log.error("detachlint failed on %s: %s", key, error)
            self.window_log_message(T.LogMessageParams(
                type=T.MessageType.Error, message=f"detachlint failed on {key}: {error}"))
            return None
        self.lint_count += 1
        if warning and warning not in self._warned:
            self._warned.add(warning)
            self.window_show_message(T.ShowMessageParams(type=T.MessageType.Warning, message=warning))
        current = self.target_for(key)
        if current is None or current.versions != target.versions:
            return None  # edited meanwhile: a newer lint is on its way
        self.store(target, placed)
        return target, placed

    def store(self, target: Target, placed: List[Placed]) -> None:
        uris = [uri for _, uri, _ in target.cells] if target.notebook else [target.key]
        for uri in self.target_uris.get(target.key, []):
            self.results.pop(uri, None)
        for uri in uris:
            self.results[uri] = []
        for item in placed:
            self.results.setdefault(item.uri, []).append(item)
            item.diagnostic = self.diagnostic(item)
        stale = [u for u in self.target_uris.get(target.key, []) if u not in uris]
        self.target_uris[target.key] = uris + stale  # stale cells get one empty publish

    async def refresh(self, key: str) -> None:
        result = await self.lint(key)
        if result is None or self.pull:
            return
        target, _ = result
        for uri in self.target_uris.get(key, []):
            self.publish(uri)
        self.target_uris[key] = [u for u in self.target_uris[key] if u in self.results]

    def publish(self, uri: str) -> None:
        items = self.results.get(uri, [])
        version = None
        if self.has_document(uri):
            version = self.workspace.get_text_document(uri).version
        self.text_document_publish_diagnostics(
            T.PublishDiagnosticsParams(uri=uri, diagnostics=[p.diagnostic for p in items], version=version))

    def forget(self, key: str) -> None:
        self.opened.pop(key, None)
        pending = self._pending.pop(key, None)
        if pending is not None:
            pending.cancel()
        for uri in self.target_uris.pop(key, []):
            self.results.pop(uri, None)
            if not self.pull:
                self.text_document_publish_diagnostics(T.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    def relint_all(self) -> None:
        for key in list(self.opened):
            self.schedule(key, 0)

    # -- positions --

    def lines_of(self, uri: str) -> List[str]:
        if self.has_document(uri):
            return self.workspace.get_text_document(uri).lines
        return []

    def to_client(self, uri: str, loc: Location) -> "T.Position":
        lines = self.lines_of(uri)
        line = max(loc.row - 1, 0)
        if line >= len(lines):
            return T.Position(line=len(lines), character=0) if lines else T.Position(line=line, character=0)
        codec = self.workspace.position_codec
        return codec.position_to_client_units(lines, T.Position(line=line, character=loc.column))

    def range_of(self, uri: str, start: Location, end: Location) -> "T.Range":
        return T.Range(start=self.to_client(uri, start), end=self.to_client(uri, end))

    def from_client(self, uri: str, pos: "T.Position") -> Tuple[int, int]:
        lines = self.lines_of(uri)
        if not lines:
            return pos.line, pos.character
        server = self.workspace.position_codec.position_from_client_units(
            lines, T.Position(line=pos.line, character=pos.character))
        return server.line, server.character

    def diagnostic(self, item: Placed) -> "T.Diagnostic":
        f = item.finding
        url = rule_url(f.code)
        related = [
            T.DiagnosticRelatedInformation(
                location=T.Location(uri=uri, range=self.range_of(uri, rel.location, rel.end_location)),
                message=rel.message)
            for uri, rel in item.related
        ]
        return T.Diagnostic(
            range=self.range_of(item.uri, f.location, f.end_location),
            message="\n".join((f.message, *f.notes)),
            severity=T.DiagnosticSeverity.Error if f.severity == Severity.ERROR else T.DiagnosticSeverity.Warning,
            code=f.code,
            code_description=T.CodeDescription(href=url) if url else None,
            source="detachlint",
            related_information=related or None,
        )

    def items_at(self, uri: str, start: Tuple[int, int], end: Tuple[int, int]) -> List[Placed]:
        """Findings whose range meets the server-unit span [start, end] (0-based lines)."""
        out = []
        for item in self.results.get(uri, []):
            f = item.finding
            a = (f.location.row - 1, f.location.column)
            b = (f.end_location.row - 1, f.end_location.column)
            if a <= end and start <= b:
                out.append(item)
        return out

    async def ensure_results(self, uri: str) -> None:
        if uri not in self.results:
            await self.lint(self.key_for(uri))

    # -- code actions --

    def code_actions(self, uri: str, items: Sequence[Placed]) -> List["T.CodeAction"]:
        actions: List[T.CodeAction] = []
        fixes = []
        seen = set()
        lines = self.lines_of(uri)
        for item in items:
            f = item.finding
            safe = f.fix is not None and str(f.fix.applicability) == "safe"
            if f.fix is not None and (safe or self.unsafe_fixes):
                edits = [T.TextEdit(range=self.range_of(uri, e.location, e.end_location), new_text=e.content)
                         for e in f.fix.edits]
                fixes.append(T.CodeAction(
                    title=f"{f.code}: {f.fix.message}" + ("" if safe else " (unsafe fix)"),
                    kind=T.CodeActionKind.QuickFix if safe else UNSAFE_KIND,
                    diagnostics=[item.diagnostic],
                    edit=T.WorkspaceEdit(changes={uri: edits}),
                    is_preferred=safe,
                ))
            key = (f.location.row, f.code)
            if f.code == PARSE_ERROR_CODE or key in seen or not 1 <= f.location.row <= len(lines):
                continue
            seen.add(key)
            edit = noqa_edit(lines[f.location.row - 1], f.code)
            if edit is None:
                continue
            a, b, text = edit
            rng = self.range_of(uri, Location(f.location.row, a), Location(f.location.row, b))
            actions.append(T.CodeAction(
                title=f"Suppress {f.code} with `# noqa: {f.code}`",
                kind=T.CodeActionKind.QuickFix,
                diagnostics=[item.diagnostic],
                edit=T.WorkspaceEdit(changes={uri: [T.TextEdit(range=rng, new_text=text)]}),
            ))
        return fixes + actions

    async def fix_all_action(self, uri: str) -> Optional["T.CodeAction"]:
        """"Fix all safe fixes in this file", when the document has a safe fix: one edit over the
        changed lines (``source.fixAll.detachlint``, which editors also run on save if asked)."""
        if not any(p.finding.fix is not None and str(p.finding.fix.applicability) == "safe"
                   for p in self.results.get(uri, [])):
            return None
        target = self.target_for(uri)
        if target is None:
            return None
        loop = asyncio.get_running_loop()
        fixed = await loop.run_in_executor(None, fix_all, target, dict(self.overrides), self._root(), self.projects)
        current = self.target_for(uri)
        if fixed is None or current is None or current.versions != target.versions:
            return None
        from .fixes import changed_lines

        start, end, text = changed_lines(target.source, fixed)
        rng = self.range_of(uri, Location(start + 1, 0), Location(end + 1, 0))
        return T.CodeAction(title="detachlint: fix all safe fixes in this file", kind=FIX_ALL_KIND,
                            edit=T.WorkspaceEdit(changes={uri: [T.TextEdit(range=rng, new_text=text)]}))


FIX_ALL_KIND = "source.fixAll.detachlint"


def _either(value: Optional[bool], default: bool) -> bool:
    return default if value is None else value


def create_server() -> "DetachlintServer":
    if _IMPORT_ERROR is not None:
        raise ImportError("detachlint lsp needs the 'lsp' extra: pip install '.[lsp]' from a detachlint checkout") from _IMPORT_ERROR
    server = DetachlintServer()

    @server.feature(T.INITIALIZE)
    def initialize(ls: DetachlintServer, params: T.InitializeParams) -> None:
        ls.init_overrides = ls.overrides = client_overrides(params.initialization_options)
        ls.init_unsafe_fixes = ls.unsafe_fixes = bool(client_unsafe_fixes(params.initialization_options))
        caps = params.capabilities.text_document
        ls.pull = caps is not None and caps.diagnostic is not None

    @server.feature(T.INITIALIZED)
    async def initialized(ls: DetachlintServer, params: T.InitializedParams) -> None:
        await fetch_configuration(ls)

    async def fetch_configuration(ls: DetachlintServer) -> None:
        workspace = ls.client_capabilities.workspace
        if workspace is None or not workspace.configuration:
            return
        try:
            result = await ls.workspace_configuration_async(
                T.ConfigurationParams(items=[T.ConfigurationItem(section=SECTION)]))
        except Exception as exc:  # a client that fails the request: keep what we have
            log.warning("workspace/configuration failed: %s", exc)
            return
        if result and isinstance(result[0], Mapping):
            ls.unsafe_fixes = _either(client_unsafe_fixes(result[0]), ls.init_unsafe_fixes)
            overrides = {**ls.init_overrides, **client_overrides(result[0])}
            if overrides != ls.overrides:
                ls.overrides = overrides
                ls.relint_all()

    @server.feature(T.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls: DetachlintServer, params: T.DidChangeConfigurationParams) -> None:
        if isinstance(params.settings, Mapping) and isinstance(params.settings.get(SECTION), Mapping):
            ls.overrides = {**ls.init_overrides, **client_overrides(params.settings[SECTION])}
            ls.unsafe_fixes = _either(client_unsafe_fixes(params.settings[SECTION]), ls.init_unsafe_fixes)
        else:
            await fetch_configuration(ls)
        ls.relint_all()
        if ls.pull:
            workspace = ls.client_capabilities.workspace
            if workspace is not None and workspace.diagnostics is not None and workspace.diagnostics.refresh_support:
                ls.workspace_diagnostic_refresh(None)

    @server.feature(T.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: DetachlintServer, params: T.DidOpenTextDocumentParams) -> None:
        if ls.key_for(params.text_document.uri) == params.text_document.uri:
            ls.opened[params.text_document.uri] = None
            ls.schedule(params.text_document.uri, 0)

    @server.feature(T.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: DetachlintServer, params: T.DidChangeTextDocumentParams) -> None:
        ls.schedule(ls.key_for(params.text_document.uri))

    @server.feature(T.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: DetachlintServer, params: T.DidSaveTextDocumentParams) -> None:
        path = _uri_path(params.text_document.uri)
        if path is not None:  # its facts changed on disk: other open files may see it differently
            ls.projects.invalidate(path)
            for key in list(ls.opened):
                if key != ls.key_for(params.text_document.uri):
                    ls.schedule(key)
        ls.schedule(ls.key_for(params.text_document.uri), 0)

    @server.feature(T.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: DetachlintServer, params: T.DidCloseTextDocumentParams) -> None:
        if ls.key_for(params.text_document.uri) == params.text_document.uri:
            ls.forget(params.text_document.uri)

    @server.feature(T.NOTEBOOK_DOCUMENT_DID_OPEN)
    def notebook_did_open(ls: DetachlintServer, params: T.DidOpenNotebookDocumentParams) -> None:
        ls.opened[params.notebook_document.uri] = None
        ls.schedule(params.notebook_document.uri, 0)

    @server.feature(T.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def notebook_did_change(ls: DetachlintServer, params: T.DidChangeNotebookDocumentParams) -> None:
        ls.schedule(params.notebook_document.uri)

    @server.feature(T.NOTEBOOK_DOCUMENT_DID_SAVE)
    def notebook_did_save(ls: DetachlintServer, params: T.DidSaveNotebookDocumentParams) -> None:
        ls.schedule(params.notebook_document.uri, 0)

    @server.feature(T.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def notebook_did_close(ls: DetachlintServer, params: T.DidCloseNotebookDocumentParams) -> None:
        ls.forget(params.notebook_document.uri)

    @server.feature(
        T.TEXT_DOCUMENT_DIAGNOSTIC,
        T.DiagnosticOptions(identifier="detachlint", inter_file_dependencies=False, workspace_diagnostics=False),
    )
    async def pull_diagnostics(ls: DetachlintServer, params: T.DocumentDiagnosticParams):
        uri = params.text_document.uri
        await ls.lint(ls.key_for(uri))
        return T.RelatedFullDocumentDiagnosticReport(items=[p.diagnostic for p in ls.results.get(uri, [])])

    @server.feature(T.TEXT_DOCUMENT_HOVER)
    async def hover(ls: DetachlintServer, params: T.HoverParams) -> Optional[T.Hover]:
        uri = params.text_document.uri
        await ls.ensure_results(uri)
        here = ls.from_client(uri, params.position)
        items = ls.items_at(uri, here, here)
        if not items:
            return None
        text = "\n\n---\n\n".join(dict.fromkeys(hover_markdown(p.finding) for p in items))
        first = items[0].diagnostic
        return T.Hover(contents=T.MarkupContent(kind=T.MarkupKind.Markdown, value=text), range=first.range)

    @server.feature(
        T.TEXT_DOCUMENT_CODE_ACTION,
        T.CodeActionOptions(code_action_kinds=[T.CodeActionKind.QuickFix, UNSAFE_KIND, FIX_ALL_KIND]),
    )
    async def code_action(ls: DetachlintServer, params: T.CodeActionParams) -> List[T.CodeAction]:
        uri = params.text_document.uri
        await ls.ensure_results(uri)
        only = [getattr(k, "value", k) for k in params.context.only or []]

        def wanted_kind(kind: Any) -> bool:  # kinds are hierarchical: "source" asks for "source.fixAll.x"
            kind = getattr(kind, "value", kind)
            return not only or any(kind == k or kind.startswith(k + ".") for k in only)

        # Asked for by kind (editors' "Source Action…" menu, or fix-on-save), not in the quick-fix list.
        fix_all_action = await ls.fix_all_action(uri) if only and wanted_kind(FIX_ALL_KIND) else None
        start = ls.from_client(uri, params.range.start)
        end = ls.from_client(uri, params.range.end)
        wanted = {(d.code, d.range.start.line, d.range.start.character) for d in params.context.diagnostics
                  if d.source == "detachlint"}
        items = [p for p in ls.results.get(uri, [])
                 if (p.finding.code, p.diagnostic.range.start.line, p.diagnostic.range.start.character) in wanted]
        items += [p for p in ls.items_at(uri, start, end) if p not in items]
        actions = ls.code_actions(uri, items) + ([fix_all_action] if fix_all_action is not None else [])
        return [a for a in actions if wanted_kind(a.kind)]

    @server.command("detachlint.lintCount")
    def lint_count(ls: DetachlintServer, *args: Any) -> int:
        """How many lints ran (lets tests observe the debounce)."""
        return ls.lint_count

    return server


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Serve the Language Server Protocol on stdin/stdout (``--stdio`` is accepted and implied)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if any(a in ("-h", "--help") for a in args):
        print("usage: detachlint lsp [--stdio]\n\nRun the detachlint Language Server on stdin/stdout.")
        return 0
    try:
        server = create_server()
    except ImportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    server.start_io()
    return 0


if __name__ == "__main__":
    sys.exit(main())
