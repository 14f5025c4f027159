"""The language server (pygls 2): analyse on open and save, push diagnostics, hover footprints.

Handlers are thin: they translate LSP into calls on a `Session`, which owns the documents, the run
generations (rust-analyzer flycheck style) and the one analysis worker. Formatting lives in
`lspconvert` and `hover`; the analysis itself runs in the worker process and knows nothing of LSP.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import os
import queue
import re
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable
from urllib.parse import unquote, urlparse

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcInvalidRequest
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

from tilelens_lsp import (__version__, codeactions, codelens, directive_help, hover, linemap, lspconvert, releases,
                          suppress)
from tilelens_lsp.model import Diagnostic, FileResult
from tilelens_lsp.paths import find_root
from tilelens_lsp.settings import Settings, from_environment, merge
from tilelens_lsp.worker.process import Worker, WorkerUnavailable, remove_neutral_dir

log = logging.getLogger("tilelens_lsp.server")

STATS_METHOD = "tilelens/stats"
CONFIG_FILES = ("pyproject.toml", "tilelens.toml")
CONFIG_GLOB = "**/{pyproject.toml,tilelens.toml}"
PROGRESS_AFTER = 0.3   # seconds a run may take before the client gets a progress bar
CANCEL_GRACE = 0.3     # a stale run younger than this finishes (cheaper than a worker restart)
DEBOUNCE = 0.1         # saves closer than this form a burst: its run waits for quiet, then coalesces
LONE_SAVE_DELAY = 0.0   # a lone save runs at once: a save storm's first run is dropped or superseded
MAX_DEBOUNCE = 2.0     # ... but a document saved nonstop still gets a run this often
_WORKER_SETTINGS = ("interpreter", "target", "memory_limit_mb")


# ---------------------------------------------------------------- state


@dataclass
class Snapshot:
    """The text a generation analyses, followed through the unsaved edits since (linemap.py)."""

    generation: int
    tracked: linemap.Tracked
    label: str                   # which version, e.g. "version 3, saved at 14:02:11"


@dataclass
class Published:
    """What the document's diagnostics and hovers currently come from."""

    generation: int
    result: FileResult
    text: str
    rel: str
    tracked: linemap.Tracked | None = None   # `text` → the document now
    label: str = "the last save"


@dataclass
class Doc:
    uri: str
    path: Path | None
    version: int | None = None
    generation: int = 0
    touched: float = 0.0         # monotonic time of the last open/save
    pending_since: float = 0.0
    burst: bool = False          # this save came within DEBOUNCE of the previous one
    published: Published | None = None
    snapshot: Snapshot | None = None


@dataclass
class Run:
    """One analysis of one generation of one document."""

    uri: str
    generation: int
    version: int | None
    text: str
    path: Path
    root: Path
    rel: str
    settings: Settings
    started: float = 0.0
    finished: bool = False
    cancelled: bool = False
    token: str | None = None


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


# ---------------------------------------------------------------- session


