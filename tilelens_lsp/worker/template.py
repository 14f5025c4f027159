"""The fork server's own side: a worker process that prepared once (Triton imported, the compile path
warmed, torch imported where it is installed) and forks a ready worker for each request.

It runs in the worker's interpreter, started by worker/forkserver.py with a SOCK_SEQPACKET socket
as its stdin. Each request carries the three pipe ends of a new worker (SCM_RIGHTS); the child
leads its own session, dies with this process, and serves like any worker (main.serve). This
process reaps its children and reports each exit status, which the parent needs for a TL050
message ("crashed (signal 11)"). It starts no thread (forking a threaded process is unsafe) and
never analyses anything itself, so every child starts from the same state. Before its first fork
it moves what it prepared out of the garbage collector's walks (`settled_heap`).

A request that carries one socket end instead asks for a *branch*: a child that imports the named
installed packages (the parents of the site-packages modules a `check` analyses), then serves forks
of its own on that socket, so the workers forked from it share one import of, say,
`liger_kernel.ops` instead of paying it each. The branch puts back the environment and working
folder the imports changed (as a worker does after each file), reports what it imported and what
failed, and exits instead of serving when the imports left a thread behind (a package that
initialises CUDA on a GPU host does): forking it would be unsafe, and its parent forks from this
server as before.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import importlib.util
import json
import os
import signal
import socket
import sys
from typing import Callable, Iterator

PREIMPORT_ENV = "TILELENS_WORKER_PREIMPORT"  # comma-separated modules; unset: torch, where installed
# a collection of young objects every 10,000 allocations rather than every 700, older generations as
# Python's defaults: an analysis allocates millions of short-lived objects and keeps few
GC_THRESHOLDS = (10_000, 10, 10)


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
    with settled_heap():  # before the first fork: every worker inherits it
        return _loop(ctl, child_main, hello)


@contextlib.contextmanager
def settled_heap() -> Iterator[None]:
    """What is alive once a process has prepared (Triton, torch, the pipeline, a branch's packages)
    lives as long as the process: it is moved out of the collector's reach (`gc.freeze`, after one
    collection so that no garbage is kept). A full collection then walks only what the files made
    (with a package such as FlagGems imported, about 200 ms each time, a tenth of a worker's time,
    measured in-process over 60 of its modules), and a forked worker's collections neither walk
    nor copy its parent's pages. Young objects are collected less often (GC_THRESHOLDS). On the
    way out it is handed back, so that the interpreter's exit frees it as before (nanobind, which
    Triton's bindings use, reports every object of its own still alive at exit as a leak)."""
    thresholds = gc.get_threshold()
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)
    try:
        yield
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)


def _loop(ctl: socket.socket, child_main: Callable[[dict], int], hello: dict) -> int:
    """Fork a worker for each request on `ctl` (a branch for one with a single socket end), report
    each child's exit, until the parent goes away."""

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
            msg, fds, _, _ = socket.recv_fds(ctl, 65536, 3)
        except InterruptedError:
            continue
        except OSError:
            return 0
        if not msg:
            return 0  # the parent went away
        if len(fds) == 1:
            ctl.send(json.dumps(_branch(ctl, fds[0], msg, child_main, hello)).encode())
            continue
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


def _branch(ctl: socket.socket, fd: int, msg: bytes, child_main: Callable[[dict], int], hello: dict) -> dict:
    """Fork a branch that imports the packages named in `msg` and serves on `fd`: the reply."""
    try:
        names = json.loads(msg).get("branch")
    except (ValueError, AttributeError):
        names = None
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        os.close(fd)
        return {"branched": None, "error": 'expected {"branch": [package, ...]}'}
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            _detach(ctl)
            code = _serve_branch(socket.socket(fileno=fd), names, child_main, hello)
        except BaseException:  # noqa: BLE001 - never return into the server's loop
            pass
        finally:
            os._exit(code)
    os.close(fd)
    return {"branched": pid}


def _serve_branch(sub: socket.socket, names: list[str], child_main: Callable[[dict], int], hello: dict) -> int:
    env, cwd = dict(os.environ), os.getcwd()
    done, failed = preload(names)
    os.environ.clear()
    os.environ.update(env)
    try:
        os.chdir(cwd)
    except OSError:
        pass
    threads = thread_count()
    sub.send(json.dumps({"ready": threads == 1, "preloaded": done, "failed": failed, "threads": threads}).encode())
    if threads != 1:
        return 0  # never fork from a threaded process: the parent forks from the server instead
    with settled_heap():  # the packages too
        return _loop(sub, child_main, hello)


def preload(names: list[str]) -> tuple[list[str], dict[str, str]]:
    """Import each package: those imported, and why each of the others failed (its workers meet the
    same error themselves, with the line that raised it)."""
    done: list[str] = []
    failed: dict[str, str] = {}
    for name in names:
        try:
            importlib.import_module(name)
            done.append(name)
        except BaseException as exc:  # noqa: BLE001 - installed code may raise anything, even SystemExit
            failed[name] = f"{type(exc).__name__}: {exc}"[:300]
    return done, failed


def thread_count() -> int:
    """This process's threads, native ones included where the system lists them (Linux)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        import threading

        return threading.active_count()


def _preimports() -> list[str]:
    named = os.environ.get(PREIMPORT_ENV)
    if named is not None:
        return [n.strip() for n in named.split(",") if n.strip()]
    return ["torch"] if importlib.util.find_spec("torch") is not None else []


def _child(ctl: socket.socket, fds: list[int], child_main: Callable[[dict], int], hello: dict) -> None:
    """In the forked child: take the pipes as fds 0, 1, 2, lead a session, serve; never returns."""
    code = 1
    try:
        _detach(ctl)
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


def _detach(ctl: socket.socket) -> None:
    """The first steps of a process forked from the server (a worker or a branch): the default
    SIGCHLD back, the server's control socket closed, a session of its own, killed with the server."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    ctl.close()
    os.setsid()
    _die_with_parent()


def _die_with_parent() -> None:
    """SIGKILL when the fork server dies (Linux PR_SET_PDEATHSIG), as a spawned worker does."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, 9)
    except (OSError, AttributeError):
        pass
