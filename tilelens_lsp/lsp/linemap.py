"""Where the lines of the last analysed text are now, after the unsaved edits since.

The server analyses a document on save, and the user keeps typing. A hover must find an access's
footprint on the line the access is on now, and must never show it on another line. `advance`
replays `didChange` content changes on the analysed text and records, for every current line,
the analysed line it is an unchanged copy of, or the analysed lines whose text was edited into it.
Pure: no LSP library and no I/O; a change is anything with `text` and an optional `range`.
"""

from __future__ import annotations

import bisect
import difflib
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from tilelens_lsp.lsp import documents
from tilelens_lsp.textlines import line_starts, split_lines

_NONE: frozenset[int] = frozenset()


@dataclass(frozen=True)
class LineMap:
    """Per current line (0-based): the analysed line it is an unchanged copy of (or None), and the
    analysed lines whose text was changed into it (empty for a copy or a wholly new line)."""

    copy_of: tuple[int | None, ...]
    edited_from: tuple[frozenset[int], ...]

    @classmethod
    def identity(cls, lines: int) -> "LineMap":
        return cls(tuple(range(lines)), (_NONE,) * lines)

    def origin(self, line: int) -> tuple[int | None, frozenset[int]]:
        """(analysed line this current line copies, analysed lines edited into it); out of range: new."""
        if not 0 <= line < len(self.copy_of):
            return None, _NONE
        return self.copy_of[line], self.edited_from[line]

    def now(self, analysed_line: int) -> int | None:
        """The current line holding an unchanged copy of `analysed_line`, or None (edited or deleted)."""
        for current, old in enumerate(self.copy_of):
            if old == analysed_line:
                return current
        return None

    def then(self, later: "LineMap") -> "LineMap":
        """This map followed by `later` (a map from this map's current lines to newer ones)."""
        copies: list[int | None] = []
        edited: list[frozenset[int]] = []
        for mid, touched in zip(later.copy_of, later.edited_from):
            if mid is not None:
                copies.append(self.copy_of[mid])
                edited.append(self.edited_from[mid])
                continue
            sources: set[int] = set()
            for m in touched:
                if self.copy_of[m] is not None:
                    sources.add(self.copy_of[m])  # type: ignore[arg-type]
                sources |= self.edited_from[m]
            copies.append(None)
            edited.append(frozenset(sources) if sources else _NONE)
        return LineMap(tuple(copies), tuple(edited))

    def then_splice(self, splice: "Splice") -> "LineMap":
        """`then` for one ranged change: lines outside it are copied by slicing, so the cost is the
        change's lines (plus a memory copy), not one Python step per line of the document."""
        copies: list[int | None] = []
        edited: list[frozenset[int]] = []
        sources: set[int] | None = None
        for old in splice.region:
            if old is not None:
                copies.append(self.copy_of[old])
                edited.append(self.edited_from[old])
                continue
            if sources is None:
                sources = set()
                for m in splice.touched:
                    if self.copy_of[m] is not None:
                        sources.add(self.copy_of[m])  # type: ignore[arg-type]
                    sources |= self.edited_from[m]
            copies.append(None)
            edited.append(frozenset(sources) if sources else _NONE)
        sl, el = splice.first, splice.last
        return LineMap(
            self.copy_of[:sl] + tuple(copies) + self.copy_of[el + 1 :],
            self.edited_from[:sl] + tuple(edited) + self.edited_from[el + 1 :],
        )


@dataclass(frozen=True)
class Splice:
    """One ranged change as lines: old lines first..last became `region` (each the old line it keeps
    unchanged, or None), and the old lines in `touched` were edited into the None ones."""

    first: int
    last: int
    region: tuple[int | None, ...]
    touched: frozenset[int]


@dataclass(frozen=True)
class Tracked:
    """The analysed text (`base`), the current text, and the map from one to the other."""

    base: str
    text: str
    map: LineMap
    starts: Any = field(default=None, compare=False, repr=False)  # of `text` (documents.Document.starts)


def start(text: str) -> Tracked:
    return Tracked(text, text, LineMap.identity(len(split_lines(text))))


def advance(tracked: Tracked, changes: Iterable[Any], encoding: str = "utf-16") -> Tracked:
    """`tracked` after the content changes of one `didChange`, applied in order as LSP says.

    `encoding` is the negotiated position encoding (`utf-8`, `utf-16` or `utf-32`) that the
    changes' character offsets count in. A ranged change costs its own lines plus a copy of the
    line starts (documents.py); only a whole-document change is diffed line by line.
    """
    doc = documents.Document(tracked.text, starts=tracked.starts)
    line_map = tracked.map
    for change in changes:
        old = doc.text
        splice = _splice(doc, change, encoding)
        line_map = line_map.then_splice(splice) if splice is not None else line_map.then(diff_map(old, doc.text))
    return Tracked(tracked.base, doc.text, line_map, doc.starts)


def _splice(doc: documents.Document, change: Any, encoding: str) -> Splice | None:
    """Apply `change` to `doc`; the lines it replaced, or None when only a line diff can say (a whole
    document, or a `\r` that met a `\n`)."""
    rng = _get(change, "range")
    if rng is None:
        documents.apply(doc, change, encoding)
        return None
    a, b = documents.offset(doc, _get(rng, "start"), encoding), documents.offset(doc, _get(rng, "end"), encoding)
    if b < a:
        a, b = b, a
    sl, el = documents.line_of(doc.starts, a), documents.line_of(doc.starts, b)
    first_line, last_line = _line(doc, sl), _line(doc, el)
    sc, ec = a - int(doc.starts[sl]), b - int(doc.starts[el])
    segments = split_lines(_get(change, "text") or "")
    k = len(segments) - 1
    lines_before = len(doc.starts)
    documents.apply(doc, change, encoding)
    if len(doc.starts) != lines_before - (el - sl) + k:
        return None
    prefix, suffix = first_line[:sc], last_line[ec:]
    first = prefix + segments[0] + (suffix if k == 0 else "")
    last = (prefix if k == 0 else "") + segments[-1] + suffix
    keeps_first = sc == len(first_line) and first == first_line
    keeps_last = ec == 0 and last == last_line and not (keeps_first and (sl == el or k == 0))
    region: list[int | None] = [None] * (k + 1)
    if keeps_first:
        region[0] = sl
    if keeps_last:
        region[k] = el
    kept = {line for line in region if line is not None}
    return Splice(sl, el, tuple(region), frozenset(range(sl, el + 1)) - kept)