class Session:
    """Documents, settings, runs and the worker of one client connection."""

    def __init__(self, server: "TilelensServer") -> None:
        self.server = server
        self.base_settings = from_environment(Settings())
        self.settings = self.base_settings
        self.init_settings = self.base_settings
        self.docs: dict[str, Doc] = {}
        self.pending: dict[str, None] = {}
        self.worker: Worker | None = None
        self.worker_error: str | None = None
        self.gate: Diagnostic | None = None       # TL040 when the worker's Triton is untested
        self.lane = Lane()
        self.flight_lock = threading.Lock()
        self.in_flight: Run | None = None
        self.tokens: dict[str, Run] = {}
        self.token_ids = itertools.count(1)
        self.wake: asyncio.Event | None = None
        self.runner: asyncio.Task | None = None
        self.closing = False
        self.shutdown_requested = False
        self.worker_stats: dict[int, dict[str, int]] = {}
        self.hellos: list[Any] = []               # one per worker process started: restarts = len - 1
        self.counters = {"runs": 0, "published": 0, "cancelled": 0, "dropped": 0}
        self.background: set[asyncio.Task] = set()
        self.prestarted: Worker | None = None      # started by `serve` before pygls was even imported

    # -- capabilities

    def _cap(self, path: str, default: Any = None) -> Any:
        value: Any = self.server.client_capabilities
        for part in path.split("."):
            value = getattr(value, part, None)
            if value is None:
                return default
        return value

    @property
    def related_support(self) -> bool:
        return bool(self._cap("text_document.publish_diagnostics.related_information", False))

    @property
    def progress_support(self) -> bool:
        return bool(self._cap("window.work_done_progress", False))

    # -- lifecycle

    def initialize(self, params: types.InitializeParams) -> None:
        options = params.initialization_options
        values = _settings_section(options)
        try:
            self.init_settings = merge(self.base_settings, values)
        except (ValueError, TypeError) as exc:
            self.show(f"tilelens: ignoring initializationOptions: {exc}", types.MessageType.Warning)
        self.settings = self.init_settings
        self._new_worker()   # Triton's import overlaps the rest of the handshake

    def initialized(self) -> None:
        self.wake = asyncio.Event()
        if self.pending:
            self.wake.set()   # documents opened before `initialized`
        self.runner = self._spawn(self._run_loop())
        if self._cap("workspace.did_change_watched_files.dynamic_registration", False):
            self._spawn(self._register_watchers())

    def _new_worker(self) -> None:
        old, self.worker = self.worker, self._adopt_prestarted() or Worker(self.settings)
        with self.flight_lock:
            if self.in_flight is not None:
                self.in_flight.cancelled = True
        if old is not None:
            old.cancel()
        self._spawn(self._warm(self.worker))

    def _adopt_prestarted(self) -> Worker | None:
        """The worker `serve` started at process start, if it runs what the settings ask for."""
        worker, self.prestarted = self.prestarted, None
        if worker is None:
            return None
        same = (worker.settings.interpreter == self.settings.interpreter
                and worker.settings.memory_limit_mb == self.settings.memory_limit_mb)
        if not same:
            threading.Thread(target=worker.stop, daemon=True).start()
            return None
        worker.settings = self.settings
        return worker

    async def _warm(self, worker: Worker) -> None:
        """Start the worker before the first save needs it (Triton's import takes a second or two)."""
        try:
            await self.lane.submit(self._start_worker, worker)
        except WorkerUnavailable as exc:
            if worker is not self.worker or self.closing:
                return   # replaced (settings changed) or shutting down while it started
            self.worker_error = str(exc)
            self.show(f"tilelens: {exc}", types.MessageType.Error)

    def _start_worker(self, worker: Worker) -> None:  # in the lane
        if self.closing or worker is not self.worker:
            return
        hello = worker.start()   # returns at once for a running worker
        self._note_pid(worker)
        self.worker_error = None
        if not releases.is_tested(hello.triton) and not releases.untested_allowed():
            self.gate = Diagnostic("TL040", releases.gate_message(hello.triton), 1, 1)
        else:
            self.gate = None
        self.log(f"worker {worker.pid()} ready: Triton {hello.triton}, {hello.python}, "
                 f"target {self.settings.target}")

    async def _register_watchers(self) -> None:
        try:
            await self.server.client_register_capability_async(types.RegistrationParams(registrations=[
                types.Registration(
                    id="tilelens-config-watch", method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                    register_options=types.DidChangeWatchedFilesRegistrationOptions(
                        watchers=[types.FileSystemWatcher(glob_pattern=CONFIG_GLOB)]))]))
        except Exception as exc:  # noqa: BLE001 - a client that refuses just gets no watcher
            self.log(f"could not register the config file watcher: {exc}")

    def close(self) -> None:
        """Stop the worker and every run; idempotent, callable from any thread."""
        self.closing = True
        worker, self.worker = self.worker, None
        if worker is not None:
            worker.stop()
            remove_neutral_dir()   # serve() ends with os._exit, which runs no atexit handler
        if self.runner is not None and not self.runner.done():
            try:
                self.runner.cancel()
            except RuntimeError:
                pass

    # -- documents

    def open(self, item: types.TextDocumentItem) -> None:
        doc = Doc(item.uri, _file_path(item.uri), item.version)
        self.docs[item.uri] = doc
        self.schedule(doc, "opened")

    def change(self, params: types.DidChangeTextDocumentParams) -> None:
        doc = self.docs.get(params.text_document.uri)
        if doc is None:
            return
        doc.version = params.text_document.version
        # Follow the unsaved edits, so hovers land on the lines the analysed ones are now.
        current, moved = self._text(doc.uri), {}
        for holder in (doc.snapshot, doc.published):
            if holder is None or holder.tracked is None:
                continue
            key = id(holder.tracked)
            if key not in moved:
                try:
                    moved[key] = linemap.advance(holder.tracked, params.content_changes, self._encoding())
                except Exception:  # noqa: BLE001 - a change we cannot follow: fall back to a line diff
                    log.exception("following a change failed")
                    moved[key] = holder.tracked
                moved[key] = linemap.resync(moved[key], current)
            holder.tracked = moved[key]

    def save(self, uri: str) -> None:
        if _is_config_file(uri):
            self.rerun_all("configuration file saved")
        doc = self.docs.get(uri)
        if doc is not None:
            self.schedule(doc, "saved")

    def close_doc(self, uri: str) -> None:
        doc = self.docs.pop(uri, None)
        self.pending.pop(uri, None)
        if doc is None:
            return
        self._cancel_stale(uri)
        self.publish(uri, [], None)

    def schedule(self, doc: Doc, why: str = "re-run") -> None:
        """A new generation of `doc`: older results are dropped, its stale run cancelled."""
        now = time.monotonic()
        doc.generation += 1
        doc.snapshot = Snapshot(doc.generation, linemap.start(self._text(doc.uri)),
                                f"version {doc.version}, {why} at {time.strftime('%H:%M:%S')}")
        doc.burst = doc.touched > 0 and now - doc.touched < DEBOUNCE
        doc.touched = now
        if doc.uri not in self.pending:
            doc.pending_since = now
            self.pending[doc.uri] = None
        self._cancel_stale(doc.uri)
        if self.wake is not None:
            self.wake.set()

    def rerun_all(self, why: str) -> None:
        if self.docs:
            self.log(f"re-running {len(self.docs)} open document(s): {why}")
        for doc in self.docs.values():
            self.schedule(doc)

    def _cancel_stale(self, uri: str) -> None:
        with self.flight_lock:
            run = self.in_flight
        if run is None or run.uri != uri or run.cancelled:
            return
        age = time.monotonic() - run.started
        if age >= CANCEL_GRACE:
            self.cancel_run(run)
        else:
            # Most runs end within a moment: let it finish rather than restart the worker.
            asyncio.get_running_loop().call_later(CANCEL_GRACE - age, self._cancel_if_still_stale, run)

    def _cancel_if_still_stale(self, run: Run) -> None:
        doc = self.docs.get(run.uri)
        if not run.finished and (doc is None or doc.generation != run.generation):
            self.cancel_run(run)

    def cancel_run(self, run: Run) -> None:
        """Drop `run`'s result; if the worker is busy with it, kill the worker (it restarts)."""
        run.cancelled = True
        with self.flight_lock:
            if self.in_flight is run and self.worker is not None:
                self.counters["cancelled"] += 1
                self.worker.cancel()

    def cancel_token(self, token: Any) -> None:
        run = self.tokens.get(str(token))
        if run is not None and not run.finished:
            self.log(f"cancelled by the client: {Path(run.path).name}")
            self.cancel_run(run)

    # -- runs

    async def _run_loop(self) -> None:
        assert self.wake is not None
        while not self.closing:
            await self.wake.wait()
            self.wake.clear()
            while self.pending and not self.closing:
                uri = next(iter(self.pending))
                doc = self.docs.get(uri)
                if doc is None:
                    self.pending.pop(uri, None)
                    continue
                now = time.monotonic()
                # a lone save runs almost at once; saves in a burst wait for a quiet moment and coalesce
                quiet = DEBOUNCE if doc.burst else LONE_SAVE_DELAY
                wait = min(doc.touched + quiet, doc.pending_since + MAX_DEBOUNCE) - now
                if wait > 0:
                    await asyncio.sleep(wait)
                    continue
                self.pending.pop(uri, None)
                try:
                    await self._run(doc)
                except asyncio.CancelledError:
                    raise
                except Exception as exc:  # noqa: BLE001 - one bad run must not stop the loop
                    log.exception("run failed")
                    self.log(f"internal error while analysing {uri}: {type(exc).__name__}: {exc}",
                             types.MessageType.Error)

    async def _run(self, doc: Doc) -> None:
        snapshot = doc.snapshot
        # the text as it was saved (what the worker reads from disk), not what was typed since
        text = snapshot.tracked.base if snapshot is not None else self._text(doc.uri)
        if doc.path is None or not doc.path.name.endswith(".py") or not doc.path.is_file():
            self.publish(doc.uri, [], doc.version)
            return
        root = self._root_for(doc.path)
        if root is None:
            diags = []
            if "tilelens:" in text:
                diags = [types.Diagnostic(
                    range=types.Range(start=types.Position(line=0, character=0),
                                      end=types.Position(line=0, character=0)),
                    message="tilelens does not analyse files outside the workspace folders (importing a "
                            "file runs its code); set allowOutsideWorkspace to analyse it",
                    severity=types.DiagnosticSeverity.Information, source=lspconvert.SOURCE)]
            self.publish(doc.uri, diags, doc.version)
            return
        rel = _relative(doc.path, root)
        if "triton" not in text and "tilelens" not in text:
            # Not a kernel file: nothing to import, keep the worker free.
            self._accept(doc, doc.generation, doc.version, FileResult(rel), text, rel, root)
            return
        run = Run(doc.uri, doc.generation, doc.version, text, doc.path, root, rel, self.settings)
        if self.gate is not None:
            self._accept(doc, run.generation, run.version, FileResult(rel, (), (self.gate,)), text, rel, root)
            return
        progress = self._spawn(self._progress(run)) if self.progress_support else None
        t0 = time.monotonic()
        result = await self.lane.submit(self._analyze, run)
        elapsed = time.monotonic() - t0
        run.finished = True
        if progress is not None:
            await self._end_progress(run, progress)
        current = self.docs.get(doc.uri)
        if result is None or run.cancelled or current is not doc or doc.generation != run.generation:
            self.counters["dropped"] += 1
            self.log(f"dropped a stale run of {doc.path.name} ({elapsed:.2f} s)")
            return
        self.log(f"analysed {doc.path.name} in {elapsed:.2f} s: {lspconvert.summary(result)}")
        self._accept(doc, run.generation, run.version, result, text, rel, root)

    def _analyze(self, run: Run) -> FileResult | None:  # in the lane
        worker = self.worker
        if worker is None or self.closing:
            return None
        with self.flight_lock:
            doc = self.docs.get(run.uri)   # read across threads: one dict lookup, one int
            if run.cancelled or doc is None or doc.generation != run.generation:
                return None                # stale before it started: a newer run is pending
            self.counters["runs"] += 1     # only this thread writes it
            run.started = time.monotonic()
            self.in_flight = run
        try:
            if worker.proc is not None:
                # A worker that died while idle (killed, OOM) answers the ping with a crash and is
                # replaced quietly by the analysis below: this file is not to blame.
                try:
                    worker.request("ping", {}, 5.0)
                except (TimeoutError, WorkerUnavailable):
                    pass
                if run.cancelled:
                    return None
            gate = self._gate(worker)
            if gate is not None:
                return FileResult(run.rel, (), (gate,))
            result = worker.analyze(run.path, run.root, settings=run.settings)
        finally:
            with self.flight_lock:
                self.in_flight = None
        self._note_pid(worker)
        if worker.alive() and not self.closing:
            if worker.last_stats is not None and worker.pid():   # they come with every analysis reply
                self.worker_stats[worker.pid()] = worker.last_stats
        elif not self.closing and worker is self.worker:
            self._restart_soon(worker)
        return result

    def _gate(self, worker: Worker) -> Diagnostic | None:  # in the lane
        """TL040 when the worker's Triton is untested, decided from this worker's own handshake
        before its first analysis, so no verdict of an untested release is ever published."""
        try:
            hello = worker.start()
        except WorkerUnavailable:
            return None   # the analysis reports why (TL050)
        if releases.is_tested(hello.triton) or releases.untested_allowed():
            return None
        self.gate = Diagnostic("TL040", releases.gate_message(hello.triton), 1, 1)
        return self.gate

    def _restart_soon(self, worker: Worker) -> None:  # in the lane
        """After a crash or timeout, a fresh worker now, so the next save is warm."""
        try:
            asyncio.run_coroutine_threadsafe(self._warm_later(worker), self.server.loop)
        except RuntimeError:
            pass

    async def _warm_later(self, worker: Worker) -> None:
        if worker is self.worker and not self.closing:
            await self._warm(worker)

    def _note_pid(self, worker: Worker) -> None:
        hello = worker.hello
        if hello is not None and not any(h is hello for h in self.hellos):
            self.hellos.append(hello)

    def _accept(self, doc: Doc, generation: int, version: int | None, result: FileResult, text: str,
                rel: str, root: Path) -> None:
        result = suppress.apply(result, text, rel)
        ctx = lspconvert.DocumentContext(doc.uri, rel, text, root, self.related_support, self._units)
        try:
            diagnostics = lspconvert.to_lsp_diagnostics(result, ctx)
        except Exception as exc:  # noqa: BLE001 - a formatting bug must not lose the document
            log.exception("converting diagnostics failed")
            diagnostics = [types.Diagnostic(
                range=types.Range(start=types.Position(line=0, character=0),
                                  end=types.Position(line=0, character=0)),
                message=f"tilelens could not format its results: {type(exc).__name__}: {exc}",
                severity=types.DiagnosticSeverity.Warning, source=lspconvert.SOURCE, code="TL050")]
        snapshot = doc.snapshot
        if snapshot is not None and snapshot.generation == generation and snapshot.tracked.base == text:
            tracked, label = snapshot.tracked, snapshot.label
        else:
            tracked, label = linemap.resync(linemap.start(text), self._text(doc.uri)), "the last save"
        doc.published = Published(generation, result, text, rel, tracked, label)
        self.publish(doc.uri, diagnostics, version)

    def publish(self, uri: str, diagnostics: list[types.Diagnostic], version: int | None) -> None:
        self.counters["published"] += 1
        self.server.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version))
        self._refresh_lenses()

    # -- progress

    async def _progress(self, run: Run) -> None:
        await asyncio.sleep(PROGRESS_AFTER)
        if run.finished or run.cancelled:
            return
        token = f"tilelens/{next(self.token_ids)}"
        try:
            await asyncio.wait_for(self.server.work_done_progress.create_async(token), 10)
        except Exception as exc:  # noqa: BLE001 - no progress bar is no failure
            self.log(f"no progress token: {exc}")
            return
        self.tokens[token] = run
        if run.finished:
            self.server.work_done_progress.end(token, types.WorkDoneProgressEnd())
            self._forget(token)
            return
        run.token = token
        self.server.work_done_progress.begin(token, types.WorkDoneProgressBegin(
            title="tilelens", message=f"analysing {run.path.name}", cancellable=True))

    async def _end_progress(self, run: Run, task: asyncio.Task) -> None:
        if not task.done():
            task.cancel()
            try:
                await task
            except (asyncio.CancelledError, Exception):  # noqa: BLE001
                pass
        token = run.token
        if token is not None:
            message = "cancelled" if run.cancelled else "done"
            self.server.work_done_progress.end(token, types.WorkDoneProgressEnd(message=message))
            self._forget(token)

    def _forget(self, token: str) -> None:
        self.server.work_done_progress.tokens.pop(token, None)
        self.tokens.pop(token, None)

    # -- settings and files

    async def change_configuration(self, settings: Any) -> None:
        values = _settings_section(settings)
        if values is None and self._cap("workspace.configuration", False):
            try:
                pulled = await asyncio.wait_for(self.server.workspace_configuration_async(
                    types.ConfigurationParams(items=[types.ConfigurationItem(section="tilelens")])), 10)
                values = pulled[0] if pulled and isinstance(pulled[0], dict) else None
            except Exception as exc:  # noqa: BLE001
                self.log(f"workspace/configuration failed: {exc}")
        try:
            new = merge(self.init_settings, values or {})
        except (ValueError, TypeError) as exc:
            self.show(f"tilelens: ignoring a settings change: {exc}", types.MessageType.Warning)
            return
        old, self.settings = self.settings, new
        if new == old:
            return
        changed = [f for f in _WORKER_SETTINGS if getattr(old, f) != getattr(new, f)]
        if changed:
            self.log(f"settings changed ({', '.join(changed)}): restarting the worker")
            self.gate = None
            self._new_worker()
        self.rerun_all("settings changed")

    def watched_files_changed(self, params: types.DidChangeWatchedFilesParams) -> None:
        if any(_is_config_file(change.uri) for change in params.changes or []):
            self.rerun_all("configuration file changed")

    # -- hover

    def hover(self, params: types.HoverParams) -> types.Hover | None:
        doc = self.docs.get(params.text_document.uri)
        if doc is None or doc.published is None:
            return None
        pub = doc.published
        line_map = pub.tracked.map if pub.tracked is not None else linemap.diff_map(pub.text, self._text(doc.uri))
        markdown = hover.hover_after_edits(pub.result, pub.rel, pub.text, line_map, params.position.line + 1,
                                           pub.label)
        if markdown is None:
            return None
        kinds = self._cap("text_document.hover.content_format", None) or [types.MarkupKind.Markdown]
        kind = types.MarkupKind.Markdown if types.MarkupKind.Markdown in kinds else types.MarkupKind.PlainText
        return types.Hover(contents=types.MarkupContent(kind=kind, value=markdown))

    # -- inside directives: completion, signature help, go to definition (directive_help.py)

    def completion(self, params: types.CompletionParams) -> types.CompletionList | None:
        text, line, col = self._cursor(params)
        items = directive_help.complete(text, line, col) if "tilelens:" in text else None
        return lspconvert.to_completion_list(items) if items is not None else None

    def signature_help(self, params: types.SignatureHelpParams) -> types.SignatureHelp | None:
        text, line, col = self._cursor(params)
        found = directive_help.signature_help(text, line, col) if "tilelens:" in text else None
        return lspconvert.to_signature_help(found, self._units) if found is not None else None

    def definition(self, params: types.DefinitionParams) -> types.Location | None:
        text, line, col = self._cursor(params)
        target = directive_help.definition(text, line, col) if "tilelens:" in text else None
        if target is None:
            return None
        return types.Location(uri=params.text_document.uri,
                              range=lspconvert.target_range(text, target, self._units))

    def _cursor(self, params: Any) -> tuple[str, int, int]:
        """The document's text and the request's position, its column in characters."""
        text = self._text(params.text_document.uri)
        lines = linemap.split_lines(text)
        position = params.position
        if not 0 <= position.line < len(lines):
            return text, position.line, position.character
        column = lspconvert.column_from_units(lines[position.line], position.character, self._units)
        return text, position.line, column

    def _encoding(self) -> str:
        try:
            return str(self.server.workspace.position_codec.encoding or "utf-16")
        except RuntimeError:
            return "utf-16"

    # -- code actions, code lens and its commands (codeactions.py, codelens.py)

    def code_actions(self, params: types.CodeActionParams) -> list[types.CodeAction] | None:
        uri = params.text_document.uri
        return codeactions.code_actions(uri, self._text(uri), list(params.context.diagnostics or []),
                                        self._units, params.context.only) or None

    def code_lenses(self, uri: str) -> list[types.CodeLens] | None:
        doc = self.docs.get(uri)
        if doc is None:
            return None
        run = self.in_flight
        if doc.path is not None and self._root_for(doc.path) is None:
            state = codelens.OUTSIDE
        elif uri in self.pending or (run is not None and run.uri == uri):
            state = codelens.PENDING
        else:
            state = codelens.NEVER
        result = doc.published.result if doc.published is not None else None
        return codelens.lenses(uri, self._text(uri), result, state)

    def show_launches(self, uri: Any = None, kernel: Any = None) -> dict[str, Any]:
        doc = self.docs.get(str(uri))
        result = doc.published.result if doc is not None and doc.published is not None else None
        info = codelens.summary(result, str(kernel) if kernel else None)
        self.log(info["text"])
        self.show(info["text"])
        return info

    def rerun(self, uri: Any = None) -> dict[str, Any]:
        doc = self.docs.get(str(uri)) if uri else None
        if doc is not None:
            self.schedule(doc)
            return {"scheduled": 1}
        self.rerun_all("re-run requested")
        return {"scheduled": len(self.docs)}

    def _refresh_lenses(self) -> None:
        if not self._cap("workspace.code_lens.refresh_support", False):
            return
        try:
            self.server.workspace_code_lens_refresh(None, callback=lambda *_: None)
        except Exception as exc:  # noqa: BLE001 - a client that cannot refresh keeps its old lenses
            self.log(f"codeLens/refresh failed: {exc}")

    # -- stats

    def stats(self) -> dict[str, Any]:
        def total(name: str) -> int:   # summed over this session's workers
            return sum(s.get(name, 0) for s in self.worker_stats.values())

        worker = self.worker
        run = self.in_flight
        return {"compiles": total("compiles"), "cache_hits": total("cache_hits"),
                "summarized": total("summarized"), "enumerated": total("enumerated"),
                "worker_restarts": max(0, len(self.hellos) - 1),
                "worker_pid": worker.pid() if worker is not None else None,
                "worker_alive": bool(worker is not None and worker.alive()),
                "worker_error": self.worker_error,
                **self.counters, "open_documents": len(self.docs),
                "in_flight": run.path.name if run is not None else None,
                "settings": {"target": self.settings.target, "timeout": self.settings.timeout,
                             "clients": list(self.settings.clients), "interpreter": self.settings.interpreter}}

    # -- helpers

    def _text(self, uri: str) -> str:
        try:
            return self.server.workspace.get_text_document(uri).source
        except Exception:  # noqa: BLE001 - an unreadable document is analysed from disk anyway
            return ""

    def _units(self, text: str) -> int:
        return self.server.workspace.position_codec.client_num_units(text)

    def _folders(self) -> list[Path]:
        folders: list[Path] = []
        try:
            workspace = self.server.workspace
        except RuntimeError:
            return folders
        for folder in workspace.folders.values():
            path = _file_path(folder.uri)
            if path is not None:
                folders.append(path)
        if not folders and workspace.root_uri:
            path = _file_path(workspace.root_uri)
            if path is not None:
                folders.append(path)
        return folders

    def _root_for(self, path: Path) -> Path | None:
        """The workspace folder holding `path` (the innermost), else None unless allowed outside."""
        real = Path(os.path.realpath(path))
        best: Path | None = None
        for folder in self._folders():
            base = Path(os.path.realpath(folder))
            if real == base or base in real.parents:
                if best is None or len(base.parts) > len(best.parts):
                    best = base
        if best is not None:
            return best
        from tilelens_lsp.launchconfig import declared_by_folder
        for folder in self._folders():   # an installed module that a workspace toml names (`module =`)
            if declared_by_folder(folder, real, self.settings.interpreter):
                return folder
        if self.settings.allow_outside_workspace:
            return find_root(real.parent)
        return None

    def _spawn(self, coro) -> asyncio.Task:
        task = asyncio.ensure_future(coro)
        self.background.add(task)
        task.add_done_callback(self.background.discard)
        return task

    def log(self, message: str, kind: types.MessageType = types.MessageType.Log) -> None:
        self._call_soon(self.server.window_log_message, types.LogMessageParams(type=kind, message=message))

    def show(self, message: str, kind: types.MessageType = types.MessageType.Info) -> None:
        self._call_soon(self.server.window_show_message, types.ShowMessageParams(type=kind, message=message))

    def _call_soon(self, fn: Callable[[Any], None], params: Any) -> None:
        """Send from the event loop thread whichever thread we are on."""
        loop = self.server.loop
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is not None and running is loop:
            fn(params)
        elif loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(fn, params)


