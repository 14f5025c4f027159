"""The JSON-RPC transport, hardened: pygls' message loop replaced, malformed requests answered.

pygls stays deaf after one wrong Content-Length, dies on a huge one, and logs a traceback per
non-JSON body; the loop here resynchronises, bounds what it reads and logs one line per problem
(docs/reliability.md, fix 5). Over `--tcp` it serves one client, the one whose `initialize` carries
the secret (`OneClient`, docs/reliability.md). It knows nothing of tilelens: the session and handlers
are server.py's.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
import os
import re
import secrets
import stat
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
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
        if (
            self._shutdown
            and getattr(message, "id", None) is not None
            and getattr(message, "method", None) not in (None, types.EXIT)
        ):
            # LSP: a request after `shutdown` is answered with InvalidRequest (pygls drops it unanswered)
            self._send_response(
                message.id,
                None,
                JsonRpcInvalidRequest("the server is shutting down: only 'exit' is accepted").to_response_error(),
            )
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


MAX_HEADER_LINE = 64 * 1024  # a longer header line is garbage, read and dropped in pieces
MAX_BODY = 256 * 1024 * 1024  # a larger Content-Length is garbage, not a message to wait for
_CONTENT_LENGTH = re.compile(rb"Content-Length:[ \t]*(\d+)[ \t]*\r?\n\Z", re.IGNORECASE)


async def robust_run_async(
    stop_event: threading.Event, reader: Any, protocol: Any, logger: Any = None, error_handler: Any = None
) -> None:
    """pygls' message loop, hardened against a client that sends garbage (`pygls.io_.run_async`).

    pygls' loop stays deaf for good after one wrong Content-Length (the rest of the body merges with
    the next header line), dies with a traceback on a huge Content-Length (it allocates the body up
    front) and logs a traceback per non-JSON body. Here a header is found again after garbage, a body
    over MAX_BODY or a header line over MAX_HEADER_LINE is skipped, and a body that is not a JSON-RPC
    message costs one log line (`Framing`).

    Over stdio one thread of ours reads whole messages and hands each body to the event loop: pygls'
    reader takes a trip through its thread pool per header line and per body (three a message, a
    save's didChange and didSave six), each a wake-up of the loop and of a pool thread.
    """
    stdin = getattr(reader, "stdin", None)
    if stdin is not None:  # pygls' StdinAsyncReader
        await _run_stdin(stop_event, stdin, protocol, error_handler)
        return
    framing = Framing()
    while not stop_event.is_set():
        header = await _read_header_line(reader)
        if not header:
            break
        length = framing.header(header)
        if length is None:
            continue
        body = await _read_body(reader, length)
        if body is None:
            break  # EOF in the middle of a body
        _handle_body(body, protocol, error_handler)


class Framing:
    """The LSP base protocol's headers, line by line, resynchronised after garbage: `header(line)` is
    the length of the body to read next when `line` ends a header (a blank line after a valid
    Content-Length), else None."""

    def __init__(self) -> None:
        self.length: int | None = None
        self.garbage = 0  # bytes skipped since the last message: logged once per run of garbage

    def header(self, line: bytes) -> int | None:
        if not line.strip():
            length, self.length = self.length, None
            if length is not None:  # else a blank line without a Content-Length: garbage between messages
                self.garbage = 0
            return length
        match = _CONTENT_LENGTH.search(line)
        if match is None:
            if not line.lower().startswith(b"content-type:"):
                if not self.garbage:
                    log.warning("ignoring input that is not an LSP header, up to the next Content-Length")
                self.garbage += len(line)
            return None
        if match.start() > 0:
            log.warning("skipped %d bytes of garbage before a Content-Length header", match.start())
        self.length = int(match.group(1))
        if self.length > MAX_BODY:
            log.warning("ignored a Content-Length of %d bytes (more than %d)", self.length, MAX_BODY)
            self.length = None
        return None


async def _run_stdin(stop_event: threading.Event, stdin: Any, protocol: Any, error_handler: Any) -> None:
    """Messages read whole by a thread of ours, handled on the event loop in the order they came;
    returns at the end of the input. A daemon thread: one blocked on a silent client never holds up
    the server's exit."""
    loop = asyncio.get_running_loop()
    ended = loop.create_future()

    def handle(body: bytes) -> None:
        _handle_body(body, protocol, error_handler)

    def end() -> None:
        if not ended.done():
            ended.set_result(None)

    def read() -> None:
        framing = Framing()
        try:
            while not stop_event.is_set():
                line = stdin.readline(MAX_HEADER_LINE)
                if not line:
                    break
                length = framing.header(line)
                if length is None:
                    continue
                body = stdin.read(length)
                if len(body) != length:
                    break  # EOF in the middle of a body
                loop.call_soon_threadsafe(handle, body)
        except (OSError, ValueError):  # stdin closed under us
            pass
        finally:
            with contextlib.suppress(RuntimeError):  # the loop is closed already
                loop.call_soon_threadsafe(end)

    threading.Thread(target=read, name="tilelens-lsp-stdin", daemon=True).start()
    await ended


async def _read_header_line(reader: Any) -> bytes:
    """A line of an asyncio stream (TCP; stdin is read by `_run_stdin`)."""
    try:
        return await reader.readline()
    except ValueError:  # asyncio.StreamReader: a line over its limit (dropped by the reader)
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


# ---------------------------------------------------------------- --tcp: one client, who knows the secret

TOKEN_OPTION = "tcpToken"  # initializationOptions key the client sends the secret in
TOKEN_ENV = "TILELENS_TCP_TOKEN"  # a launching client may choose the secret and pass it here
FIRST_MESSAGE_TIMEOUT = 30.0  # seconds a connection has to send its `initialize`
MAX_FIRST_MESSAGE = 4 * 1024 * 1024


@dataclass
class TcpSecret:
    """The secret a TCP client must send in `initialize`, and the 0600 file it was written to (if any)."""

    token: str
    file: Path | None = None

    def remove(self) -> None:
        if self.file is not None:
            with contextlib.suppress(OSError):
                self.file.unlink()


def make_secret(port: int, token_file: Path | None) -> TcpSecret:
    """The client's secret: TILELENS_TCP_TOKEN if the launching client set it, else a fresh random one
    written to `token_file` (default: a per-user 0700 folder in the temp dir) with mode 0600."""
    chosen = os.environ.get(TOKEN_ENV, "")
    if chosen and token_file is None:
        return TcpSecret(chosen)
    token = chosen or secrets.token_urlsafe(32)
    path = token_file or Path(tempfile.gettempdir()) / f"tilelens-lsp-{os.getuid()}" / f"tcp-{port}.token"
    _private_folder(path.parent, created_by_us=token_file is None)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".token-")  # mode 0600, never a link
    try:
        with os.fdopen(fd, "w") as f:
            f.write(token + "\n")
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return TcpSecret(token, path)


