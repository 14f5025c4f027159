"""The parent side of the worker: start it, send requests, and survive its crashes and hangs.

A timeout, a crash or a memory blow-up costs the file a TL050 diagnostic and the worker a restart,
never the caller its life. Used by the CLI (a pool for `--jobs`) and by the server (one worker).
"""

from __future__ import annotations

import collections
import json
import os
import queue
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tilelens_lsp.model import Diagnostic, FileResult
from tilelens_lsp.settings import Settings

PACKAGE_PARENT = str(Path(__file__).resolve().parent.parent)


def _libc_prctl():
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _libc_prctl()   # looked up before any fork: the child must not import between fork and exec


def _die_with_parent() -> None:
    """In the child before exec: SIGKILL when the thread that started us dies (Linux PR_SET_PDEATHSIG),
    so a killed server or CLI never leaves a worker behind (a busy worker would not see stdin close)."""
    if _PRCTL is not None:
        _PRCTL(1, 9)  # PR_SET_PDEATHSIG, SIGKILL


class WorkerUnavailable(RuntimeError):
    """The worker could not start (e.g. the interpreter lacks Triton)."""


@dataclass
class Hello:
    triton: str
    python: str


class Worker:
    """One worker subprocess. Thread-safe: one request at a time."""

    def __init__(self, settings: Settings, cwd: str | None = None) -> None:
        self.settings = settings
        self.cwd = cwd
        self.proc: subprocess.Popen | None = None
        self.hello: Hello | None = None
        self.last_stats: dict[str, int] | None = None   # the worker's counters, from its last analysis
        self.restarts = 0
        self._lines: queue.Queue = queue.Queue()
        self._stderr: collections.deque[str] = collections.deque(maxlen=40)
        self._lock = threading.Lock()
        self._next_id = 0
        self._cancelled = False
        self._start_lock = threading.Lock()

    # -- lifecycle

    def start(self, startup_timeout: float = 120.0) -> Hello:
        """Start the process (or wait for a start in progress); a running worker is returned as is."""
        with self._start_lock:
            if self.alive() and self.hello is not None:
                return self.hello
            if not self.alive():
                self.hello = None
                self._spawn()
            return self._handshake(startup_timeout)

    def begin(self) -> None:
        """Spawn the process now without waiting for it; `start()` finishes the handshake later.
        Call it from a long-lived thread: the worker dies with the thread that spawned it."""
        with self._start_lock:
            if not self.alive():
                self.hello = None
                self._spawn()

    def _spawn(self) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = PACKAGE_PARENT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        env["TILELENS_WORKER_MEMORY_MB"] = str(self.settings.memory_limit_mb)
        env["TILELENS_WORKER_TARGET"] = self.settings.target
        env.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
        env["PYTHONDONTWRITEBYTECODE"] = "1"   # importing the user's modules must not litter __pycache__
        env.pop("TRITON_INTERPRET", None)
        try:
            self.proc = subprocess.Popen(
                [self.settings.interpreter, "-m", "tilelens_lsp.worker"], stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=self.cwd, env=env, text=True,
                encoding="utf-8", errors="replace", bufsize=1, start_new_session=True,
                preexec_fn=_die_with_parent if _PRCTL is not None else None)
        except OSError as exc:
            raise WorkerUnavailable(f"cannot start the worker with {self.settings.interpreter}: {exc}") from None
        self._lines = queue.Queue()
        threading.Thread(target=self._pump, args=(self.proc, self._lines), daemon=True).start()
        threading.Thread(target=self._drain, args=(self.proc,), daemon=True).start()

    def _handshake(self, startup_timeout: float) -> Hello:
        try:
            first = self._read(startup_timeout)
        except TimeoutError:
            first = None
        if first is None or not first.get("ready"):
            why = (first or {}).get("error") or self.stderr_tail() or "no answer"
            self.stop()
            raise WorkerUnavailable(f"the worker ({self.settings.interpreter}) did not start: {why}")
        self.hello = Hello(first["triton"], first["python"])
        return self.hello

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        try:
            proc.kill()
        except OSError:
            pass
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            try:
                stream and stream.close()
            except OSError:
                pass

    def restart(self) -> None:
        self.stop()
        self.restarts += 1
        self.start()

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def cancel(self) -> None:
        """Stop the request in flight (the worker is killed and replaced on the next request)."""
        self._cancelled = True
        self.stop()

    # -- I/O

    @staticmethod
    def _pump(proc: subprocess.Popen, lines: queue.Queue) -> None:
        try:
            for line in proc.stdout:
                lines.put(line)
        except (OSError, ValueError):
            pass
        lines.put(None)

    def _drain(self, proc: subprocess.Popen) -> None:
        try:
            for line in proc.stderr:
                self._stderr.append(line.rstrip())
        except (OSError, ValueError):
            pass

    def stderr_tail(self) -> str:
        return "\n".join(list(self._stderr)[-8:])

    def _read(self, timeout: float) -> dict | None:
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError
            try:
                line = self._lines.get(timeout=remaining)
            except queue.Empty:
                raise TimeoutError from None
            if line is None:
                return None
            try:
                return json.loads(line)
            except json.JSONDecodeError:
                continue

    def request(self, method: str, params: dict[str, Any], timeout: float) -> dict:
        """Send one request; raise TimeoutError, or return None-free reply / {'crashed': ...}."""
        with self._lock:
            self._cancelled = False
            if not self.alive() or self.hello is None:
                self.start()
            self._next_id += 1
            rid = self._next_id
            try:
                self.proc.stdin.write(json.dumps({"id": rid, "method": method, "params": params}) + "\n")
                self.proc.stdin.flush()
            except (OSError, ValueError, AttributeError):
                return self._crashed()
            while True:
                try:
                    reply = self._read(timeout)
                except TimeoutError:
                    self.stop()
                    raise
                if reply is None:
                    return self._crashed()
                if reply.get("id") == rid:
                    return reply

    def _crashed(self) -> dict:
        code = self.proc.poll() if self.proc else None
        if self.proc is not None:
            try:
                code = self.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                code = None
        tail = self.stderr_tail()
        self.stop()
        if self._cancelled:
            return {"cancelled": True}
        return {"crashed": True, "code": code, "stderr": tail}

    # -- analysis

    def analyze(self, path: str | Path, workspace_root: str | Path | None, config_file: str | None = None,
                settings: Settings | None = None) -> FileResult:
        """FileResult for one file; crashes and timeouts become a TL050 diagnostic on the file."""
        settings = settings or self.settings
        params = {"path": str(path), "workspace_root": str(workspace_root) if workspace_root else None,
                  "config_file": config_file, "settings": _settings_json(settings)}
        display = str(path)
        try:
            reply = self.request("analyze", params, settings.timeout)
        except TimeoutError:
            return failed_result(display, f"analysis timed out after {settings.timeout:g} s "
                                 "(a hung import or compile?); the worker was restarted")
        except WorkerUnavailable as exc:
            return failed_result(display, str(exc))
        if reply.get("cancelled"):
            return failed_result(display, "analysis cancelled")
        if reply.get("crashed"):
            code = reply.get("code")
            how = f"signal {-code}" if isinstance(code, int) and code < 0 else f"exit code {code}"
            detail = reply.get("stderr", "").strip().splitlines()
            memory = any("MemoryError" in d or "std::bad_alloc" in d for d in detail)
            reason = "ran out of memory" if memory else f"crashed ({how})"
            last = f": {detail[-1]}" if detail else ""
            return failed_result(display, f"the analysis worker {reason}{last}; a fresh worker was started")
        if reply.get("kind") == "memory":
            self.stop()   # whatever the module left allocated goes with it; the next request starts fresh
            limit = self.settings.memory_limit_mb
            return failed_result(display, "the analysis worker ran out of memory"
                                 + (f" (limit {limit} MB)" if limit > 0 else "") + "; a fresh worker was started")
        if "error" in reply:
            return failed_result(display, f"the analysis worker failed: {reply['error']}")
        if isinstance(reply.get("stats"), dict):
            self.last_stats = reply["stats"]
        return FileResult.from_json(reply["result"])


def _settings_json(settings: Settings) -> dict[str, Any]:
    return {"target": settings.target, "timeout": settings.timeout, "clients": list(settings.clients),
            "enumeration_budget": settings.enumeration_budget}


def failed_result(path: str, message: str) -> FileResult:
    return FileResult(path, (), (Diagnostic("TL050", message, 1, 1),))
