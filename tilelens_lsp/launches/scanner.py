"""The comment scanner: every `# tilelens:` launch directive of a file, as blocks of lines, evaluated.

Finds the directive comments (tokens, not text that merely looks like one inside a string), joins the
continuation lines an open bracket pulls in, skips suppression comments (`# tilelens: ignore[...]`,
`suppress.py`) and runs each block's statements in file order, bindings flowing down the file.
"""

from __future__ import annotations

import io
import math
import re
import tokenize
from dataclasses import dataclass
from typing import Any

from tilelens_lsp.launches.kernels import multiline_string_lines
from tilelens_lsp.launches.specs import MAX_DIRECTIVE_CHARS
from tilelens_lsp.launches.statements import Brackets, run_statements
from tilelens_lsp.model import DirectiveError, LaunchSpec
from tilelens_lsp.suppress import is_ignore
from tilelens_lsp.textlines import split_lines

_DIRECTIVE = re.compile(r"^[ \t]*#[ \t]*tilelens:(.*)$")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_BINDING_START = re.compile(r"(?:^|;)\s*([A-Za-z_]\w*)\s*=(?!=)")


@dataclass(frozen=True)
class _Piece:
    line: int  # 1-based line in the file
    col: int  # 0-based column where `text` starts
    text: str


@dataclass(frozen=True)
class _Block:
    """One directive: a `# tilelens:` line and the continuation lines its open brackets pull in."""

    pieces: tuple[_Piece, ...]

    @property
    def text(self) -> str:
        return "\n".join(p.text for p in self.pieces)

    def locate(self, lineno: int, col: int) -> tuple[int, int]:
        piece = self.pieces[min(max(lineno, 1), len(self.pieces)) - 1]
        return piece.line, piece.col + col + 1


def _comment_lines(text: str) -> tuple[set[int], float]:
    """Lines holding a comment token, and the line after which tokenizing failed (trust regex there).

    A file that parses needs no tokenizing: a line that starts with `#` is a comment unless a string
    literal spans it, and the syntax tree (parsed once for `find_kernels` too) shows those."""
    inside = multiline_string_lines(text)
    if inside is not None:
        lines = split_lines(text)
        return {i for i, line in enumerate(lines, 1) if "#" in line and i not in inside}, math.inf
    found: set[int] = set()
    last = 0
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text, newline=None).readline):
            last = tok.end[0]
            if tok.type == tokenize.COMMENT:
                found.add(tok.start[0])
    except Exception:  # noqa: BLE001 - tokenize stops at the first broken token: comments so far count
        return found, last
    return found, math.inf


def _directive_blocks(text: str) -> list[_Block]:
    lines = _LINE_BREAK.split(text)
    comments, trusted_after = _comment_lines("\n".join(lines))
    pieces: dict[int, _Piece] = {}
    for number, line in enumerate(lines, 1):
        m = _DIRECTIVE.match(line)
        if m and is_ignore(m.group(1)):
            continue  # a suppression comment (suppress.py), not a launch
        if m and (number in comments or number > trusted_after):
            content = m.group(1)
            lead = len(content) - len(content.lstrip())
            pieces[number] = _Piece(number, m.start(1) + lead, content.strip())
    blocks, used = [], set()
    for number in sorted(pieces):
        if number in used or not pieces[number].text:
            continue
        block = [pieces[number]]
        size = len(block[0].text)
        brackets = Brackets()
        brackets.feed(block[0].text)
        while number + len(block) in pieces and size < MAX_DIRECTIVE_CHARS and brackets.innermost():
            block.append(pieces[number + len(block)])
            brackets.feed(block[-1].text)
            used.add(block[-1].line)
            size += len(block[-1].text) + 1
        blocks.append(_Block(tuple(block)))
    return blocks


def directive_blocks(text: str) -> list[tuple[tuple[int, int, str], ...]]:
    """Each directive of a file as its lines `(1-based line, 0-based column where its text starts, text)`,
    continuation lines included, exactly as `parse_directives` reads them (for completion and go to
    definition, which must agree with the parser on what a directive is)."""
    return [tuple((p.line, p.col, p.text) for p in block.pieces) for block in _directive_blocks(text)]


def parse_directives(
    text: str,
    known_kernels: set[str] | None = None,
) -> tuple[list[LaunchSpec], list[DirectiveError]]:
    """Every `# tilelens:` launch of a file, evaluated; bad directives become DirectiveErrors."""
    blocks = _directive_blocks(text)
    bound_at: dict[str, int] = {}
    for block in blocks:
        for m in _BINDING_START.finditer(block.text.split("\n")[0]):
            bound_at.setdefault(m.group(1), block.pieces[0].line)
    env: dict[str, Any] = {}
    launches: list[LaunchSpec] = []
    errors: list[DirectiveError] = []
    for block in blocks:
        first = block.pieces[0].line
        future = {n: line for n, line in bound_at.items() if line > first}
        found, failed = run_statements(
            block.text,
            env,
            locate=block.locate,
            end_line=block.pieces[-1].line,
            origin="comment",
            known_kernels=known_kernels,
            future=future,
        )
        launches.extend(found)
        errors.extend(failed)
    return launches, errors
