"""When and how the open documents are analysed: the server's counterpart of rust-analyzer's flycheck.

`Analysis` builds four parts from explicit collaborators and is the only way in for the rest of the
server: the worker host (workerhost.py: the worker process, its lane thread, the Triton gate), the
progress bars (progress.py), the runner (run.py: one run of one document, the run in flight) and the
scheduler (scheduler.py: generations, debounce, cancellation, the run loop). Results leave through
the `Sink` it is given (the session, which converts and publishes); nothing here holds a session,
and none of the parts reaches another but through what its constructor was handed.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping

from tilelens_lsp.lsp.analysis.progress import Progress
from tilelens_lsp.lsp.analysis.run import Runner, Sink
from tilelens_lsp.lsp.analysis.scheduler import Scheduler
from tilelens_lsp.lsp.analysis.workerhost import WorkerHost
from tilelens_lsp.lsp.state import Doc
from tilelens_lsp.model import Suggestion
from tilelens_lsp.settings import Settings
from tilelens_lsp.worker.process import Worker

if TYPE_CHECKING:
    from tilelens_lsp.lsp.editor import Editor


class Analysis:
    """The worker, the run in flight and the queue of one client connection."""

    def __init__(
        self,
        docs: Mapping[str, Doc],
        editor: "Editor",
        sink: Sink,
        settings: Callable[[], Settings],
        prestarted: Worker | None = None,
        new_worker: Callable[[Settings], Worker] = Worker,
    ) -> None:
        self._editor = editor
        self._host = WorkerHost(editor, settings, prestarted, new_worker)
        self._progress = Progress(editor)
        self._runner = Runner(docs, self._host, sink, editor, settings, self._progress)
        self._scheduler = Scheduler(docs, self._runner, editor)

    # -- lifecycle

    def start(self) -> None:
        """The run loop (after `initialized`: documents opened before it wait for it)."""
        self._scheduler.start()

    def restart_worker(self) -> None:
        """A worker for the current settings; the run in flight on the old one is dropped."""
        self._runner.drop_in_flight()
        self._host.replace()

    def stop(self) -> None:
        """Stop the worker and the loop; idempotent, callable from any thread."""
        self._host.stop()
        self._scheduler.stop()

    # -- documents

    def schedule(self, doc: Doc, why: str = "re-run") -> None:
        self._scheduler.schedule(doc, why)

    def rerun_all(self, why: str) -> None:
        self._scheduler.rerun_all(why)

    def forget(self, uri: str) -> None:
        self._scheduler.forget(uri)

    def busy_with(self, uri: str) -> bool:
        """Whether a run of `uri` is pending or in flight."""
        run = self._runner.in_flight()
        return self._scheduler.is_pending(uri) or (run is not None and run.uri == uri)

    def cancel_token(self, token: Any) -> None:
        """The client cancelled a progress bar: cancel its run."""
        run = self._progress.run_for(token)
        if run is not None and not run.finished:
            self._editor.log(f"cancelled by the client: {Path(run.path).name}")
            self._runner.cancel(run)

    async def suggest(self, path: Path, root: Path, kernel: str) -> Suggestion | None:
        """An example launch of `kernel`, found by the worker in its lane (None: no worker)."""
        return await self._host.lane.submit(self._host.suggest, path, root, kernel)

    # -- tilelens/stats

    def stats(self) -> dict[str, Any]:
        host, run = self._host, self._runner.in_flight()
        worker = host.worker
        return {
            "compiles": host.total("compiles"),
            "cache_hits": host.total("cache_hits"),
            "summarized": host.total("summarized"),
            "enumerated": host.total("enumerated"),
            "worker_restarts": max(0, len(host.hellos) - 1),
            "worker_pid": worker.pid() if worker is not None else None,
            "worker_alive": bool(worker is not None and worker.alive()),
            "worker_error": host.error,
            **self._runner.counters,
            "in_flight": run.path.name if run is not None else None,
        }