# ---------------------------------------------------------------- pygls glue


class TilelensProtocol(LanguageServerProtocol):
    """pygls' protocol, hardened: malformed requests get an error reply, stray changes are ignored."""

    def structure_message(self, data: dict[str, Any]):
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            if isinstance(data, dict) and "id" in data and "method" in data:
                return _Malformed(data["id"], data.get("method"), exc)
            raise

    def handle_message(self, message):
        if (self._shutdown and getattr(message, "id", None) is not None
                and getattr(message, "method", None) not in (None, types.EXIT)):
            # LSP: a request after `shutdown` is answered with InvalidRequest (pygls drops it unanswered)
            self._send_response(message.id, None, JsonRpcInvalidRequest(
                "the server is shutting down: only 'exit' is accepted").to_response_error())
            return
        if isinstance(message, _Malformed):
            log.warning("malformed %s request: %s", message.method, message.error)
            error = message.error if isinstance(message.error, JsonRpcInvalidParams) else JsonRpcInvalidParams()
            self._send_response(message.id, None, error.to_response_error())
            return
        return super().handle_message(message)

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams):
        if unquote(params.text_document.uri) not in self.workspace.text_documents:
            return  # a change to a document never opened: nothing to update
        yield from super().lsp_text_document__did_change(params)


