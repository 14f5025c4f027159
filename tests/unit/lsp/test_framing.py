"""The base protocol's framing (transport.Framing): what the stdin thread and the TCP loop share."""

from __future__ import annotations

import io
import json

from tilelens_lsp.lsp.transport import MAX_BODY, MAX_HEADER_LINE, Framing


def frames(data: bytes) -> list[bytes]:
    """The bodies `Framing` finds in `data`, read as the stdin thread reads them."""
    stream, framing, bodies = io.BytesIO(data), Framing(), []
    while line := stream.readline(MAX_HEADER_LINE):
        length = framing.header(line)
        if length is not None:
            bodies.append(stream.read(length))
    return bodies


def message(body: dict) -> bytes:
    raw = json.dumps(body).encode()
    return b"Content-Length: %d\r\n\r\n" % len(raw) + raw


def test_messages_back_to_back_come_out_whole_and_in_order():
    a, b = {"jsonrpc": "2.0", "method": "a"}, {"jsonrpc": "2.0", "method": "b", "params": {"x": "é\n"}}
    assert [json.loads(x) for x in frames(message(a) + message(b))] == [a, b]


def test_a_content_type_header_is_accepted_and_garbage_before_a_header_is_skipped():
    body = {"jsonrpc": "2.0", "method": "m"}
    raw = json.dumps(body).encode()
    data = b"garbage line\r\n\r\nxx Content-Length: %d\r\nContent-Type: application/vscode-jsonrpc\r\n\r\n" % len(raw) + raw
    assert [json.loads(x) for x in frames(data)] == [body]


def test_a_body_over_the_limit_is_not_awaited_and_the_next_message_is_found():
    body = {"jsonrpc": "2.0", "method": "after"}
    data = b"Content-Length: %d\r\n\r\n" % (MAX_BODY + 1) + message(body)
    assert [json.loads(x) for x in frames(data)] == [body]


def test_a_blank_line_resets_the_garbage_count_only_after_a_message():
    framing = Framing()
    assert framing.header(b"noise\r\n") is None and framing.garbage == 7
    assert framing.header(b"\r\n") is None and framing.garbage == 7  # no Content-Length: still garbage
    assert framing.header(b"Content-Length: 2\r\n") is None
    assert framing.header(b"\r\n") == 2 and framing.garbage == 0