def _line(doc: documents.Document, line: int) -> str:
    """Line `line` of `doc` without its break."""
    start = int(doc.starts[line])
    if line + 1 < len(doc.starts):
        return doc.text[start : int(doc.starts[line + 1])].rstrip("\r\n")
    return doc.text[start:]


def placer(line_map: LineMap) -> Callable[[int], tuple[int, bool]]:
    """Where each analysed line (0-based) is now: (its unchanged copy, True), else (the line its text
    was edited into, or for a deleted line the next line that survived, False). A verdict published
    on the analysed text goes on the line the user sees holding that code."""
    copies: dict[int, int] = {}
    edits: dict[int, int] = {}
    for current, (old, touched) in enumerate(zip(line_map.copy_of, line_map.edited_from)):
        if old is not None:
            copies.setdefault(old, current)
        for t in touched:
            edits.setdefault(t, current)
    last = max(len(line_map.copy_of) - 1, 0)
    kept = sorted(copies)

    def where(line: int) -> tuple[int, bool]:
        if line in copies:
            return copies[line], True
        if line in edits:
            return edits[line], False
        after = bisect.bisect_right(kept, line)
        return (copies[kept[after]] if after < len(kept) else last), False

    return where


def resync(tracked: Tracked, current: str) -> Tracked:
    """`tracked` moved onto `current` by a line diff: for a client whose changes we could not follow
    (the server's copy of the document and ours disagree)."""
    if tracked.text == current:
        return tracked
    return Tracked(tracked.base, current, diff_map(tracked.base, current))


def diff_map(old: str, new: str) -> LineMap:
    """A map from a line diff (a whole-document change): equal runs are copies, replaced runs edits."""
    a, b = split_lines(old), split_lines(new)
    copies: list[int | None] = [None] * len(b)
    edited: list[frozenset[int]] = [_NONE] * len(b)
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            for k in range(j2 - j1):
                copies[j1 + k] = i1 + k
        elif tag == "replace":
            for j in range(j1, j2):
                edited[j] = frozenset(range(i1, i2))
    return LineMap(tuple(copies), tuple(edited))


def apply_change(text: str, change: Any, encoding: str = "utf-16") -> tuple[str, LineMap]:
    """One content change: the new text and the map from the old text's lines to the new one's."""
    new_text = _get(change, "text") or ""
    rng = _get(change, "range")
    if rng is None:
        return new_text, diff_map(text, new_text)
    lines = split_lines(text)
    (sl, sc), (el, ec) = (_position(lines, _get(rng, "start"), encoding), _position(lines, _get(rng, "end"), encoding))
    if (el, ec) < (sl, sc):
        (sl, sc), (el, ec) = (el, ec), (sl, sc)
    starts = line_starts(text)
    a, b = starts[sl] + sc, starts[el] + ec
    result = text[:a] + new_text + text[b:]
    segments = split_lines(new_text)
    k = len(segments) - 1  # line breaks the change inserts
    prefix, suffix = lines[sl][:sc], lines[el][ec:]
    expected = len(lines) - (el - sl) + k
    if len(split_lines(result)) != expected:  # a "\r" met a "\n" and merged into one break
        return result, diff_map(text, result)

    first = prefix + segments[0] + (suffix if k == 0 else "")
    last = (prefix if k == 0 else "") + segments[-1] + suffix
    keeps_first = sc == len(lines[sl]) and first == lines[sl]  # the change only appends after it
    # ... or only inserts before it; a line is never copied twice
    keeps_last = ec == 0 and last == lines[el] and not (keeps_first and (sl == el or k == 0))
    region: list[int | None] = [None] * (k + 1)
    if keeps_first:
        region[0] = sl
    if keeps_last:
        region[k] = el
    kept = {line for line in region if line is not None}
    touched = frozenset(range(sl, el + 1)) - kept
    copies = list(range(sl)) + region + list(range(el + 1, len(lines)))
    edited = [_NONE] * sl + [_NONE if c is not None else touched for c in region] + [_NONE] * (len(lines) - el - 1)
    return result, LineMap(tuple(copies), tuple(edited))


def _get(obj: Any, name: str) -> Any:
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)


def _position(lines: list[str], pos: Any, encoding: str) -> tuple[int, int]:
    """An LSP position as (line, index into the line's str), clamped into the text as editors do."""
    line = _get(pos, "line") or 0
    units = _get(pos, "character") or 0
    if line >= len(lines):
        return len(lines) - 1, len(lines[-1])
    line = max(line, 0)
    text = lines[line]
    if encoding in ("utf-32", "utf32") or text.isascii():
        return line, min(max(units, 0), len(text))
    count = 0
    for index, char in enumerate(text):
        if count >= units:
            return line, index
        count += _units(char, encoding)
    return line, len(text)


def _units(char: str, encoding: str) -> int:
    if encoding in ("utf-8", "utf8"):
        return len(char.encode("utf-8"))
    return 2 if ord(char) > 0xFFFF else 1
