"""The parent side of the worker: start it, send requests, and survive its crashes and hangs.

A timeout, a crash or a memory blow-up costs the file a TL050 diagnostic and the worker a restart,
never the caller its life. Used by the CLI (a pool for `--jobs`) and by the server (one worker).
The worker runs isolated (`python -I -B`, an empty working directory, its own session); stopping it
kills its whole process group and never waits on a pipe that a grandchild still holds.
"""

from __future__ import annotations

import atexit
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable

from tilelens_lsp.claims import Claims
from tilelens_lsp.model import Diagnostic, FileResult, LaunchResult, Suggestion
from tilelens_lsp.settings import Settings

PACKAGE_PARENT = str(Path(__file__).resolve().parents[2])  # the folder holding tilelens_lsp/
# The results of a file analysed in parts, by launch index: (config index, result) in config order. A
# launch that several workers shared (claims.py) comes back in several parts, merged by config index;
# a launch's TL050 (its worker failed) has the config index UNANSWERED, after whatever was answered.
Answers = dict[int, list[tuple[int, LaunchResult]]]
UNANSWERED = 1 << 30
STDERR_TAIL_BYTES = 64 * 1024  # the worker's stderr kept for a TL050 message; the rest is read and dropped

# `-I`: neither the working directory nor user site-packages nor PYTHON* variables shape sys.path;
# `-B`: importing the user's modules writes no __pycache__ into their tree. The package is imported
# from PACKAGE_PARENT, which then leaves sys.path again (its submodules resolve through the package).
_BOOTSTRAP = (
    "import sys; sys.path.insert(0, sys.argv[1]); import tilelens_lsp.worker.main as w; "
    "sys.path.remove(sys.argv[1]); sys.exit(w.main())"
)

_neutral: str | None = None


def neutral_dir() -> str:
    """An empty folder of this process's own, the workers' working directory (removed at exit)."""
    global _neutral
    if _neutral is None or not os.path.isdir(_neutral):
        _neutral = tempfile.mkdtemp(prefix="tilelens-worker-")
        atexit.register(shutil.rmtree, _neutral, True)
    return _neutral


def remove_neutral_dir() -> None:
    """Remove the workers' folder now (for a process that ends with os._exit, which skips atexit)."""
    global _neutral
    folder, _neutral = _neutral, None
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


def _user_path_entries() -> list[str]:
    """The user's PYTHONPATH, as absolute folders: `-I` ignores the variable, the worker adds them."""
    out = []
    for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep):
        if entry and os.path.abspath(entry) not in out:
            out.append(os.path.abspath(entry))
    return out


def _libc_prctl():
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes  # only where PR_SET_PDEATHSIG exists (Linux)

        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _libc_prctl()  # looked up before any fork: the child must not import between fork and exec


def _die_with_parent() -> None:
    """In the child before exec: SIGKILL when the thread that started us dies (Linux PR_SET_PDEATHSIG),
    so a killed server or CLI never leaves a worker behind (a busy worker would not see stdin close)."""
    if _PRCTL is not None:
        _PRCTL(1, 9)  # PR_SET_PDEATHSIG, SIGKILL


IN_WORKER_VARIABLE = "TILELENS_IN_WORKER"


def spawn_process(settings: Settings, args: list[str], stdin, cwd: str | None = None) -> subprocess.Popen:
    """A worker interpreter (`args` after the package folder: `--template` for a fork server):
    isolated, in its own session and an empty folder, dying with the thread that calls this."""
    env = dict(os.environ)
    env["TILELENS_WORKER_MEMORY_MB"] = str(settings.memory_limit_mb)
    env["TILELENS_WORKER_TARGET"] = settings.target
    env[IN_WORKER_VARIABLE] = "1"  # what the user's module runs there knows it is being analysed (api.py)
    env["TILELENS_WORKER_PATH"] = os.pathsep.join(_user_path_entries())
    env.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # for the module's own child processes; -B for the worker
    env.pop("TRITON_INTERPRET", None)
    quiet = subprocess.DEVNULL if args else subprocess.PIPE  # a fork server's output goes nowhere
    return subprocess.Popen(
        [settings.interpreter, "-I", "-B", "-c", _BOOTSTRAP, PACKAGE_PARENT, *args],
        stdin=stdin,
        stdout=quiet,
        stderr=quiet,
        cwd=cwd or neutral_dir(),
        env=env,
        start_new_session=True,
        preexec_fn=_die_with_parent if _PRCTL is not None else None,
    )


