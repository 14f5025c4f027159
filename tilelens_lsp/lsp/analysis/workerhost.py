"""The server's one analysis worker: started early, warmed, replaced after a crash or a settings change.

Every blocking call on the worker goes through one Lane (a daemon thread), since the worker answers
one request at a time. The Triton gate (TL040) is decided here from the worker's own handshake.
What to analyse and when is the scheduler's, and which run is in flight the runner's (run.py); this
module only keeps a worker ready and makes the worker's calls. Its collaborators come in its
constructor (the editor for messages, a settings getter, a worker factory), so a fake worker can
stand in for the real one.

With TILELENS_LSP_WORKERS=N (N > 1) the host also keeps N - 1 helper workers warm, each started in a
lane of its own (a worker dies with the thread that started it), and a file is analysed across the
worker and the helpers that are ready, split by launch (worker/pool.py, as `check --jobs` does). A
helper that is not ready (starting, or killed by a cancel) is started again in its lane and skipped
this time: it never delays a run. Each helper imports the user's module too, so it costs a second
copy of the module's memory.
"""

from __future__ import annotations

import asyncio
import os
import queue
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from lsprotocol import types

from tilelens_lsp import releases
from tilelens_lsp.lsp.state import Run, Tasks
from tilelens_lsp.model import Diagnostic, FileResult, Suggestion
from tilelens_lsp.settings import Settings
from tilelens_lsp.worker.pool import analyze_files
from tilelens_lsp.worker.process import Worker, WorkerUnavailable, failed_result, remove_neutral_dir

if TYPE_CHECKING:
    from tilelens_lsp.lsp.editor import Editor

POOL_ENV = "TILELENS_LSP_WORKERS"  # workers that share one file's launches (default 1: the worker alone)
MAX_POOL = 8


def pool_size(environ: Any = os.environ) -> int:
    """How many workers analyse one file (TILELENS_LSP_WORKERS, 1 to MAX_POOL; anything else is 1)."""
    try:
        return max(1, min(int(environ.get(POOL_ENV, "1")), MAX_POOL))
    except ValueError:
        return 1


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

    def post(self, fn: Callable[..., Any], *args: Any) -> None:
        """Run `fn` in the lane without waiting for it (what it raises is dropped)."""
        self._jobs.put((None, None, fn, args))

    def _loop(self) -> None:
        while True:
            loop, future, fn, args = self._jobs.get()
            try:
                value, error = fn(*args), None
            except BaseException as exc:  # noqa: BLE001 - handed to the awaiting coroutine
                value, error = None, exc
            if loop is None:
                continue
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


class RunShare:
    """A worker as the pool sees it during one run: once the run is cancelled it takes no more of the
    file's launches (a cancel kills the workers, and the pool would otherwise start them again to
    finish launches whose result is dropped, keeping the lane from the newer run)."""

    fork_server = None  # the server's workers are spawned, never forked

    def __init__(self, worker: Worker, run: Run) -> None:
        self.worker = worker
        self.run = run

    def plan(self, *args: Any, **kwargs: Any) -> dict | None:
        return None if self.run.cancelled else self.worker.plan(*args, **kwargs)

    def analyze_parts(self, path: Any, *args: Any, **kwargs: Any) -> tuple[FileResult, dict]:
        if self.run.cancelled:
            return failed_result(str(path), "analysis cancelled"), {}
        return self.worker.analyze_parts(path, *args, **kwargs)

    @property
    def last_import(self) -> float | None:  # the pool times the package's import by it
        return self.worker.last_import

    def pid(self) -> int | None:  # the pool forgets what a replaced process imported
        return self.worker.pid()

    def alive(self) -> bool:
        return self.worker.alive()

    def stop(self) -> None:
        self.worker.stop()

    def cancel(self) -> None:  # a helper the pool stops (it joined a launch with nothing left)
        self.worker.cancel()