def _private_folder(folder: Path, created_by_us: bool) -> None:
    """`folder` exists, is ours and (for the default one) is reachable by nobody else."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = os.lstat(folder)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        raise SystemExit(f"tilelens-lsp: {folder} is not a folder of this user: refusing to write the TCP token there")
    if created_by_us and stat.S_IMODE(info.st_mode) & 0o077:
        raise SystemExit(f"tilelens-lsp: {folder} is open to other users: refusing to write the TCP token there")


class OneClient:
    """Admits the first connection whose `initialize` carries the secret; refuses every other one."""

    def __init__(self, secret: TcpSecret) -> None:
        self.secret = secret
        self.taken = False

    async def admit(self, reader: Any, writer: Any) -> bytes | None:
        """The first message (the token taken out) of an admitted connection; None: refused, closed."""
        peer = writer.get_extra_info("peername")
        if self.taken:
            log.warning("refused a connection from %s: this server already serves a client", peer)
            await _refuse(writer, None, "this server already serves a client")
            return None
        try:
            body = await asyncio.wait_for(_read_message(reader), FIRST_MESSAGE_TIMEOUT)
        except (asyncio.TimeoutError, ConnectionError, ValueError):
            body = None
        message = _json(body)
        rid = message.get("id") if isinstance(message, dict) else None
        params = message.get("params") if isinstance(message, dict) else None
        options = params.get("initializationOptions") if isinstance(params, dict) else None
        token = options.get(TOKEN_OPTION) if isinstance(options, dict) else None
        if (
            not isinstance(message, dict)
            or message.get("method") != "initialize"
            or not isinstance(token, str)
            or not hmac.compare_digest(token.encode(), self.secret.token.encode())
        ):
            log.warning(
                "refused a connection from %s: its first message is not an initialize with the server's %s",
                peer,
                TOKEN_OPTION,
            )
            await _refuse(writer, rid, f"unauthorized: send initializationOptions.{TOKEN_OPTION}")
            return None
        if self.taken:
            log.warning("refused a connection from %s: this server already serves a client", peer)
            await _refuse(writer, rid, "this server already serves a client")
            return None
        self.taken = True
        if isinstance(options, dict):  # always, since the token was found in it
            del options[TOKEN_OPTION]
        return json.dumps(message).encode()


async def _read_message(reader: Any) -> bytes | None:
    length = None
    while True:
        line = await reader.readline()
        if not line:
            return None
        if not line.strip():
            if length is None:
                continue
            return await _read_body(reader, length)
        match = _CONTENT_LENGTH.search(line)
        if match is not None:
            length = int(match.group(1))
            if length > MAX_FIRST_MESSAGE:
                return None


def _json(body: bytes | None) -> Any:
    if body is None:
        return None
    try:
        return json.loads(body)
    except ValueError:
        return None


async def _refuse(writer: Any, rid: Any, why: str) -> None:
    if rid is not None:
        data = json.dumps({"jsonrpc": "2.0", "id": rid, "error": {"code": -32600, "message": why}}).encode()
        with contextlib.suppress(Exception):
            writer.write(b"Content-Length: %d\r\n\r\n" % len(data) + data)
            await writer.drain()
    with contextlib.suppress(Exception):
        writer.close()
    return None


def handle_body(body: bytes, protocol: Any, error_handler: Any) -> None:
    """Dispatch one message body read off the wire (as the message loop does)."""
    _handle_body(body, protocol, error_handler)