_DEAD_BEFORE = object()  # `Worker._exchange`: the process ended before it answered the probe
PROBE_TIMEOUT = 5.0  # seconds an idle worker has to answer the ping ahead of a request

# A timeout is a guard against hangs, and a verdict must not depend on how loaded the host is (on
# `--jobs 16` against `--jobs 1`): a worker still busy when its time is up, but given less than a core
# by a loaded host, may go on until it has used the timeout in CPU time, up to LOADED_CAP timeouts on
# the clock. A worker that computes nothing (a sleep, a lock, a read) is hung at the timeout as before.
LOADED_CAP = 4.0
BUSY_SHARE = 0.25  # CPU per second on the clock since the wait began, below which a worker is not busy
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") and "SC_CLK_TCK" in os.sysconf_names else 100


def cpu_seconds(pid: int | None) -> float | None:
    """User and system CPU time of process `pid`, all its threads, from /proc; None where unreadable."""
    if pid is None:
        return None
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    fields = stat[stat.rfind(b")") + 2 :].split()  # after "pid (comm) ": state ppid ... utime stime
    try:
        return (int(fields[11]) + int(fields[12])) / _TICKS
    except (IndexError, ValueError):
        return None


def owed_seconds(timeout: float, elapsed: float, cpu: float | None) -> float:
    """How much longer to wait for a worker whose `timeout` is up after `elapsed` seconds on the clock,
    in which it used `cpu` seconds of CPU (None: unknown): 0 when it is hung or has had its time."""
    if cpu is None or elapsed >= LOADED_CAP * timeout or cpu < BUSY_SHARE * elapsed or cpu >= timeout:
        return 0.0
    return min(max(timeout - cpu, 0.5), LOADED_CAP * timeout - elapsed)


class WorkerUnavailable(RuntimeError):
    """The worker could not start (e.g. the interpreter lacks Triton)."""


@dataclass
class Hello:
    triton: str
    python: str


