"""One client connection: its settings, its open documents, and the parts that act on them.

The Session owns the state the parts share (settings, documents, counters, `closing`) and the
document and settings notifications; the parts each own one concern: the editor connection
(editor.py), the worker (workerhost.py), when to run (scheduling.py), one run (runs.py), progress
bars (progress.py) and the answers to requests (features.py). The handlers in server.py call into here.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from tilelens_lsp.lsp import tomlwatch
from tilelens_lsp.lsp.editor import Editor
from tilelens_lsp.lsp.features import Features
from tilelens_lsp.lsp.progress import Progress
from tilelens_lsp.lsp.runs import Runs
from tilelens_lsp.lsp.scheduling import Scheduler
from tilelens_lsp.lsp.state import Doc, file_path, follow_edits, is_config_file, over_limit
from tilelens_lsp.lsp.workerhost import WorkerHost
from tilelens_lsp.paths import find_root
from tilelens_lsp.settings import Settings, from_environment, merge

_WORKER_SETTINGS = ("interpreter", "target", "memory_limit_mb")


class Session:
    """Documents, settings, runs and the worker of one client connection."""

    def __init__(self, server: LanguageServer) -> None:
        self.server = server
        self.base_settings = from_environment(Settings())
        self.settings = self.base_settings
        self.init_settings = self.base_settings
        self.docs: dict[str, Doc] = {}
        self.closing = False
        self.shutdown_requested = False
        self.counters = {"runs": 0, "published": 0, "cancelled": 0, "dropped": 0}
        self.background: set[asyncio.Task] = set()
        self.editor = Editor(server)
        self.workers = WorkerHost(self)
        self.scheduler = Scheduler(self)
        self.runs = Runs(self)
        self.progress = Progress(self)
        self.features = Features(self)

    # -- lifecycle

    def initialize(self, params: types.InitializeParams) -> None:
        options = params.initialization_options
        values = settings_section(options)
        try:
            self.init_settings = merge(self.base_settings, values)
        except (ValueError, TypeError) as exc:
            self.editor.show(f"tilelens: ignoring initializationOptions: {exc}", types.MessageType.Warning)
        self.settings = self.init_settings
        self.workers.replace()   # Triton's import overlaps the rest of the handshake

    def initialized(self) -> None:
        self.scheduler.start()
        if self.editor.cap("workspace.did_change_watched_files.dynamic_registration", False):
            self.spawn(self.editor.register_watchers())
        else:      # Neovim on Linux, among others: look at the tomls' modification times instead
            self.spawn(self._poll_tomls())
        for toml in tomlwatch.workspace_tomls(self.editor.folders(), []):
            self.spawn(self.publish_toml(toml))

    def close(self) -> None:
        """Stop the worker and every run; idempotent, callable from any thread."""
        self.closing = True
        self.workers.stop()
        self.scheduler.stop()

    # -- documents

    def open(self, item: types.TextDocumentItem) -> None:
        self.editor.opened(item)
        doc = Doc(item.uri, file_path(item.uri), item.version, too_large=over_limit(item.text))
        self.docs[item.uri] = doc
        self.scheduler.schedule(doc, "opened")

    def change(self, params: types.DidChangeTextDocumentParams) -> None:
        text = self.editor.changed(params)
        doc = self.docs.get(params.text_document.uri)
        if doc is None:
            return
        doc.version = params.text_document.version
        doc.too_large = text is not None and over_limit(text)
        if doc.too_large:
            doc.snapshot = doc.published = None     # nothing to follow: it is not analysed
            return
        follow_edits(doc, params.content_changes, self.editor.text(doc.uri), self.editor.encoding())

    def save(self, uri: str) -> None:
        path = file_path(uri)
        if is_config_file(uri) and path is not None:
            self.config_changed(path, "saved")
            return
        doc = self.docs.get(uri)
        if doc is not None:
            self.scheduler.schedule(doc, "saved")

    # -- the launch tomls (tomlwatch.py)

    def config_changed(self, toml: Path, why: str) -> None:
        """Publish the toml's own problems on it, and re-analyse the open documents it can affect."""
        self.spawn(self.publish_toml(toml))
        named = tomlwatch.named_files(toml, self.settings.interpreter)
        affected = [doc for doc in self.docs.values() if doc.path is not None and not is_config_file(doc.uri)
                    and tomlwatch.affects(toml, doc.path, named)]
        if affected:
            self.editor.log(f"{toml.name} {why}: re-running {len(affected)} open document(s)")
        for doc in affected:
            self.scheduler.schedule(doc, f"{toml.name} {why}")

    async def publish_toml(self, toml: Path, version: int | None = None) -> None:
        uri = toml.as_uri()
        found = await asyncio.to_thread(tomlwatch.problems, toml, self.settings.interpreter)
        try:
            text = toml.read_text(encoding="utf-8", errors="replace")
        except OSError:
            text = ""
        doc = self.docs.get(uri)
        self.publish(uri, tomlwatch.to_lsp(found, text), version if version is not None else
                     doc.version if doc is not None else None)

    async def _poll_tomls(self) -> None:
        seen: dict[Path, float | None] | None = None
        while not self.closing:
            tomls = tomlwatch.workspace_tomls(self.editor.folders(),
                                              [d.path for d in self.docs.values() if d.path is not None])
            now = tomlwatch.mtimes(tomls)
            if seen is not None:
                for toml, stamp in now.items():
                    if toml in seen and seen[toml] != stamp:
                        self.config_changed(toml, "changed")
            seen = now
            await asyncio.sleep(tomlwatch.POLL_SECONDS)

    def close_doc(self, uri: str) -> None:
        self.editor.closed(uri)
        doc = self.docs.pop(uri, None)
        self.scheduler.pending.pop(uri, None)
        if doc is None:
            return
        self.scheduler.cancel_stale(uri)
        self.publish(uri, [], None)

    def publish(self, uri: str, diagnostics: list[types.Diagnostic], version: int | None) -> None:
        self.counters["published"] += 1
        self.editor.publish(uri, diagnostics, version)

    def root_for(self, path: Path) -> Path | None:
        """The workspace folder holding `path` (the innermost), else None unless allowed outside."""
        real = Path(os.path.realpath(path))
        best: Path | None = None
        for folder in self.editor.folders():
            base = Path(os.path.realpath(folder))
            if real == base or base in real.parents:
                if best is None or len(base.parts) > len(best.parts):
                    best = base
        if best is not None:
            return best
        # lazy: the toml reader loads directives (~80 ms at start); only files outside the folders need it
        from tilelens_lsp.launches.toml import declared_by_folder
        for folder in self.editor.folders():   # an installed module that a workspace toml names (`module =`)
            if declared_by_folder(folder, real, self.settings.interpreter):
                return folder
        if self.settings.allow_outside_workspace:
            return find_root(real.parent)
        return None

    # -- settings and files

    async def change_configuration(self, settings: Any) -> None:
        values = settings_section(settings)
        if values is None and self.editor.cap("workspace.configuration", False):
            try:
                pulled = await asyncio.wait_for(self.server.workspace_configuration_async(
                    types.ConfigurationParams(items=[types.ConfigurationItem(section="tilelens")])), 10)
                values = pulled[0] if pulled and isinstance(pulled[0], dict) else None
            except Exception as exc:  # noqa: BLE001
                self.editor.log(f"workspace/configuration failed: {exc}")
        try:
            new = merge(self.init_settings, values or {})
        except (ValueError, TypeError) as exc:
            self.editor.show(f"tilelens: ignoring a settings change: {exc}", types.MessageType.Warning)
            return
        old, self.settings = self.settings, new
        if new == old:
            return
        changed = [f for f in _WORKER_SETTINGS if getattr(old, f) != getattr(new, f)]
        if changed:
            self.editor.log(f"settings changed ({', '.join(changed)}): restarting the worker")
            self.workers.gate = None
            self.workers.replace()
        self.scheduler.rerun_all("settings changed")

    def watched_files_changed(self, params: types.DidChangeWatchedFilesParams) -> None:
        for change in params.changes or []:
            path = file_path(change.uri)
            if is_config_file(change.uri) and path is not None:
                self.config_changed(path, "changed")

    # -- helpers

    def spawn(self, coro) -> asyncio.Task:
        task = asyncio.ensure_future(coro)
        self.background.add(task)
        task.add_done_callback(self.background.discard)
        return task


def settings_section(value: Any) -> dict[str, Any] | None:
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
