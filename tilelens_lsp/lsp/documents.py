"""The open documents' text, kept by the server itself as the client sends it (didOpen, didChange).

pygls applies incremental changes through `str.splitlines()`, which also breaks at form feeds,
`\\x85`, U+2028 and other characters LSP does not count as line breaks: one of them in a comment
makes its copy drift from the editor's, so suppressions and quick fixes land on the wrong line.
Here a line break is `\\r\\n`, `\\r` or `\\n` (textlines.py), and a change costs the splice plus
one pass over the line starts after it, never a re-split of the whole document. Nothing here
decides what to analyse or talks to the client.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

import numpy as np

from tilelens_lsp.textlines import BREAK, line_starts


@dataclass
class Document:
    text: str
    version: int | None = None
    # line_starts(text) as int64: a change shifts the starts after it in one array operation. Never
    # changed in place (a change makes a new array), so a copy of the document may share it.
    starts: Any = None

    def __post_init__(self) -> None:
        if self.starts is None or not len(self.starts):
            self.starts = _starts(self.text)


def _starts(text: str) -> np.ndarray:
    return np.fromiter(line_starts(text), dtype=np.int64)


class Documents:
    """Text per open document URI."""

    def __init__(self) -> None:
        self.docs: dict[str, Document] = {}

    def open(self, uri: str, text: str, version: int | None) -> None:
        self.docs[uri] = Document(text, version)

    def close(self, uri: str) -> None:
        self.docs.pop(uri, None)

    def text(self, uri: str) -> str | None:
        doc = self.docs.get(uri)
        return doc.text if doc is not None else None

    def change(self, uri: str, changes: Iterable[Any], version: int | None, encoding: str) -> str | None:
        """Apply one didChange's content changes in order; the new text (None: not open)."""
        doc = self.docs.get(uri)
        if doc is None:
            return None
        for change in changes:
            apply(doc, change, encoding)
        doc.version = version
        return doc.text


def apply(doc: Document, change: Any, encoding: str = "utf-16") -> None:
    """One content change: a whole-document one (no range) or a range replaced by `text`."""
    new = _get(change, "text") or ""
    rng = _get(change, "range")
    if rng is None:
        doc.text, doc.starts = new, _starts(new)
        return
    a, b = offset(doc, _get(rng, "start"), encoding), offset(doc, _get(rng, "end"), encoding)
    if b < a:
        a, b = b, a
    text = doc.text[:a] + new + doc.text[b:]
    end = a + len(new)
    if (
        text[a - 1 : a + 1] == "\r\n"
        or text[end - 1 : end + 1] == "\r\n"
        or doc.text[b - 1 : b + 1] == "\r\n"
        or doc.text[a - 1 : a + 1] == "\r\n"
    ):
        doc.text, doc.starts = text, _starts(text)  # a break split or joined at the seam
        return
    sl = line_of(doc.starts, a)
    el = line_of(doc.starts, b)
    delta = len(new) - (b - a)
    inserted = np.fromiter((a + m.end() for m in BREAK.finditer(new)), dtype=np.int64)
    doc.starts = np.concatenate((doc.starts[: sl + 1], inserted, doc.starts[el + 1 :] + delta))
    doc.text = text


def offset(doc: Document, pos: Any, encoding: str) -> int:
    """The index into `doc.text` of an LSP position, clamped into the text as LSP asks."""
    line = max(_get(pos, "line") or 0, 0)
    units = max(_get(pos, "character") or 0, 0)
    if line >= len(doc.starts):
        return len(doc.text)
    start = int(doc.starts[line])
    stop = int(doc.starts[line + 1]) if line + 1 < len(doc.starts) else len(doc.text)
    body = doc.text[start:stop]
    if line + 1 < len(doc.starts):
        body = body.rstrip("\r\n")  # the line without its break
    if encoding in ("utf-32", "utf32") or body.isascii():
        return start + min(units, len(body))
    count = 0
    for index, char in enumerate(body):
        if count >= units:
            return start + index
        count += len(char.encode("utf-8")) if encoding in ("utf-8", "utf8") else (2 if ord(char) > 0xFFFF else 1)
    return start + len(body)


def line_of(starts: Any, index: int) -> int:
    """The line holding `index`."""
    return int(np.searchsorted(starts, index, side="right")) - 1


def _get(obj: Any, name: str) -> Any:
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)
