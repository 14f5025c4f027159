"""Warm workers: a fork server (worker/template.py) that imports Triton, and torch where it is
installed, once; each new worker is forked from it ready to serve, instead of paying those imports
again (for `check --jobs N`: N workers, and every replacement after a crash or timeout).

`ForkServer.fork()` returns a process handle with what `Worker` uses of `subprocess.Popen` (pid,
the three pipes, poll, wait, kill); the exit status comes from the server, which reaps its children.
A server that cannot start or answer is no error: `fork()` returns None and the caller spawns the
worker as usual. Deliberately not done: sharing one server between interpreters or settings (a
server serves the settings it was started with), or serving the language server (one worker).

`ForkServer.branch(packages)` asks the server for a second server forked from it that imports the
installed packages of a run first (worker/template.py); while it imports, the caller plans, and
watches its threads: a branch that starts one (CUDA initialised by a package on a GPU host) is
killed at once and the workers are forked from the first server, as without a branch.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import socket
import subprocess
import threading
import time

from tilelens_lsp.settings import Settings


class ForkedProcess:
    """A worker forked by the server: the part of `subprocess.Popen` that `Worker` uses."""

    def __init__(self, pid: int, stdin, stdout, stderr, server: "ForkServer") -> None:
        self.pid = pid
        self.stdin, self.stdout, self.stderr = stdin, stdout, stderr
        self.returncode: int | None = None
        self._server = server

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self._server.exit_code(self.pid)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired(f"worker {self.pid}", timeout or 0)
            self._server.exited.wait(0.05)
        return self.returncode  # type: ignore[return-value]

    def kill(self) -> None:
        try:
            os.kill(self.pid, signal.SIGKILL)
        except OSError:
            pass


class ForkServer:
    """One fork server for one interpreter and one set of worker settings."""

    def __init__(self, proc: subprocess.Popen, sock: socket.socket) -> None:
        self.proc = proc
        self.sock = sock
        self.exited = threading.Event()
        self._exits: dict[int, int] = {}
        self._replies: queue.Queue = queue.Queue()
        self._lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    @classmethod
    def start(cls, settings: Settings, spawn, timeout: float = 120.0) -> "ForkServer | None":
        """A ready server, or None. `spawn(args, stdin)` starts the process as workers are started
        (isolated interpreter, environment, working directory, session, death with this thread)."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            proc = spawn(["--template"], theirs.fileno())
        except OSError:
            ours.close()
            return None
        finally:
            theirs.close()
        ours.settimeout(timeout)
        try:
            hello = json.loads(ours.recv(65536) or b"{}")
        except (OSError, ValueError):
            hello = {}
        if not hello.get("ready"):
            _kill(proc)
            ours.close()
            return None
        ours.settimeout(None)
        return cls(proc, ours)

    def _read(self) -> None:
        while True:
            try:
                data = self.sock.recv(65536)
            except OSError:
                data = b""
            if not data:
                break
            try:
                msg = json.loads(data)
            except ValueError:
                continue
            if "exit" in msg:
                self._exits[int(msg["exit"])] = int(msg["code"])
                self.exited.set()
                self.exited.clear()
            else:
                self._replies.put(msg)
        self._replies.put(None)
        self.exited.set()

    def alive(self) -> bool:
        return self.proc.poll() is None

    def exit_code(self, pid: int) -> int | None:
        code = self._exits.pop(pid, None)
        if code is None and not self.alive():
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return -signal.SIGKILL  # the server died first (and took its children with it)
            except OSError:
                pass
        return code

    def fork(self, timeout: float = 30.0) -> ForkedProcess | None:
        """A new worker, its hello still to come on its stdout; None if the server cannot fork."""
        if not self.alive():
            return None
        with self._lock:
            ends = [os.pipe() for _ in range(3)]  # stdin, stdout, stderr of the child
            theirs = [ends[0][0], ends[1][1], ends[2][1]]
            mine = [ends[0][1], ends[1][0], ends[2][0]]
            try:
                socket.send_fds(self.sock, [b'{"fork": true}'], theirs)
                reply = self._replies.get(timeout=timeout)
            except (OSError, queue.Empty):
                reply = None
            for fd in theirs:
                os.close(fd)
            if not reply or not reply.get("forked"):
                for fd in mine:
                    os.close(fd)
                return None
        return ForkedProcess(
            int(reply["forked"]), os.fdopen(mine[0], "wb"), os.fdopen(mine[1], "rb"), os.fdopen(mine[2], "rb"), self
        )

    def branch(self, packages: list[str], timeout: float) -> "Branch | None":
        """A server forked from this one that imports `packages` before it forks anything, still
        importing when this returns (`Branch.server()` waits for it); None if none could start."""
        if not packages or not self.alive():
            return None
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        with self._lock:
            try:
                socket.send_fds(self.sock, [json.dumps({"branch": packages}).encode()], [theirs.fileno()])
                reply = self._replies.get(timeout=30)
            except (OSError, queue.Empty):
                reply = None
            finally:
                theirs.close()
        if not reply or not reply.get("branched"):
            ours.close()
            return None
        return Branch(ForkedProcess(int(reply["branched"]), None, None, None, self), ours, timeout)

    def stop(self) -> None:
        _kill(self.proc)
        try:
            self.sock.close()
        except OSError:
            pass


class Branch:
    """A branch server importing its packages: `server()` is the ready server, or None when the
    imports failed to finish in time or started a thread (then the branch is killed)."""

    POLL = 0.05  # seconds between looks at the branch's threads

    def __init__(self, proc: ForkedProcess, sock: socket.socket, timeout: float) -> None:
        self.proc = proc
        self.reply: dict | None = None  # the branch's report: preloaded, failed, threads
        self.why = ""  # why there is no server, when there is none
        self._sock = sock
        self._result: ForkServer | None = None
        self._thread = threading.Thread(target=self._wait, args=(timeout,), daemon=True)
        self._thread.start()

    def server(self, timeout: float | None = None) -> "ForkServer | None":
        self._thread.join(timeout)
        return self._result

    def _wait(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        self._sock.settimeout(self.POLL)
        while self.reply is None:
            try:
                data = self._sock.recv(65536)
                self.reply = json.loads(data) if data else {"ready": False, "error": "the branch exited"}
            except socket.timeout:
                names = _threads(self.proc.pid)
                if len(names) > 1:
                    self.reply = {"ready": False, "error": f"its imports started a thread ({', '.join(names[1:])})"}
                elif time.monotonic() > deadline:
                    self.reply = {"ready": False, "error": f"its imports took longer than {timeout:.0f} s"}
            except (OSError, ValueError) as exc:
                self.reply = {"ready": False, "error": f"no answer ({exc})"}
        if not self.reply.get("ready"):
            self.why = str(self.reply.get("error") or f"its imports left {self.reply.get('threads')} threads")
            _kill(self.proc)  # type: ignore[arg-type]  # what _kill uses of Popen
            self._sock.close()
            return
        self._sock.settimeout(None)
        self._result = ForkServer(self.proc, self._sock)  # type: ignore[arg-type]


def _threads(pid: int) -> list[str]:
    """The names of the threads of process `pid` where the system lists them (Linux), the main
    thread first; one name elsewhere."""
    try:
        tids = sorted(os.listdir(f"/proc/{pid}/task"), key=lambda t: (t != str(pid), t))
    except OSError:
        return ["main"]
    names = []
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                names.append(f.read().strip() or tid)
        except OSError:
            names.append(tid)
    return names


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        try:
            proc.kill()
        except OSError:
            pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass
