"""The open documents' text, kept by the server itself as the client sends it (didOpen, didChange).

pygls applies incremental changes through `str.splitlines()`, which also breaks at form feeds,
`\\x85`, U+2028 and other characters LSP does not count as line breaks: one of them in a comment
makes its copy drift from the editor's, so suppressions and quick fixes land on the wrong line.
Here a line break is `\\r\\n`, `\\r` or `\\n` (textlines.py), and a change costs the splice plus
one pass over the line starts after it, never a re-split of the whole document. Nothing here
decides what to analyse or talks to the client.
"""

from __future__ import annotations

import bisect

from dataclasses import dataclass, field
from typing import Any, Iterable

from tilelens_lsp.textlines import BREAK, line_starts


@dataclass
class Document:
    text: str
    version: int | None = None
    starts: list[int] = field(default_factory=list)    # line_starts(text)

    def __post_init__(self) -> None:
        if not self.starts:
            self.starts = line_starts(self.text)


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
        doc.text, doc.starts = new, line_starts(new)
        return
    a, b = offset(doc, _get(rng, "start"), encoding), offset(doc, _get(rng, "end"), encoding)
    if b < a:
        a, b = b, a
    text = doc.text[:a] + new + doc.text[b:]
    end = a + len(new)
    if text[a - 1:a + 1] == "\r\n" or text[end - 1:end + 1] == "\r\n" or doc.text[b - 1:b + 1] == "\r\n" \
            or doc.text[a - 1:a + 1] == "\r\n":
        doc.text, doc.starts = text, line_starts(text)      # a break split or joined at the seam
        return
    sl = _line_of(doc.starts, a)
    el = _line_of(doc.starts, b)
    delta = len(new) - (b - a)
    inserted = [a + m.end() for m in BREAK.finditer(new)]
    doc.starts = doc.starts[:sl + 1] + inserted + [s + delta for s in doc.starts[el + 1:]]
    doc.text = text


def offset(doc: Document, pos: Any, encoding: str) -> int:
    """The index into `doc.text` of an LSP position, clamped into the text as LSP asks."""
    line = max(_get(pos, "line") or 0, 0)
    units = max(_get(pos, "character") or 0, 0)
    if line >= len(doc.starts):
        return len(doc.text)
    start = doc.starts[line]
    stop = doc.starts[line + 1] if line + 1 < len(doc.starts) else len(doc.text)
    body = doc.text[start:stop]
    if line + 1 < len(doc.starts):
        body = body.rstrip("\r\n")                         # the line without its break
    if encoding in ("utf-32", "utf32") or body.isascii():
        return start + min(units, len(body))
    count = 0
    for index, char in enumerate(body):
        if count >= units:
            return start + index
        count += len(char.encode("utf-8")) if encoding in ("utf-8", "utf8") else (2 if ord(char) > 0xFFFF else 1)
    return start + len(body)


def _line_of(starts: list[int], index: int) -> int:
    """The line holding `index`."""
    return bisect.bisect_right(starts, index) - 1


def _get(obj: Any, name: str) -> Any:
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)