class Worker:
    """One worker subprocess. Thread-safe: one request at a time."""

    def __init__(self, settings: Settings, cwd: str | None = None, fork_server=None) -> None:
        self.settings = settings
        self.cwd = cwd  # None: an empty folder of its own (never the workspace: see neutral_dir)
        self.fork_server = fork_server  # forkserver.ForkServer: new processes forked warm from it
        self.proc: subprocess.Popen | None = None
        self.hello: Hello | None = None
        self.last_stats: dict[str, int] | None = None  # the worker's counters, from its last analysis
        # seconds from the last analyze_parts call to its module imported (its "ready"): what the pool
        # times a package's import by; None where it never got that far
        self.last_import: float | None = None
        self._lines: queue.Queue = queue.Queue()
        self._stderr = bytearray()  # the last STDERR_TAIL_BYTES of the current process's stderr
        self._stderr_lock = threading.Lock()
        self._drainer: threading.Thread | None = None
        self.retired: list[str] = []  # why workers were retired after a file (threads, children)
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
        forked = self.fork_server.fork() if self.fork_server is not None else None
        if forked is not None:
            self.proc = forked  # type: ignore[assignment]  # a ForkedProcess does what we use of Popen
        else:
            try:
                self.proc = spawn_process(self.settings, [], subprocess.PIPE, self.cwd)
            except OSError as exc:
                raise WorkerUnavailable(f"cannot start the worker with {self.settings.interpreter}: {exc}") from None
        self._lines = queue.Queue()
        with self._stderr_lock:
            self._stderr = bytearray()
        threading.Thread(target=_pump, args=(self.proc, self._lines), daemon=True).start()
        self._drainer = threading.Thread(target=self._drain, args=(self.proc,), daemon=True)
        self._drainer.start()

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

    def finish(self, timeout: float = 5.0) -> None:
        """Stop the worker once it is done with what it does after its last reply (an analysis' new
        verdicts go to the disk cache then): it serves one request at a time, so a ping answered means
        that is done. A worker that does not answer in `timeout` seconds, or is still answering a
        request (an interrupted check), is stopped all the same."""
        idle = self._lock.acquire(blocking=False)
        if idle:
            self._lock.release()
        if idle and self.alive():
            try:
                self.request("ping", {}, timeout)
            except Exception:  # noqa: BLE001 - a worker that cannot answer is stopped, as it would be anyway
                pass
        self.stop()

    def stop(self) -> None:
        """Kill the worker's process group (children the module started included) and reap it.

        Only stdin is closed here: the reader threads own stdout and stderr and close them at EOF,
        so a grandchild that escaped the group and still holds them can never block us."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        _kill_group(proc)
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        try:
            proc.stdin and proc.stdin.close()
        except (OSError, ValueError):
            pass

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def cancel(self) -> None:
        """Stop the request in flight (the worker is killed and replaced on the next request)."""
        self._cancelled = True
        self.stop()

    # -- I/O

    def _drain(self, proc: subprocess.Popen) -> None:
        """Read the worker's stderr in chunks, keeping only the last STDERR_TAIL_BYTES: a module that
        writes a gigabyte without a newline costs no memory, and never blocks the worker."""
        stream = proc.stderr
        if stream is None:  # every worker is started with its stderr piped to us
            return
        fd = stream.fileno()
        try:
            while True:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    break
                with self._stderr_lock:
                    if proc is not self.proc and self.proc is not None:
                        continue  # a newer worker owns the buffer; keep draining this one
                    self._stderr += chunk
                    if len(self._stderr) > STDERR_TAIL_BYTES:
                        del self._stderr[: len(self._stderr) - STDERR_TAIL_BYTES]
        except (OSError, ValueError):
            pass
        try:
            stream.close()
        except (OSError, ValueError):
            pass

    def stderr_tail(self, lines: int = 8, width: int = 500) -> str:
        """The last `lines` lines of the worker's stderr, each cut to its last `width` characters."""
        with self._stderr_lock:
            text = bytes(self._stderr).decode("utf-8", "replace")
        tail = [line.rstrip()[-width:] for line in text.splitlines() if line.strip()]
        return "\n".join(tail[-lines:])

    def _read(self, timeout: float) -> dict | None:
        """The worker's next line, parsed (None at its end), or TimeoutError once `timeout` is up (or,
        on a loaded host, once a busy worker has used it in CPU time: `owed_seconds`)."""
        start = time.monotonic()
        deadline = start + timeout
        pid = self.pid()
        cpu0 = cpu_seconds(pid)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                now, cpu = time.monotonic(), cpu_seconds(pid)
                used = None if cpu is None or cpu0 is None else cpu - cpu0
                more = owed_seconds(timeout, now - start, used)
                if more <= 0:
                    raise TimeoutError(now - start)  # seconds on the clock, for the message
                deadline = now + more
                continue
            try:
                line = self._lines.get(timeout=remaining)
            except queue.Empty:
                continue  # the time is up: hung, or owed more (above)
            if line is None:
                return None
            try:
                return json.loads(line)
            except json.JSONDecodeError:
                continue

    def request(
        self,
        method: str,
        params: dict[str, Any],
        timeout: float,
        on_event: Callable[[dict], None] | None = None,
        probe: bool = False,
    ) -> dict:
        """Send one request; raise TimeoutError, or return None-free reply / {'crashed': ...}.

        A progress line of this request (`event`) goes to `on_event` and starts a new `timeout`:
        an analysis is timed launch by launch, not as a whole. With `probe`, a ping goes in the same
        write, ahead of the request: a process that ends before it answers the ping had died before
        this request (killed while idle), so a fresh one gets the request and no crash is reported
        (one round trip, where asking the ping first cost two)."""
        with self._lock:
            self._cancelled = False
            for attempt in (0, 1):
                if not self.alive() or self.hello is None:
                    self.start()
                reply = self._exchange(method, params, timeout, on_event, probe and attempt == 0)
                if reply is not _DEAD_BEFORE:
                    return reply
                self._crashed()  # reaped quietly: the next attempt starts a fresh process
            return self._crashed()

    def _exchange(
        self, method: str, params: dict[str, Any], timeout: float, on_event: Callable[[dict], None] | None, probe: bool
    ) -> Any:
        """One write of the request (after a ping, with `probe`) and its reply, as `request` returns it;
        `_DEAD_BEFORE` when the process ended before answering the ping."""
        lines = []
        if probe:
            self._next_id += 1
            ping = self._next_id
            lines.append(json.dumps({"id": ping, "method": "ping", "params": {}}))
        self._next_id += 1
        rid = self._next_id
        lines.append(json.dumps({"id": rid, "method": method, "params": params}))
        answered = not probe
        stdin = self.proc.stdin if self.proc is not None else None
        if stdin is None:
            return self._crashed()
        try:
            stdin.write(("\n".join(lines) + "\n").encode("utf-8"))
            stdin.flush()
        except (OSError, ValueError, AttributeError):
            return _DEAD_BEFORE if not answered else self._crashed()
        while True:
            try:
                reply = self._read(timeout if answered else min(timeout, PROBE_TIMEOUT))
            except TimeoutError:
                self.stop()
                if not answered:
                    return _DEAD_BEFORE  # no answer to a ping: a stuck process, not this request's doing
                raise
            if reply is None:
                return _DEAD_BEFORE if not answered and not self._cancelled else self._crashed()
            if not answered and reply.get("id") == ping:
                answered = True
                continue
            if reply.get("id") == rid and "event" in reply:
                if on_event is not None:
                    on_event(reply)
                continue
            if reply.get("id") == rid:
                return reply

    def _crashed(self) -> dict:
        code = self.proc.poll() if self.proc else None
        if self.proc is not None:
            try:
                code = self.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                code = None
        if self.proc is not None:
            _kill_group(self.proc)  # its children hold its stderr open
        if self._drainer is not None:
            self._drainer.join(timeout=1)  # the last words, unless a child escaped the group
        tail = self.stderr_tail()
        self.stop()
        if self._cancelled:
            return {"cancelled": True}
        return {"crashed": True, "code": code, "stderr": tail}

    # -- analysis

    def analyze(
        self,
        path: str | Path,
        workspace_root: str | Path | None,
        config_file: str | None = None,
        settings: Settings | None = None,
        select: list[int] | None = None,
        file_level: bool = True,
        *,
        probe: bool = False,
        on_partial: Callable[[FileResult], None] | None = None,
    ) -> FileResult:
        """FileResult for one file (or the launches `select` names, in that order; `file_level=False`
        leaves the file's own diagnostics to another part). The worker streams each launch's results,
        and the timeout applies to each launch (and to the import) separately: a file of many fast
        launches never times out as a whole. A launch that times out, crashes the worker or runs it out
        of memory gets a TL050 of its own; the launches after it are analysed by a fresh worker.
        `probe`: a worker found dead before it answered (killed while idle) is replaced quietly
        (`request`), not reported as this file's crash. `on_partial` hears the file's result so far
        (the launches answered, the file's own diagnostics) each time a launch is answered while others
        remain."""
        return self.analyze_parts(
            path, workspace_root, config_file, settings, select, file_level, probe=probe, on_partial=on_partial
        )[0]

    def analyze_parts(
        self,
        path: str | Path,
        workspace_root: str | Path | None,
        config_file: str | None = None,
        settings: Settings | None = None,
        select: list[int] | None = None,
        file_level: bool = True,
        *,
        probe: bool = False,
        claims: Claims | None = None,
        on_partial: Callable[[FileResult], None] | None = None,
    ) -> tuple[FileResult, Answers]:
        """`analyze`, and the results of each launch by its index (to reassemble a file analysed in
        parts). With `claims`, each launch answers only the configs this part claims (claims.py)."""
        settings = settings or self.settings
        stream = _Stream(on_partial)
        begun = time.monotonic()
        self.last_import = None
        try:
            while True:
                extra: dict[str, Any] = {"stream": True, "select": select, "file_level": file_level and stream.ready is None}
                if claims is not None:
                    extra["claims"] = claims.to_json()
                reply, failure = self._file_request(
                    "analyze", path, workspace_root, config_file, settings, extra, stream.feed, probe=probe
                )
                probe = False  # a later part goes to the worker that just answered, or to a fresh one
                if failure is None:
                    if isinstance(reply.get("stats"), dict):
                        self.last_stats = reply["stats"]
                    return stream.result(FileResult.from_json(reply["result"])), stream.done
                if stream.ready is None or reply.get("cancelled"):
                    # the import (or the worker's start) failed, hung, or the caller cancelled: the file
                    # as a whole is not analysed; launches streamed before a cancel are not reported
                    return failed_result(str(path), failure), {}
                select = stream.fail_current(failure)
                if not select:
                    return stream.result(None), stream.done
        finally:
            if stream.ready_at is not None:
                self.last_import = stream.ready_at - begun

    def plan(
        self,
        path: str | Path,
        workspace_root: str | Path | None,
        config_file: str | None = None,
        settings: Settings | None = None,
    ) -> dict | None:
        """The file's launches, named and weighed without importing it (pipeline.plan_path); None when
        the worker could not say (the caller then analyses the file as a whole)."""
        reply, failure = self._file_request("plan", path, workspace_root, config_file, settings or self.settings)
        result = reply.get("result")
        if failure is not None or not isinstance(result, dict) or not isinstance(result.get("launches"), list):
            return None
        return result

    def suggest(
        self,
        path: str | Path,
        workspace_root: str | Path | None,
        kernels: list[str] | None = None,
        config_file: str | None = None,
        settings: Settings | None = None,
    ) -> list[Suggestion]:
        """Compile-verified example launches (suggest.py) for `kernels` of one file; a failure of the
        worker itself becomes the error of every kernel asked for, never an exception."""
        reply, failure = self._file_request(
            "suggest", path, workspace_root, config_file, settings or self.settings, {"kernels": kernels}
        )
        if failure is None and not isinstance(reply.get("result"), list):
            failure = "the analysis worker sent no suggestions"
        if failure is not None:
            return [Suggestion(k, error=failure) for k in kernels or ()]
        return [Suggestion.from_json(x) for x in reply["result"]]

    def _file_request(
        self,
        method: str,
        path: str | Path,
        workspace_root: str | Path | None,
        config_file: str | None,
        settings: Settings,
        extra: dict[str, Any] | None = None,
        on_event: Callable[[dict], None] | None = None,
        probe: bool = False,
    ) -> tuple[dict, str | None]:
        """One request about one file: (the reply, None), or (whatever came, why it failed). A timeout,
        crash or memory blow-up costs this worker its process (the next request starts a fresh one), and
        so does a module that left threads or children behind."""
        # absolute: the worker's working directory is not ours
        params = {
            "path": os.path.abspath(path),
            "workspace_root": os.path.abspath(workspace_root) if workspace_root else None,
            "config_file": os.path.abspath(config_file) if config_file else None,
            "settings": _settings_json(settings),
            **(extra or {}),
        }
        try:
            reply = self.request(method, params, settings.timeout, on_event, probe)
        except TimeoutError as exc:
            waited = exc.args[0] if exc.args and isinstance(exc.args[0], float) else settings.timeout
            loaded = (
                f" ({waited:.0f} s on the clock: a busy worker on a loaded host gets its timeout in CPU time)"
                if waited > settings.timeout + 1
                else ""
            )
            return {}, (
                f"analysis timed out after {settings.timeout:g} s{loaded} (a hung import or compile?); "
                "the worker was restarted"
            )
        except WorkerUnavailable as exc:
            return {}, str(exc)
        if reply.get("cancelled"):
            return reply, "analysis cancelled"
        if reply.get("crashed"):
            return reply, _crash_message(reply)
        if reply.get("kind") == "memory":
            self.stop()  # whatever the module left allocated goes with it; the next request starts fresh
            limit = self.settings.memory_limit_mb
            return reply, (
                "the analysis worker ran out of memory"
                + (f" (limit {limit} MB)" if limit > 0 else "")
                + "; a fresh worker was started"
            )
        if "error" in reply:
            return reply, f"the analysis worker failed: {reply['error']}"
        if reply.get("retire"):
            # the module left threads or child processes behind: they could change the next file's
            # verdict, so this worker (and its process group) goes; the next request starts a fresh one
            self.retired.append(str(reply["retire"]))
            self.stop()
        return reply, None