class WorkerHost:
    """The connection's worker, its lane, its gate and what its processes reported."""

    def __init__(
        self,
        editor: "Editor",
        settings: Callable[[], Settings],
        prestarted: Worker | None = None,
        new_worker: Callable[[Settings], Worker] = Worker,
        pool: int | None = None,
    ) -> None:
        self._editor = editor
        self._pool = pool_size() if pool is None else max(1, pool)
        self._helpers: list[tuple[Worker, Lane]] = []  # the other workers of the pool, each with its lane
        self._settings = settings
        self._new_worker = new_worker
        self._tasks = Tasks()
        self.worker: Worker | None = None
        self.error: str | None = None
        self.gate: Diagnostic | None = None  # TL040 when the worker's Triton is untested
        self.lane = Lane()
        self.stats: dict[int, dict[str, int]] = {}
        self.hellos: list[Any] = []  # one per worker process started: restarts = len - 1
        self.prestarted = prestarted  # started by `serve` before pygls was even imported
        self.closed = False

    def replace(self) -> None:
        """A worker for the current settings (the one in use is cancelled), warmed in the background;
        its gate is decided afresh from its own handshake."""
        old, self.worker = self.worker, self._adopt_prestarted() or self._new_worker(self._settings())
        self.gate = None
        if old is not None:
            old.cancel()
        self._tasks.spawn(self.warm(self.worker))
        self._replace_helpers()

    def _replace_helpers(self) -> None:
        old, self._helpers = self._helpers, []
        for worker, _ in old:
            threading.Thread(target=worker.stop, daemon=True).start()
        for _ in range(self._pool - 1):
            helper = (self._new_worker(self._settings()), Lane())
            self._helpers.append(helper)
            helper[1].post(self._start_helper, helper[0])

    def _start_helper(self, worker: Worker) -> None:  # in the helper's own lane
        if self.closed or not any(w is worker for w, _ in self._helpers):
            return
        try:
            worker.start()
        except WorkerUnavailable as exc:
            self._editor.log(f"a helper worker did not start: {exc}")

    def _ready_helpers(self) -> list[Worker]:
        """The helpers that can take launches now; the others are started again in their lanes."""
        ready = []
        for worker, lane in self._helpers:
            if worker.alive() and worker.hello is not None:
                ready.append(worker)
            elif not worker.alive():
                lane.post(self._start_helper, worker)
        return ready

    def _adopt_prestarted(self) -> Worker | None:
        """The worker `serve` started at process start, if it runs what the settings ask for."""
        worker, self.prestarted = self.prestarted, None
        if worker is None:
            return None
        settings = self._settings()
        same = (
            worker.settings.interpreter == settings.interpreter
            and worker.settings.memory_limit_mb == settings.memory_limit_mb
        )
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
            if worker is not self.worker or self.closed:
                return  # replaced (settings changed) or shutting down while it started
            self.error = str(exc)
            self._editor.show(f"tilelens: {exc}", types.MessageType.Error)

    def _start(self, worker: Worker) -> None:  # in the lane
        if self.closed or worker is not self.worker:
            return
        hello = worker.start()  # returns at once for a running worker
        self.note_hello(worker)
        self.error = None
        self.gate = releases.gate(hello.triton)
        self._editor.log(
            f"worker {worker.pid()} ready: Triton {hello.triton}, {hello.python}, target {self._settings().target}"
        )

    def check_gate(self, worker: Worker) -> Diagnostic | None:  # in the lane
        """TL040 when the worker's Triton is untested, decided from this worker's own handshake
        before its first analysis, so no verdict of an untested release is ever published."""
        try:
            hello = worker.start()
        except WorkerUnavailable:
            return None  # the analysis reports why (TL050)
        self.gate = releases.gate(hello.triton)
        return self.gate

    # -- the worker's calls (in the lane)

    def analyze(
        self, worker: Worker, run: Run, on_partial: Callable[[FileResult], None] | None = None
    ) -> FileResult | None:  # in the lane
        """`run`'s file analysed by `worker` (None: cancelled meanwhile); TL040 alone on an untested Triton.
        `on_partial` hears the result so far after each launch (one worker only: a pool's parts arrive
        out of order)."""
        helpers = self._ready_helpers()
        if worker.proc is not None and helpers:
            # A worker that died while idle (killed, OOM) answers the ping with a crash and is
            # replaced quietly by the analysis below: this file is not to blame.
            try:
                worker.request("ping", {}, 5.0)
            except (TimeoutError, WorkerUnavailable):
                pass
            if run.cancelled:
                return None
        gate = self.check_gate(worker)
        if gate is not None:
            return FileResult(run.rel, (), (gate,))
        if not helpers and worker.proc is not None:
            # the same ping, in the analysis' own write (`probe`): one round trip where two were
            return worker.analyze(run.path, run.root, settings=run.settings, probe=True, on_partial=on_partial)
        if not helpers:
            return worker.analyze(run.path, run.root, settings=run.settings, on_partial=on_partial)
        shares = [RunShare(w, run) for w in (worker, *helpers)]
        result = analyze_files(shares, [run.path], run.root, None, run.settings)[0]  # type: ignore[arg-type]
        for helper in helpers:
            self._keep_stats(helper)
        return result

    def suggest(self, path: Path, root: Path, kernel: str) -> Suggestion | None:  # in the lane
        """An example launch of `kernel` found and compiled by the worker (None: no worker)."""
        worker = self.worker
        if worker is None or self.closed:
            return None
        found = worker.suggest(path, root, [kernel], settings=self._settings())
        self.after_analysis(worker)
        return found[0] if found else Suggestion(kernel, error=f"no kernel named {kernel} in the saved file")

    def cancel_current(self) -> bool:
        """Kill the worker's request in progress, and the helpers' (they restart); whether there was a worker."""
        worker = self.worker
        if worker is None:
            return False
        worker.cancel()
        for helper, _ in self._helpers:
            helper.cancel()
        return True

    def after_analysis(self, worker: Worker) -> None:  # in the lane
        """Keep the counters the worker sent; a worker that died gets a warm successor now."""
        self.note_hello(worker)
        if worker.alive() and not self.closed:
            self._keep_stats(worker)
        elif not self.closed and worker is self.worker:
            # after a crash or timeout, a fresh worker now, so the next save is warm
            self._editor.run_from_thread(self._warm_later(worker))

    async def _warm_later(self, worker: Worker) -> None:
        if worker is self.worker and not self.closed:
            await self.warm(worker)

    def _keep_stats(self, worker: Worker) -> None:
        pid = worker.pid()
        if worker.last_stats is not None and pid:  # they come with every analysis reply
            self.stats[pid] = worker.last_stats

    def note_hello(self, worker: Worker) -> None:
        hello = worker.hello
        if hello is not None and not any(h is hello for h in self.hellos):
            self.hellos.append(hello)

    def total(self, name: str) -> int:
        """A worker counter summed over this connection's worker processes."""
        return sum(s.get(name, 0) for s in self.stats.values())

    def stop(self) -> None:
        self.closed = True
        worker, self.worker = self.worker, None
        helpers, self._helpers = self._helpers, []
        for helper, _ in helpers:
            helper.stop()
        if worker is not None:
            worker.stop()
            remove_neutral_dir()  # serve() ends with os._exit, which runs no atexit handler
