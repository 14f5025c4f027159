"""The server's one analysis worker: started early, warmed, replaced after a crash or a settings change.

Every blocking call on the worker goes through one Lane (a daemon thread), since the worker answers
one request at a time. The Triton gate (TL040) is decided here from the worker's own handshake.
What to analyse and when is the scheduler's; this module only keeps a worker ready.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from typing import TYPE_CHECKING, Any, Callable

from lsprotocol import types

from tilelens_lsp import releases
from tilelens_lsp.model import Diagnostic
from tilelens_lsp.worker.process import Worker, WorkerUnavailable, remove_neutral_dir

if TYPE_CHECKING:
    from tilelens_lsp.lsp.session import Session


class Lane:
    """One daemon thread that runs blocking calls in order (the worker answers one request at a time).

    A daemon thread, not an executor: a run blocked on a hung worker must never keep the server
    process alive after the client is gone.
    """

    def __init__(self) -> None:
        self._jobs: queue.Queue = queue.Queue()
        threading.Thread(target=self._loop, name="tilelens-lane", daemon=True).start()

    def submit(self, fn: Callable[..., Any], *args: Any) -> asyncio.Future:
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        self._jobs.put((loop, future, fn, args))
        return future

    def _loop(self) -> None:
        while True:
            loop, future, fn, args = self._jobs.get()
            try:
                value, error = fn(*args), None
            except BaseException as exc:  # noqa: BLE001 - handed to the awaiting coroutine
                value, error = None, exc
            try:
                loop.call_soon_threadsafe(_settle, future, value, error)
            except RuntimeError:  # the loop is closed: the server is exiting
                return


def _settle(future: asyncio.Future, value: Any, error: BaseException | None) -> None:
    if future.done():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(value)


class WorkerHost:
    """The session's worker, its lane, its gate and what its processes reported."""

    def __init__(self, session: "Session") -> None:
        self.session = session
        self.worker: Worker | None = None
        self.error: str | None = None
        self.gate: Diagnostic | None = None        # TL040 when the worker's Triton is untested
        self.lane = Lane()
        self.stats: dict[int, dict[str, int]] = {}
        self.hellos: list[Any] = []                # one per worker process started: restarts = len - 1
        self.prestarted: Worker | None = None      # started by `serve` before pygls was even imported

    def replace(self) -> None:
        """A worker for the current settings (the one in use is cancelled), warmed in the background."""
        s = self.session
        old, self.worker = self.worker, self._adopt_prestarted() or Worker(s.settings)
        with s.scheduler.flight_lock:
            if s.scheduler.in_flight is not None:
                s.scheduler.in_flight.cancelled = True
        if old is not None:
            old.cancel()
        s.spawn(self.warm(self.worker))

    def _adopt_prestarted(self) -> Worker | None:
        """The worker `serve` started at process start, if it runs what the settings ask for."""
        worker, self.prestarted = self.prestarted, None
        if worker is None:
            return None
        settings = self.session.settings
        same = (worker.settings.interpreter == settings.interpreter
                and worker.settings.memory_limit_mb == settings.memory_limit_mb)
        if not same:
            threading.Thread(target=worker.stop, daemon=True).start()
            return None
        worker.settings = settings
        return worker

    async def warm(self, worker: Worker) -> None:
        """Start the worker before the first save needs it (Triton's import takes a second or two)."""
        try:
            await self.lane.submit(self._start, worker)
        except WorkerUnavailable as exc:
            if worker is not self.worker or self.session.closing:
                return   # replaced (settings changed) or shutting down while it started
            self.error = str(exc)
            self.session.editor.show(f"tilelens: {exc}", types.MessageType.Error)

    def _start(self, worker: Worker) -> None:  # in the lane
        if self.session.closing or worker is not self.worker:
            return
        hello = worker.start()   # returns at once for a running worker
        self.note_hello(worker)
        self.error = None
        self.gate = releases.gate(hello.triton)
        self.session.editor.log(f"worker {worker.pid()} ready: Triton {hello.triton}, {hello.python}, "
                                f"target {self.session.settings.target}")

    def check_gate(self, worker: Worker) -> Diagnostic | None:  # in the lane
        """TL040 when the worker's Triton is untested, decided from this worker's own handshake
        before its first analysis, so no verdict of an untested release is ever published."""
        try:
            hello = worker.start()
        except WorkerUnavailable:
            return None   # the analysis reports why (TL050)
        self.gate = releases.gate(hello.triton)
        return self.gate

    def after_analysis(self, worker: Worker) -> None:  # in the lane
        """Keep the counters the worker sent; a worker that died gets a warm successor now."""
        self.note_hello(worker)
        if worker.alive() and not self.session.closing:
            pid = worker.pid()
            if worker.last_stats is not None and pid:   # they come with every analysis reply
                self.stats[pid] = worker.last_stats
        elif not self.session.closing and worker is self.worker:
            self._restart_soon(worker)

    def _restart_soon(self, worker: Worker) -> None:  # in the lane
        """After a crash or timeout, a fresh worker now, so the next save is warm."""
        try:
            asyncio.run_coroutine_threadsafe(self._warm_later(worker), self.session.server.loop)
        except RuntimeError:
            pass

    async def _warm_later(self, worker: Worker) -> None:
        if worker is self.worker and not self.session.closing:
            await self.warm(worker)

    def note_hello(self, worker: Worker) -> None:
        hello = worker.hello
        if hello is not None and not any(h is hello for h in self.hellos):
            self.hellos.append(hello)

    def total(self, name: str) -> int:
        """A worker counter summed over this session's worker processes."""
        return sum(s.get(name, 0) for s in self.stats.values())

    def stop(self) -> None:
        worker, self.worker = self.worker, None
        if worker is not None:
            worker.stop()
            remove_neutral_dir()   # serve() ends with os._exit, which runs no atexit handler