class _Stream:
    """What one file's analysis streamed so far: which launches it runs, and the results of each."""

    def __init__(self, on_partial: Callable[[FileResult], None] | None = None) -> None:
        self.on_partial = on_partial  # hears the result so far after each launch
        self.ready: dict | None = None  # the first "ready" event (file diagnostics)
        self.ready_at: float | None = None  # when it came (time.monotonic)
        self.order: list[tuple[int, str, int]] = []  # (index, kernel, line) in the order analysed
        self.done: Answers = {}
        self.answered: Answers = {}  # the configs of launches not done yet, as each was answered
        self.late: list[Diagnostic] = []  # a failure after the last launch answered

    def feed(self, event: dict) -> None:
        if event.get("event") == "ready":
            if self.ready is None:
                self.ready = event
                self.ready_at = time.monotonic()
            known = {i for i, _, _ in self.order}
            self.order += [(int(i), str(k), int(line)) for i, k, line in event.get("launches", []) if int(i) not in known]
        elif event.get("event") == "config" and isinstance(event.get("result"), dict):
            config = (int(event.get("config", UNANSWERED)), LaunchResult.from_json(event["result"]))
            self.answered.setdefault(int(event["index"]), []).append(config)
        elif event.get("event") == "launch":
            streamed = self.answered.pop(int(event["index"]), [])
            results = [LaunchResult.from_json(r) for r in event.get("results", [])]
            configs = event.get("configs")
            if not isinstance(configs, list) or len(configs) != len(results):
                configs = list(range(len(results)))  # a worker of an older tilelens names no configs
            self.done[int(event["index"])] = streamed + list(zip((int(j) for j in configs), results))
            if self.on_partial is not None and len(self.done) < len(self.order):  # the last part is the reply
                self.on_partial(self.result(None))

    def fail_current(self, why: str) -> list[int]:
        """The launch in flight gets a TL050 (`why`) after the configs it answered before failing;
        returns the launches still to analyse."""
        left = [entry for entry in self.order if entry[0] not in self.done]
        if not left:  # every launch answered, then the worker failed: the file says so
            self.late.append(Diagnostic("TL050", why, 1, 1))
            return []
        index, kernel, line = left[0]
        diag = Diagnostic("TL050", f"the analysis of this launch failed: {why}", line, 1)
        crashed = LaunchResult(kernel, line, {}, "crashed", diagnostics=(diag,))
        self.done[index] = self.answered.pop(index, []) + [(UNANSWERED, crashed)]
        return [i for i, _, _ in left[1:]]

    def result(self, final: FileResult | None) -> FileResult:
        """The file's result: launches in the order of their indices, the file's own diagnostics (from
        the final reply, else from the first part that reported them)."""
        launches = tuple(r for i in sorted(self.done) for _, r in self.done[i])
        if final is not None and self.ready is None:
            return final if not launches else replace(final, launches=launches)
        ready = self.ready or {}
        diags = tuple(Diagnostic.from_json(d) for d in ready.get("diagnostics", []))
        if final is not None:
            diags = _union(diags, final.diagnostics)
        return FileResult(
            final.path if final is not None else ready.get("path", ""),
            launches,
            diags + tuple(self.late),
            dict(final.absolute_paths) if final is not None else {},
            final.sources if final is not None else (),
        )


