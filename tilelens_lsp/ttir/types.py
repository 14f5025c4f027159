"""TTIR types and the bracket-aware splitting every reader of printed TTIR needs.

`Type` is what the engines see of a tensor or scalar type: its shape and element. The reader and the
attribute accessors (`attrs`) both split printed text with `split_top`; neither needs the other.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Type:
    """`shape` is () for scalars; `elem` is `i32`, `f16`, `ptr<f16>`, `bptr<f16>` (block pointer), ..."""

    shape: tuple[int, ...]
    elem: str

    @property
    def is_int(self) -> bool:
        return self.elem[:1] == "i" and self.elem[1:].isdigit()

    @property
    def bits(self) -> int:
        return int(self.elem[1:]) if self.is_int else 0

    @property
    def is_ptr(self) -> bool:
        return self.elem.startswith("ptr<")

    @property
    def pointee(self) -> str:
        return self.elem[4:-1] if self.elem.startswith("ptr<") else ""


def split_top(text: str, sep: str) -> list[str]:
    """Split on `sep` at bracket depth 0 (`([{<`; the `>` of `->` closes nothing), ignoring brackets and
    separators inside double-quoted strings (loc paths, string attributes). The one bracket splitter of
    the reader, the attribute accessors and the locs. Jumps from one bracket, string or separator to the
    next (a hot path of the reader: every op's types go through it)."""
    if sep not in text:
        return [text]  # nothing to split at any depth (most calls: ` -> `, ` to ` in a plain op)
    pattern = _SPLITTERS.get(sep)
    if pattern is None:
        pattern = _SPLITTERS[sep] = re.compile(r'"(?:[^"\\]|\\.)*"|[(\[{<)\]}>]|' + re.escape(sep))
    parts, depth, start = [], 0, 0
    for m in pattern.finditer(text):
        tok = m.group()
        if tok[0] == '"':
            continue
        if tok == sep:
            if depth == 0:
                parts.append(text[start : m.start()])
                start = m.end()
        elif tok in "([{<":
            depth += 1
        elif not (tok == ">" and m.start() > 0 and text[m.start() - 1] == "-"):
            depth -= 1
    parts.append(text[start:])
    return parts


_SPLITTERS: dict[str, re.Pattern] = {}
_DIM = re.compile(r"^(\d+)x")


def symbol_name(text: str) -> str:
    """`@name` or `@"quoted name"` (Triton 3.6 quotes mangled noinline names) without `@` and quotes."""
    text = text.strip().lstrip("@")
    if text.startswith('"') and text.endswith('"') and len(text) >= 2:
        return text[1:-1]
    return text


def parse_type(text: str) -> Type:
    """The `Type` of a printed TTIR type (`tensor<64x32x!tt.ptr<f16>>`, `i32`, `!tt.ptr<f16>`, ...).
    Memoized: a module prints the same few types on most of its ops, and `Type` is immutable."""
    return _parse_type(text.strip())


def operand_types(text: str) -> list[Type]:
    """The operand types an op prints after its last top-level ` : `, before ` -> `
    (`: tensor<64xi32> -> tensor<16xi32>`, `: (tensor<16xi32>, tensor<64xi32>) -> tensor<64xi32>`);
    [] where the text shows none (an op printed without its operands' types)."""
    parts = split_top(text, " : ")
    arrow = split_top(parts[-1], " -> ") if len(parts) > 1 else []
    if len(arrow) < 2:
        return []
    left = arrow[0].strip()
    if left.startswith("(") and left.endswith(")"):
        left = left[1:-1]
    return [parse_type(t) for t in split_top(left, ", ") if t.strip()]


@functools.lru_cache(maxsize=4096)
def _parse_type(t: str) -> Type:
    if t.startswith("tensor<") and t.endswith(">"):
        inner = t[7:-1]
        # dims are leading `NxMx` groups; the element type is the rest
        dims: list[int] = []
        rest = inner
        while True:
            m = _DIM.match(rest)
            if not m:
                break
            dims.append(int(m.group(1)))
            rest = rest[m.end() :]
        elem = parse_type(rest.split(",")[0]).elem  # drop encodings
        return Type(tuple(dims), elem)
    if t.startswith("!tt.ptr<") and t.endswith(">"):
        inner = t[8:-1].split(",")[0].strip()
        if inner.startswith("tensor<"):
            return Type((), "bptr<" + inner + ">")
        return Type((), "ptr<" + parse_type(inner).elem + ">")
    if t.startswith("!tt.tensordesc<"):
        return Type((), "tdesc<" + t[15:-1] + ">")
    return Type((), t)
