"""The JSON-RPC transport, hardened: pygls' message loop replaced, malformed requests answered.

pygls stays deaf after one wrong Content-Length, dies on a huge one, and logs a traceback per
non-JSON body; the loop here resynchronises, bounds what it reads and logs one line per problem
(docs/reliability.md, fix 5). It knows nothing of tilelens: the session and handlers are server.py's.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import sys
import threading
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcInvalidRequest
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

log = logging.getLogger("tilelens_lsp.server")


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
        # pygls applies changes through str.splitlines(), which breaks at more than LSP's line breaks:
        # the handler applies them to the server's own copy (lsp/documents.py) instead.
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_CHANGE)) is not None:
            yield handler, (params,), None


@dataclass
class _Malformed:
    """A request pygls could not structure: answered with InvalidParams instead of dropped."""

    id: Any
    method: Any
    error: JsonRpcException
    jsonrpc: str = "2.0"


MAX_HEADER_LINE = 64 * 1024           # a longer header line is garbage, read and dropped in pieces
MAX_BODY = 256 * 1024 * 1024          # a larger Content-Length is garbage, not a message to wait for
_CONTENT_LENGTH = re.compile(rb"Content-Length:[ \t]*(\d+)[ \t]*\r?\n\Z", re.IGNORECASE)


async def robust_run_async(stop_event: threading.Event, reader: Any, protocol: Any, logger: Any = None,
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


class OneLineDeserializeErrors(logging.Filter):
    """pygls logs the whole (cattrs exception group) traceback of every message whose params do not fit
    its method; one line naming the error says the same without flooding the client's log."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str) and record.msg.startswith("Unable to deserialize message"):
            exc = sys.exc_info()[1]
            record.msg = "ignored a malformed message: %s: %s"
            record.args = (type(exc).__name__, exc) if exc is not None else ("?", "")
        return True
