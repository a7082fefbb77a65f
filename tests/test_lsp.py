"""The Language Server, end to end: a real LSP client (pytest-lsp) talks to
``python -m detachlint lsp`` over stdio.

Rules with related locations and fixes arrive with other issues, so one server here runs with an
extra rule, ``TAL990`` (registered by a small launcher before the server starts), that reports
every ``alias_demo(a, b)`` call with two related locations and a fix, and crashes on
``crash_demo()``. It goes through the real engine like any rule.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Callable, List, Sequence

import pytest
import pytest_lsp
from lsprotocol import types as T
from pytest_lsp import ClientServerConfig, LanguageClient

from detachlint.rules import rule_by_code

ROOT = Path(__file__).resolve().parents[1]
ENV = dict(os.environ, PYTHONPATH=str(ROOT))
SERVER = [sys.executable, "-m", "detachlint", "lsp"]

TEST_RULE = textwrap.dedent(
    '''
    import sys
    import libcst as cst
    import detachlint.rules as registry
    from detachlint.findings import Applicability, Edit, Fix, Location, Severity
    from detachlint.rules.base import Rule


    class AliasDemo(Rule):
        """
        ## What it does
        A rule for the language server tests: reports `alias_demo(a, b)`.
        """

        code = "TAL990"
        name = "alias-demo"
        severity = Severity.ERROR

        def visit_Call(self, node):
            if isinstance(node.func, cst.Name) and node.func.value == "crash_demo":
                raise RuntimeError("boom")  # a rule with a bug
            if not (isinstance(node.func, cst.Name) and node.func.value == "alias_demo"):
                return
            first, second = node.args[0].value, node.args[1].value

            def fix(ctx):
                pos = ctx.position(node.func)
                edit = Edit(Location(pos.start.line, pos.start.column), Location(pos.end.line, pos.end.column),
                            "fixed_demo")
                return Fix(Applicability.SAFE, "call fixed_demo instead", (edit,))

            self.ctx.report(node, self.code, "alias_demo aliases its arguments", self.severity,
                            related=[(first, "the alias is made here"), (second, "and read here")], fix=fix)


    registry.register(AliasDemo)

    from detachlint.lsp import main

    sys.exit(main())
    '''
)

SOURCE = textwrap.dedent(
    """\
    import torch


    def step(p: torch.Tensor, t: torch.Tensor):
        p.data.add_(1)
        u = torch.tensor(t)  # noqa: E501
        return p.data, u
    """
)


def capabilities(pull: bool = False) -> T.ClientCapabilities:
    return T.ClientCapabilities(
        workspace=T.WorkspaceClientCapabilities(configuration=True),
        text_document=T.TextDocumentClientCapabilities(
            diagnostic=T.DiagnosticClientCapabilities() if pull else None,
            hover=T.HoverClientCapabilities(content_format=[T.MarkupKind.Markdown]),
        ),
        notebook_document=T.NotebookDocumentClientCapabilities(
            synchronization=T.NotebookDocumentSyncClientCapabilities()),
    )


async def start(client: LanguageClient, root: Path, pull: bool = False, init_options=None) -> T.InitializeResult:
    return await client.initialize_session(T.InitializeParams(
        capabilities=capabilities(pull), root_uri=root.as_uri(),
        workspace_folders=[T.WorkspaceFolder(uri=root.as_uri(), name="ws")],
        initialization_options=init_options))


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER, server_env=ENV))
async def client(lsp_client: LanguageClient):
    lsp_client.set_configuration({}, section="detachlint")
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-c", TEST_RULE], server_env=ENV))
async def demo_client(lsp_client: LanguageClient):
    lsp_client.set_configuration({}, section="detachlint")
    yield
    await lsp_client.shutdown_session()


async def wait_for(client: LanguageClient, uri: str, check: Callable[[Sequence[T.Diagnostic]], bool],
                   timeout: float = 30.0) -> List[T.Diagnostic]:
    """Wait until the diagnostics published for ``uri`` satisfy ``check``."""

    async def loop():
        while not (uri in client.diagnostics and check(client.diagnostics[uri])):
            await client.wait_for_notification(T.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        return list(client.diagnostics[uri])

    return await asyncio.wait_for(loop(), timeout)


def codes(diags: Sequence[T.Diagnostic]) -> List[tuple]:
    return sorted((d.range.start.line, d.code) for d in diags)


def open_doc(client: LanguageClient, uri: str, text: str, version: int = 1, language: str = "python") -> None:
    client.text_document_did_open(T.DidOpenTextDocumentParams(
        text_document=T.TextDocumentItem(uri=uri, language_id=language, version=version, text=text)))


def change(client: LanguageClient, uri: str, version: int, text: str, rng: T.Range = None) -> None:
    event = (T.TextDocumentContentChangeWholeDocument(text=text) if rng is None
             else T.TextDocumentContentChangePartial(range=rng, text=text))
    client.text_document_did_change(T.DidChangeTextDocumentParams(
        text_document=T.VersionedTextDocumentIdentifier(uri=uri, version=version), content_changes=[event]))


async def hover_at(client: LanguageClient, uri: str, position: T.Position):
    return await client.text_document_hover_async(T.HoverParams(
        text_document=T.TextDocumentIdentifier(uri=uri), position=position))


async def actions_for(client: LanguageClient, uri: str, rng: T.Range, diags: Sequence[T.Diagnostic]):
    return await client.text_document_code_action_async(T.CodeActionParams(
        text_document=T.TextDocumentIdentifier(uri=uri), range=rng,
        context=T.CodeActionContext(diagnostics=list(diags))))


async def open_and_wait(client: LanguageClient, tmp_path: Path, name: str, text: str,
                        check: Callable[[Sequence[T.Diagnostic]], bool]):
    """Start a session rooted at ``tmp_path``, open ``name`` and wait for its first diagnostics."""
    await start(client, tmp_path)
    uri = (tmp_path / name).as_uri()
    open_doc(client, uri, text)
    return uri, await wait_for(client, uri, check)


def apply_edits(text: str, edits: Sequence[T.TextEdit]) -> str:
    """Apply LSP edits (UTF-16 positions) to ``text``."""
    lines = text.splitlines(keepends=True)

    def offset(pos: T.Position) -> int:
        before = sum(len(line) for line in lines[:pos.line])
        line = lines[pos.line] if pos.line < len(lines) else ""
        units = 0
        for i, ch in enumerate(line):
            if units >= pos.character:
                return before + i
            units += 2 if ord(ch) > 0xFFFF else 1
        return before + len(line.rstrip("\r\n"))

    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        a, b = offset(edit.range.start), offset(edit.range.end)
        text = text[:a] + edit.new_text + text[b:]
        lines = text.splitlines(keepends=True)
    return text


@pytest.mark.asyncio
async def test_open_change_hover_code_action(client: LanguageClient, tmp_path):
    uri, diags = await open_and_wait(client, tmp_path, "train.py", SOURCE, lambda d: len(d) > 0)
    assert codes(diags) == [(4, "TAL003"), (5, "TAL101")]  # TAL002 is off by default
    tal003 = next(d for d in diags if d.code == "TAL003")
    assert tal003.source == "detachlint"
    assert tal003.range == T.Range(start=T.Position(line=4, character=4), end=T.Position(line=4, character=18))
    assert tal003.code_description.href == rule_by_code("TAL003").url()
    assert tal003.severity in (T.DiagnosticSeverity.Warning, T.DiagnosticSeverity.Error)
    tal101 = next(d for d in diags if d.code == "TAL101")
    assert tal101.severity == T.DiagnosticSeverity.Warning  # severity mapped from the finding

    # Hover on the diagnostic: the rule's documentation, as markdown.
    hover = await hover_at(client, uri, T.Position(line=5, character=10))
    assert hover.contents.kind == T.MarkupKind.Markdown
    assert "TAL101" in hover.contents.value and "## What it does" in hover.contents.value
    nothing = await hover_at(client, uri, T.Position(line=0, character=2))
    assert nothing is None

    # Code actions: suppress with noqa, appended to the line's existing noqa list.
    actions = await actions_for(client, uri, tal101.range, [tal101])
    (suppress,) = [a for a in actions if a.title.startswith("Suppress")]
    assert suppress.title == "Suppress TAL101 with `# noqa: TAL101`"
    assert suppress.kind == T.CodeActionKind.QuickFix
    fixed = apply_edits(SOURCE, suppress.edit.changes[uri])
    assert fixed.splitlines()[5] == "    u = torch.tensor(t)  # noqa: E501, TAL101"
    actions = await actions_for(client, uri, tal003.range, [])
    suppress = next(a for a in actions if a.title.startswith("Suppress"))
    assert apply_edits(SOURCE, suppress.edit.changes[uri]).splitlines()[4] == "    p.data.add_(1)  # noqa: TAL003"

    # An incremental edit: the TAL003 line goes; updated diagnostics follow (debounced).
    change(client, uri, 2, "", T.Range(start=T.Position(line=4, character=0), end=T.Position(line=5, character=0)))
    diags = await wait_for(client, uri, lambda d: all(x.code != "TAL003" for x in d))
    assert codes(diags) == [(4, "TAL101")]

    # Save: linted at once; a suppressed line stays suppressed.
    change(client, uri, 3, SOURCE.replace("torch.tensor(t)  # noqa: E501", "torch.tensor(t)  # noqa: TAL101"))
    client.text_document_did_save(T.DidSaveTextDocumentParams(text_document=T.TextDocumentIdentifier(uri=uri)))
    diags = await wait_for(client, uri, lambda d: codes(d) == [(4, "TAL003")])

    # Close: diagnostics cleared.
    client.text_document_did_close(T.DidCloseTextDocumentParams(text_document=T.TextDocumentIdentifier(uri=uri)))
    assert await wait_for(client, uri, lambda d: len(d) == 0) == []


@pytest.mark.asyncio
async def test_utf16_positions(client: LanguageClient, tmp_path):
    line = '    s = "é😀🎉"; u = torch.tensor(t)'
    text = "import torch\n\n\ndef f(t: torch.Tensor):\n" + line + "\n    return s, u\n"
    uri, (diag,) = await open_and_wait(client, tmp_path, "emoji.py", text, lambda d: len(d) > 0)
    prefix = line[: line.index("torch.tensor")]
    end_prefix = line[: line.index("(t)") + 3]
    utf16 = lambda s: len(s.encode("utf-16-le")) // 2  # noqa: E731
    assert diag.code == "TAL101"
    assert (diag.range.start.line, diag.range.start.character) == (4, utf16(prefix))
    assert diag.range.end.character == utf16(end_prefix)
    assert utf16(prefix) == len(prefix) + 2  # two astral-plane characters, two UTF-16 units each

    # Code actions and hover are asked in UTF-16 too.
    hover = await hover_at(client, uri, diag.range.start)
    assert hover is not None and "TAL101" in hover.contents.value
    actions = await actions_for(client, uri, diag.range, [diag])
    (suppress,) = [a for a in actions if a.title.startswith("Suppress")]
    assert apply_edits(text, suppress.edit.changes[uri]).splitlines()[4] == line + "  # noqa: TAL101"
    # Where TAL101 offers a fix, its edit lands exactly on the call, past the astral-plane characters
    # (test_related_information_and_fix covers fixes whatever the rules offer).
    for fix in [a for a in actions if a.title.startswith("TAL101: ")]:
        fixed_line = apply_edits(text, fix.edit.changes[uri]).splitlines()[4]
        assert fixed_line.startswith('    s = "é😀🎉"; u = ') and "torch.tensor" not in fixed_line
        assert fixed_line.endswith(")")


@pytest.mark.asyncio
async def test_broken_document_replaces_stale_diagnostics(client: LanguageClient, tmp_path):
    uri, _ = await open_and_wait(client, tmp_path, "broken.py", SOURCE, lambda d: len(d) == 2)
    change(client, uri, 2, SOURCE.replace("def step(p", "def step((p"))
    diags = await wait_for(client, uri, lambda d: any(x.code == "TAL999" for x in d))
    assert [d.code for d in diags] == ["TAL999"]
    assert diags[0].severity == T.DiagnosticSeverity.Error and "SyntaxError" in diags[0].message
    # The server is still alive and recovers when the document parses again.
    hover = await hover_at(client, uri, diags[0].range.start)
    assert hover is not None and "TAL999" in hover.contents.value
    change(client, uri, 3, SOURCE)
    diags = await wait_for(client, uri, lambda d: [x.code for x in d] == ["TAL003", "TAL101"])


@pytest.mark.asyncio
async def test_changes_are_debounced(client: LanguageClient, tmp_path):
    uri, _ = await open_and_wait(client, tmp_path, "debounce.py", SOURCE, lambda d: len(d) == 2)
    for version in range(2, 12):
        change(client, uri, version, SOURCE + "\n" * version)
    await asyncio.wait_for(client.wait_for_notification(T.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS), 30)
    await asyncio.sleep(1.0)  # room for any further (unwanted) lint to happen
    count = await client.workspace_execute_command_async(T.ExecuteCommandParams(command="detachlint.lintCount"))
    assert count == 2  # the open, then one lint for the ten rapid edits


@pytest.mark.asyncio
async def test_settings_from_pyproject_and_client(client: LanguageClient, tmp_path):
    project = tmp_path / "proj"
    project.mkdir()
    (project / "pyproject.toml").write_text('[tool.detachlint]\nextend-select = ["TAL002"]\n')
    await start(client, tmp_path)
    uri = (project / "train.py").as_uri()
    open_doc(client, uri, SOURCE)
    diags = await wait_for(client, uri, lambda d: len(d) > 0)
    assert codes(diags) == [(4, "TAL003"), (5, "TAL101"), (6, "TAL002")]
    # Excluded paths (here ruff's default `.venv`) are not linted, as on the command line.
    excluded = (project / ".venv" / "lib" / "site.py").as_uri()
    open_doc(client, excluded, SOURCE)
    assert await wait_for(client, excluded, lambda d: True) == []

    # workspace/configuration (section "detachlint") layers on top of the pyproject table.
    client.set_configuration({"ignore": ["TAL101"], "extendSelect": []}, section="detachlint")
    client.workspace_did_change_configuration(T.DidChangeConfigurationParams(settings=None))
    diags = await wait_for(client, uri, lambda d: all(x.code != "TAL101" for x in d))
    assert codes(diags) == [(4, "TAL003"), (6, "TAL002")]

    # A bad selector: a warning message, and the default rules keep working.
    client.set_configuration({"select": ["NOPE"]}, section="detachlint")
    client.workspace_did_change_configuration(T.DidChangeConfigurationParams(settings=None))
    diags = await wait_for(client, uri, lambda d: any(x.code == "TAL101" for x in d))
    assert codes(diags) == [(4, "TAL003"), (5, "TAL101")]
    assert any("NOPE" in m.message for m in client.messages)


@pytest.mark.asyncio
async def test_initialization_options_select(client: LanguageClient, tmp_path):
    await start(client, tmp_path, init_options={"select": ["TAL101"]})
    uri = (tmp_path / "train.py").as_uri()
    open_doc(client, uri, SOURCE)
    assert codes(await wait_for(client, uri, lambda d: len(d) > 0)) == [(5, "TAL101")]


@pytest.mark.asyncio
async def test_unfixable_and_ignore_noqa_settings(client: LanguageClient, tmp_path):
    """ruff's ``unfixable`` and ``ignore-noqa``, from the editor's settings as on the command line."""
    text = SOURCE.replace("# noqa: E501", "# noqa: TAL101")
    uri, diags = await open_and_wait(client, tmp_path, "fixable.py", text, lambda d: len(d) > 0)
    assert codes(diags) == [(4, "TAL003")]  # the noqa is honoured by default

    # ``t`` is a tensor by its annotation only, so the TAL101 fix is unsafe: offered once asked for
    client.set_configuration({"ignoreNoqa": True, "unsafeFixes": True}, section="detachlint")
    client.workspace_did_change_configuration(T.DidChangeConfigurationParams(settings=None))
    diags = await wait_for(client, uri, lambda d: len(d) == 2)
    assert codes(diags) == [(4, "TAL003"), (5, "TAL101")]
    tal101 = next(d for d in diags if d.code == "TAL101")
    titles = [a.title for a in await actions_for(client, uri, tal101.range, [tal101])]
    assert any(t.startswith("TAL101: ") for t in titles), titles  # its fix is offered

    client.diagnostics.pop(uri)  # the same diagnostics come again: wait for the new publication
    client.set_configuration({"ignoreNoqa": True, "unsafeFixes": True, "unfixable": ["TAL101"]},
                             section="detachlint")
    client.workspace_did_change_configuration(T.DidChangeConfigurationParams(settings=None))
    diags = await wait_for(client, uri, lambda d: len(d) == 2)
    tal101 = next(d for d in diags if d.code == "TAL101")
    titles = [a.title for a in await actions_for(client, uri, tal101.range, [tal101])]
    assert titles == [], titles  # no fix; and the line's noqa already names TAL101


MIXED = textwrap.dedent(
    """\
    import torch


    def f(a: torch.Tensor, b: torch.Tensor):
        u = torch.tensor(a * 2)
        v = torch.tensor([a, b])
        return u, v
    """
)


async def kinds_for(client: LanguageClient, uri: str, diag: T.Diagnostic, only=None) -> List[tuple]:
    actions = await client.text_document_code_action_async(T.CodeActionParams(
        text_document=T.TextDocumentIdentifier(uri=uri), range=diag.range,
        context=T.CodeActionContext(diagnostics=[diag], only=only)))
    return [(a.kind, bool(a.is_preferred)) for a in actions or [] if not a.title.startswith("Suppress")]


@pytest.mark.asyncio
async def test_unsafe_fixes_only_when_asked(client: LanguageClient, tmp_path):
    """As ruff's server: a safe fix is a preferred ``quickfix``; an unsafe one is offered only
    with the ``unsafeFixes`` setting, then as ``quickfix.unsafe``, never preferred, never in
    ``source.fixAll.detachlint``."""
    uri, diags = await open_and_wait(client, tmp_path, "mixed.py", MIXED, lambda d: len(d) == 2)
    safe, unsafe = sorted(diags, key=lambda d: d.range.start.line)
    assert (safe.code, unsafe.code) == ("TAL101", "TAL102")
    assert await kinds_for(client, uri, safe) == [(T.CodeActionKind.QuickFix, True)]
    assert await kinds_for(client, uri, unsafe) == []  # not asked for: not offered
    fix_all = await client.text_document_code_action_async(T.CodeActionParams(
        text_document=T.TextDocumentIdentifier(uri=uri), range=safe.range,
        context=T.CodeActionContext(diagnostics=[], only=[T.CodeActionKind.SourceFixAll])))
    (action,) = fix_all
    fixed = apply_edits(MIXED, action.edit.changes[uri])
    assert "(a * 2).detach().clone()" in fixed and "torch.tensor([a, b])" in fixed  # the safe fix only

    client.set_configuration({"unsafeFixes": True}, section="detachlint")
    client.workspace_did_change_configuration(T.DidChangeConfigurationParams(settings=None))
    for _ in range(100):  # the server asks for the configuration again
        if await kinds_for(client, uri, unsafe):
            break
        await asyncio.sleep(0.1)
    assert await kinds_for(client, uri, unsafe) == [("quickfix.unsafe", False)]
    # kinds are hierarchical: a client asking for quick fixes gets the unsafe one too
    assert await kinds_for(client, uri, unsafe, only=[T.CodeActionKind.QuickFix]) == [("quickfix.unsafe", False)]
    assert await kinds_for(client, uri, safe) == [(T.CodeActionKind.QuickFix, True)]


@pytest.mark.asyncio
async def test_unsafe_fixes_from_initialization_options(client: LanguageClient, tmp_path):
    await start(client, tmp_path, init_options={"unsafeFixes": True})
    uri = (tmp_path / "mixed.py").as_uri()
    open_doc(client, uri, MIXED)
    diags = await wait_for(client, uri, lambda d: len(d) == 2)
    unsafe = next(d for d in diags if d.code == "TAL102")
    assert await kinds_for(client, uri, unsafe) == [("quickfix.unsafe", False)]


@pytest.mark.asyncio
async def test_pull_diagnostics(client: LanguageClient, tmp_path):
    await start(client, tmp_path, pull=True)
    uri = (tmp_path / "pull.py").as_uri()
    open_doc(client, uri, SOURCE)
    report = await client.text_document_diagnostic_async(T.DocumentDiagnosticParams(
        text_document=T.TextDocumentIdentifier(uri=uri)))
    assert report.kind == "full"
    assert codes(report.items) == [(4, "TAL003"), (5, "TAL101")]
    change(client, uri, 2, SOURCE.replace("    p.data.add_(1)\n", ""))
    report = await client.text_document_diagnostic_async(T.DocumentDiagnosticParams(
        text_document=T.TextDocumentIdentifier(uri=uri)))
    assert codes(report.items) == [(4, "TAL101")]
    assert uri not in client.diagnostics  # a pull client is never pushed to as well


def notebook_cell(uri: str, kind: T.NotebookCellKind = T.NotebookCellKind.Code) -> T.NotebookCell:
    return T.NotebookCell(kind=kind, document=uri)


@pytest.mark.asyncio
async def test_notebook_document_sync(client: LanguageClient, tmp_path):
    result = await start(client, tmp_path)
    (selector,) = result.capabilities.notebook_document_sync.notebook_selector
    assert [c.language for c in selector.cells] == ["python"]
    nb_uri = (tmp_path / "train.ipynb").as_uri()
    cell = [f"vscode-notebook-cell:{tmp_path}/train.ipynb#W{i}sZmlsZQ%3D%3D" for i in range(4)]
    texts = [
        "%matplotlib inline\nimport torch\n",
        "# Notes\n",
        "t = torch.ones(3)\n",
        '!nvidia-smi\nlabel = "😀"; u = torch.tensor(t)\n',
    ]
    kinds = [T.NotebookCellKind.Code, T.NotebookCellKind.Markup, T.NotebookCellKind.Code, T.NotebookCellKind.Code]
    client.notebook_document_did_open(T.DidOpenNotebookDocumentParams(
        notebook_document=T.NotebookDocument(
            uri=nb_uri, notebook_type="jupyter-notebook", version=1,
            cells=[notebook_cell(u, k) for u, k in zip(cell, kinds)]),
        cell_text_documents=[
            T.TextDocumentItem(uri=u, language_id="python" if k == T.NotebookCellKind.Code else "markdown",
                               version=1, text=text)
            for u, k, text in zip(cell, kinds, texts)]))
    diags = await wait_for(client, cell[3], lambda d: len(d) > 0)
    # Names flow from cell 1 and 3 into cell 4; the position is within cell 4, in UTF-16 (code point 17).
    assert [(d.code, d.range.start.line, d.range.start.character) for d in diags] == [("TAL101", 1, 18)]
    assert list(client.diagnostics[cell[0]]) == [] and list(client.diagnostics[cell[2]]) == []
    assert cell[1] not in client.diagnostics  # markdown cells are not linted

    # Editing a cell re-lints the notebook: the finding moves to where the tensor is now made.
    client.notebook_document_did_change(T.DidChangeNotebookDocumentParams(
        notebook_document=T.VersionedNotebookDocumentIdentifier(uri=nb_uri, version=2),
        change=T.NotebookDocumentChangeEvent(cells=T.NotebookDocumentCellChanges(text_content=[
            T.NotebookDocumentCellContentChanges(
                document=T.VersionedTextDocumentIdentifier(uri=cell[2], version=2),
                changes=[T.TextDocumentContentChangeWholeDocument(text="t = torch.ones(3)\nv = torch.tensor(t)\n")]),
        ]))))
    diags = await wait_for(client, cell[2], lambda d: len(d) > 0)
    assert [(d.code, d.range.start.line) for d in diags] == [("TAL101", 1)]

    client.notebook_document_did_close(T.DidCloseNotebookDocumentParams(
        notebook_document=T.NotebookDocumentIdentifier(uri=nb_uri),
        cell_text_documents=[T.TextDocumentIdentifier(uri=u) for u in cell]))
    await wait_for(client, cell[3], lambda d: len(d) == 0)
    await wait_for(client, cell[2], lambda d: len(d) == 0)


@pytest.mark.asyncio
async def test_notebook_cell_sent_as_text_document(client: LanguageClient, tmp_path):
    await start(client, tmp_path)
    uri = f"vscode-notebook-cell:{tmp_path}/nb.ipynb#W3sZmlsZQ%3D%3D"
    open_doc(client, uri, "%load_ext autoreload\nimport torch\n!ls\nx = torch.ones(2)\ny = torch.tensor(x)\nx?\n")
    diags = await wait_for(client, uri, lambda d: len(d) > 0)
    assert [(d.code, d.range.start.line) for d in diags] == [("TAL101", 4)]


@pytest.mark.asyncio
async def test_related_information_and_fix(demo_client: LanguageClient, tmp_path):
    client = demo_client
    text = 'import torch\na = 1; b = "😀"\nalias_demo(a, b)\n'  # torch: the engine's precheck wants evidence
    uri, (diag,) = await open_and_wait(client, tmp_path, "demo.py", text, lambda d: len(d) > 0)
    assert diag.code == "TAL990" and diag.severity == T.DiagnosticSeverity.Error
    related = [(r.location.uri, r.location.range.start.line, r.location.range.start.character, r.message)
               for r in diag.related_information]
    assert related == [(uri, 2, 11, "the alias is made here"), (uri, 2, 14, "and read here")]

    actions = await actions_for(client, uri, diag.range, [diag])
    assert [a.title for a in actions] == ["TAL990: call fixed_demo instead", "Suppress TAL990 with `# noqa: TAL990`"]
    assert actions[0].is_preferred
    assert apply_edits(text, actions[0].edit.changes[uri]) == 'import torch\na = 1; b = "😀"\nfixed_demo(a, b)\n'


@pytest.mark.asyncio
async def test_diagnostics_equal_the_engine_on_the_demo(client: LanguageClient, tmp_path):
    """The demo script through the server: every diagnostic, its range, severity and related
    locations are the engine's findings (the demo is ASCII, so UTF-16 columns are code points)."""
    from detachlint.engine import lint_source

    text = (ROOT / "demo" / "train.py").read_text(encoding="utf-8")
    uri, diags = await open_and_wait(client, tmp_path, "train.py", text, lambda d: len(d) > 0)
    got = sorted(
        (d.code, d.range.start.line, d.range.start.character, d.range.end.line, d.range.end.character,
         d.severity, d.message,
         tuple((r.location.uri, r.location.range.start.line, r.location.range.start.character, r.message)
               for r in d.related_information or ()))
        for d in diags)
    severity = {"error": T.DiagnosticSeverity.Error, "warning": T.DiagnosticSeverity.Warning}
    want = sorted(
        (f.code, f.location.row - 1, f.location.column, f.end_location.row - 1, f.end_location.column,
         severity[f.severity.value], "\n".join((f.message, *f.notes)),  # the evidence under the message
         tuple((uri, r.location.row - 1, r.location.column, r.message) for r in f.related))
        for f in lint_source(text, str(tmp_path / "train.py")))
    assert got == want
    assert any(d.related_information for d in diags)  # the alias rules explain themselves