@dataclass
class _Malformed:
    id: Any
    method: Any
    error: JsonRpcException
    jsonrpc: str = "2.0"


class TilelensServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("tilelens-lsp", __version__, protocol_cls=TilelensProtocol,
                         text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
        self.session = Session(self)
        self.loop: asyncio.AbstractEventLoop | None = None

    def shutdown(self) -> None:
        # pygls waits for its thread pool here, where a reader thread may block on stdin forever.
        if self._stop_event is not None:
            self._stop_event.set()
        if self._thread_pool:
            self._thread_pool.shutdown(wait=False, cancel_futures=True)
        if self._server:
            self._server.close()
        self.session.close()


def create_server() -> TilelensServer:
    server = TilelensServer()
    s = server.session

    @server.feature(types.INITIALIZE)
    def initialize(ls: TilelensServer, params: types.InitializeParams) -> None:
        ls.loop = asyncio.get_running_loop()
        s.initialize(params)

    @server.feature(types.INITIALIZED)
    def initialized(ls: TilelensServer, params: types.InitializedParams) -> None:
        ls.loop = asyncio.get_running_loop()
        s.initialized()

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: TilelensServer, params: Any) -> None:
        s.shutdown_requested = True
        s.close()

    @server.feature(types.EXIT)
    def exit_(ls: TilelensServer, params: Any) -> None:
        s.close()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: TilelensServer, params: types.DidOpenTextDocumentParams) -> None:
        s.open(params.text_document)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: TilelensServer, params: types.DidChangeTextDocumentParams) -> None:
        s.change(params)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    def did_save(ls: TilelensServer, params: types.DidSaveTextDocumentParams) -> None:
        s.save(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: TilelensServer, params: types.DidCloseTextDocumentParams) -> None:
        s.close_doc(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def on_hover(ls: TilelensServer, params: types.HoverParams) -> types.Hover | None:
        return s.hover(params)

    @server.feature(types.TEXT_DOCUMENT_COMPLETION,
                    types.CompletionOptions(trigger_characters=["[", "(", ",", ".", "="]))
    def completion(ls: TilelensServer, params: types.CompletionParams) -> types.CompletionList | None:
        return s.completion(params)

    @server.feature(types.TEXT_DOCUMENT_SIGNATURE_HELP,
                    types.SignatureHelpOptions(trigger_characters=["(", ","], retrigger_characters=["="]))
    def signature_help(ls: TilelensServer, params: types.SignatureHelpParams) -> types.SignatureHelp | None:
        return s.signature_help(params)

    @server.feature(types.TEXT_DOCUMENT_DEFINITION)
    def definition(ls: TilelensServer, params: types.DefinitionParams) -> types.Location | None:
        return s.definition(params)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls: TilelensServer, params: types.DidChangeConfigurationParams) -> None:
        await s.change_configuration(params.settings)

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(ls: TilelensServer, params: types.DidChangeWatchedFilesParams) -> None:
        s.watched_files_changed(params)

    @server.feature(types.WINDOW_WORK_DONE_PROGRESS_CANCEL)
    def progress_cancel(ls: TilelensServer, params: types.WorkDoneProgressCancelParams) -> None:
        s.cancel_token(params.token)

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION,
                    types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]))
    def code_action(ls: TilelensServer, params: types.CodeActionParams) -> list[types.CodeAction] | None:
        return s.code_actions(params)

    @server.feature(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=False))
    def code_lens(ls: TilelensServer, params: types.CodeLensParams) -> list[types.CodeLens] | None:
        return s.code_lenses(params.text_document.uri)

    @server.command(codelens.SHOW)
    def show_launches(ls: TilelensServer, *args: Any) -> dict[str, Any]:
        return s.show_launches(*args[:2])

    @server.command(codelens.RERUN)
    def rerun(ls: TilelensServer, *args: Any) -> dict[str, Any]:
        return s.rerun(*args[:1])

    @server.feature(STATS_METHOD)
    def stats(ls: TilelensServer, params: Any) -> dict[str, Any]:
        return s.stats()

    return server


