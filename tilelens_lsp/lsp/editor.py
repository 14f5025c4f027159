"""The client as the server sees it: what it can do, the documents it holds, and what we send it.

Every message to or from the editor goes through here (pygls' LanguageServer): diagnostics, log and
shown messages, progress bars, workspace edits, configuration requests, watcher registration and the
text of open documents. Notifications are callable from any thread (they are handed to the event
loop's thread). Nothing here decides what to send or when: that is the session's (session.py), the
analysis' (analysis/) and the request answers' (features/) business.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Callable, Coroutine

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from tilelens_lsp.lsp.documents import Documents
from tilelens_lsp.lsp.state import file_path

CONFIG_GLOB = "**/{pyproject.toml,tilelens.toml}"


class Editor:
    """The pygls server, narrowed to what the rest of the server uses."""

    def __init__(self, server: LanguageServer) -> None:
        self.server = server
        self.loop: asyncio.AbstractEventLoop | None = None  # the server's event loop, once it runs
        self.documents = Documents()  # the text as the client has it (documents.py), not pygls' copy

    # -- capabilities

    def cap(self, path: str, default: Any = None) -> Any:
        value: Any = self.server.client_capabilities
        for part in path.split("."):
            value = getattr(value, part, None)
            if value is None:
                return default
        return value

    @property
    def related_support(self) -> bool:
        return bool(self.cap("text_document.publish_diagnostics.related_information", False))

    @property
    def progress_support(self) -> bool:
        return bool(self.cap("window.work_done_progress", False))

    # -- documents and folders

    def text(self, uri: str) -> str:
        text = self.documents.text(uri)
        if text is not None:
            return text
        try:  # not open: pygls reads it from disk
            return self.server.workspace.get_text_document(uri).source
        except Exception:  # noqa: BLE001 - an unreadable document is analysed from disk anyway
            return ""

    def opened(self, item: types.TextDocumentItem) -> None:
        self.documents.open(item.uri, item.text, item.version)

    def changed(self, params: types.DidChangeTextDocumentParams) -> str | None:
        """Apply a didChange to our copy; pygls' copy (which it no longer updates) gets the result."""
        uri, version = params.text_document.uri, params.text_document.version
        text = self.documents.change(uri, params.content_changes, version, self.encoding())
        if text is not None:
            try:
                old = self.server.workspace.get_text_document(uri)
                self.server.workspace.put_text_document(
                    types.TextDocumentItem(uri=uri, language_id=old.language_id or "python", version=version, text=text)
                )
            except Exception:  # noqa: BLE001 - pygls' copy is only a convenience; ours is the text
                pass
        return text

    def closed(self, uri: str) -> None:
        self.documents.close(uri)

    def units(self, text: str) -> int:
        return self.server.workspace.position_codec.client_num_units(text)

    def encoding(self) -> str:
        try:
            return str(self.server.workspace.position_codec.encoding or "utf-16")
        except RuntimeError:
            return "utf-16"

    def folders(self) -> list[Path]:
        folders: list[Path] = []
        try:
            workspace = self.server.workspace
        except RuntimeError:
            return folders
        for folder in workspace.folders.values():
            path = file_path(folder.uri)
            if path is not None:
                folders.append(path)
        if not folders and workspace.root_uri:
            path = file_path(workspace.root_uri)
            if path is not None:
                folders.append(path)
        return folders

    # -- what we send

    def publish(self, uri: str, diagnostics: list[types.Diagnostic], version: int | None) -> None:
        self.server.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version)
        )
        self.refresh_lenses()

    def refresh_lenses(self) -> None:
        if not self.cap("workspace.code_lens.refresh_support", False):
            return
        try:
            self.server.workspace_code_lens_refresh(None, callback=lambda *_: None)
        except Exception as exc:  # noqa: BLE001 - a client that cannot refresh keeps its old lenses
            self.log(f"codeLens/refresh failed: {exc}")

    async def register_watchers(self) -> None:
        try:
            await self.server.client_register_capability_async(
                types.RegistrationParams(
                    registrations=[
                        types.Registration(
                            id="tilelens-config-watch",
                            method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                            register_options=types.DidChangeWatchedFilesRegistrationOptions(
                                watchers=[types.FileSystemWatcher(glob_pattern=CONFIG_GLOB)]
                            ),
                        )
                    ]
                )
            )
        except Exception as exc:  # noqa: BLE001 - a client that refuses just gets no watcher
            self.log(f"could not register the config file watcher: {exc}")

    async def apply_edit(self, edit: types.WorkspaceEdit, label: str) -> bool:
        """Ask the client to apply `edit`; whether it did."""
        reply = await self.server.workspace_apply_edit_async(types.ApplyWorkspaceEditParams(edit=edit, label=label))
        return bool(getattr(reply, "applied", False))

    async def configuration(self, section: str, timeout: float = 10) -> Any:
        """The client's settings under `section` (workspace/configuration), or None."""
        pulled = await asyncio.wait_for(
            self.server.workspace_configuration_async(
                types.ConfigurationParams(items=[types.ConfigurationItem(section=section)])
            ),
            timeout,
        )
        return pulled[0] if pulled else None

    # -- progress bars (window/workDoneProgress)

    async def create_progress(self, token: str, timeout: float = 10) -> None:
        await asyncio.wait_for(self.server.work_done_progress.create_async(token), timeout)

    def begin_progress(self, token: str, title: str, message: str) -> None:
        self.server.work_done_progress.begin(
            token, types.WorkDoneProgressBegin(title=title, message=message, cancellable=True)
        )

    def end_progress(self, token: str, message: str | None = None) -> None:
        progress = self.server.work_done_progress
        progress.end(token, types.WorkDoneProgressEnd(message=message))
        progress.tokens.pop(token, None)

    # -- messages, from any thread

    def log(self, message: str, kind: types.MessageType = types.MessageType.Log) -> None:
        self._call_soon(self.server.window_log_message, types.LogMessageParams(type=kind, message=message))

    def show(self, message: str, kind: types.MessageType = types.MessageType.Info) -> None:
        self._call_soon(self.server.window_show_message, types.ShowMessageParams(type=kind, message=message))

    def run_from_thread(self, coro: Coroutine[Any, Any, Any]) -> None:
        """Run `coro` on the event loop from another thread; dropped when the loop is gone."""
        loop = self.loop
        if loop is None or loop.is_closed():
            coro.close()
            return
        try:
            asyncio.run_coroutine_threadsafe(coro, loop)
        except RuntimeError:  # closed meanwhile: the server is exiting
            coro.close()

    def _call_soon(self, fn: Callable[[Any], None], params: Any) -> None:
        """Send from the event loop thread whichever thread we are on."""
        loop = self.loop
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is not None and running is loop:
            fn(params)
        elif loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(fn, params)