@pytest.mark.asyncio
async def test_a_crashing_rule_is_logged_and_the_server_keeps_serving(demo_client: LanguageClient, tmp_path):
    client = demo_client
    uri, _ = await open_and_wait(client, tmp_path, "ok.py", "import torch\nalias_demo(1, 2)\n", lambda d: len(d) == 1)
    change(client, uri, 2, "import torch\ncrash_demo()\n")
    client.text_document_did_save(T.DidSaveTextDocumentParams(text_document=T.TextDocumentIdentifier(uri=uri)))

    async def logged():
        while not any("RuntimeError: boom" in m.message for m in client.log_messages):
            await client.wait_for_notification(T.WINDOW_LOG_MESSAGE)

    await asyncio.wait_for(logged(), 30)
    change(client, uri, 3, "import torch\n\nalias_demo(1, 2)\n")
    assert codes(await wait_for(client, uri, lambda d: codes(d) == [(2, "TAL990")])) == [(2, "TAL990")]


@pytest.mark.asyncio
async def test_notebook_related_information_points_into_other_cells(demo_client: LanguageClient, tmp_path):
    client = demo_client
    await start(client, tmp_path)
    nb_uri = (tmp_path / "nb.ipynb").as_uri()
    cells = [f"vscode-notebook-cell:{tmp_path}/nb.ipynb#W{i}" for i in range(2)]
    texts = ["import torch\na = 1\nb = 2\n", "alias_demo(a,\n           b)\n"]
    client.notebook_document_did_open(T.DidOpenNotebookDocumentParams(
        notebook_document=T.NotebookDocument(uri=nb_uri, notebook_type="jupyter-notebook", version=1,
                                             cells=[notebook_cell(u) for u in cells]),
        cell_text_documents=[T.TextDocumentItem(uri=u, language_id="python", version=1, text=t)
                             for u, t in zip(cells, texts)]))
    (diag,) = await wait_for(client, cells[1], lambda d: len(d) > 0)
    assert (diag.range.start.line, diag.range.end.line) == (0, 1)
    assert [(r.location.uri, r.location.range.start.line) for r in diag.related_information] == [
        (cells[1], 0), (cells[1], 1)]