MAX_HEADER_LINE = 64 * 1024           # a longer header line is garbage, read and dropped in pieces
MAX_BODY = 256 * 1024 * 1024          # a larger Content-Length is garbage, not a message to wait for
_CONTENT_LENGTH = re.compile(rb"Content-Length:[ \t]*(\d+)[ \t]*\r?\n\Z", re.IGNORECASE)


async def _robust_run_async(stop_event: threading.Event, reader: Any, protocol: Any, logger: Any = None,
                            error_handler: Any = None) -> None:
    """pygls' message loop, hardened against a client that sends garbage (`pygls.io_.run_async`).

    pygls' loop stays deaf for good after one wrong Content-Length (the rest of the body merges with
    the next header line), dies with a traceback on a huge Content-Length (it allocates the body up
    front) and logs a traceback per non-JSON body. Here a header is found again after garbage, a body
    over MAX_BODY or a header line over MAX_HEADER_LINE is skipped, and a body that is not a JSON-RPC
    message costs one log line.
    """
    length: int | None = None
    garbage = 0           # bytes skipped since the last message: logged once per run of garbage
    while not stop_event.is_set():
        header = await _read_header_line(reader)
        if not header:
            break
        if not header.strip():
            if length is None:
                continue          # a blank line without a Content-Length: garbage between messages
            body = await _read_body(reader, length)
            length = None
            if body is None:
                break             # EOF in the middle of a body
            garbage = 0
            _handle_body(body, protocol, error_handler)
            continue
        match = _CONTENT_LENGTH.search(header)
        if match is None:
            if not header.lower().startswith(b"content-type:"):
                if not garbage:
                    log.warning("ignoring input that is not an LSP header, up to the next Content-Length")
                garbage += len(header)
            continue
        if match.start() > 0:
            log.warning("skipped %d bytes of garbage before a Content-Length header", match.start())
        length = int(match.group(1))
        if length > MAX_BODY:
            log.warning("ignored a Content-Length of %d bytes (more than %d)", length, MAX_BODY)
            length = None


