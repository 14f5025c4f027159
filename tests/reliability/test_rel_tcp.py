"""`tilelens-lsp --tcp`: one client per server, and only the one that knows the secret (issue 24, item 5).

Before, any local process that connected could send `initialize` with `interpreter` set to its own
program, which the server then ran, and a second connection took the session over (replies went to
the newcomer, the editor hung).
"""

from __future__ import annotations

import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import relfig
from lsp.lsphelp import REPO
from lsp.test_process import ENV, RawClient, wait_gone

TIMEOUT = 30


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def connect(port: int, deadline: float = 20) -> socket.socket:
    end = time.monotonic() + deadline
    while True:
        try:
            return socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
        except OSError:
            assert time.monotonic() < end, "the TCP server did not listen"
            time.sleep(0.1)


def start(port: int, *extra: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "tilelens_lsp", "--tcp", f"127.0.0.1:{port}", *extra],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={k: v for k, v in ENV.items() if k != "TILELENS_TCP_TOKEN"},
        cwd=REPO,
    )


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.wait()


def refused(client: RawClient, params: dict) -> bool:
    """Whether an `initialize` with `params` is refused: an error reply, or the connection closed."""
    try:
        reply = client.request("initialize", params, timeout=10)
    except AssertionError as exc:
        return "closed the connection" in str(exc)
    return "error" in reply


def evil_interpreter(tmp_path: Path) -> tuple[Path, Path]:
    marker = tmp_path / "ran"
    program = tmp_path / "evil.sh"
    program.write_text(f'#!/bin/sh\ntouch {marker}\nexec {sys.executable} "$@"\n')
    program.chmod(0o755)
    return program, marker


def test_a_process_without_the_secret_cannot_make_the_server_run_a_program(tmp_path):
    program, marker = evil_interpreter(tmp_path)
    port = free_port()
    proc = start(port)
    try:
        with connect(port) as sock:
            f = sock.makefile("rwb")
            client = RawClient(f, f)
            was_refused = refused(
                client,
                {
                    "processId": None,
                    "rootUri": tmp_path.as_uri(),
                    "capabilities": {},
                    "initializationOptions": {"interpreter": str(program), "tcpToken": "guessed"},
                },
            )
            time.sleep(3)  # the worker would be spawned right after initialize
        assert not marker.exists(), "the server ran a program an unauthenticated client named"
        assert was_refused
    finally:
        stop(proc)
    relfig.bump("tcp", "refused")


def test_the_launching_client_is_served_and_a_second_connection_is_refused(tmp_path):
    token_file = tmp_path / "private" / "token"
    port = free_port()
    proc = start(port, "--token-file", str(token_file))
    try:
        with connect(port) as sock:
            assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
            token = token_file.read_text().strip()
            assert len(token) >= 32
            f = sock.makefile("rwb")
            client = RawClient(f, f)
            reply = client.initialize(tmp_path, {"tcpToken": token})
            assert reply["result"]["capabilities"]["hoverProvider"] is True
            with connect(port) as intruder:  # a second client, even one that knows the token
                g = intruder.makefile("rwb")
                other = RawClient(g, g)
                assert refused(
                    other,
                    {
                        "processId": None,
                        "rootUri": tmp_path.as_uri(),
                        "capabilities": {},
                        "initializationOptions": {"tcpToken": token},
                    },
                )
            stats = client.request("tilelens/stats", {})  # the first client is still answered
            assert "result" in stats, stats
            pid = stats["result"].get("worker_pid")
            assert client.request("shutdown", None)["result"] is None
            client.notify("exit", None)
            assert proc.wait(timeout=20) == 0
        if pid:
            assert wait_gone(pid, 5)
        assert not token_file.exists()  # the secret goes with the server
    finally:
        stop(proc)
    relfig.bump("tcp", "refused")
