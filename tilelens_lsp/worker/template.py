"""The fork server's own side: a worker process that prepared once (Triton imported, the compile path
warmed, torch imported where it is installed) and forks a ready worker for each request.

It runs in the worker's interpreter, started by worker/forkserver.py with a SOCK_SEQPACKET socket
as its stdin. Each request carries the three pipe ends of a new worker (SCM_RIGHTS); the child
leads its own session, dies with this process, and serves like any worker (main.serve). This
process reaps its children and reports each exit status, which the parent needs for a TL050
message ("crashed (signal 11)"). It starts no thread (forking a threaded process is unsafe) and
never analyses anything itself, so every child starts from the same state.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import signal
import socket
import sys
from typing import Callable

PREIMPORT_ENV = "TILELENS_WORKER_PREIMPORT"  # comma-separated modules; unset: torch, where installed


def serve(prepare: Callable[[], dict], child_main: Callable[[dict], int]) -> int:
    ctl = socket.socket(fileno=os.dup(0))  # the control socket, off fd 0: user code reading stdin gets EOF
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.close(devnull)
    hello = prepare()
    if hello.get("ready"):
        try:
            for name in _preimports():
                importlib.import_module(name)
        except BaseException as exc:  # noqa: BLE001 - a partial import would differ from a fresh one
            hello = {"ready": False, "error": f"pre-import failed: {type(exc).__name__}: {exc}"}
    ctl.send(json.dumps(hello).encode())
    if not hello.get("ready"):
        return 1

    def reap(signum, frame) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            try:
                ctl.send(json.dumps({"exit": pid, "code": os.waitstatus_to_exitcode(status)}).encode())
            except OSError:
                return

    signal.signal(signal.SIGCHLD, reap)
    while True:
        try:
            msg, fds, _, _ = socket.recv_fds(ctl, 4096, 3)
        except InterruptedError:
            continue
        except OSError:
            return 0
        if not msg:
            return 0  # the parent went away
        if len(fds) != 3:
            for fd in fds:
                os.close(fd)
            ctl.send(json.dumps({"forked": None, "error": "expected three pipe ends"}).encode())
            continue
        pid = os.fork()
        if pid == 0:
            _child(ctl, fds, child_main, hello)
        for fd in fds:
            os.close(fd)
        ctl.send(json.dumps({"forked": pid}).encode())


def _preimports() -> list[str]:
    named = os.environ.get(PREIMPORT_ENV)
    if named is not None:
        return [n.strip() for n in named.split(",") if n.strip()]
    return ["torch"] if importlib.util.find_spec("torch") is not None else []


def _child(ctl: socket.socket, fds: list[int], child_main: Callable[[dict], int], hello: dict) -> None:
    """In the forked child: take the pipes as fds 0, 1, 2, lead a session, serve; never returns."""
    code = 1
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        ctl.close()
        os.setsid()
        _die_with_parent()
        for target, fd in zip((0, 1, 2), fds):
            os.dup2(fd, target)
            os.close(fd)
        code = child_main(hello)
    except BaseException:  # noqa: BLE001 - whatever happens, never return into the server's loop
        pass
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
        os._exit(code)


def _die_with_parent() -> None:
    """SIGKILL when the fork server dies (Linux PR_SET_PDEATHSIG), as a spawned worker does."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, 9)
    except (OSError, AttributeError):
        pass