async def _read_header_line(reader: Any) -> bytes:
    stdin = getattr(reader, "stdin", None)
    if stdin is not None:  # pygls' StdinAsyncReader reads lines without a bound
        return await reader.loop.run_in_executor(reader.executor, stdin.readline, MAX_HEADER_LINE)
    try:
        return await reader.readline()
    except ValueError:     # asyncio.StreamReader: a line over its limit (dropped by the reader)
        return b"X-Overlong-Line\r\n"


async def _read_body(reader: Any, length: int) -> bytes | None:
    try:
        body = await reader.readexactly(length)
    except asyncio.IncompleteReadError:
        return None
    return body if len(body) == length else None


def _handle_body(body: bytes, protocol: Any, error_handler: Any) -> None:
    try:
        message = json.loads(body, object_hook=protocol.structure_message)
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
        log.warning("ignored a message that is not JSON (%d bytes): %s", len(body), exc)
        return
    except Exception as exc:  # noqa: BLE001 - e.g. a notification whose params do not fit its method
        log.warning("ignored a malformed message: %s: %s", type(exc).__name__, exc)
        return
    if not hasattr(message, "jsonrpc"):
        log.warning("ignored a JSON body that is not a JSON-RPC message: %.80r", message)
        return
    try:
        protocol.handle_message(message)
    except Exception as exc:  # noqa: BLE001 - as pygls: one bad message never ends the session
        log.exception("Unable to handle message")
        if error_handler:
            error_handler(exc, JsonRpcException)


