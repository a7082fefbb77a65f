"""The language server survives bad clients: malformed JSON-RPC, unknown methods, documents
closed while being linted, and 1,000 rapid edits (with bounded memory).

A raw JSON-RPC client over stdio (Content-Length framing) talks to ``python -m detachlint lsp``,
so that it can send what no well-behaved client library would.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, List, Optional

import pytest

pytest.importorskip("pygls")

ROOT = Path(__file__).parents[1]
SOURCE = "import torch\n\ndef f(model):\n    return torch.tensor(torch.ones(2))\n"


class RawClient:
    def __init__(self, cwd: Path) -> None:
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        self.proc = subprocess.Popen([sys.executable, "-m", "detachlint", "lsp"], cwd=cwd, env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.messages: "queue.Queue[dict]" = queue.Queue()
        self.log: List[dict] = []
        self._id = 0
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._stderr: List[bytes] = []
        threading.Thread(target=lambda: self._stderr.extend(self.proc.stderr), daemon=True).start()

    # framing
    def send_raw(self, body: bytes, length: Optional[int] = None) -> None:
        header = f"Content-Length: {len(body) if length is None else length}\r\n\r\n".encode()
        self.proc.stdin.write(header + body)
        self.proc.stdin.flush()

    def send(self, message: dict) -> None:
        self.send_raw(json.dumps({"jsonrpc": "2.0", **message}).encode())

    def _read(self) -> None:
        stream = self.proc.stdout
        while True:
            headers = {}
            while True:
                line = stream.readline()
                if not line:
                    return
                line = line.strip()
                if not line:
                    break
                name, _, value = line.decode().partition(":")
                headers[name.strip().lower()] = value.strip()
            body = stream.read(int(headers["content-length"]))
            message = json.loads(body)
            if "id" in message and "method" in message:  # a request from the server: answer it
                result: Any = None
                if message["method"] == "workspace/configuration":
                    result = [None] * len(message["params"]["items"])
                self.send({"id": message["id"], "result": result})
            self.messages.put(message)

    # requests
    def request(self, method: str, params: Any = None, timeout: float = 30) -> dict:
        self._id += 1
        rid = self._id
        self.send({"id": rid, "method": method, "params": params})
        return self.wait(lambda m: m.get("id") == rid and "method" not in m, timeout)

    def notify(self, method: str, params: Any = None) -> None:
        self.send({"method": method, "params": params})

    def wait(self, predicate: Callable[[dict], bool], timeout: float = 30) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            for message in self.log:
                if predicate(message):
                    self.log.remove(message)
                    return message
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"timed out; server stderr: {b''.join(self._stderr)[-2000:]!r}")
            try:
                self.log.append(self.messages.get(timeout=remaining))
            except queue.Empty:
                pass

    def drain(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            try:
                self.log.append(self.messages.get(timeout=max(0.01, end - time.monotonic())))
            except queue.Empty:
                pass

    def diagnostics_for(self, uri: str, timeout: float = 30) -> dict:
        return self.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                         and m["params"]["uri"] == uri, timeout)

    def start(self, root: Path) -> None:
        self.request("initialize", {"processId": os.getpid(), "rootUri": root.as_uri(), "capabilities": {}})
        self.notify("initialized", {})

    def open(self, path: Path, text: str, version: int = 1) -> str:
        uri = path.as_uri()
        self.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python",
                                                              "version": version, "text": text}})
        return uri

    def rss(self) -> int:
        with open(f"/proc/{self.proc.pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
        return 0

    def close(self) -> int:
        try:
            if self.proc.poll() is None:
                self.request("shutdown", timeout=10)
                self.notify("exit")
            return self.proc.wait(timeout=10)
        except Exception:
            self.proc.kill()
            return self.proc.wait()


@pytest.fixture
def client(tmp_path):
    c = RawClient(tmp_path)
    c.start(tmp_path)
    yield c
    c.close()


def _alive(client: RawClient, tmp_path: Path, name: str) -> None:
    uri = client.open(tmp_path / name, SOURCE)
    diags = client.diagnostics_for(uri)["params"]["diagnostics"]
    assert any(d["code"] == "TAL101" for d in diags)


def test_malformed_json_rpc(client, tmp_path):
    client.send_raw(b"{this is not json")
    client.send_raw(b"[1, 2, 3]")
    client.send_raw(b'"a string"')
    client.send_raw(b'{"jsonrpc": "2.0", "id": 99}')  # neither request nor response
    client.send_raw(json.dumps({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"nope": 1}}).encode())
    client.send_raw(json.dumps({"jsonrpc": "2.0", "method": "textDocument/didChange",
                                "params": {"textDocument": {"uri": "file:///never/opened.py", "version": 2},
                                           "contentChanges": [{"text": "x"}]}}).encode())
    client.send_raw(json.dumps({"jsonrpc": "2.0", "id": 7, "method": "textDocument/hover",
                                "params": {"textDocument": {"uri": 5}, "position": "here"}}).encode())
    client.drain(0.5)
    assert client.proc.poll() is None
    _alive(client, tmp_path, "after_garbage.py")


def test_unknown_methods(client, tmp_path):
    response = client.request("detachlint/noSuchMethod", {"x": 1})
    assert response["error"]["code"] == -32601  # MethodNotFound
    client.notify("$/noSuchNotification", {"x": 1})
    client.notify("workspace/noSuchNotification")
    assert client.proc.poll() is None
    _alive(client, tmp_path, "after_unknown.py")


def test_document_closed_while_being_linted(client, tmp_path):
    big = SOURCE + "".join(f"\ndef g{i}(p):\n    p.data.mul_({i})\n    return torch.tensor(p)\n" for i in range(400))
    for i in range(5):
        uri = client.open(tmp_path / f"closing{i}.py", big)
        client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                                 "contentChanges": [{"text": big + "\n# edit\n"}]})
        client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    client.drain(3.0)
    assert client.proc.poll() is None
    for i in range(5):
        uri = (tmp_path / f"closing{i}.py").as_uri()
        published = [m["params"]["diagnostics"] for m in client.log
                     if m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri]
        if published:
            assert published[-1] == [], "diagnostics of a closed document must end cleared"
    _alive(client, tmp_path, "after_close.py")


def test_thousand_rapid_edits_with_bounded_memory(client, tmp_path):
    path = tmp_path / "edited.py"
    uri = client.open(path, SOURCE)
    client.diagnostics_for(uri)
    before = client.rss()
    text = SOURCE
    for version in range(2, 1002):
        text = SOURCE + f"\nvalue_{version} = torch.tensor(torch.ones({version % 7 + 1}))\n"
        client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                                 "contentChanges": [{"text": text}]})
    final = client.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                        and m["params"]["uri"] == uri and m["params"].get("version") == 1001, timeout=60)
    rows = sorted(d["range"]["start"]["line"] for d in final["params"]["diagnostics"] if d["code"] == "TAL101")
    assert rows == [3, 5]  # the final text's findings, nothing stale
    client.drain(1.0)
    stale = [m for m in client.log if m.get("method") == "textDocument/publishDiagnostics"
             and m["params"]["uri"] == uri and (m["params"].get("version") or 0) > 1001]
    assert not stale
    growth = client.rss() - before
    assert growth < 150 * 1024 * 1024, f"server RSS grew by {growth / 1e6:.0f} MB over 1,000 edits"
    assert client.proc.poll() is None