def _union(first: tuple[Diagnostic, ...], more: tuple[Diagnostic, ...]) -> tuple[Diagnostic, ...]:
    """`first`, then what `more` adds to it (an import error that each part reports), in order."""
    return first + tuple(d for d in more if d not in first)


def _pump(proc: subprocess.Popen, lines: queue.Queue) -> None:
    """Read the worker's stdout into `lines`, one protocol line each; None at EOF."""
    stream = proc.stdout
    if stream is None:  # every worker is started with its stdout piped to us
        lines.put(None)
        return
    try:
        for line in stream:  # the protocol: one JSON document a line, written only by the worker
            lines.put(line.decode("utf-8", "replace"))
    except (OSError, ValueError):
        pass
    lines.put(None)
    try:
        stream.close()
    except (OSError, ValueError):
        pass


def _crash_message(reply: dict) -> str:
    """The TL050 message for a worker that died: how, and the last line it wrote to stderr."""
    code = reply.get("code")
    how = f"signal {-code}" if isinstance(code, int) and code < 0 else f"exit code {code}"
    detail = reply.get("stderr", "").strip().splitlines()
    memory = any("MemoryError" in d or "std::bad_alloc" in d for d in detail)
    reason = "ran out of memory" if memory else f"crashed ({how})"
    last = f": {detail[-1]}" if detail else ""
    return f"the analysis worker {reason}{last}; a fresh worker was started"


def _kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL the worker's process group (it leads its own session), else the worker alone."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
        return
    except (OSError, AttributeError):
        pass
    try:
        proc.kill()
    except OSError:
        pass


def _settings_json(settings: Settings) -> dict[str, Any]:
    return {
        "target": settings.target,
        "timeout": settings.timeout,
        "clients": list(settings.clients),
        "enumeration_budget": settings.enumeration_budget,
        "target_pinned": settings.target_pinned,
    }


def failed_result(path: str, message: str) -> FileResult:
    return FileResult(path, (), (Diagnostic("TL050", message, 1, 1),))
