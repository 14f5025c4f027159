"""The language server (pygls 2): analyse on open and save, push diagnostics, answer hovers and help.

Wiring only: the LanguageServer and the parts of one connection (the editor, editor.py; the state,
session.py; the analysis, analysis/), one thin handler per LSP method that calls a function of
sync.py (notifications) or features/ (requests) with the parts it needs, and `serve`, which installs
the hardened transport (transport.py). The analysis runs in the worker process and knows nothing of
LSP; this package is the only one that imports pygls.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
from pathlib import Path
from typing import Any

import pygls.server
from lsprotocol import types
from pygls.lsp.server import LanguageServer

from tilelens_lsp import __version__
from tilelens_lsp.lsp import codeactions, codelens, sync
from tilelens_lsp.lsp.analysis import Analysis
from tilelens_lsp.lsp.editor import Editor
from tilelens_lsp.lsp.features import actions, directives, hovers, lenses, stats
from tilelens_lsp.lsp.session import Session
from tilelens_lsp.lsp.transport import (
    OneClient,
    OneLineDeserializeErrors,
    TcpSecret,
    TilelensProtocol,
    handle_body,
    make_secret,
    robust_run_async,
)
from tilelens_lsp.worker.process import Worker

STATS_METHOD = "tilelens/stats"


class TilelensServer(LanguageServer):
    """pygls' server with our protocol, the parts of one connection, and a shutdown that never waits on stdin."""

    def __init__(self, prestarted: Worker | None = None) -> None:
        super().__init__(
            "tilelens-lsp",
            __version__,
            protocol_cls=TilelensProtocol,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
        )
        self.editor = Editor(self)
        self.session = Session(self.editor)
        self.analysis = Analysis(self.session.docs, self.editor, self.session, lambda: self.session.settings, prestarted)

    def close(self) -> None:
        sync.close(self.session, self.analysis)

    def shutdown(self) -> None:
        # pygls waits for its thread pool here, where a reader thread may block on stdin forever.
        if self._stop_event is not None:
            self._stop_event.set()
        if self._thread_pool:
            self._thread_pool.shutdown(wait=False, cancel_futures=True)
        if self._server:
            self._server.close()
        self.close()

    def serve_one_tcp_client(self, host: str, port: int, secret: TcpSecret) -> None:
        """pygls' TCP server, narrowed: the first connection whose `initialize` carries the secret is
        the one client; every other connection is refused, and the server ends with that client."""
        self._stop_event = stop_event = threading.Event()
        gate = OneClient(secret)

        async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            first = await gate.admit(reader, writer)
            if first is None:
                return
            self.protocol.set_writer(writer)  # type: ignore[attr-defined]
            handle_body(first, self.protocol, self.report_server_error)
            await robust_run_async(stop_event, reader, self.protocol, None, self.report_server_error)
            self.shutdown()

        async def tcp_server() -> None:
            self._server = await asyncio.start_server(connection, host, port)
            async with self._server:
                await self._server.serve_forever()

        try:
            asyncio.run(tcp_server())
        except asyncio.CancelledError:
            pass


