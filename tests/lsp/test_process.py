"""The server as a process: what it advertises, how it exits, stdio EOF, TCP, and malformed input.

These drive `python -m tilelens_lsp` with a raw JSON-RPC client so they can do what a polite client
never does: vanish mid-run, send garbage, or connect over TCP.
"""

from __future__ import annotations

import json
import os
import queue
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable

import pytest

from .lsphelp import HUNG, REPO, SERVER

ENV = SERVER.server_env


class RawClient:
    """Content-Length framed JSON-RPC over a pair of byte streams; answers server requests with null."""

    def __init__(self, rfile, wfile) -> None:
        self.rfile, self.wfile = rfile, wfile
        self.messages: queue.Queue = queue.Queue()
        self.notifications: list[dict] = []
        self.lock = threading.Lock()
        self.ids = iter(range(1, 10**6))
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        try:
            while True:
                length = None
                while True:
                    line = self.rfile.readline()
                    if not line:
                        return
                    if line in (b"\r\n", b"\n"):
                        break
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                body = json.loads(self.rfile.read(length))
                if "method" in body and "id" in body:  # a request from the server
                    self.send({"jsonrpc": "2.0", "id": body["id"], "result": None})
                elif "method" in body:
                    self.notifications.append(body)
                self.messages.put(body)
        except (OSError, ValueError):
            return
        finally:
            self.messages.put(None)

    def send(self, message: dict) -> None:
        data = json.dumps(message).encode()
        with self.lock:
            self.wfile.write(b"Content-Length: %d\r\n\r\n" % len(data) + data)
            self.wfile.flush()

    def notify(self, method: str, params: Any) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method: str, params: Any, timeout: float = 30.0) -> dict:
        rid = next(self.ids)
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        return self.wait(lambda m: m.get("id") == rid and "method" not in m, timeout)

    def wait(self, predicate: Callable[[dict], bool], timeout: float = 30.0) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError("timed out waiting for a message")
            try:
                message = self.messages.get(timeout=remaining)
            except queue.Empty:
                continue
            if message is None:
                raise AssertionError("the server closed the connection")
            if predicate(message):
                return message

    def initialize(self, root: Path, options: dict | None = None) -> dict:
        reply = self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": root.as_uri(),
                "capabilities": {},
                "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
                "initializationOptions": options or {},
            },
        )
        self.notify("initialized", {})
        return reply


def start_stdio() -> tuple[subprocess.Popen, RawClient]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "tilelens_lsp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=ENV,
        cwd=REPO,
    )
    return proc, RawClient(proc.stdout, proc.stdin)


def gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status") as f:
            return "State:\tZ" in f.read()
    except FileNotFoundError:
        return True


def wait_gone(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if gone(pid):
            return True
        time.sleep(0.05)
    return False


def stats(client: RawClient) -> dict:
    return client.request("tilelens/stats", {})["result"]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "tilelens.toml").touch()
    return tmp_path


def test_capabilities_advertise_push_diagnostics_and_hover(workspace: Path):
    proc, client = start_stdio()
    try:
        caps = client.initialize(workspace)["result"]["capabilities"]
        sync = caps["textDocumentSync"]
        assert sync["openClose"] is True and sync["change"] == 2
        assert sync["save"] == {"includeText": False}
        assert caps["hoverProvider"] is True
        assert "diagnosticProvider" not in caps  # push only: no client shows verdicts twice
        # help inside `# tilelens:` directives
        assert "(" in caps["completionProvider"]["triggerCharacters"]
        assert caps["signatureHelpProvider"]["triggerCharacters"] == ["(", ","]
        assert caps["definitionProvider"] is True
    finally:
        proc.kill()
        proc.wait()


def test_malformed_params_get_an_error_reply_and_the_server_lives(workspace: Path):
    proc, client = start_stdio()
    try:
        client.initialize(workspace)
        reply = client.request("textDocument/hover", {"textDocument": 42}, timeout=10)
        assert reply["error"]["code"] == -32602  # InvalidParams, not silence
        client.notify("textDocument/didOpen", {"textDocument": "nonsense"})
        client.send({"jsonrpc": "2.0", "method": "textDocument/didSave"})
        assert "compiles" in stats(client)
        assert proc.poll() is None
    finally:
        proc.kill()
        proc.wait()


def test_shutdown_and_exit_stop_the_server_and_its_worker(workspace: Path):
    proc, client = start_stdio()
    client.initialize(workspace)
    pid = _wait_for_worker(client)
    assert client.request("shutdown", None)["result"] is None
    client.notify("exit", None)
    assert proc.wait(timeout=10) == 0
    assert wait_gone(pid, 5)


def test_stdin_eof_ends_the_server_and_a_busy_worker(workspace: Path):
    proc, client = start_stdio()
    client.initialize(workspace, {"workerTimeout": 60})
    (workspace / "hung.py").write_text(HUNG)
    client.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": (workspace / "hung.py").as_uri(), "languageId": "python", "version": 1, "text": HUNG}},
    )
    deadline = time.monotonic() + 20
    while stats(client)["in_flight"] != "hung.py":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    pid = stats(client)["worker_pid"]
    proc.stdin.close()  # the editor vanished
    assert proc.wait(timeout=10) == 1  # no shutdown request came first
    assert wait_gone(pid, 5), "the worker outlived the server"


def test_tcp_transport_serves_a_session(workspace: Path, tmp_path: Path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    token = tmp_path / "token"
    proc = subprocess.Popen(
        [sys.executable, "-m", "tilelens_lsp", "--tcp", f"127.0.0.1:{port}", "--token-file", str(token)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=ENV,
        cwd=REPO,
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                sock = socket.create_connection(("127.0.0.1", port), timeout=1)
                break
            except OSError:
                assert time.monotonic() < deadline, "the TCP server did not listen"
                time.sleep(0.1)
        with sock:
            f = sock.makefile("rwb")
            client = RawClient(f, f)
            reply = client.initialize(workspace, {"tcpToken": token.read_text().strip()})
            assert reply["result"]["capabilities"]["hoverProvider"] is True
            pid = _wait_for_worker(client)
            assert client.request("shutdown", None)["result"] is None
            client.notify("exit", None)
            assert proc.wait(timeout=10) == 0
        assert wait_gone(pid, 5)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _wait_for_worker(client: RawClient) -> int:
    deadline = time.monotonic() + 30
    while True:
        s = stats(client)
        if s["worker_alive"] and s["worker_pid"]:
            return s["worker_pid"]
        assert time.monotonic() < deadline, "the worker did not start"
        time.sleep(0.05)