def test_import_does_not_load_torch():
    code = "import sys, detachlint.lsp\nassert 'torch' not in sys.modules\n"
    subprocess.run([sys.executable, "-c", code], check=True, env=ENV)


def test_help_and_module_entry():
    proc = subprocess.run([sys.executable, "-m", "detachlint.lsp", "--help"], capture_output=True, text=True,
                          env=ENV, timeout=60)
    assert proc.returncode == 0 and "stdin" in proc.stdout


@pytest.mark.parametrize(
    "line, expected",
    [
        ("x = f(y)\n", (8, 8, "  # noqa: TAL001")),
        ("x = f(y)   \n", (8, 11, "  # noqa: TAL001")),
        ("x = f(y)  # comment\n", (19, 19, "  # noqa: TAL001")),
        ("x = f(y)  # noqa: E501\n", (22, 22, ", TAL001")),
        ("x = f(y)  # noqa:E501,W291 trailing words\n", (26, 26, ", TAL001")),
        ("x = f(y)  # noqa\n", None),
        ("x = f(y)  # noqa: TAL001\n", None),
        ("x = f(y)  # noqa: TAL\n", None),  # no digits: a blanket noqa, as flake8 reads it
        ("x = f(y) + \\\n", None),
    ],
)
def test_noqa_edit(line, expected):
    from detachlint.noqa import noqa_edit

    assert noqa_edit(line, "TAL001") == expected


@pytest.mark.parametrize(
    "raw, expected",
    [
        ({"select": ["TAL1"], "extendSelect": ["TAL002"]}, {"select": ["TAL1"], "extend-select": ["TAL002"]}),
        ({"detachlint": {"extend-ignore": ["TAL103"]}}, {"extend-ignore": ["TAL103"]}),  # Helix, glspc
        ({"ignore": "TAL101, TAL102", "unknown": 1}, {"ignore": ["TAL101", "TAL102"]}),
        ({"unfixable": ["TAL001"], "ignoreNoqa": True}, {"unfixable": ["TAL001"], "ignore-noqa": True}),
        ({"ignore-noqa": "yes", "fixable": "TAL101"}, {"fixable": ["TAL101"]}),  # a flag must be a boolean
        (None, {}),
        ([1, 2], {}),
    ],
)
def test_client_settings(raw, expected):
    from detachlint.lsp import client_overrides

    assert client_overrides(raw) == expected