def create_server(prestarted: Worker | None = None) -> TilelensServer:
    """The server with its handlers: each translates one LSP method into one call with the parts it needs."""
    server = TilelensServer(prestarted)
    s, e, a = server.session, server.editor, server.analysis

    @server.feature(types.INITIALIZE)
    def initialize(ls: TilelensServer, params: types.InitializeParams) -> None:
        ls.editor.loop = asyncio.get_running_loop()
        sync.initialize(s, e, a, params)

    @server.feature(types.INITIALIZED)
    def initialized(ls: TilelensServer, params: types.InitializedParams) -> None:
        ls.editor.loop = asyncio.get_running_loop()
        sync.initialized(s, e, a)

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: TilelensServer, params: Any) -> None:
        s.shutdown_requested = True
        ls.close()

    @server.feature(types.EXIT)
    def exit_(ls: TilelensServer, params: Any) -> None:
        ls.close()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: TilelensServer, params: types.DidOpenTextDocumentParams) -> None:
        sync.did_open(s, e, a, params.text_document)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: TilelensServer, params: types.DidChangeTextDocumentParams) -> None:
        sync.did_change(s, e, params)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    def did_save(ls: TilelensServer, params: types.DidSaveTextDocumentParams) -> None:
        sync.did_save(s, e, a, params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: TilelensServer, params: types.DidCloseTextDocumentParams) -> None:
        sync.did_close(s, e, a, params.text_document.uri)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls: TilelensServer, params: types.DidChangeConfigurationParams) -> None:
        await sync.change_configuration(s, e, a, params.settings)

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(ls: TilelensServer, params: types.DidChangeWatchedFilesParams) -> None:
        sync.watched_files_changed(s, e, a, params)

    @server.feature(types.WINDOW_WORK_DONE_PROGRESS_CANCEL)
    def progress_cancel(ls: TilelensServer, params: types.WorkDoneProgressCancelParams) -> None:
        a.cancel_token(params.token)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def on_hover(ls: TilelensServer, params: types.HoverParams) -> types.Hover | None:
        return hovers.hover(s, e, params)

    @server.feature(types.TEXT_DOCUMENT_COMPLETION, types.CompletionOptions(trigger_characters=["[", "(", ",", ".", "="]))
    def completion(ls: TilelensServer, params: types.CompletionParams) -> types.CompletionList | None:
        return directives.completion(s, e, params)

    @server.feature(
        types.TEXT_DOCUMENT_SIGNATURE_HELP,
        types.SignatureHelpOptions(trigger_characters=["(", ","], retrigger_characters=["="]),
    )
    def signature_help(ls: TilelensServer, params: types.SignatureHelpParams) -> types.SignatureHelp | None:
        return directives.signature_help(s, e, params)

    @server.feature(types.TEXT_DOCUMENT_DEFINITION)
    def definition(ls: TilelensServer, params: types.DefinitionParams) -> types.Location | None:
        return directives.definition(s, e, params)

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix], resolve_provider=True),
    )
    def code_action(ls: TilelensServer, params: types.CodeActionParams) -> list[types.CodeAction] | None:
        return actions.code_actions(s, e, params)

    @server.feature(types.CODE_ACTION_RESOLVE)
    async def code_action_resolve(ls: TilelensServer, params: types.CodeAction) -> types.CodeAction:
        return await actions.resolve_code_action(s, e, a, params)

    @server.command(codeactions.DECLARE_LAUNCH)
    async def declare_launch(ls: TilelensServer, *args: Any) -> dict[str, Any]:
        return await actions.declare_launch(s, e, a, *args[:2])

    @server.feature(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=False))
    def code_lens(ls: TilelensServer, params: types.CodeLensParams) -> list[types.CodeLens] | None:
        return lenses.code_lenses(s, e, a, params.text_document.uri)

    @server.command(codelens.SHOW)
    def show_launches(ls: TilelensServer, *args: Any) -> dict[str, Any]:
        return lenses.show_launches(s, e, *args[:2])

    @server.command(codelens.RERUN)
    def rerun(ls: TilelensServer, *args: Any) -> dict[str, Any]:
        return lenses.rerun(s, a, *args[:1])

    @server.feature(STATS_METHOD)
    def tilelens_stats(ls: TilelensServer, params: Any) -> dict[str, Any]:
        return stats.stats(s, a)

    return server


def serve(tcp: str | None = None, prestarted: Worker | None = None, token_file: Path | None = None) -> int:
    """Run the server over stdio (default) or TCP (`HOST:PORT`) until the client goes away.

    Over TCP the client must send the secret in `initialize` (initializationOptions.tcpToken): the
    TILELENS_TCP_TOKEN it set, or the token written to `token_file` (mode 0600)."""
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="tilelens-lsp %(levelname)s %(name)s: %(message)s")
    logging.getLogger("pygls.protocol.json_rpc").addFilter(OneLineDeserializeErrors())
    pygls.server.run_async = robust_run_async  # this process serves one client: ours is the loop
    server = create_server(prestarted)
    secret = None
    try:
        if tcp:
            host, _, port = tcp.rpartition(":")
            secret = make_secret(int(port), token_file)
            if secret.file is not None:
                print(
                    f"tilelens-lsp: TCP clients must send initializationOptions.tcpToken, written to {secret.file}",
                    file=sys.stderr,
                    flush=True,
                )
            server.serve_one_tcp_client(host or "127.0.0.1", int(port), secret)
        else:
            server.start_io()
    finally:
        server.close()
        if secret is not None:
            secret.remove()
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