class _OneLineDeserializeErrors(logging.Filter):
    """pygls logs the whole (cattrs exception group) traceback of every message whose params do not fit
    its method; one line naming the error says the same without flooding the client's log."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str) and record.msg.startswith("Unable to deserialize message"):
            exc = sys.exc_info()[1]
            record.msg = "ignored a malformed message: %s: %s"
            record.args = (type(exc).__name__, exc) if exc is not None else ("?", "")
        return True


def serve(tcp: str | None = None, prestarted: Worker | None = None) -> int:
    """Run the server over stdio (default) or TCP (`HOST:PORT`) until the client goes away."""
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr,
                        format="tilelens-lsp %(levelname)s %(name)s: %(message)s")
    logging.getLogger("pygls.protocol.json_rpc").addFilter(_OneLineDeserializeErrors())
    import pygls.server
    pygls.server.run_async = _robust_run_async   # this process serves one client: ours is the loop
    server = create_server()
    server.session.prestarted = prestarted
    try:
        if tcp:
            host, _, port = tcp.rpartition(":")
            server.start_tcp(host or "127.0.0.1", int(port))
        else:
            server.start_io()
    finally:
        server.session.close()
    code = 0 if server.session.shutdown_requested else 1
    if not tcp:
        # Threads may still block on stdin or a dead pipe; nothing is left to flush but our streams.
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(code)
    return code


# ---------------------------------------------------------------- small helpers


def _settings_section(value: Any) -> dict[str, Any] | None:
    """`{"tilelens": {...}}` or the settings at top level; None when nothing usable was sent."""
    if value is None:
        return None
    if hasattr(value, "__dict__") and not isinstance(value, dict):
        value = vars(value)
    if not isinstance(value, dict):
        return None
    inner = value.get("tilelens")
    if isinstance(inner, dict):
        return inner
    return value or None


def _file_path(uri: str) -> Path | None:
    try:
        parsed = urlparse(uri)
    except ValueError:
        return None
    if parsed.scheme != "file":
        return None
    path = unquote(parsed.path)
    if os.name == "nt" and path.startswith("/") and len(path) > 2 and path[2] == ":":
        path = path[1:]
    return Path(path)


def _is_config_file(uri: str) -> bool:
    path = _file_path(uri)
    return path is not None and path.name in CONFIG_FILES


def _relative(path: Path, root: Path) -> str:
    real, base = os.path.realpath(path), os.path.realpath(root)
    try:
        return Path(real).relative_to(base).as_posix()
    except ValueError:
        return path.name
